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
	_, err := os.Stat(filepath.Join(dir, "f"))
	assert.True(t, os.IsNotExist(err), "no folder when nothing was found")
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
