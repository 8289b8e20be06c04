package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/outdir"
)

// TestMain lets a test run simrun as a child process (the test binary
// re-executed with SIMRUN_AS_MAIN=1), for what needs a real process:
// signals.
func TestMain(m *testing.M) {
	if os.Getenv("SIMRUN_AS_MAIN") == "1" {
		haltAfterRenames(os.Getenv("SIMRUN_HALT_AFTER_RENAMES"))
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// TestRunOutRemovesStaleFiles is issue 18's first bug: a second run into
// the same --out linked the first run's lock.html.
func TestRunOutRemovesStaleFiles(t *testing.T) {
	dir := t.TempDir()
	r := simrun("run", "redlock-clock-jump", "--out", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.FileExists(t, filepath.Join(dir, "lock.html"))
	require.FileExists(t, filepath.Join(dir, "resource.html"))
	unrelated := writeFile(t, dir, "notes.txt", "mine")

	r = simrun("run", "redlock-clock-slew", "--out", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NoFileExists(t, filepath.Join(dir, "lock.html"), "the first run's page is gone")
	assert.NoFileExists(t, filepath.Join(dir, "resource.html"))
	assert.FileExists(t, unrelated, "files that are no report's are left alone")
	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	require.NoError(t, err)
	assert.NotContains(t, string(index), "lock.html")
	assert.Contains(t, string(index), "redlock-clock-slew")
	for _, n := range dirNames(t, dir) {
		assert.False(t, strings.HasSuffix(n, ".tmp"), "temporary file %s left", n)
	}
}

// TestReportOutRemovesStaleFiles: simrun report into a folder holding
// another run's porcupine page drops it, and does not copy a page the
// result does not have.
func TestReportOutRemovesStaleFiles(t *testing.T) {
	run1 := t.TempDir()
	r := simrun("run", "redlock-clock-slew", "--out", run1)
	require.Equal(t, exitOK, r.code, r.stderr)
	// A stale page beside the result, and one in the target folder.
	writeFile(t, run1, "lock.html", "stale page of another run")
	out := t.TempDir()
	writeFile(t, out, "resource.html", "stale page of another run")

	r = simrun("report", filepath.Join(run1, "result.json"), "--out", out)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NoFileExists(t, filepath.Join(out, "lock.html"), "a page of another run is not copied")
	assert.NoFileExists(t, filepath.Join(out, "resource.html"), "a stale page is removed")

	r = simrun("report", filepath.Join(run1, "result.json"))
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NoFileExists(t, filepath.Join(run1, "lock.html"), "in place, the stale page is removed")
	assert.FileExists(t, filepath.Join(run1, "result.json"))
	assert.FileExists(t, filepath.Join(run1, "trace.jsonl"))
}

// TestOutSymlinksAreNotFollowed: a symlink planted in --out is replaced,
// its target untouched; an --out that is a symlink is refused.
func TestOutSymlinksAreNotFollowed(t *testing.T) {
	tmp := t.TempDir()
	victim := writeFile(t, tmp, "victim.txt", "precious")
	dir := filepath.Join(tmp, "out")
	require.NoError(t, os.Mkdir(dir, 0o755))
	for _, n := range []string{"index.html", "trace.jsonl", "result.json", "lock.html"} {
		require.NoError(t, os.Symlink(victim, filepath.Join(dir, n)))
	}
	r := simrun("run", quick, "--out", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	got, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "precious", string(got))
	for _, n := range []string{"index.html", "trace.jsonl", "result.json", "lock.html"} {
		st, err := os.Lstat(filepath.Join(dir, n))
		require.NoError(t, err)
		assert.True(t, st.Mode().IsRegular(), "%s is a file of this run, not the planted link", n)
	}

	r = simrun("report", filepath.Join(dir, "result.json"), "--out", dir)
	require.Equal(t, exitOK, r.code, r.stderr)

	link := filepath.Join(tmp, "link-out")
	require.NoError(t, os.Symlink(dir, link))
	r = simrun("run", quick, "--out", link)
	assert.Equal(t, exitBadInput, r.code)
	assert.Contains(t, r.stderr, "--out: output directory "+link+" is a symbolic link")

	r = simrun("run", quick, "--trace", filepath.Join(dir, "index.html"))
	require.Equal(t, exitOK, r.code, r.stderr)
	require.NoError(t, os.Symlink(victim, filepath.Join(tmp, "t.jsonl")))
	r = simrun("run", quick, "--trace", filepath.Join(tmp, "t.jsonl"))
	assert.Equal(t, exitBadInput, r.code)
	assert.Contains(t, r.stderr, "--trace: "+filepath.Join(tmp, "t.jsonl")+" is a symbolic link")
	got, err = os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "precious", string(got))
}

// TestTraceNeverOverwritesTheScenario: run my.yaml --trace my.yaml is bad
// input, found before the run, and the scenario is left as it was; so is an
// --out folder that would overwrite it.
func TestTraceNeverOverwritesTheScenario(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "result.json", calmYAML)
	tests := []struct {
		name string
		args []string
		errs string
	}{
		{"same path", []string{"run", file, "--trace", file}, "--trace: " + file + " is also an input"},
		{"another spelling", []string{"run", file, "--trace", filepath.Join(dir, ".", "result.json")}, "is also an input"},
		{"--out over the scenario", []string{"run", file, "--out", dir}, "would overwrite the scenario"},
		{"trace into a directory", []string{"run", file, "--trace", dir}, "is a directory"},
		{"trace under a missing folder", []string{"run", file, "--trace", filepath.Join(dir, "no", "t.jsonl")}, "--trace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := simrun(tt.args...)
			assert.Equal(t, exitBadInput, r.code)
			assert.Contains(t, r.stderr, tt.errs)
			assert.Empty(t, r.stdout, "refused before running")
			got, err := os.ReadFile(file)
			require.NoError(t, err)
			assert.Equal(t, calmYAML, string(got))
		})
	}
	hard := filepath.Join(dir, "hard.yaml")
	require.NoError(t, os.Link(file, hard))
	r := simrun("run", hard, "--trace", file)
	assert.Equal(t, exitBadInput, r.code)
	assert.Contains(t, r.stderr, "same file as the input")
}

// TestReportRefusesForeignTrace: report --trace with another seed's trace,
// garbage or nothing exits 2 naming the mismatch instead of drawing it
// under this run's title.
func TestReportRefusesForeignTrace(t *testing.T) {
	dir := t.TempDir()
	r := simrun("run", quick, "--out", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	other := filepath.Join(t.TempDir(), "seed2.jsonl")
	r = simrun("run", quick, "--seed", "2", "--trace", other)
	require.Equal(t, exitOK, r.code, r.stderr)
	garbage := writeFile(t, t.TempDir(), "g.jsonl", "garbage\n")
	result := filepath.Join(dir, "result.json")
	tests := []struct {
		name string
		args []string
		errs []string
	}{
		{"another seed", []string{"report", result, "--trace", other, "--out", t.TempDir()}, []string{"--trace " + other + " does not belong to " + result, "seed 1"}},
		{"garbage", []string{"report", result, "--trace", garbage, "--out", t.TempDir()}, []string{"not a simrun trace"}},
		{"missing", []string{"report", result, "--trace", filepath.Join(dir, "none.jsonl"), "--out", t.TempDir()}, []string{"--trace", "none.jsonl"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := simrun(tt.args...)
			assert.Equal(t, exitBadInput, r.code)
			for _, e := range tt.errs {
				assert.Contains(t, r.stderr, e)
			}
		})
	}
	// The trace beside the result is checked too.
	data, err := os.ReadFile(other)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "trace.jsonl"), data, 0o644))
	r = simrun("report", result)
	assert.Equal(t, exitBadInput, r.code)
	assert.Contains(t, r.stderr, "does not belong to")
}

