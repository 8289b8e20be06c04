package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// quick is a short built-in scenario with a violation it expects (so it
// exits 0): c1 pauses past its lease on a single Redis node.
const quick = "single-gc-pause"

// pauseYAML is a user scenario modelled on single-gc-pause: a 30s pause of
// the holder outlasts its 10s lease, so both clients believe they hold the
// lock. The expect block is appended.
const pauseYAML = `name: user-pause
title: A user's pause scenario
duration: 60s
network:
  latency: 1ms..3ms
redis:
  - name: A
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 10s}
    workload: {start: 0s, cycles: 1, hold: 1s}
  - name: c2
    lock: {algorithm: redis-single, node: A, ttl: 10s}
    workload: {start: 1s, cycles: 1, hold: 2s}
faults:
  - on: {event: acquired, client: c1}
    after: 100ms
    kind: pause
    node: c1
    for: 30s
`

// calmYAML is a user scenario without faults: two clients take turns.
const calmYAML = `name: user-calm
duration: 10s
redis:
  - name: A
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 10s}
    workload: {start: 0s, cycles: 1, hold: 1s}
  - name: c2
    lock: {algorithm: redis-single, node: A, ttl: 10s}
    workload: {start: 0s, cycles: 1, hold: 1s}
`

var hashRE = regexp.MustCompile(`(?m)^trace hash ([0-9a-f]{64})$`)

// TestList checks that list prints every built-in scenario with its title
// and, on the next line, its expectations.
func TestList(t *testing.T) {
	r := simrun("list")
	require.Equal(t, exitOK, r.code, r.stderr)
	cat, err := scenarios.Catalogue()
	require.NoError(t, err)
	require.NotEmpty(t, cat)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	require.Len(t, lines, 2*len(cat), "two lines per scenario")
	for i, s := range cat {
		name, expect := lines[2*i], lines[2*i+1]
		assert.Equal(t, s.Name, strings.Fields(name)[0])
		assert.True(t, strings.HasSuffix(name, "  "+s.Title), "title of %s: %q", s.Name, name)
		assert.Contains(t, expect, "expect: ", s.Name)
		for _, j := range s.Expect.Expected() {
			p, ok := checker.Lookup(j.Property)
			require.True(t, ok, j.Property)
			assert.Contains(t, expect, p.About().Short+" "+string(j.Verdict), s.Name)
		}
	}
	assert.Contains(t, r.stdout, "redlock-clock-jump")
	assert.Regexp(t, `(?m)^\s+expect: lock violated$`, lines[2*indexOf(cat, "redlock-clock-jump")+1])
}

func indexOf(cat []*scenarios.Scenario, name string) int {
	for i, s := range cat {
		if s.Name == name {
			return i
		}
	}
	return -1
}

// TestRunBadInput checks that every kind of bad scenario argument exits 2
// with a message that says what was wrong and where.
func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	unknownField := writeFile(t, dir, "unknown-field.yaml", "name: bad-one\nduration: 10s\nredis:\n  - name: A\ncolour: blue\n")
	badValue := writeFile(t, dir, "bad-value.yaml", "name: bad-two\nduration: ten\nredis:\n  - name: A\n")
	badRef := writeFile(t, dir, "bad-ref.yaml", strings.Replace(pauseYAML, "node: c1", "node: Z", 1))
	notYAML := writeFile(t, dir, "not-yaml.yaml", "name: [unclosed\n")
	markup := writeFile(t, dir, "markup.yaml", strings.Replace(pauseYAML, "- name: c1", `- name: "<img src=x onerror=alert(1)>"`, 1))
	tests := []struct {
		name string
		arg  string
		errs []string
	}{
		{name: "unknown built-in", arg: "no-such-scenario", errs: []string{`"no-such-scenario" is neither a built-in scenario nor a file`, "simrun list"}},
		{name: "misspelt built-in", arg: "redlock-clock-jmp", errs: []string{`"redlock-clock-jmp" is neither a built-in scenario nor a file; did you mean redlock-clock-jump`}},
		{name: "missing file", arg: filepath.Join(dir, "missing.yaml"), errs: []string{"missing.yaml", "no such file"}},
		{name: "a directory with a bad file", arg: dir, errs: []string{dir, "bad-ref.yaml:19: faults[0].node"}},
		{name: "unknown field", arg: unknownField, errs: []string{unknownField + `:5: colour: unknown field "colour"`, "known: "}},
		{name: "bad value", arg: badValue, errs: []string{badValue + `:2: duration: "ten" is not a duration`}},
		{name: "unknown process", arg: badRef, errs: []string{badRef + `:19: faults[0].node: unknown process "Z"`}},
		{name: "not YAML", arg: notYAML, errs: []string{notYAML}},
		{name: "markup in a name", arg: markup, errs: []string{markup + `:`, `.name: "<img src=x onerror=alert(1)>" is not a valid name`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := simrun("run", tt.arg)
			assert.Equal(t, exitBadInput, r.code)
			assert.Empty(t, r.stdout)
			for _, s := range tt.errs {
				assert.Contains(t, r.stderr, s)
			}
			assert.NotContains(t, r.stderr, "%!", "a formatting error")
		})
	}
}

