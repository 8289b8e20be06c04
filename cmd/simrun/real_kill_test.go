package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/realmode"
)

// killTry is one run of TestKilledRealRunLeavesNothing: simrun args, and
// the latest moment of its kill.
type killTry struct {
	args     []string
	maxDelay time.Duration
}

// killTries are the runs of TestKilledRealRunLeavesNothing: in CI three,
// a lazyfs power loss in real and twin mode and a Redis failover; with
// LOCKSIM_LONG=1 twenty across every real system (Redis with and without
// lazyfs, Sentinel-free failover, memcached, MariaDB, ZooKeeper).
func killTries() []killTry {
	short := []killTry{
		{[]string{"real", "redlock-crash-everysec-power"}, 8 * time.Second},
		{[]string{"twin", "redlock-crash-everysec-power"}, 8 * time.Second},
		{[]string{"real", "failover-replica-clock-synced"}, 8 * time.Second},
	}
	if os.Getenv("LOCKSIM_LONG") != "1" {
		return short
	}
	all := append(short,
		killTry{[]string{"real", "memcached-add-restart"}, 6 * time.Second},
		killTry{[]string{"twin", "memcached-add-eviction"}, 6 * time.Second},
		killTry{[]string{"real", "mysql-for-update-pause"}, 15 * time.Second},
		killTry{[]string{"twin", "mysql-insert-lock-no-expiry"}, 15 * time.Second},
		killTry{[]string{"real", "zk-server-restart-keeps-session"}, 20 * time.Second},
		killTry{[]string{"twin", "zk-session-clamp-min-holds"}, 20 * time.Second},
		killTry{[]string{"real", "failover-replica-clock-ahead"}, 10 * time.Second},
	)
	var out []killTry
	for len(out) < 20 {
		out = append(out, all[len(out)%len(all)])
	}
	return out
}

// TestKilledRealRunLeavesNothing kills simrun real and twin with SIGKILL
// at random moments (seed LOCKSIM_KILL_SEED, printed): no process works in
// the run's temporary folders afterwards (every server died of its death
// signal, none is stuck in state D on a dead lazyfs mount), no mount is
// left (the lazyfs watchdog detached it), and the next start removes the
// temporary folders the killed run could not, naming each (issue 33,
// item 1).
func TestKilledRealRunLeavesNothing(t *testing.T) {
	needRealServers(t)
	if testing.Short() {
		t.Skip("builds simrun and runs real servers")
	}
	seed := uint64(1)
	if s := os.Getenv("LOCKSIM_KILL_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "LOCKSIM_KILL_SEED")
	}
	t.Logf("kill moments from LOCKSIM_KILL_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	bin := filepath.Join(t.TempDir(), "simrun")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	// Every run's TMPDIR: what one leaves, the next start finds.
	tmp := t.TempDir()
	t.Cleanup(func() { forceClean(t, tmp) })
	for i, try := range killTries() {
		delay := time.Duration(rng.Int64N(int64(try.maxDelay)))
		t.Logf("try %d: simrun %s, SIGKILL after %v", i, strings.Join(try.args, " "), delay)
		args := try.args
		if args[0] == "twin" {
			args = append(args, "--out", t.TempDir())
		}
		p := exec.Command(bin, args...)
		p.Env = append(os.Environ(), "TMPDIR="+tmp)
		var stderr bytes.Buffer
		p.Stderr = &stderr
		require.NoError(t, p.Start())
		done := make(chan error, 1)
		go func() { done <- p.Wait() }()
		select {
		case err := <-done:
			t.Logf("try %d ended by itself before its kill: %v", i, err)
		case <-time.After(delay):
			require.NoError(t, p.Process.Signal(syscall.SIGKILL))
			select {
			case <-done:
			case <-time.After(2 * time.Minute):
				// Seen once under load: a thread of simrun blocked on a
				// request to its own lazyfs mount keeps the process (and
				// its FUSE descriptor) from ending. A forced unmount
				// aborts the connection and frees it.
				t.Errorf("try %d: simrun %s did not end within 2 minutes of SIGKILL", i, try.args)
				forceClean(t, tmp)
				<-done
			}
		}
		// Nothing runs in or on the run's folders, no mount is left
		// (conditions with a bound, not a sleep).
		var procs, mounts []string
		for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			procs, mounts = processesUnder(t, tmp), mountsUnder(t, tmp)
			if len(procs) == 0 && len(mounts) == 0 {
				break
			}
		}
		assert.Empty(t, procs, "try %d: processes outlived simrun %s", i, try.args)
		assert.Empty(t, mounts, "try %d: mounts outlived simrun %s", i, try.args)
		if len(procs)+len(mounts) > 0 {
			forceClean(t, tmp)
		}
		// The next start removes the folders the killed run left.
		left, err := filepath.Glob(filepath.Join(tmp, realmode.RunDirPrefix+"*"))
		require.NoError(t, err)
		next := exec.Command(bin, "real", "no-such-scenario")
		next.Env = p.Env
		msg, _ := next.CombinedOutput()
		for _, d := range left {
			assert.Contains(t, string(msg), "removed what a killed real run left: folder "+d, "try %d", i)
			assert.NoDirExists(t, d, "try %d", i)
		}
	}
}

// processesUnder lists the live processes working in dir or naming it on
// their command line (a lazyfs watchdog), with their state.
func processesUnder(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || !running(pid) {
			continue
		}
		cwd, _ := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if cwd == dir || strings.HasPrefix(cwd, dir+"/") || bytes.Contains(cmdline, []byte(dir+"/")) {
			stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			out = append(out, string(stat))
		}
	}
	return out
}

// mountsUnder lists the mount points inside dir.
func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			out = append(out, f[4])
		}
	}
	return out
}

// forceClean frees dir of what a failed try left, so the test's own
// cleanup can remove it.
func forceClean(t *testing.T, dir string) {
	for _, m := range mountsUnder(t, dir) {
		_ = syscall.Unmount(m, syscall.MNT_FORCE)
		_ = syscall.Unmount(m, syscall.MNT_DETACH)
	}
	for _, p := range processesUnder(t, dir) {
		if pid, err := strconv.Atoi(strings.Fields(p)[0]); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
