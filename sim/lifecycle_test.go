package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sendAt is a timer tag: when it fires, the process sends msg to to.
type sendAt struct {
	to  string
	msg string
}

func (s sendAt) String() string { return "send " + s.msg }

// sender is a probe that sends a message whenever a sendAt timer fires.
func sender(timers ...struct {
	at time.Duration
	s  sendAt
}) hooks {
	return hooks{
		init: func(env *Env) {
			for _, t := range timers {
				env.After(Mono, t.at, t.s)
			}
		},
		fire: func(env *Env, tag any) {
			if s, ok := tag.(sendAt); ok {
				send(env, s.to, s.msg)
			}
		},
	}
}

type sendSpec = struct {
	at time.Duration
	s  sendAt
}

// TestPauseReplaysInOrder checks that messages and timers that became due
// during a pause are handled at the resume, interleaved by due time, and
// that nothing arriving at the resume instant overtakes them.
func TestPauseReplaysInOrder(t *testing.T) {
	const s = time.Second
	w := newWorld(Config{Seed: 1, KeepTrace: true})
	w.add("a", sender(
		sendSpec{2*s - ms, sendAt{"b", "m1"}},       // arrives 2s
		sendSpec{4*s - ms, sendAt{"b", "m2"}},       // arrives 4s
		sendSpec{10*s - ms, sendAt{"b", "m3"}},      // arrives 10s, the resume instant, after the resume
		sendSpec{10*s + 0*ms, sendAt{"b", "m4"}},    // arrives 10.001s
		sendSpec{10*s - 2*ms, sendAt{"b", "m-pre"}}, // arrives 9.999s
	))
	b := w.add("b", hooks{init: func(env *Env) {
		env.After(Mono, 3*s, "t3")
		env.After(Wall, 5*s, "t5")
		env.After(Mono, 10*s, "t10") // due at the resume instant
	}})
	w.at(1*s, func() { w.k.Pause(b, 9*s) })
	w.run(time.Minute)
	assert.Equal(t, []string{
		"0s b init",
		"10s b got m1 from a",
		"10s b fire t3",
		"10s b got m2 from a",
		"10s b fire t5",
		"10s b got m-pre from a",
		"10s b fire t10", // queued at 0s: before m3, which was sent at 9.999s
		"10s b got m3 from a",
		"10.001s b got m4 from a",
	}, w.lines("b"))
	assert.Equal(t, []string{"1s b for 9s"}, kinds(w.k, KindPause))
	assert.Equal(t, []string{"10s b "}, kinds(w.k, KindResume))
}

// TestPauseWhileReplaying pauses a process again at the instant it resumes,
// between two replayed items: the rest waits for the second resume, and a
// pause and resume at one instant never handles an item twice.
func TestPauseWhileReplaying(t *testing.T) {
	const s = time.Second
	w := newWorld(Config{Seed: 1})
	var b ProcID
	w.add("a", sender(sendSpec{2*s - ms, sendAt{"b", "m1"}}, sendSpec{3*s - ms, sendAt{"b", "m2"}}, sendSpec{4*s - ms, sendAt{"b", "m3"}}))
	b = w.add("b", hooks{recv: func(env *Env, _ ProcID, m Message) {
		if m == "m1" {
			env.k.At(env.k.Now(), func() { w.k.Pause(b, 5*s) }) // a fault triggered by m1
		}
	}})
	w.at(1*s, func() { w.k.Pause(b, 9*s) })
	w.run(time.Minute)
	assert.Equal(t, []string{
		"0s b init",
		"10s b got m1 from a",
		"15s b got m2 from a",
		"15s b got m3 from a",
	}, w.lines("b"))
}

func TestPauseExtends(t *testing.T) {
	const s = time.Second
	tests := []struct {
		name   string
		second time.Duration // at 2s, the process is paused again for this
		resume string
	}{
		{"a longer pause extends", 20 * s, "22s b "},
		{"a shorter pause does not shorten", 3 * s, "11s b "},
		{"a pause ending at the same time", 9 * s, "11s b "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(Config{Seed: 1, KeepTrace: true})
			b := w.add("b", hooks{})
			w.at(1*s, func() { w.k.Pause(b, 10*s) })
			w.at(2*s, func() { w.k.Pause(b, tt.second) })
			w.run(time.Minute)
			assert.Equal(t, []string{tt.resume}, kinds(w.k, KindResume))
			assert.False(t, w.k.Paused(b))
		})
	}
}

