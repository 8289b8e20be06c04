package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeMsg is the write of a critical section, sent to the storage probe.
type writeMsg struct{ section int }

// script runs actions at given mono-clock offsets from Init.
func script(steps map[time.Duration]func(env *Env)) hooks {
	return hooks{
		init: func(env *Env) {
			for d := range steps {
				env.After(Mono, d, d)
			}
		},
		fire: func(env *Env, tag any) { steps[tag.(time.Duration)](env) },
	}
}

// TestHistoryRecorder drives the recorder through every way a record can
// end: by the client, by a crash and by Finish.
func TestHistoryRecorder(t *testing.T) {
	const s = time.Second
	w := newWorld(Config{Seed: 1, KeepTrace: true})
	var c1w, c1a, c1b, c1s int
	var c2b, c2s int
	var c3a, c3w int
	var c4w, c4b1, c4b2, c4s int
	c1 := w.add("c1", script(map[time.Duration]func(*Env){
		1 * s: func(env *Env) { c1w = env.WantBegin("L"); c1a = env.AttemptBegin("L") },
		2 * s: func(env *Env) {
			env.AttemptEnd(c1a, true)
			env.WantEnd(c1w, true, "ignored")
			c1b = env.BeliefBegin("L", c1a, 7, true)
			c1s = env.SectionBegin("L", c1b, 7, true)
			env.SectionWriteSent(c1s, 1)
			send(env, "store", writeMsg{c1s})
		},
	}))
	c2 := w.add("c2", script(map[time.Duration]func(*Env){
		1 * s: func(env *Env) {
			a := env.AttemptBegin("L")
			env.AttemptEnd(a, false)
			a = env.AttemptBegin("L")
			env.AttemptEnd(a, true)
			c2b = env.BeliefBegin("L", a, 0, false)
			c2s = env.SectionBegin("L", c2b, 0, false)
		},
		1500 * ms: func(env *Env) {
			env.SectionWriteSent(c2s, 1)
			send(env, "store", writeMsg{c2s}) // dropped below: lost
		},
	}))
	c3 := w.add("c3", script(map[time.Duration]func(*Env){
		1 * s: func(env *Env) { c3w = env.WantBegin("L"); c3a = env.AttemptBegin("L") },
	}))
	w.add("c4", script(map[time.Duration]func(*Env){
		1 * s: func(env *Env) {
			c4w = env.WantBegin("L")
			c4b1 = env.BeliefBegin("L", -1, 0, false)
			c4s = env.SectionBegin("L", c4b1, 0, false) // never written
		},
		2 * s: func(env *Env) {
			assert.True(t, env.Believes(c4b1))
			env.BeliefEnd(c4b1, EndReleased)
			env.BeliefEnd(c4b1, EndLost) // already ended: ignored
			assert.False(t, env.Believes(c4b1))
			assert.False(t, env.Believes(99))
			c4b2 = env.BeliefBegin("L", -1, 0, false)
		},
		3 * s: func(env *Env) { env.BeliefEnd(c4b2, EndExpired) },
	}))
	w.add("store", hooks{recv: func(env *Env, _ ProcID, m Message) {
		if wm, ok := m.(writeMsg); ok {
			env.SectionRead(wm.section, 0, false)
			env.SectionWriteDecided(wm.section, WriteAccepted)
		}
	}})
	store, _ := w.k.Lookup("store")
	w.at(1400*ms, func() { w.k.DropNext(c2, store, 1) })
	w.at(4*s, func() { w.k.Crash(c1, CrashProcess); w.k.Crash(c3, CrashPower) })
	w.run(10 * s)
	h := w.k.Finish()
	require.Same(t, h, w.k.History())
	require.Same(t, h, w.k.Finish(), "Finish is idempotent")

	assert.Equal(t, At(10*s), h.End)
	assert.Equal(t, []Want{
		{Client: "c1", Lock: "L", Start: At(s), End: At(2 * s), Got: true},
		{Client: "c3", Lock: "L", Start: At(s), End: At(4 * s), Reason: "crashed"},
		{Client: "c4", Lock: "L", Start: At(s), End: At(10 * s), Open: true, Reason: "run-end"},
	}, h.Wants)
	assert.Equal(t, []int{0, 1, 2}, []int{c1w, c3w, c4w})
	assert.Equal(t, []Attempt{
		{Client: "c1", Lock: "L", Start: At(s), End: At(2 * s), OK: true},
		{Client: "c2", Lock: "L", Start: At(s), End: At(s)},
		{Client: "c2", Lock: "L", Start: At(s), End: At(s), OK: true},
		{Client: "c3", Lock: "L", Start: At(s), End: At(4 * s), Open: true},
	}, h.Attempts)
	assert.True(t, h.Attempts[c3a].Open, "an attempt cut short by a crash never finished")
	assert.Equal(t, []Belief{
		{ID: c2b, Client: "c2", Lock: "L", AttemptStart: At(s), Start: At(s), End: At(10 * s), Reason: EndRunEnd},
		{ID: c4b1, Client: "c4", Lock: "L", AttemptStart: At(s), Start: At(s), End: At(2 * s), Reason: EndReleased},
		{ID: c1b, Client: "c1", Lock: "L", AttemptStart: At(s), Start: At(2 * s), End: At(4 * s), Reason: EndCrashed, Token: 7, HasToken: true},
		{ID: c4b2, Client: "c4", Lock: "L", AttemptStart: At(2 * s), Start: At(2 * s), End: At(3 * s), Reason: EndExpired},
	}, h.Beliefs)
	assert.Equal(t, []Section{
		{ID: c2s, Client: "c2", Lock: "L", BeliefID: c2b, ReadSent: At(s), WriteSent: At(1500 * ms), Written: true, WriteValue: 1, Outcome: WriteLost},
		{ID: c4s, Client: "c4", Lock: "L", BeliefID: c4b1, ReadSent: At(s)},
		{
			ID: c1s, Client: "c1", Lock: "L", BeliefID: c1b, Token: 7, HasToken: true, ReadSent: At(2 * s), ReadAt: At(2*s + ms), Read: true,
			WriteSent: At(2 * s), WriteAt: At(2*s + ms), Written: true, WriteValue: 1, Outcome: WriteAccepted,
		},
	}, h.Sections)

	// The events the recorder emits: a crash or the end of the run is not
	// "lock-lost" (the client learned nothing).
	assert.Equal(t, []string{"1s c1 L attempt 0", "1s c2 L attempt 1", "1s c2 L attempt 2", "1s c3 L attempt 3"}, kinds(w.k, KindAcquireStart))
	assert.Equal(t, []string{"1s c2 L attempt 1"}, kinds(w.k, KindAcquireFailed))
	assert.Equal(t, []string{"1s c2 L", "1s c4 L", "2s c1 L token 7", "2s c4 L"}, kinds(w.k, KindAcquired))
	assert.Equal(t, []string{"2s c4 L (released)"}, kinds(w.k, KindReleased))
	assert.Equal(t, []string{"3s c4 L (expired)"}, kinds(w.k, KindLockLost))
	assert.Equal(t, []string{"1s c2 L section 0", "1s c4 L section 1", "2s c1 L section 2"}, kinds(w.k, KindResourceRead))
	assert.Equal(t, []string{"1.5s c2 L section 0 value 1", "2s c1 L section 2 value 1"}, kinds(w.k, KindResourceWrite))
}