// TestRunSummary checks the readable summary of a built-in scenario.
func TestRunSummary(t *testing.T) {
	r := simrun("run", "redlock-clock-jump")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Empty(t, r.stderr)
	for _, s := range []string{
		"redlock-clock-jump: Clock jump on a minority node (Redlock)\n",
		"source: Kleppmann 2016",
		"seed 1, 30s of virtual time, ",
		"key events:",
		"clock-jump: C's wall clock jumped +30s",
		// Wall-clock readings as seconds since the start, not epoch ms.
		`"lock" deadline=+10.010s now=+30.300s`,
		"verdicts:",
		"  lock safety      violated   (expected violated: ok)",
		"  resource safety  violated",
		"  liveness         not-judged",
		"explanation:\n  - c1 believed it held the lock",
		"and C's wall clock jumped +30s at 0.212s",
		"MATCHED the expected verdicts (replay: simrun run redlock-clock-jump --seed 1)",
	} {
		assert.Contains(t, r.stdout, s)
	}
	assert.NotRegexp(t, `=1767\d{9}`, r.stdout, "no raw epoch milliseconds")
	m := hashRE.FindStringSubmatch(r.stdout)
	require.NotNil(t, m, "no trace hash line in:\n%s", r.stdout)

	// The summary's hash is the JSON's, and the replay hint works.
	j := runJSON(t, "run", "redlock-clock-jump", "--json")
	assert.Equal(t, m[1], j["trace_hash"])
	assert.Equal(t, exitOK, simrun("run", "redlock-clock-jump", "--seed", "1", "--json").code)
}

// runJSON runs simrun, requires exit 0 and returns its stdout as JSON.
func runJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	r := simrun(args...)
	require.Equal(t, exitOK, r.code, r.stderr)
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	return out
}

