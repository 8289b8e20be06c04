package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFuzzBadInput: every user error exits 2 and names the flag.
func TestFuzzBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		err  string
	}{
		{name: "no scenario", args: []string{"fuzz"}, err: "needs NAME|FILE"},
		{name: "unknown scenario", args: []string{"fuzz", "no-such-scenario"}, err: "no-such-scenario"},
		{name: "unknown kind", args: []string{"fuzz", "redlock-clock-jump", "--faults", "clock-jump,meteor"}, err: `--faults: unknown fault kind "meteor"`},
		{name: "promote without replica", args: []string{"fuzz", "redlock-clock-jump", "--faults", "promote"}, err: "--faults: fault kind promote needs a Redis replica"},
		{name: "unknown property", args: []string{"fuzz", "redlock-clock-jump", "--check", "speed"}, err: `--check: unknown property "speed"`},
		{name: "negative runs", args: []string{"fuzz", "redlock-clock-jump", "--runs", "-3"}, err: "--runs must not be negative"},
		{name: "endless", args: []string{"fuzz", "redlock-clock-jump", "--runs", "0"}, err: "--runs 0 needs --time"},
		{name: "bad time", args: []string{"fuzz", "redlock-clock-jump", "--time", "soon"}, err: "--time"},
		{name: "bad keep", args: []string{"fuzz", "redlock-clock-jump", "--keep", "0"}, err: "--keep must be at least 1"},
		// Issue 18: --workers 0 and --max-faults 0 were accepted.
		{name: "no workers", args: []string{"fuzz", "redlock-clock-jump", "--workers", "0"}, err: "--workers must be at least 1"},
		{name: "no faults", args: []string{"fuzz", "redlock-clock-jump", "--max-faults", "0"}, err: "--max-faults must be at least 1"},
		// Issue 33: --max-faults 30000 wrote a finding that replay refused.
		{name: "too many faults", args: []string{"fuzz", "redlock-clock-jump", "--max-faults", "30000"}, err: "--max-faults must be at most 1000, got 30000"},
		{name: "bad shard", args: []string{"fuzz", "redlock-clock-jump", "--shard", "3/3"}, err: "--shard: K must be from 0 to 2"},
		{name: "shard of a timed campaign", args: []string{"fuzz", "redlock-clock-jump", "--shard", "0/3", "--time", "1s"}, err: "--shard with --time"},
		{name: "shard with shrink", args: []string{"fuzz", "redlock-clock-jump", "--shard", "0/3", "--shrink"}, err: "simrun merge --shrink"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := simrun(tt.args...)
			assert.Equal(t, exitBadInput, r.code, r.stderr)
			assert.Contains(t, r.stderr, tt.err)
			assert.Empty(t, r.stdout)
		})
	}
}

// TestFuzzFindsAndShrinks runs issue 7's acceptance path through the
// command line: fuzz finds violations (exit 1), writes and shrinks them,
// the files replay with simrun run (exit 0), and simrun shrink of a
// finding writes a file that replays too.
func TestFuzzFindsAndShrinks(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "findings")
	junit := filepath.Join(dir, "fuzz.xml")
	r := simrun("fuzz", "redlock-clock-jump", "--runs", "150", "--seed", "1", "--workers", "2", "--keep", "1", "--out", out, "--junit", junit, "--shrink")
	require.Equal(t, exitMismatch, r.code, r.stderr)
	assert.Contains(t, r.stdout, "found ")
	assert.Contains(t, r.stdout, "lock-safety: ")
	assert.Contains(t, r.stdout, "replay: simrun run "+filepath.Join(out, "finding-1.yaml")+" --seed ")
	assert.Contains(t, r.stdout, "replay shrunk: simrun run "+filepath.Join(out, "finding-1.shrunk.yaml"))
	assert.Contains(t, r.stderr, "150 runs in ")

	for _, f := range []string{"finding-1.yaml", "finding-1.shrunk.yaml"} {
		rr := simrun("run", filepath.Join(out, f))
		assert.Equal(t, exitOK, rr.code, "%s: %s%s", f, rr.stdout, rr.stderr)
		assert.Contains(t, rr.stdout, "MATCHED")
	}

	data, err := os.ReadFile(junit)
	require.NoError(t, err)
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	require.NoError(t, xml.Unmarshal(data, &doc))
	assert.Positive(t, doc.Failures)
	assert.Equal(t, doc.Tests, doc.Failures)

	// simrun shrink of the unshrunk finding.
	in := filepath.Join(out, "finding-1.yaml")
	min := filepath.Join(dir, "min.yaml")
	r = simrun("shrink", in, "--out", min)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "keeping lock-safety violated")
	assert.Contains(t, r.stdout, "wrote "+min)
	text, err := os.ReadFile(min)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(text), "# Shrunk by simrun shrink from "+in), string(text))
	assert.Contains(t, string(text), "lock_safety: violated")
	rr := simrun("run", min)
	assert.Equal(t, exitOK, rr.code, rr.stdout)
}

