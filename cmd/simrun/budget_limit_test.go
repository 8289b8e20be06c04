package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runawayUnderLimit runs simrun as a child process (the test binary
// re-executed, see TestMain) through sh, which first applies setup (a
// ulimit, or joining a cgroup), and returns the exit code and stderr.
func runawayUnderLimit(t *testing.T, setup string, args ...string) (int, string) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	script := setup + `; exec "$0" "$@"`
	cmd := exec.Command("sh", append([]string{"-c", script, exe}, args...)...)
	cmd.Env = append(os.Environ(), "SIMRUN_AS_MAIN=1", "GOMEMLIMIT=")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	out := stderr.String()
	if len(out) > 1500 {
		out = out[:1500] + "... (cut)" // a runtime crash dumps every goroutine
	}
	return code, out
}

// TestRunawayUnderAddressSpaceLimit is issue 28's crash: under `ulimit -v`
// of 4 GiB a runaway world (100 clients retrying every millisecond, so an
// attempt is always in flight and no quiet point comes) died in the Go
// runtime ("fatal error: out of memory", exit 2) at about 2 GB, before the
// fixed 4 GiB budget was reached. The default budget now follows the limit
// and stops it with exit 3 and the budget's message.
func TestRunawayUnderAddressSpaceLimit(t *testing.T) {
	code, stderr := runawayUnderLimit(t, "ulimit -v 4194304", "run", "testdata/retry-storm.yaml", "--json")
	assert.Equal(t, exitInconclusive, code, "stderr: %s", stderr)
	assert.NotContains(t, stderr, "fatal error")
	assert.Contains(t, stderr, "memory budget of")
	assert.Contains(t, stderr, "the address-space limit (ulimit -v, RLIMIT_AS)")
	assert.Contains(t, stderr, "--max-memory")
}

// TestRunawayInCgroup runs the same world in a child cgroup with a 512 MiB
// memory limit (where this machine lets the test make one): without the
// default budget following the limit the kernel's OOM killer ends the
// process (SIGKILL, the shard's findings lost); with it, exit 3 and the
// message.
func TestRunawayInCgroup(t *testing.T) {
	dir, limitFile := makeMemoryCgroup(t)
	if dir == "" {
		t.Skip("SKIPPED: cannot create a child memory cgroup on this machine (needs root and a writable cgroup file system); TestRunawayUnderAddressSpaceLimit covers the limit through ulimit")
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, limitFile), []byte(fmt.Sprint(512<<20)), 0o644))
	setup := fmt.Sprintf("echo $$ > %s", filepath.Join(dir, "cgroup.procs"))
	code, stderr := runawayUnderLimit(t, setup, "run", "testdata/retry-storm.yaml", "--json")
	assert.Equal(t, exitInconclusive, code, "stderr: %s", stderr)
	assert.Contains(t, stderr, "memory budget of 204.8 MiB exceeded")
	assert.Contains(t, stderr, "of the 512.0 MiB this process may use (the cgroup's memory limit")
}

// makeMemoryCgroup creates a child memory cgroup (v2 where the unified
// hierarchy has the memory controller, else v1) and removes it when the
// test ends; it returns the directory and the name of its limit file, or
// "" when the machine does not allow it.
func makeMemoryCgroup(t *testing.T) (string, string) {
	t.Helper()
	name := fmt.Sprintf("locksim-test-%d", os.Getpid())
	var dir, limit string
	if ctl, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err == nil && strings.Contains(string(ctl), "memory") {
		dir, limit = filepath.Join("/sys/fs/cgroup", name), "memory.max"
	} else if _, err := os.Stat("/sys/fs/cgroup/memory/memory.limit_in_bytes"); err == nil {
		dir, limit = filepath.Join("/sys/fs/cgroup/memory", name), "memory.limit_in_bytes"
	} else {
		return "", ""
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", ""
	}
	t.Cleanup(func() { _ = os.Remove(dir) }) // the child has exited: the cgroup is empty
	if _, err := os.Stat(filepath.Join(dir, limit)); err != nil {
		return "", "" // v2 without the memory controller delegated
	}
	return dir, limit
}

// TestMemoryBudgetStopChargesOnlyItsRun: a run stopped by the memory
// budget leaves the runs after it in the same process unharmed (they
// used to fail "memory budget exceeded ... after 0 events", charged for
// the heap the stopped run left behind).
func TestMemoryBudgetStopChargesOnlyItsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("a runaway world until 200 MiB of heap: about 20 s under load")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "run", "testdata/retry-storm.yaml", "single-gc-pause", "redlock-clock-jump", "--max-memory", "200MiB")
	cmd.Env = append(os.Environ(), "SIMRUN_AS_MAIN=1", "GOMEMLIMIT=")
	out, err := cmd.Output()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, exitInconclusive, ee.ExitCode(), "the worst of the codes: the runaway run's")
	lines := strings.Split(string(out), "\n")
	var storm, small int
	for _, l := range lines {
		switch {
		case strings.Contains(l, "retry-storm.yaml") && strings.Contains(l, "memory budget of 200.0 MiB exceeded"):
			storm++
		case (strings.HasPrefix(l, "single-gc-pause ") || strings.HasPrefix(l, "redlock-clock-jump ")) && strings.Contains(l, "matched"):
			small++
		}
	}
	assert.Equal(t, 1, storm, "the runaway run is stopped by the budget:\n%s", out)
	assert.Equal(t, 2, small, "the runs after it match their verdicts:\n%s", out)
}