// TestOutputGuardOnSignal: a SIGINT while outputs are staged drops them
// all, keeps the previous files whole, says so and exits 128+2.
func TestOutputGuardOnSignal(t *testing.T) {
	dir := t.TempDir()
	d, err := outdir.Prepare(dir)
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.WriteFile("trace.jsonl", []byte("{\"seq\":1}\n")))

	codes := make(chan int, 1)
	old := outdir.ExitProcess
	outdir.ExitProcess = func(code int) { codes <- code; runtime.Goexit() }
	defer func() { outdir.ExitProcess = old }()

	var stderr bytes.Buffer
	g := outdir.NewGuard(&stderr)
	defer g.Stop()
	g.Track(d)
	require.NoError(t, g.StageBytes(d, "trace.jsonl", []byte(`{"seq":1}`+"\n"+`{"seq":2,"t":`)))
	require.NoError(t, g.StageBytes(d, "index.html", []byte("<html>")))
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
	select {
	case code := <-codes:
		assert.Equal(t, 130, code)
	case <-time.After(10 * time.Second):
		t.Fatal("the guard did not handle SIGINT")
	}
	assert.Contains(t, stderr.String(), "interrupted")
	assert.Equal(t, []string{"trace.jsonl"}, dirNames(t, dir), "no temporary file, no half report")
	got, err := os.ReadFile(filepath.Join(dir, "trace.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, "{\"seq\":1}\n", string(got), "the previous trace is whole")
}

// TestRunInterrupted is the Ctrl-C bug end to end: simrun run --out in a
// child process gets SIGINT mid-run; it exits 130 with a message, and the
// folder holds the previous report, whole, with no temporary file.
func TestRunInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	r := simrun("run", quick, "--out", out)
	require.Equal(t, exitOK, r.code, r.stderr)
	before := map[string][]byte{}
	for _, n := range dirNames(t, out) {
		b, err := os.ReadFile(filepath.Join(out, n))
		require.NoError(t, err)
		before[n] = b
	}
	long := writeFile(t, dir, "long.yaml", `name: long-calm
duration: 1h
redis:
  - name: A
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 10s}
    workload: {start: 0s, cycles: 100000, hold: 100ms}
  - name: c2
    lock: {algorithm: redis-single, node: A, ttl: 10s}
    workload: {start: 0s, cycles: 100000, hold: 100ms}
`)
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "run", long, "--out", out)
	cmd.Env = append(os.Environ(), "SIMRUN_AS_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	// Well into the run (the whole takes about 13 s of CPU): half a second
	// of the child's CPU time, not of wall time, so that a loaded machine
	// cannot send the signal before the child installed its handler.
	waitCPU(t, cmd.Process.Pid, 500*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr: %s", stderr.String())
	assert.Equal(t, 130, ee.ExitCode(), "stderr: %s", stderr.String())
	assert.Contains(t, stderr.String(), "simrun: interrupted")
	var after []string
	for _, n := range dirNames(t, out) {
		after = append(after, n)
		b, err := os.ReadFile(filepath.Join(out, n))
		require.NoError(t, err)
		assert.Equal(t, before[n], b, "%s changed", n)
	}
	assert.Len(t, after, len(before), "no temporary or partial file: %v", after)
	var res map[string]any
	require.NoError(t, json.Unmarshal(before["result.json"], &res))
}