func TestFuzzJSONAndNothingFound(t *testing.T) {
	dir := t.TempDir()
	r := simrun("fuzz", "fenced-baseline", "--faults", "partition,drop,delay,pause", "--runs", "40", "--json", "--out", filepath.Join(dir, "f"))
	require.Equal(t, exitOK, r.code, r.stderr)
	var j struct {
		Base     string         `json:"base"`
		Runs     int            `json:"runs"`
		Found    int            `json:"found"`
		Checks   []string       `json:"checks"`
		ByKind   map[string]int `json:"by_kind"`
		Findings []any          `json:"findings"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &j), r.stdout)
	assert.Equal(t, "fenced-baseline", j.Base)
	assert.Equal(t, 40, j.Runs)
	assert.Equal(t, 0, j.Found)
	assert.Equal(t, []string{"resource-safety"}, j.Checks)
	assert.Empty(t, j.Findings)
	names, err := filepath.Glob(filepath.Join(dir, "f", "finding-*"))
	require.NoError(t, err)
	assert.Empty(t, names, "no finding files when nothing was found")
	assert.FileExists(t, filepath.Join(dir, "f", "campaign.json"))
}

func TestShrinkCommand(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{name: "no file", args: []string{"shrink"}, code: exitBadInput, err: "needs FILE"},
		{name: "missing file", args: []string{"shrink", filepath.Join(dir, "nope.yaml")}, code: exitBadInput, err: "nope.yaml"},
		{name: "nothing fails", args: []string{"shrink", "redlock-crash-fsync-always", "--out", filepath.Join(dir, "x.yaml")}, code: exitBadInput, err: "violates nothing to shrink"},
		{name: "kind not violated", args: []string{"shrink", "single-gc-pause-fenced", "--kind", "resource", "--out", filepath.Join(dir, "x.yaml")}, code: exitBadInput, err: "does not violate resource-safety"},
		{name: "bad kind", args: []string{"shrink", "redlock-clock-jump", "--kind", "lock,resource"}, code: exitBadInput, err: "--kind"},
		{name: "bad budget", args: []string{"shrink", "redlock-clock-jump", "--max-runs", "0"}, code: exitBadInput, err: "--max-runs"},
		{name: "a built-in scenario", args: []string{"shrink", "redlock-clock-jump", "--out", filepath.Join(dir, "rcj.yaml")}, code: exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := simrun(tt.args...)
			assert.Equal(t, tt.code, r.code, r.stdout+r.stderr)
			if tt.err != "" {
				assert.Contains(t, r.stderr, tt.err)
			}
		})
	}
	rr := simrun("run", filepath.Join(dir, "rcj.yaml"))
	assert.Equal(t, exitOK, rr.code, rr.stdout)
}

func TestShrunkPath(t *testing.T) {
	assert.Equal(t, "a/b.shrunk.yaml", shrunkPath("a/b.yaml"))
	assert.Equal(t, "b.shrunk.yaml", shrunkPath("b.yml"))
	assert.Equal(t, "b.shrunk.yaml", shrunkPath("b"))
}

// TestFuzzTime: --time alone runs until the time is up, not 1000 runs;
// with --runs it stops at whichever comes first.
func TestFuzzTime(t *testing.T) {
	dir := t.TempDir()
	r := simrun("fuzz", "redlock-clock-jump", "--faults", "heal", "--time", "300ms", "--json", "--out", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	var j struct {
		Runs int `json:"runs"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &j))
	assert.Positive(t, j.Runs)
	r = simrun("fuzz", "redlock-clock-jump", "--faults", "heal", "--time", "1h", "--runs", "7", "--json", "--out", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &j))
	assert.Equal(t, 7, j.Runs)
}