// TestCrashRestart checks crash and restart: timers and the inbox are gone,
// messages to the crashed process are dropped, messages sent to the old
// incarnation (or while it was down) are dropped as a connection reset
// after the restart, and the fresh instance runs Init again and finds its
// disk.
func TestCrashRestart(t *testing.T) {
	const s = time.Second
	w := newWorld(Config{Seed: 1, KeepTrace: true, Network: NetConfig{Latency: Fixed(500 * ms)}})
	var inits []int
	w.add("a", sender(
		sendSpec{1 * s, sendAt{"b", "before-crash"}},           // arrives 1.5s, while b is paused: in its inbox at the crash
		sendSpec{2*s + 800*ms, sendAt{"b", "to-old"}},          // sent 2.8s, arrives 3.3s: b crashed
		sendSpec{3*s + 800*ms, sendAt{"b", "sent-while-down"}}, // sent 3.8s, arrives 4.3s: after the restart
		sendSpec{4*s + 600*ms, sendAt{"b", "to-new"}},          // sent 4.6s, arrives 5.1s
	))
	b := w.add("b", hooks{
		init: func(env *Env) {
			f := env.Disk().File("boots")
			inits = append(inits, f.Len())
			f.Append("boot")
			env.After(Mono, 1500*ms, "t")
		},
	})
	w.at(1*s, func() { w.k.Pause(b, 10*s) })
	w.at(3*s, func() {
		require.True(t, w.k.Paused(b))
		w.k.Crash(b, CrashProcess)
		assert.True(t, w.k.Crashed(b))
		assert.Nil(t, w.k.Process(b))
	})
	w.at(3*s+500*ms, func() { w.k.Pause(b, s) }) // ignored: crashed
	w.at(4*s, func() { w.k.Restart(b) })
	w.at(4*s+100*ms, func() { w.k.Restart(b) }) // ignored: running
	w.run(time.Minute)

	assert.Equal(t, []string{
		"0s b init",
		"4s b init",
		// a learnt of the crash by the FIN of b's host (3.5s), so it sent
		// this on a new connection, which reaches the restarted b.
		"4.3s b got sent-while-down from a",
		"5.1s b got to-new from a",
		"5.5s b fire t",
	}, w.lines("b"))
	assert.Equal(t, []int{0, 1}, inits, "the restarted instance reads the disk")
	assert.Equal(t, []string{
		"3s a #1 crashed",            // from a to b, waiting in b's inbox
		"3.3s a #2 connection ended", // sent on the connection b's crash ended (never delivered to the new b)
	}, kinds(w.k, KindDrop))
	assert.Equal(t, []string{"1s b for 10s", "3.5s b ignored: process is not running"}, kinds(w.k, KindPause))
	assert.Equal(t, []string{"4s b ", "4.1s b ignored: process is not crashed"}, kinds(w.k, KindRestart))
	assert.Empty(t, kinds(w.k, KindResume), "a crashed process does not resume")
	assert.False(t, w.k.Paused(b))
}

// TestMessagesInFlightFromCrashedSender checks that what a process sent
// before it crashed is still delivered (it is on the wire).
func TestMessagesInFlightFromCrashedSender(t *testing.T) {
	w := newWorld(Config{Seed: 1, Network: NetConfig{Latency: Fixed(10 * ms)}})
	a := w.add("a", hooks{init: func(env *Env) { send(env, "b", "last words") }})
	w.add("b", hooks{})
	w.at(5*ms, func() { w.k.Crash(a, CrashPower) })
	w.run(time.Second)
	assert.Equal(t, []string{"0s b init", "10ms b got last words from a"}, w.lines("b"))
}