// TestRunJSON checks that --json prints one object with every key
// DESIGN.md lists ("Command line"), and nothing else.
func TestRunJSON(t *testing.T) {
	r := simrun("run", "redlock-clock-jump", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	var j map[string]any
	require.NoError(t, dec.Decode(&j))
	assert.False(t, dec.More(), "one object only")
	for _, k := range []string{"scenario", "seed", "trace_hash", "events", "virtual_time", "lock_safety", "resource_safety", "liveness", "token_order", "violations", "expected", "matched"} {
		assert.Contains(t, j, k)
	}
	assert.Equal(t, "redlock-clock-jump", j["scenario"])
	assert.Equal(t, 1.0, j["seed"])
	assert.Regexp(t, `^[0-9a-f]{64}$`, j["trace_hash"])
	assert.Greater(t, j["events"], 0.0)
	assert.Equal(t, "30s", j["virtual_time"])
	assert.Equal(t, "violated", j["lock_safety"])
	assert.Equal(t, map[string]any{"lock_safety": "violated"}, j["expected"])
	assert.Equal(t, true, j["matched"])
	v, ok := j["violations"].([]any)
	require.True(t, ok)
	require.NotEmpty(t, v)
	first := v[0].(map[string]any)
	for _, k := range []string{"clients", "windows", "explanation"} {
		assert.Contains(t, first, k)
	}
	assert.Equal(t, []any{"c1", "c2"}, first["clients"])
	assert.Equal(t, "not-used", j["token_order"], "redlock-clock-jump uses no fencing token")

	fenced := runJSON(t, "run", "single-gc-pause-fenced", "--json")
	assert.Equal(t, "holds", fenced["token_order"])
	assert.Equal(t, "holds", fenced["expected"].(map[string]any)["token_order"])
}

// TestRunSeed checks that --seed overrides the scenario's seed and changes
// the run, and that the same seed gives the same hash.
func TestRunSeed(t *testing.T) {
	def := runJSON(t, "run", quick, "--json")
	five := runJSON(t, "run", quick, "--json", "--seed", "5")
	again := runJSON(t, "run", quick, "--json", "--seed", "5")
	assert.Equal(t, 1.0, def["seed"])
	assert.Equal(t, 5.0, five["seed"])
	assert.NotEqual(t, def["trace_hash"], five["trace_hash"])
	assert.Equal(t, five["trace_hash"], again["trace_hash"])
	// --seed 0 is a seed too, not "unset".
	zero := runJSON(t, "run", quick, "--json", "--seed", "0")
	assert.Equal(t, 0.0, zero["seed"])
	assert.NotEqual(t, def["trace_hash"], zero["trace_hash"])
}

// TestRunUserFiles checks the exit code of user scenarios against their
// expect block, or against "no violation" without one.
func TestRunUserFiles(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		yaml string
		code int
		out  []string
	}{
		{
			name: "expect matches",
			yaml: pauseYAML + "expect:\n  lock_safety: violated\n",
			code: exitOK,
			out:  []string{"(expected violated: ok)", "MATCHED"},
		},
		{
			name: "expect does not match",
			yaml: pauseYAML + "expect:\n  lock_safety: holds\n",
			code: exitMismatch,
			out:  []string{"lock safety      violated   (expected holds: MISMATCH)", "did NOT match the expected verdicts"},
		},
		{
			name: "no expect and a violation",
			yaml: pauseYAML,
			code: exitMismatch,
			out:  []string{"lock safety      violated", "explanation:", "did NOT match"},
		},
		{
			name: "no expect and no violation",
			yaml: calmYAML,
			code: exitOK,
			out:  []string{"user-calm\n", "lock safety      holds", "resource safety  holds", "MATCHED"},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, dir, "s"+string(rune('0'+i))+".yaml", tt.yaml)
			r := simrun("run", path)
			assert.Equal(t, tt.code, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
			for _, s := range tt.out {
				assert.Contains(t, r.stdout, s)
			}
			assert.Contains(t, r.stdout, "(replay: simrun run "+path+" --seed 1)")
			j := simrun("run", path, "--json")
			assert.Equal(t, tt.code, j.code)
			var out map[string]any
			require.NoError(t, json.Unmarshal([]byte(j.stdout), &out))
			assert.Equal(t, tt.code == exitOK, out["matched"])
			assert.Equal(t, path, out["file"])
		})
	}
}

// TestRunTrace checks that --trace writes the whole trace as JSON Lines
// that sim.ReadJSONL reads back.
func TestRunTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	j := runJSON(t, "run", quick, "--json", "--trace", path)
	assert.Equal(t, quick, j["scenario"])
	fh, err := os.Open(path)
	require.NoError(t, err)
	defer fh.Close()
	events, err := sim.ReadJSONL(fh)
	require.NoError(t, err)
	require.NotEmpty(t, events)
	for i, e := range events {
		require.Equal(t, uint64(i+1), e.Seq, "events are numbered in order")
	}
	var kinds []sim.Kind
	for _, e := range events {
		if e.Kind == sim.KindFault {
			kinds = append(kinds, e.Kind)
			assert.Equal(t, "pause: c1 paused for 30s", e.Text)
		}
	}
	assert.Len(t, kinds, 1)

	r := simrun("run", quick, "--trace", filepath.Join(t.TempDir(), "no", "such", "dir", "t.jsonl"))
	assert.Equal(t, exitBadInput, r.code)
	assert.Contains(t, r.stderr, "--trace")
}

// TestRunCheckDeterminism checks that --check-determinism runs twice,
// compares and says so.
func TestRunCheckDeterminism(t *testing.T) {
	r := simrun("run", quick, "--check-determinism")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Regexp(t, `determinism check: two runs, \d+ identical events, trace hash [0-9a-f]{64}`, r.stderr)
	m := hashRE.FindStringSubmatch(r.stdout)
	require.NotNil(t, m)
	assert.Contains(t, r.stderr, m[1])
}

