package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim"
	"github.com/locksim/locksim/internal/buildinfo"
	"github.com/locksim/locksim/scenarios"
)

func TestListJSON(t *testing.T) {
	r := simrun("list", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var entries []listEntry
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &entries))
	names := scenarios.BuiltinNames()
	require.Len(t, entries, len(names))
	for i, e := range entries {
		assert.Equal(t, names[i], e.Name)
		assert.NotEmpty(t, e.Title)
		assert.NotEmpty(t, e.Expect, "%s states its expected verdicts", e.Name)
	}
	byName := map[string]listEntry{}
	for _, e := range entries {
		byName[e.Name] = e
	}
	assert.Equal(t, map[string]string{"lock_safety": "violated", "resource_safety": "violated"}, byName["single-gc-pause"].Expect)
	assert.Equal(t, "1m0s", byName["single-gc-pause"].Duration)
}

func TestRunSeveral(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a-calm.yaml", calmYAML)
	writeFile(t, dir, "b-pause.yaml", pauseYAML) // violations, no expect block: exit 1
	writeFile(t, dir, "notes.txt", "not a scenario")

	r := simrun("run", quick, "redlock-clock-slew")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "SCENARIO")
	assert.Contains(t, r.stdout, quick)
	assert.Contains(t, r.stdout, "redlock-clock-slew")
	assert.Contains(t, r.stdout, "2 of 2 scenarios matched their expected verdicts")

	out := filepath.Join(t.TempDir(), "reports")
	r = simrun("run", quick, dir, "--out", out)
	assert.Equal(t, exitMismatch, r.code, "the worst code: one does not match")
	assert.Contains(t, r.stdout, filepath.Join(dir, "a-calm.yaml"))
	assert.Regexp(t, `b-pause.yaml\s+1\s+violated\s+violated\s+\S+\s+\S+\s+MISMATCH\s+1`, r.stdout)
	assert.Contains(t, r.stdout, "2 of 3 scenarios matched")
	assert.NotContains(t, r.stdout, "notes.txt")
	for _, sub := range []string{quick, "user-calm", "user-pause"} {
		assert.FileExists(t, filepath.Join(out, sub, "index.html"))
	}

	r = simrun("run", quick, "redlock-clock-slew", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var arr []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &arr))
	require.Len(t, arr, 2)
	assert.Equal(t, quick, arr[0]["scenario"])

	r = simrun("run", quick, "redlock-clock-slew", "--trace", filepath.Join(dir, "t.jsonl"))
	assert.Equal(t, exitBadInput, r.code)
	assert.Contains(t, r.stderr, "--trace names one file")

	empty := t.TempDir()
	r = simrun("run", empty)
	assert.Equal(t, exitBadInput, r.code)
	assert.Contains(t, r.stderr, "without scenario files")

	r = simrun("run", quick, "no-such-one")
	assert.Equal(t, exitBadInput, r.code, "every argument is loaded before any run")
	assert.Empty(t, r.stdout)
}

func TestDiff(t *testing.T) {
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	require.Equal(t, exitOK, simrun("run", "redlock-clock-jump", "--out", a).code)
	require.Equal(t, exitOK, simrun("run", "redlock-clock-jump", "--out", b).code)
	require.Equal(t, exitOK, simrun("run", "redlock-clock-slew", "--out", c).code)
	jsonOnly := writeFile(t, t.TempDir(), "r.json", simrun("run", "redlock-clock-jump", "--seed", "2", "--json").stdout)

	r := simrun("diff", a, b)
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "same trace hash")
	assert.NotContains(t, r.stdout, "DIFFERS")

	r = simrun("diff", a, filepath.Join(c, "result.json"))
	assert.Equal(t, exitMismatch, r.code, r.stderr)
	assert.Contains(t, r.stdout, "different scenarios")
	assert.Regexp(t, `lock safety\s+violated\s+holds\s+DIFFERS`, r.stdout)
	assert.Contains(t, r.stdout, "first diverging event #")
	assert.Contains(t, r.stdout, "  A: #")

	r = simrun("diff", a, jsonOnly)
	assert.Equal(t, exitMismatch, r.code, r.stderr)
	assert.Contains(t, r.stdout, "no event comparison: B: no trace beside")

	r = simrun("diff", a, jsonOnly, "--trace-b", filepath.Join(a, "trace.jsonl"))
	assert.Equal(t, exitBadInput, r.code)
	assert.Contains(t, r.stderr, "--trace-b "+filepath.Join(a, "trace.jsonl")+" does not belong to")

	r = simrun("diff", a, filepath.Join(t.TempDir(), "none"))
	assert.Equal(t, exitBadInput, r.code)
	assert.Contains(t, r.stderr, "B: ")

	// The same file, edited between two runs.
	dir := t.TempDir()
	file := writeFile(t, dir, "calm.yaml", calmYAML)
	require.Equal(t, exitOK, simrun("run", file, "--out", filepath.Join(dir, "before")).code)
	writeFile(t, dir, "calm.yaml", strings.Replace(calmYAML, "duration: 10s", "duration: 11s", 1))
	require.Equal(t, exitOK, simrun("run", file, "--out", filepath.Join(dir, "after")).code)
	r = simrun("diff", filepath.Join(dir, "before"), filepath.Join(dir, "after"))
	assert.Equal(t, exitMismatch, r.code, r.stderr)
	assert.Contains(t, r.stdout, "different scenarios: the scenario changed between the runs")
}

