package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
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
