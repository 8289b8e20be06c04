package main

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// cpuTime returns the CPU time (user plus system, all threads) a process
// has used so far, from fields 14 and 15 of /proc/PID/stat, in clock ticks
// of USER_HZ, 100 per second on Linux (proc(5): "measured in clock ticks
// (divide by sysconf(_SC_CLK_TCK))"; `getconf CLK_TCK` says 100 here).
// ok is false once the process is gone.
func cpuTime(pid int) (d time.Duration, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// count fields after its closing parenthesis (field 3 onwards).
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * (time.Second / 100), true
}

// waitCPU waits until a child process has used at least d of CPU time: a
// measure of how far it got that does not stretch with the machine's load,
// where a wall-clock sleep of the same length may end before the child has
// even installed its signal handlers. It fails after a generous bound of
// wall time, or if the child ends first.
func waitCPU(t *testing.T, pid int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		used, ok := cpuTime(pid)
		require.True(t, ok, "process %d ended before it used %v of CPU", pid, d)
		if used >= d {
			return
		}
		require.True(t, time.Now().Before(deadline), "process %d used only %v of CPU in 2 minutes (waiting for %v)", pid, used, d)
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCPUTime(t *testing.T) {
	before, ok := cpuTime(os.Getpid())
	require.True(t, ok, "/proc/self/stat is readable")
	// Burn CPU until the count moves (a tick is 10 ms; the bound is wall
	// time, generous for a loaded machine).
	x := 0
	for start := time.Now(); ; x++ {
		if x%1000000 == 0 {
			now, ok := cpuTime(os.Getpid())
			require.True(t, ok)
			if now > before {
				break
			}
			require.Less(t, time.Since(start), time.Minute, "CPU time never grew during a busy loop")
		}
	}
	_, ok = cpuTime(1 << 30)
	require.False(t, ok, "no such process")
}