func TestCompletion(t *testing.T) {
	r := simrun("__complete", "run", "redlock-clock-")
	require.Equal(t, exitOK, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var got []string
	for _, l := range lines {
		if !strings.HasPrefix(l, ":") {
			got = append(got, l)
		}
	}
	var want []string
	for _, n := range scenarios.BuiltinNames() {
		if strings.HasPrefix(n, "redlock-clock-") {
			want = append(want, n)
		}
	}
	require.NotEmpty(t, want)
	assert.Equal(t, want, got)

	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		r := simrun("completion", shell)
		assert.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stdout, "simrun")
	}
}

// TestRunSummaryCapsKeyEvents: a long run's summary stays on a screen and
// says how many key events it left out and where they are.
func TestRunSummaryCapsKeyEvents(t *testing.T) {
	long := writeFile(t, t.TempDir(), "long.yaml", strings.Replace(strings.Replace(calmYAML, "duration: 10s", "duration: 2m", 1), "cycles: 1", "cycles: 200", -1))
	r := simrun("run", long)
	require.Equal(t, exitOK, r.code, r.stderr)
	keyLines := 0
	inKeys := false
	for _, l := range strings.Split(r.stdout, "\n") {
		switch {
		case l == "key events:":
			inKeys = true
		case l == "":
			inKeys = false
		case inKeys:
			keyLines++
		}
	}
	assert.Equal(t, locksim.DefaultKeyEvents+1, keyLines, "40 events and the omission line")
	assert.Regexp(t, `\.\.\. \d+ key events omitted \(\d+\.\d{3}s to \d+\.\d{3}s\); all of them: --events 0, the full trace: --trace FILE or --out DIR`, r.stdout)

	r = simrun("run", long, "--events", "10", "--trace", filepath.Join(t.TempDir(), "t.jsonl"))
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "t.jsonl\n")

	all := simrun("run", long, "--events", "0")
	require.Equal(t, exitOK, all.code)
	assert.NotContains(t, all.stdout, "omitted")
	assert.Greater(t, strings.Count(all.stdout, "\n"), 400)

	r = simrun("run", long, "--events", "-1")
	assert.Equal(t, exitBadInput, r.code)
}

