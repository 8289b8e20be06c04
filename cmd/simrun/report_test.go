package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// turnsYAML is a scenario file without faults: two clients take turns.
const turnsYAML = `name: user-turns
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

var reportFiles = []string{"index.html", "timeline.png", "timeline.svg", "clocks.png", "clocks.svg"}

// TestRunOutWritesReport checks that run --out writes the report, and that
// simrun report on the recorded result (without re-running anything)
// writes the same bytes elsewhere, porcupine's pages included.
func TestRunOutWritesReport(t *testing.T) {
	dir := t.TempDir()
	r := simrun("run", "redlock-clock-jump", "--out", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	for _, f := range append(reportFiles, "result.json", "trace.jsonl", "lock.html") {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	require.NoError(t, err)
	assert.Contains(t, string(index), `<a href="lock.html">lock.html</a>`)
	assert.Contains(t, string(index), "simrun run redlock-clock-jump --seed 1")

	other := filepath.Join(t.TempDir(), "again")
	r = simrun("report", filepath.Join(dir, "result.json"), "--out", other)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "report of redlock-clock-jump seed 1 written to")
	for _, f := range append(reportFiles, "lock.html", "resource.html") {
		a, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(other, f))
		require.NoError(t, err)
		assert.Equal(t, a, b, "%s differs between run --out and report", f)
	}

	// In place, the default.
	require.NoError(t, os.Remove(filepath.Join(dir, "timeline.png")))
	r = simrun("report", filepath.Join(dir, "result.json"))
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.FileExists(t, filepath.Join(dir, "timeline.png"))
}

// TestReportFromFile reports a run of a scenario file with another seed:
// the command names the file and the seed.
func TestReportFromFile(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "turns.yaml", turnsYAML)
	out := filepath.Join(dir, "out")
	r := simrun("run", file, "--seed", "7", "--out", out)
	require.Equal(t, exitOK, r.code, r.stderr)
	index, err := os.ReadFile(filepath.Join(out, "index.html"))
	require.NoError(t, err)
	assert.Contains(t, string(index), "simrun run "+file+" --seed 7")
	assert.NoFileExists(t, filepath.Join(out, "lock.html"), "no violation, no porcupine page")
}

func TestReportErrors(t *testing.T) {
	dir := t.TempDir()
	notJSON := writeFile(t, dir, "x.json", "{")
	noTrace := writeFile(t, dir, "result.json", `{"scenario": "redlock-clock-jump", "file": "catalogue/redlock-clock-jump.yaml", "seed": 1, "trace_hash": "ab"}`)
	unknown := writeFile(t, t.TempDir(), "result.json", `{"scenario": "no-such-scenario", "trace_hash": "ab"}`)
	tests := []struct {
		name string
		args []string
		errs []string
	}{
		{"missing file", []string{"report", filepath.Join(dir, "nope.json")}, []string{"RESULT.json", "nope.json"}},
		{"not json", []string{"report", notJSON}, []string{"not a simrun result"}},
		{"no trace", []string{"report", noTrace}, []string{"no trace beside the result", "--trace"}},
		{"bad trace flag", []string{"report", noTrace, "--trace", filepath.Join(dir, "missing.jsonl")}, []string{"--trace", "missing.jsonl"}},
		{"unknown scenario", []string{"report", unknown}, []string{"no-such-scenario"}},
		{"no argument", []string{"report"}, []string{"simrun report needs RESULT.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := simrun(tt.args...)
			assert.Equal(t, exitBadInput, r.code, r.stderr)
			for _, e := range tt.errs {
				assert.Contains(t, r.stderr, e)
			}
		})
	}
}

// TestReportWithoutTheScenarioFile: the result carries its scenario, so a
// report is drawn again, the same bytes, after the scenario file is gone.
func TestReportWithoutTheScenarioFile(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, t.TempDir(), "turns.yaml", turnsYAML)
	out := filepath.Join(dir, "out")
	r := simrun("run", file, "--out", out)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.NoError(t, os.Remove(file))
	again := filepath.Join(dir, "again")
	r = simrun("report", filepath.Join(out, "result.json"), "--out", again)
	require.Equal(t, exitOK, r.code, r.stderr)
	for _, f := range []string{"index.html", "timeline.svg", "clocks.svg"} {
		want, err := os.ReadFile(filepath.Join(out, f))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(again, f))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(want, got), "%s differs", f)
	}
}