// TestRunOut checks that --out writes result.json and trace.jsonl, and that
// replay finds the trace beside the result.
func TestRunOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	r := simrun("run", quick, "--out", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	data, err := os.ReadFile(filepath.Join(dir, "result.json"))
	require.NoError(t, err)
	var res scenarios.Outcome
	require.NoError(t, json.Unmarshal(data, &res))
	assert.Equal(t, quick, res.Scenario)
	assert.True(t, res.Matched)
	m := hashRE.FindStringSubmatch(r.stdout)
	require.NotNil(t, m)
	assert.Equal(t, m[1], res.TraceHash)
	fh, err := os.Open(filepath.Join(dir, "trace.jsonl"))
	require.NoError(t, err)
	events, err := sim.ReadJSONL(fh)
	fh.Close()
	require.NoError(t, err)
	assert.NotEmpty(t, events)

	rp := simrun("replay", filepath.Join(dir, "result.json"))
	assert.Equal(t, exitOK, rp.code, rp.stderr)
	assert.Contains(t, rp.stdout, "matches")

	// A tampered result beside its trace: replay compares with it on its own.
	res.TraceHash = strings.Repeat("0", 64)
	tampered, err := json.Marshal(res)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "result.json"), tampered, 0o644))
	rp = simrun("replay", filepath.Join(dir, "result.json"))
	assert.Equal(t, exitMismatch, rp.code)
	assert.Contains(t, rp.stdout, "no event comparison: trace "+filepath.Join(dir, "trace.jsonl")+" does not belong to")
}