func TestVersionString(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/locksim/locksim", Version: "v0.3.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0608a5a"},
			{Key: "vcs.time", Value: "2026-11-22T14:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	assert.Equal(t, "simrun v0.3.0 revision 0608a5a (modified) 2026-11-22T14:00:00Z, github.com/locksim/locksim, go1.26.8", buildinfo.Describe("simrun", "", bi, true))
	assert.Equal(t, "simrun v9 revision 0608a5a (modified) 2026-11-22T14:00:00Z, github.com/locksim/locksim, go1.26.8", buildinfo.Describe("simrun", "v9", bi, true))
	assert.Equal(t, "simrun (devel), github.com/locksim/locksim, go1.26.8", buildinfo.Describe("simrun", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/locksim/locksim"}}, true))
	assert.Contains(t, buildinfo.Describe("simrun", "", nil, false), "unknown")
	installed := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/locksim/locksim", Version: "v0.0.0-20261122140000-0608a5a1b2c3"}}
	assert.Equal(t, "simrun v0.0.0-20261122140000-0608a5a1b2c3 revision 0608a5a1b2c3, github.com/locksim/locksim, go1.26.8", buildinfo.Describe("simrun", "", installed, true), "go install module@commit")
	for _, v := range []string{"v1.2.3", "v1.2.3-rc.1", "v1.2.4-0.20261122140000-0608a5a1b2c3+dirty", "v0.0.0-2026112214000-0608a5a1b2c3"} {
		want := ""
		if strings.Contains(v, "+dirty") {
			want = "0608a5a1b2c3"
		}
		assert.Equal(t, want, buildinfo.PseudoRevision(v), v)
	}
	assert.NotContains(t, versionString(), "dev\n")
}

// TestVersionOfBuiltBinary builds simrun as go build does in a clone and
// checks that version reports the module and the VCS revision.
func TestVersionOfBuiltBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	exe := filepath.Join(t.TempDir(), "simrun")
	out, err := runGo(t, "build", "-o", exe, ".")
	require.NoError(t, err, out)
	got, err := runCmd(t, exe, "version")
	require.NoError(t, err, got)
	assert.Regexp(t, `^simrun \S+ `, got)
	assert.Contains(t, got, "github.com/locksim/locksim")
	assert.NotContains(t, got, "simrun dev")
	// The go command stamps the revision unless told not to (GOFLAGS
	// -buildvcs=false) or unable to (a git worktree, whose .git is a file):
	// whatever it stamped must show.
	meta, err := runGo(t, "version", "-m", exe)
	require.NoError(t, err, meta)
	for _, l := range strings.Split(meta, "\n") {
		if f := strings.Fields(l); len(f) == 2 && strings.HasPrefix(f[1], "vcs.revision=") {
			assert.Contains(t, got, "revision "+strings.TrimPrefix(f[1], "vcs.revision="))
		}
	}
	_ = os.Remove(exe)
}

// TestFacadeWritesSimrunsReport: the Go facade's WriteReport and simrun run
// --out write the same report, byte for byte.
func TestFacadeWritesSimrunsReport(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	r := simrun("run", "redlock-clock-jump", "--out", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	s, err := locksim.Builtin("redlock-clock-jump")
	require.NoError(t, err)
	res, err := locksim.Run(s, locksim.Options{KeepTrace: true})
	require.NoError(t, err)
	require.NoError(t, res.WriteReport(other))
	assert.Equal(t, dirNames(t, dir), dirNames(t, other))
	for _, n := range dirNames(t, dir) {
		a, err := os.ReadFile(filepath.Join(dir, n))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(other, n))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(a, b), "%s differs", n)
	}
}

// TestRunImpossibleWorlds: worlds where nothing can happen are bad input
// naming the field (issue 18), and YAML aliases read as their values.
func TestRunImpossibleWorlds(t *testing.T) {
	dir := t.TempDir()
	cycle := writeFile(t, dir, "cycle.yaml", strings.Replace(calmYAML, "  - name: A\n", "  - name: A\n    replicaof: B\n  - name: B\n    replicaof: A\n", 1))
	slow := writeFile(t, dir, "slow.yaml", strings.Replace(calmYAML, "redis:", "network: {latency: 1000h}\nredis:", 1))
	tests := []struct {
		name string
		arg  string
		err  string
	}{
		{"replicaof cycle", cycle, cycle + ":5: redis[0].replicaof: replication cycle A -> B -> A"},
		{"latency beyond the run", slow, slow + ":3: network.latency: 1000h0m0s is at or beyond the run's duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := simrun("run", tt.arg)
			assert.Equal(t, exitBadInput, r.code)
			assert.Contains(t, r.stderr, tt.err)
			assert.Empty(t, r.stdout)
		})
	}
	aliases := writeFile(t, dir, "aliases.yaml", `name: aliases
duration: 10s
redis:
  - name: A
clients:
  - name: c1
    lock: &lock {algorithm: redis-single, node: A, ttl: 10s}
    workload: &work {start: 0s, cycles: 1, hold: 1s}
  - name: c2
    lock: *lock
    workload: {<<: *work, start: 1s}
`)
	r := simrun("run", aliases)
	assert.Equal(t, exitOK, r.code, r.stderr)
}

// TestRunSeveralIndex: simrun run A B C --out DIR writes DIR/index.html,
// which lists every scenario with its verdicts (the expected ones
// beside), whether it matched, its numbers and a link to its report
// folder; one that could not run is listed with its error. Without --out
// nothing is written.
func TestRunSeveralIndex(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "b-pause.yaml", pauseYAML)
	out := filepath.Join(t.TempDir(), "reports")
	r := simrun("run", quick, "redlock-clock-jump", filepath.Join(dir, "b-pause.yaml"), "--out", out, "--max-events", "1000000")
	assert.Equal(t, exitMismatch, r.code, r.stderr)
	data, err := os.ReadFile(filepath.Join(out, "index.html"))
	require.NoError(t, err)
	page := string(data)
	assert.Contains(t, page, "3 scenarios, 2 matched their expected verdicts")
	for _, sub := range []string{quick, "redlock-clock-jump", "user-pause"} {
		assert.Contains(t, page, `<a href="`+sub+`/index.html">`, "a link to %s's report", sub)
		assert.FileExists(t, filepath.Join(out, sub, "index.html"))
	}
	assert.Contains(t, page, `<td class="violated">violated <span class="ok">(violated)</span></td>`, "the clock jump's lock safety, expected")
	assert.Contains(t, page, "MISMATCH")
	rec, err := locksim.ReadRecord(filepath.Join(out, "redlock-clock-jump", "result.json"))
	require.NoError(t, err)
	st := rec.Stats
	require.NotNil(t, st)
	assert.Regexp(t, `<td class="num">`+itoaTest(st.Grants)+`</td><td class="num">`+regexpQuote(st.Latency.P50.Round(time.Microsecond).String())+`</td>`, page, "the numbers")

	// A scenario that cannot run (its event budget) is listed with its error.
	r = simrun("run", quick, "redlock-clock-jump", "--out", out, "--max-events", "100")
	assert.Equal(t, exitInconclusive, r.code, r.stderr)
	data, err = os.ReadFile(filepath.Join(out, "index.html"))
	require.NoError(t, err)
	assert.Contains(t, string(data), "event budget of 100 events exhausted")

	cwd := t.TempDir()
	t.Chdir(cwd)
	r = simrun("run", quick, "redlock-clock-jump")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NoFileExists(t, filepath.Join(cwd, "index.html"), "no --out, no index")
}

func itoaTest(n int) string { return strconv.Itoa(n) }

func regexpQuote(s string) string { return regexp.QuoteMeta(s) }