// TestFuzzChecksOutputsFirst (issue 18): an unusable --out or --junit is
// refused with exit 2 before the first run, not after the campaign.
func TestFuzzChecksOutputsFirst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	tests := []struct {
		name string
		args []string
		err  string
	}{
		{name: "out is a file", args: []string{"--out", file}, err: "--out"},
		{name: "junit in a missing folder", args: []string{"--out", filepath.Join(dir, "o1"), "--junit", "/proc/x/j.xml"}, err: "--junit"},
		{name: "junit is a folder", args: []string{"--out", filepath.Join(dir, "o2"), "--junit", dir}, err: "--junit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := simrun(append([]string{"fuzz", "redlock-clock-jump", "--runs", "2000"}, tt.args...)...)
			assert.Equal(t, exitBadInput, r.code, r.stderr)
			assert.Contains(t, r.stderr, tt.err)
			assert.NotContains(t, r.stderr, "runs in", "the campaign must not run")
		})
	}
}

// TestFuzzSecondCampaignRefused (issue 18): a second campaign into a folder
// holding another campaign's findings is refused (exit 2, the first
// campaign's files untouched); with --force it replaces them, leaving no
// finding of the first.
func TestFuzzSecondCampaignRefused(t *testing.T) {
	out := filepath.Join(t.TempDir(), "findings")
	r := simrun("fuzz", "redlock-clock-jump", "--runs", "80", "--seed", "1", "--keep", "3", "--out", out)
	require.Equal(t, exitMismatch, r.code, r.stderr)
	before := readDir(t, out)
	require.Contains(t, before, "finding-1.yaml")

	// The same campaign again replaces its own results.
	r = simrun("fuzz", "redlock-clock-jump", "--runs", "80", "--seed", "1", "--keep", "3", "--out", out)
	require.Equal(t, exitMismatch, r.code, r.stderr)
	assert.Equal(t, before, readDir(t, out))

	r = simrun("fuzz", "redlock-clock-jump", "--runs", "40", "--seed", "4", "--keep", "1", "--out", out)
	assert.Equal(t, exitBadInput, r.code, r.stderr)
	assert.Contains(t, r.stderr, "holds the results of another campaign")
	assert.Contains(t, r.stderr, "--force")
	assert.Equal(t, before, readDir(t, out), "the first campaign's files are untouched")

	r = simrun("fuzz", "redlock-clock-jump", "--runs", "40", "--seed", "4", "--keep", "1", "--out", out, "--force")
	require.Equal(t, exitMismatch, r.code, r.stderr)
	after := readDir(t, out)
	for name, text := range after {
		if strings.HasPrefix(name, "finding-") {
			assert.Contains(t, text, "campaign seed 4", name)
		}
	}
	assert.NotContains(t, after, "finding-4.yaml", "no finding of the first campaign is left")

	// Finding files without a manifest (an older simrun) are refused too.
	old := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(old, "finding-1.yaml"), []byte("x"), 0o644))
	r = simrun("fuzz", "redlock-clock-jump", "--runs", "5", "--out", old)
	assert.Equal(t, exitBadInput, r.code, r.stderr)
	assert.Contains(t, r.stderr, "finding-1.yaml of an earlier campaign")
}

// readDir returns the files of dir with their contents.
func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = string(data)
	}
	return out
}
