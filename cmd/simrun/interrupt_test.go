package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/fuzz"
)

// TestCampaignInterrupted is issue 25: an interrupted fuzz or sweep exited
// 3 (the README says 130, 143 for SIGTERM) and a sweep left an empty
// --out. Each campaign, run as a child process and signalled well into its
// runs, ends with the signal's code after writing what it found: a
// readable campaign.json marked interrupted, the fuzz's findings, the
// sweep's finished points.
func TestCampaignInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	campaigns := []struct {
		name  string
		args  []string
		files []string // written into --out besides campaign.json
	}{
		{"fuzz", []string{"fuzz", "redlock-clock-jump", "--time", "1h", "--quiet"}, []string{"base.yaml", "finding-1.yaml"}},
		{"sweep", []string{"sweep", "redlock-clock-jump", "--param", "faults[1].by=0s..30s/1000", "--seeds", "20", "--quiet"},
			[]string{"base.yaml", "sweep.csv", "sweep.png", "sweep.svg", "points/point-000.yaml"}},
	}
	signals := []struct {
		sig  syscall.Signal
		name string
		code int
	}{
		{syscall.SIGINT, "SIGINT", 130},
		{syscall.SIGTERM, "SIGTERM", 143},
	}
	for _, c := range campaigns {
		for _, s := range signals {
			t.Run(c.name+"/"+s.name, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "out")
				cmd := exec.Command(exe, append(c.args, "--out", out)...)
				cmd.Env = append(os.Environ(), "SIMRUN_AS_MAIN=1")
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				require.NoError(t, cmd.Start())
				t.Cleanup(func() { _ = cmd.Process.Kill() })
				// CPU time, not wall time: a loaded machine cannot send
				// the signal before the child's first runs.
				waitCPU(t, cmd.Process.Pid, 1500*time.Millisecond)
				require.NoError(t, cmd.Process.Signal(s.sig))
				err := cmd.Wait()
				var ee *exec.ExitError
				require.ErrorAs(t, err, &ee, "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
				assert.Equal(t, s.code, ee.ExitCode(), "stderr: %s", stderr.String())
				assert.Contains(t, stderr.String(), "interrupted by "+s.name)
				assert.Contains(t, stderr.String(), "wrote ")
				m, err := fuzz.ReadManifest(out)
				require.NoError(t, err, "stderr: %s", stderr.String())
				assert.True(t, m.Interrupted)
				assert.Greater(t, m.Done, 0)
				if c.name == "sweep" { // a --time fuzz's total is the runs it did
					assert.Less(t, m.Done, m.Total, "signalled before the end")
				}
				for _, f := range c.files {
					assert.FileExists(t, filepath.Join(out, f))
				}
			})
		}
	}
}

// lockedBuffer is a bytes.Buffer a child process writes while the test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// interruptChild runs simrun with args as a child process, sends it sig
// once ready says so, and returns its exit code and output; it fails the
// test when the child ends on its own first.
func interruptChild(t *testing.T, args []string, sig syscall.Signal, ready func(pid int, stderr *lockedBuffer)) (code int, stdout, stderr string) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "SIMRUN_AS_MAIN=1")
	var out, errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	ready(cmd.Process.Pid, &errb)
	require.NoError(t, cmd.Process.Signal(sig))
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the child ended without an error\nstdout: %s\nstderr: %s", out.String(), errb.String())
	return ee.ExitCode(), out.String(), errb.String()
}

var interruptSignals = []struct {
	sig  syscall.Signal
	name string
	code int
}{
	{syscall.SIGINT, "SIGINT", 130},
	{syscall.SIGTERM, "SIGTERM", 143},
}

