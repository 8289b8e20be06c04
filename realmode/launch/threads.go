package launch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// SIGSTOP is asynchronous: kill(2) queues the stop and wakes one thread of
// the process, and that thread, when it next runs, makes every other
// thread stop (kernel/signal.c, complete_signal and do_signal_stop). Until
// the last one has stopped, the process still runs code: on a loaded
// machine a JVM's selector thread read a request and answered it after
// Pause had returned (TestZooKeeperStandalone, issue 32). So Pause waits
// until every thread is in state T (/proc/PID/task/TID/stat), and Resume
// until none is; a thread in the middle of a system call (state D, an
// fsync) stops only when the call ends, hence the bound.

// threadWait bounds the wait for every thread to stop or go on. A thread
// stops as soon as it is scheduled (or its uninterruptible system call
// ends), so the bound is only reached by a process that something else
// holds (a debugger) or a machine that stalls for seconds.
var threadWait = 10 * time.Second

// threadState is one thread of a process as /proc shows it.
type threadState struct {
	tid   int
	comm  string
	state byte // R, S, D, T, t, Z, X, ...
}

// threadStates reads the state of each thread of pid, in tid order. A
// thread that exits while it is read is left out; the process itself
// having exited is fs.ErrNotExist.
func threadStates(pid int) ([]threadState, error) {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []threadState
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "stat"))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue // the thread exited, or was reaped, meanwhile
		}
		if err != nil {
			return nil, err
		}
		st, err := parseStat(tid, string(b))
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no threads: %w", dir, fs.ErrNotExist)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].tid < out[j].tid })
	return out, nil
}

// parseStat reads the command name and state of one /proc/PID/task/TID/stat
// line, "TID (COMM) STATE ...". COMM may itself hold spaces and
// parentheses (proc(5)), so the state follows the LAST ')'.
func parseStat(tid int, line string) (threadState, error) {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open || end+2 >= len(line) || line[end+1] != ' ' {
		return threadState{}, fmt.Errorf("thread %d: unreadable stat %q", tid, line)
	}
	return threadState{tid: tid, comm: line[open+1 : end], state: line[end+2]}, nil
}

// stopped says whether a thread runs no more code until SIGCONT: stopped
// (T), stopped by a debugger (t), or dead (Z, X: a thread that exited and
// awaits its reaping).
func stopped(state byte) bool {
	switch state {
	case 'T', 't', 'Z', 'X':
		return true
	}
	return false
}

// resumed says whether a thread left the job-control stop.
func resumed(state byte) bool { return state != 'T' }

// waitThreads polls the threads of pid until every one satisfies ok, for
// at most within; then it fails naming the threads that did not, and
// their states. what says what was awaited ("stop after SIGSTOP").
func waitThreads(name string, pid int, what string, ok func(byte) bool, within time.Duration) error {
	deadline := time.Now().Add(within)
	// A stop usually completes within microseconds: poll fast first and
	// back off, so that a slow machine is not read hundreds of times a
	// second.
	poll := 50 * time.Microsecond
	for {
		ts, err := threadStates(pid)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("launch: %s (pid %d) exited while awaiting its threads' %s", name, pid, what)
			}
			return fmt.Errorf("launch: %s (pid %d): %w", name, pid, err)
		}
		var late []string
		for _, t := range ts {
			if !ok(t.state) {
				late = append(late, fmt.Sprintf("%d %q in %c", t.tid, t.comm, t.state))
			}
		}
		if len(late) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			if len(late) > 5 {
				late = append(late[:5], fmt.Sprintf("and %d more", len(late)-5))
			}
			return fmt.Errorf("launch: %s (pid %d): %d of %d threads not done with their %s after %v: %s",
				name, pid, len(late), len(ts), what, within, strings.Join(late, ", "))
		}
		time.Sleep(poll)
		poll = min(2*poll, 10*time.Millisecond)
	}
}