// TestReplay checks replay of results written by run --json: a faithful
// one matches, a tampered one does not (and names the first diverging event
// of the recorded trace when it has one), and a file that is no result is
// bad input.
func TestReplay(t *testing.T) {
	dir := t.TempDir()
	resultPath := filepath.Join(dir, "result.json")
	tracePath := filepath.Join(dir, "trace.jsonl")
	r := simrun("run", quick, "--json", "--seed", "7", "--trace", tracePath)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.NoError(t, os.WriteFile(resultPath, []byte(r.stdout), 0o644))
	var rec map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rec))

	write := func(name string, v any) string {
		data, err := json.Marshal(v)
		require.NoError(t, err)
		return writeFile(t, dir, name, string(data))
	}
	tamper := func(key string, v any) map[string]any {
		c := map[string]any{}
		for k, x := range rec {
			c[k] = x
		}
		c[key] = v
		return c
	}
	// legacy is a result as simrun wrote them before results described
	// their run: without the scenario's text and process table.
	legacy := func(c map[string]any) map[string]any {
		for _, k := range []string{"setup", "processes", "scenario_sha256", "scenario_text"} {
			delete(c, k)
		}
		return c
	}
	wrongHash := write("wrong-hash.json", tamper("trace_hash", strings.Repeat("ab", 32)))

	// A recorded trace whose 11th event differs from the run's.
	data, err := os.ReadFile(tracePath)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	var e sim.Event
	require.NoError(t, json.Unmarshal([]byte(lines[10]), &e))
	e.Text = "tampered"
	b, err := json.Marshal(e)
	require.NoError(t, err)
	lines[10] = string(b) + "\n"
	editedTrace := writeFile(t, dir, "edited.jsonl", strings.Join(lines, ""))
	// A result that records the edited trace's hash: what a result and its
	// trace from another version of locksim look like.
	s, err := scenarios.Builtin(quick)
	require.NoError(t, err)
	w, err := scenarios.Build(s, 7, false)
	require.NoError(t, err)
	fh, err := os.Open(editedTrace)
	require.NoError(t, err)
	edited, err := sim.ReadJSONL(fh)
	fh.Close()
	require.NoError(t, err)
	h, err := sim.HashEvents(edited, w.Kernel.Lookup)
	require.NoError(t, err)
	editedResult := write("edited-result.json", tamper("trace_hash", sim.HashString(h)))
	otherSeed := simrun("run", quick, "--json", "--seed", "8", "--trace", filepath.Join(dir, "seed8.jsonl"))
	require.Equal(t, exitOK, otherSeed.code, otherSeed.stderr)
	garbage := writeFile(t, dir, "garbage.jsonl", "{\"seq\": 1, \"t\": 0, \"kind\": \"start\"}\nnot json\n")
	empty := writeFile(t, dir, "empty.jsonl", "")
	foreign := simrun("run", "redlock-clock-jump", "--json", "--trace", filepath.Join(dir, "foreign.jsonl"))
	require.Equal(t, exitOK, foreign.code, foreign.stderr)

	userFile := writeFile(t, dir, "user.yaml", calmYAML)
	ur := simrun("run", userFile, "--json")
	require.Equal(t, exitOK, ur.code)
	userResult := writeFile(t, dir, "user-result.json", ur.stdout)
	// A result whose scenario file is gone: the result carries it.
	goneFile := writeFile(t, t.TempDir(), "gone.yaml", calmYAML)
	gr := simrun("run", goneFile, "--json")
	require.Equal(t, exitOK, gr.code)
	goneResult := writeFile(t, dir, "gone-result.json", gr.stdout)
	require.NoError(t, os.Remove(goneFile))
	// The user's file edited after the run.
	editedFile := writeFile(t, t.TempDir(), "user.yaml", strings.Replace(calmYAML, "duration: 10s", "duration: 11s", 1))
	require.NotContains(t, calmYAML, "duration: 11s")

	tests := []struct {
		name string
		args []string
		code int
		out  []string
		errs []string
	}{
		{name: "faithful", args: []string{resultPath}, code: exitOK, out: []string{"replay of " + quick + " seed 7: trace hash " + rec["trace_hash"].(string) + " matches"}},
		{name: "faithful user file", args: []string{userResult}, code: exitOK, out: []string{"replay of user-calm seed 1", "matches"}},
		{name: "tampered hash", args: []string{wrongHash}, code: exitMismatch, out: []string{"differs from the recorded " + strings.Repeat("ab", 32)}, errs: []string{"trace hash mismatch"}},
		{name: "tampered hash, genuine trace", args: []string{wrongHash, "--trace", tracePath}, code: exitBadInput, errs: []string{"--trace " + tracePath + " does not belong to " + wrongHash, "abababababab"}},
		{
			name: "recorded trace diverges",
			args: []string{editedResult, "--trace", editedTrace},
			code: exitMismatch,
			out:  []string{"first diverging event #11:", "  recorded: #11 ", "tampered", "  now:      #11 "},
		},
		// The hashes match, but the trace named is not the result's.
		{name: "matching result, trace of another seed", args: []string{resultPath, "--trace", filepath.Join(dir, "seed8.jsonl")}, code: exitBadInput, errs: []string{"seed8.jsonl does not belong to", "seed 7"}},
		{name: "matching result, trace of another scenario", args: []string{resultPath, "--trace", filepath.Join(dir, "foreign.jsonl")}, code: exitBadInput, errs: []string{"foreign.jsonl does not belong to"}},
		{name: "matching result, garbage trace", args: []string{resultPath, "--trace", garbage}, code: exitBadInput, errs: []string{"garbage.jsonl: not a simrun trace", "trace line 2"}},
		{name: "matching result, empty trace", args: []string{resultPath, "--trace", empty}, code: exitBadInput, errs: []string{"empty.jsonl: the trace is empty"}},
		{name: "matching result, missing trace", args: []string{resultPath, "--trace", filepath.Join(dir, "none.jsonl")}, code: exitBadInput, errs: []string{"--trace", "none.jsonl"}},
		{name: "missing trace", args: []string{wrongHash, "--trace", filepath.Join(dir, "none.jsonl")}, code: exitBadInput, errs: []string{"none.jsonl"}},
		{name: "not JSON", args: []string{writeFile(t, dir, "x.json", "this is not json\n")}, code: exitBadInput, errs: []string{"not a simrun result"}},
		{name: "JSON but not a result", args: []string{writeFile(t, dir, "y.json", `{"hello": 1}`)}, code: exitBadInput, errs: []string{"not a simrun result (no scenario or trace_hash)"}},
		{name: "scenario file gone", args: []string{goneResult}, code: exitOK, out: []string{"replay of user-calm seed 1", "matches"}},
		{name: "the same scenario given", args: []string{userResult, userFile}, code: exitOK, out: []string{"matches"}},
		{name: "the scenario changed", args: []string{userResult, editedFile}, code: exitMismatch, errs: []string{"the scenario changed: " + editedFile}},
		{name: "another scenario given", args: []string{resultPath, "redlock-clock-jump"}, code: exitMismatch, errs: []string{"the scenario changed: redlock-clock-jump"}},
		{name: "result of an older simrun", args: []string{write("old.json", legacy(tamper("seed", 7)))}, code: exitOK, out: []string{"matches"}},
		{name: "result of an older simrun, unknown scenario", args: []string{write("z.json", legacy(tamper("scenario", "no-such-scenario")))}, code: exitBadInput, errs: []string{"no-such-scenario"}},
		{name: "result of an older simrun, scenario given", args: []string{write("old2.json", legacy(tamper("seed", 7))), quick}, code: exitBadInput, errs: []string{"cannot tell whether " + quick + " changed"}},
		{name: "missing result", args: []string{filepath.Join(dir, "missing.json")}, code: exitBadInput, errs: []string{"missing.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := simrun(append([]string{"replay"}, tt.args...)...)
			assert.Equal(t, tt.code, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
			for _, s := range tt.out {
				assert.Contains(t, r.stdout, s)
			}
			for _, s := range tt.errs {
				assert.Contains(t, r.stderr, s)
			}
		})
	}
}

