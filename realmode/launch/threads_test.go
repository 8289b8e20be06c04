package launch

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseStat(t *testing.T) {
	for _, tt := range []struct {
		name, line string
		comm       string
		state      byte
	}{
		{"plain", "12 (redis-server) S 1 12 12 0 -1", "redis-server", 'S'},
		{"spaces and parentheses in the name", "40 (C2 Comp) (x)) T 1 2", "C2 Comp) (x)", 'T'},
		{"traced", "7 (java) t 1", "java", 't'},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, err := parseStat(3, tt.line)
			require.NoError(t, err)
			assert.Equal(t, threadState{tid: 3, comm: tt.comm, state: tt.state}, st)
		})
	}
	for _, bad := range []string{"", "12 redis S", "12 (redis)", "12 (redis)S 1"} {
		_, err := parseStat(12, bad)
		assert.ErrorContains(t, err, "thread 12: unreadable stat", "%q", bad)
	}
}

// busyThreads is how many threads the busy child keeps running: more than
// the machine's cores, so that some wait in the run queue when the stop
// arrives, which is when a SIGSTOP takes longest to reach every thread.
const busyThreads = 6

// busyChild runs busyThreads spinning goroutines (on as many threads) for
// at most a minute; TestPauseWaitsForEveryThread pauses it.
func busyChild() {
	runtime.GOMAXPROCS(busyThreads)
	for i := 0; i < busyThreads; i++ {
		go func() {
			for x := 0; ; x++ {
			}
		}()
	}
	time.Sleep(time.Minute) // Pdeathsig ends it earlier with the test
	os.Exit(0)
}

// startBusy starts this test binary as busyChild under a Server, and waits
// until it runs busyThreads threads.
func startBusy(t *testing.T) *Server {
	t.Helper()
	g := group(t)
	s := &Server{name: "busy", bin: os.Args[0], args: []string{"-test.run=^TestPauseWaitsForEveryThread$"},
		env: []string{"LOCKSIM_LAUNCH_BUSY=1"}, dir: serverDir(t, g), timeout: 10 * time.Second,
		ready: func(string, time.Duration) error { return nil }, logs: []string{}}
	g.Add(s)
	require.NoError(t, s.start())
	eventually(t, "the busy child runs "+strconv.Itoa(busyThreads)+" threads", func() bool {
		ts, err := threadStates(s.PID())
		running := 0
		for _, th := range ts {
			if th.state == 'R' {
				running++
			}
		}
		return err == nil && running >= busyThreads
	})
	return s
}

// TestPauseWaitsForEveryThread: when Pause returns, every thread of the
// paused process is stopped, and when Resume returns none is. A SIGSTOP
// alone stops the threads one after the other after kill(2) returned (so
// that a paused JVM could still answer, issue 32): with busy threads in
// the run queue, at least one of the rounds below catches a thread still
// running when the wait is left out.
func TestPauseWaitsForEveryThread(t *testing.T) {
	if os.Getenv("LOCKSIM_LAUNCH_BUSY") != "" {
		busyChild()
		return
	}
	s := startBusy(t)
	pid := s.PID()
	for round := 0; round < 20; round++ {
		require.NoError(t, s.Pause())
		requireStopped(t, pid, "round "+strconv.Itoa(round))
		require.NoError(t, s.Resume())
		ts, err := threadStates(pid)
		require.NoError(t, err)
		for _, th := range ts {
			require.NotEqual(t, byte('T'), th.state, "round %d: thread %d (%s) of the resumed process is still stopped", round, th.tid, th.comm)
		}
	}
}

// TestWaitThreadsBound: a wait that does not end within its bound fails
// naming the threads and their states, and a process that exits ends the
// wait with an error saying so.
func TestWaitThreadsBound(t *testing.T) {
	s := startBusy(t)
	pid := s.PID()
	err := waitThreads("busy", pid, "stop after SIGSTOP", stopped, 50*time.Millisecond)
	require.Error(t, err, "nobody stopped the process")
	assert.Regexp(t, `^launch: busy \(pid `+strconv.Itoa(pid)+`\): \d+ of \d+ threads not done with their stop after SIGSTOP after 50ms: \d+ ".*" in [RS]`, err.Error())

	require.NoError(t, s.Kill())
	err = waitThreads("busy", pid, "stop after SIGSTOP", stopped, time.Second)
	assert.EqualError(t, err, "launch: busy (pid "+strconv.Itoa(pid)+") exited while awaiting its threads' stop after SIGSTOP")
	assert.ErrorContains(t, s.Pause(), "not running")
}

// requireStopped fails the test unless every thread of pid is stopped:
// what a test checks right after Pause returned, before it relies on the
// process answering nothing.
func requireStopped(t *testing.T, pid int, what string) {
	t.Helper()
	ts, err := threadStates(pid)
	require.NoError(t, err)
	for _, th := range ts {
		require.Contains(t, "Tt", string(th.state), "%s: thread %d (%s) of the paused process is in %c", what, th.tid, th.comm, th.state)
	}
}