// TestMatrixInterrupted: an interrupted matrix exits 130 (143) and writes
// nothing: a folder that held an earlier matrix keeps it, a new one is
// not left behind.
func TestMatrixInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, s := range interruptSignals {
		t.Run(s.name, func(t *testing.T) {
			tmp := t.TempDir()
			earlier := filepath.Join(tmp, "earlier")
			require.NoError(t, os.MkdirAll(earlier, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(earlier, "matrix.csv"), []byte("an earlier matrix\n"), 0o644))
			for _, out := range []string{earlier, filepath.Join(tmp, "new")} {
				code, _, stderr := interruptChild(t, []string{"matrix", "--runs", "20", "--workers", "1", "--quiet", "--out", out}, s.sig,
					func(pid int, _ *lockedBuffer) { waitCPU(t, pid, 1500*time.Millisecond) })
				assert.Equal(t, s.code, code, "stderr: %s", stderr)
				assert.Contains(t, stderr, "interrupted by "+s.name+": ")
				assert.Contains(t, stderr, "a partial matrix is not written: --out left as it was")
			}
			got, err := os.ReadFile(filepath.Join(earlier, "matrix.csv"))
			require.NoError(t, err)
			assert.Equal(t, "an earlier matrix\n", string(got))
			entries, err := os.ReadDir(earlier)
			require.NoError(t, err)
			assert.Len(t, entries, 1, "nothing added to the earlier folder")
			assert.NoDirExists(t, filepath.Join(tmp, "new"))
		})
	}
}

// TestExploreInterrupted: an interrupted exploration exits 130 (143)
// after writing what it found: campaign.json marked interrupted, with the
// schedules done, and base.yaml.
func TestExploreInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, s := range interruptSignals {
		t.Run(s.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, _, stderr := interruptChild(t, []string{"explore", "redlock-clock-jump", "--workers", "1", "--quiet", "--out", out}, s.sig,
				func(pid int, _ *lockedBuffer) { waitCPU(t, pid, 1500*time.Millisecond) })
			assert.Equal(t, s.code, code, "stderr: %s", stderr)
			assert.Contains(t, stderr, "interrupted by "+s.name+": stopped after ")
			assert.Contains(t, stderr, "wrote the findings so far")
			m, err := fuzz.ReadManifest(out)
			require.NoError(t, err, "stderr: %s", stderr)
			assert.True(t, m.Interrupted)
			assert.Greater(t, m.Done, 0)
			assert.Less(t, m.Done, m.Total, "signalled before the end")
			assert.FileExists(t, filepath.Join(out, fuzz.BaseFile))
		})
	}
}

// TestMergeInterrupted: a merge interrupted while it shrinks exits 130
// (143) after writing the merged findings, the ones shrunk so far and
// campaign.json.
func TestMergeInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	tmp := t.TempDir()
	exe, err := os.Executable()
	require.NoError(t, err)
	var shards []string
	for k := 0; k < 2; k++ {
		dir := filepath.Join(tmp, "shard"+strconv.Itoa(k))
		cmd := exec.Command(exe, "fuzz", "redlock-clock-jump", "--runs", "1000", "--seed", "4", "--keep", "50", "--quiet",
			"--shard", strconv.Itoa(k)+"/2", "--out", dir)
		cmd.Env = append(os.Environ(), "SIMRUN_AS_MAIN=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		shards = append(shards, dir)
	}
	for _, s := range interruptSignals {
		t.Run(s.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "merged")
			code, _, stderr := interruptChild(t, append([]string{"merge", "--shrink", "--out", out}, shards...), s.sig,
				func(_ int, stderr *lockedBuffer) {
					for i := 0; !strings.Contains(stderr.String(), "shrinking the written findings"); i++ {
						require.Less(t, i, 12000, "no shrinking in 2 minutes; stderr: %s", stderr.String())
						time.Sleep(10 * time.Millisecond)
					}
				})
			assert.Equal(t, s.code, code, "stderr: %s", stderr)
			assert.Contains(t, stderr, "interrupted by "+s.name+": stopped after 1000 runs; wrote the findings so far")
			m, err := fuzz.ReadManifest(out)
			require.NoError(t, err, "stderr: %s", stderr)
			assert.Equal(t, 1000, m.Done, "the merged runs are all there; only the shrinking stopped")
			found, _ := filepath.Glob(filepath.Join(out, "finding-*[0-9].yaml"))
			shrunk, _ := filepath.Glob(filepath.Join(out, "finding-*.shrunk.yaml"))
			require.NotEmpty(t, found)
			assert.Less(t, len(shrunk), len(found), "the shrinking stopped before the last finding")
		})
	}
}