// TestRecordFault checks fault records in the history and the trace.
func TestRecordFault(t *testing.T) {
	w := newWorld(Config{Seed: 1, KeepTrace: true})
	w.at(time.Second, func() {
		w.k.RecordFault(FaultRecord{At: 99, Kind: "clock-jump", Targets: []string{"C"}, Text: "C's wall clock jumped +30s"})
	})
	w.run(2 * time.Second)
	h := w.k.Finish()
	assert.Equal(t, []FaultRecord{{At: At(time.Second), Kind: "clock-jump", Targets: []string{"C"}, Text: "C's wall clock jumped +30s"}}, h.Faults)
	assert.Equal(t, []string{"1s  clock-jump: C's wall clock jumped +30s"}, kinds(w.k, KindFault))
}

// TestRecordClocks: the processes added with a clock set apart from true
// time are in the history's Clocks, in the order added; the others are
// not.
func TestRecordClocks(t *testing.T) {
	w := newWorld(Config{Seed: 1})
	w.addClock("A", hooks{}, ClockSpec{})
	w.addClock("c2", hooks{}, ClockSpec{Offset: 40 * time.Second})
	w.addClock("B", hooks{}, ClockSpec{Offset: -time.Second, DriftPPB: 1000})
	w.run(time.Second)
	h := w.k.Finish()
	assert.Equal(t, []ClockRecord{{Proc: "c2", Offset: 40 * time.Second}, {Proc: "B", Offset: -time.Second, DriftPPB: 1000}}, h.Clocks)
}

// TestBeliefEndedByAnotherProcess: a record ended through another
// process's Env is no longer open for its owner, so the owner's crash
// neither hangs nor rewrites it.
func TestBeliefEndedByAnotherProcess(t *testing.T) {
	w := newWorld(Config{Seed: 1})
	var b, want int
	c := w.add("c", hooks{init: func(env *Env) {
		want = env.WantBegin("L")
		b = env.BeliefBegin("L", -1, 0, false)
	}})
	w.add("d", hooks{
		init: func(env *Env) { env.After(Mono, time.Second, nil) },
		fire: func(env *Env, _ any) { env.BeliefEnd(b, EndLost); env.WantEnd(want, true, "") },
	})
	w.at(2*time.Second, func() { w.k.Crash(c, CrashProcess) })
	w.run(3 * time.Second)
	h := w.k.Finish()
	assert.Equal(t, EndLost, h.Beliefs[b].Reason)
	assert.Equal(t, At(time.Second), h.Beliefs[b].End)
	assert.True(t, h.Wants[want].Got)
	assert.Equal(t, "", h.Wants[want].Reason)
}

func TestSectionUnknownIDPanics(t *testing.T) {
	w := newWorld(Config{Seed: 1})
	w.add("c", hooks{init: func(env *Env) { env.SectionResult(3) }})
	assert.PanicsWithValue(t, "sim: unknown section id 3", func() { w.run(time.Second) })
}