// TestRunSet: run --set edits the scenario without a file; the record
// carries the edited text and the edits, so replay reproduces the run; a
// bad edit is exit 2 naming the flag and the path.
func TestRunSet(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	r := simrun("run", "redlock-clock-jump", "--set", "clients[0].lock.ttl=30s", "--out", out)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "replay: simrun run redlock-clock-jump --set 'clients[0].lock.ttl=30s' --seed 1")
	data, err := os.ReadFile(filepath.Join(out, "result.json"))
	require.NoError(t, err)
	rec, err := record.Read("result.json", data)
	require.NoError(t, err)
	assert.Equal(t, []string{"clients[0].lock.ttl=30s"}, rec.Sets)
	assert.Contains(t, rec.ScenarioText, "ttl: 30s")
	plain := simrun("run", "redlock-clock-jump", "--json")
	assert.NotContains(t, plain.stdout, rec.TraceHash, "the edit changed the run")
	rp := simrun("replay", filepath.Join(out, "result.json"), "--trace", filepath.Join(out, "trace.jsonl"))
	assert.Equal(t, exitOK, rp.code, rp.stdout+rp.stderr)
	assert.Contains(t, rp.stdout, "matches")

	for _, tc := range []struct{ set, want string }{
		{"clints[0].lock.ttl=1s", "did you mean clients?"},
		{"clients[0].lock.tl=1s", "did you mean ttl?"},
		{"clients[0].lock.ttl=abc", `"abc" is not a duration`},
		{"ttl", "want PATH=VALUE"},
	} {
		r := simrun("run", "redlock-clock-jump", "--set", tc.set)
		assert.Equal(t, exitBadInput, r.code, tc.set)
		assert.Contains(t, r.stderr, "--set ", tc.set)
		assert.Contains(t, r.stderr, tc.want, tc.set)
	}
}

// TestRunExtends: a scenario extending a built-in runs as the merged
// scenario; a missing base or a cycle is exit 2 naming the extends line.
func TestRunExtends(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.yaml", "extends: redlock-clock-jump\nname: jump-seed-5\nseed: 5\n")
	r := simrun("run", good, "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"scenario": "jump-seed-5"`)
	missing := writeFile(t, dir, "missing.yaml", "extends: redlock-clok-jump\n")
	r = simrun("run", missing)
	assert.Equal(t, exitBadInput, r.code)
	assert.Contains(t, r.stderr, "missing.yaml:1: extends:")
	assert.Contains(t, r.stderr, "did you mean redlock-clock-jump")
	writeFile(t, dir, "a.yaml", "extends: b.yaml\nname: a\n")
	b := writeFile(t, dir, "b.yaml", "extends: a.yaml\nname: b\n")
	r = simrun("run", b)
	assert.Equal(t, exitBadInput, r.code)
	assert.Contains(t, r.stderr, "extends cycle")
}