func TestDiskCrashModes(t *testing.T) {
	const s = time.Second
	tests := []struct {
		name     string
		mode     CrashMode
		records  []any
		synced   int
		shutdown bool
	}{
		{"process crash keeps the page cache", CrashProcess, []any{"a", "b", "c", "d", "e"}, 1, false},
		{"power loss keeps synced and written back records", CrashPower, []any{"a", "b", "c"}, 3, false},
		{"clean shutdown syncs everything after Shutdown", CrashClean, []any{"a", "b", "c", "d", "e", "bye"}, 6, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(Config{Seed: 1})
			var shut bool
			p := w.add("p", hooks{shutdown: func(env *Env) {
				shut = true
				env.Disk().File("log").Append("bye")
				env.After(Mono, s, "never") // timers die with the process
			}})
			f := w.k.Disk(p).File("log")
			other := w.k.Disk(p).File("snapshot")
			w.at(0, func() { f.Append("a"); f.Sync() })
			w.at(1*s, func() { f.Append("b") })                   // 44s old at the crash: written back
			w.at(15*s, func() { f.Append("c") })                  // exactly 30s old: written back
			w.at(15*s+1, func() { f.Append("d") })                // 1ns younger: lost on power loss
			w.at(40*s, func() { f.Append("e") })                  // lost on power loss
			w.at(44*s, func() { other.Replace([]any{"x", "y"}) }) // durable at once
			w.at(45*s, func() { w.k.Crash(p, tt.mode) })
			w.run(time.Minute)
			assert.Equal(t, tt.records, f.Records())
			assert.Equal(t, tt.synced, f.Synced())
			assert.Equal(t, len(tt.records), f.Len())
			assert.Equal(t, []any{"x", "y"}, other.Records())
			assert.Equal(t, tt.shutdown, shut)
			assert.Equal(t, []string{"log", "snapshot"}, w.k.Disk(p).Names())
			assert.NotContains(t, w.log, "46s p fire never")
		})
	}
}

// TestCleanCrashOfPausedProcess: a stopped process cannot run its shutdown
// hook, but its files are still synced.
func TestCleanCrashOfPausedProcess(t *testing.T) {
	w := newWorld(Config{Seed: 1})
	var shut bool
	p := w.add("p", hooks{shutdown: func(*Env) { shut = true }})
	f := w.k.Disk(p).File("log")
	w.at(ms, func() { f.Append("a"); w.k.Pause(p, time.Second) })
	w.at(2*ms, func() { w.k.Crash(p, CrashClean) })
	w.run(time.Second)
	assert.False(t, shut)
	assert.Equal(t, 1, f.Synced())
}

// TestCrashBeforeStartIgnored: faults scheduled for time 0 after Add find
// the process started.
func TestFaultAtTimeZero(t *testing.T) {
	w := newWorld(Config{Seed: 1, KeepTrace: true})
	p := w.add("p", hooks{init: func(env *Env) { env.After(Mono, ms, "t") }})
	w.at(0, func() { w.k.Pause(p, time.Second) })
	w.run(2 * time.Second)
	assert.Equal(t, []string{"0s p init", "1s p fire t"}, w.log)
	assert.Equal(t, []string{"0s p for 1s"}, kinds(w.k, KindPause))
}

// TestRestartRunsInitEachTime restarts a process several times; each fresh
// instance is a new value built by the factory.
func TestRestartRunsInitEachTime(t *testing.T) {
	k := New(Config{Seed: 1, Network: NetConfig{Latency: Fixed(ms)}})
	var built []*counter
	id := k.Add("p", func() Process { c := &counter{}; built = append(built, c); return c }, ClockSpec{})
	for i := 1; i <= 3; i++ {
		k.At(At(time.Duration(i)*time.Second), func() { k.Crash(id, CrashProcess) })
		k.At(At(time.Duration(i)*time.Second+time.Millisecond), func() { k.Restart(id) })
	}
	require.NoError(t, k.Run(At(10*time.Second)))
	require.Len(t, built, 4)
	for i, c := range built {
		assert.Equal(t, 1, c.inits, "instance %d", i)
		assert.Equal(t, i > 0, c.recovered > 0, "instance %d", i)
	}
	assert.Same(t, built[3], k.Process(id))
}

type counter struct{ inits, recovered int }

func (c *counter) Init(env *Env) {
	c.inits++
	c.recovered = env.Disk().File("f").Len()
	env.Disk().File("f").Append(fmt.Sprint(c.recovered))
}
func (c *counter) Receive(*Env, ProcID, Message) {}
func (c *counter) Fire(*Env, any)                {}
