package sim

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTimerUnderClockFaults sets one timer 10s ahead on a clock at true
// time 0 and checks the true time at which it fires under jumps, drift
// changes and pauses.
func TestTimerUnderClockFaults(t *testing.T) {
	const s = time.Second
	jump := func(at, by time.Duration) func(*world, ProcID) {
		return func(w *world, id ProcID) { w.at(at, func() { w.k.JumpWall(id, by) }) }
	}
	drift := func(at time.Duration, ppb int64) func(*world, ProcID) {
		return func(w *world, id ProcID) { w.at(at, func() { w.k.SetDrift(id, ppb) }) }
	}
	pause := func(at, d time.Duration) func(*world, ProcID) {
		return func(w *world, id ProcID) { w.at(at, func() { w.k.Pause(id, d) }) }
	}
	tests := []struct {
		name   string
		clock  Clock
		spec   ClockSpec
		faults []func(*world, ProcID)
		fires  time.Duration
	}{
		{name: "wall, no fault", clock: Wall, fires: 10 * s},
		{name: "mono, no fault", clock: Mono, fires: 10 * s},
		{name: "wall fires early after a forward jump", clock: Wall, faults: []func(*world, ProcID){jump(2*s, 4*s)}, fires: 6 * s},
		{name: "wall fires at once after a jump past its deadline", clock: Wall, faults: []func(*world, ProcID){jump(2*s, 20*s)}, fires: 2 * s},
		{name: "wall fires late after a backward jump", clock: Wall, faults: []func(*world, ProcID){jump(2*s, -4*s)}, fires: 14 * s},
		{name: "wall, jumps that cancel out", clock: Wall, faults: []func(*world, ProcID){jump(2*s, -4*s), jump(3*s, 4*s)}, fires: 10 * s},
		{name: "mono ignores a forward jump", clock: Mono, faults: []func(*world, ProcID){jump(2*s, 4*s)}, fires: 10 * s},
		{name: "mono ignores a backward jump", clock: Mono, faults: []func(*world, ProcID){jump(2*s, -4*s)}, fires: 10 * s},
		{name: "wall re-planned on a faster drift", clock: Wall, faults: []func(*world, ProcID){drift(2*s, 250_000_000)}, fires: 8400 * ms},
		{name: "mono re-planned on a faster drift", clock: Mono, faults: []func(*world, ProcID){drift(2*s, 250_000_000)}, fires: 8400 * ms},
		{name: "wall re-planned on a slower drift", clock: Wall, faults: []func(*world, ProcID){drift(2*s, -500_000_000)}, fires: 18*s - 1},
		{name: "mono re-planned on a slower drift", clock: Mono, faults: []func(*world, ProcID){drift(2*s, -500_000_000)}, fires: 18*s - 1},
		{name: "initial drift", clock: Mono, spec: ClockSpec{DriftPPB: 250_000_000}, fires: 8 * s},
		{name: "offset does not move a relative timer", clock: Wall, spec: ClockSpec{Offset: time.Hour}, fires: 10 * s},
		{name: "due during a pause: fires at resume", clock: Wall, faults: []func(*world, ProcID){pause(1*s, 19*s)}, fires: 20 * s},
		{name: "forward jump while paused: fires at resume", clock: Wall, faults: []func(*world, ProcID){pause(1*s, 19*s), jump(2*s, 4*s)}, fires: 20 * s},
		{
			name: "backward jump after it became due while paused: re-checked at resume", clock: Wall,
			faults: []func(*world, ProcID){pause(1*s, 19*s), jump(15*s, -12*s)}, fires: 22 * s,
		},
		{name: "mono ignores a jump while paused", clock: Mono, faults: []func(*world, ProcID){pause(1*s, 4*s), jump(2*s, 100*s)}, fires: 10 * s},
		{
			name: "drift change while paused before it is due", clock: Mono,
			faults: []func(*world, ProcID){pause(1*s, 4*s), drift(2*s, -500_000_000)}, fires: 18*s - 1,
		},
		{
			name: "drift change after it became due while paused", clock: Mono,
			faults: []func(*world, ProcID){pause(1*s, 19*s), drift(15*s, -500_000_000)}, fires: 20 * s,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(Config{Seed: 1})
			id := w.addClock("p", hooks{init: func(env *Env) { env.After(tt.clock, 10*s, "t") }}, tt.spec)
			for _, f := range tt.faults {
				f(w, id)
			}
			w.run(time.Minute)
			assert.Equal(t, []string{"0s p init", (tt.fires).String() + " p fire t"}, w.lines("p"))
		})
	}
}

// TestTimerReplanKeepsOrder checks that a clock change that does not move a
// timer (a wall jump for a mono timer, a drift change to the same rate)
// leaves its place among events due at the same time.
func TestTimerReplanKeepsOrder(t *testing.T) {
	tests := []struct {
		name  string
		fault func(k *Kernel, x ProcID)
	}{
		{"wall jump, mono timer", func(k *Kernel, x ProcID) { k.JumpWall(x, time.Hour) }},
		{"wall jump back, mono timer", func(k *Kernel, x ProcID) { k.JumpWall(x, -time.Hour) }},
		{"same drift", func(k *Kernel, x ProcID) { k.SetDrift(x, 0) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(Config{Seed: 1})
			set := hooks{init: func(env *Env) { env.After(Mono, 10*time.Second, "t") }}
			x := w.add("x", set)
			w.add("y", set)
			w.at(5*time.Second, func() { tt.fault(w.k, x) })
			w.run(time.Minute)
			assert.Equal(t, []string{"0s x init", "0s y init", "10s x fire t", "10s y fire t"}, w.log)
		})
	}
}

func TestCancel(t *testing.T) {
	const s = time.Second
	tests := []struct {
		name string
		// script sets timers in Init and cancels them; it returns what
		// each Cancel returned.
		init   func(env *Env, results *[]bool)
		faults func(w *world, id ProcID)
		fires  []string
		cancel []bool
	}{
		{
			name: "before due",
			init: func(env *Env, r *[]bool) {
				id := env.After(Wall, s, "a")
				*r = append(*r, env.Cancel(id), env.Cancel(id))
			},
			cancel: []bool{true, false},
		},
		{
			name: "the zero TimerID is no timer",
			init: func(env *Env, r *[]bool) {
				env.After(Mono, s, "first")
				*r = append(*r, env.Cancel(TimerID{}))
			},
			fires:  []string{"1s p fire first"},
			cancel: []bool{false},
		},
		{
			name: "after it fired",
			init: func(env *Env, r *[]bool) {
				var a TimerID
				a = env.After(Mono, s, "a")
				env.After(Mono, 2*s, cancelAfter{a: &a, r: r})
			},
			fires:  []string{"1s p fire a", "2s p fire cancel"},
			cancel: []bool{false},
		},
		{
			name: "waiting in the inbox, by an earlier item",
			init: func(env *Env, r *[]bool) {
				b := new(TimerID)
				env.After(Mono, 5*s, cancelOther{b: b, r: r})
				*b = env.After(Mono, 6*s, "b")
			},
			faults: func(w *world, id ProcID) { w.at(s, func() { w.k.Pause(id, 9*s) }) },
			fires:  []string{"10s p fire cancel-other"},
			cancel: []bool{true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var results []bool
			w := newWorld(Config{Seed: 1})
			id := w.add("p", hooks{
				init: func(env *Env) { tt.init(env, &results) },
				fire: func(env *Env, tag any) {
					switch x := tag.(type) {
					case cancelAfter:
						*x.r = append(*x.r, env.Cancel(*x.a))
					case cancelOther:
						*x.r = append(*x.r, env.Cancel(*x.b))
					}
				},
			})
			if tt.faults != nil {
				tt.faults(w, id)
			}
			w.run(time.Minute)
			var fires []string
			for _, l := range w.lines("p") {
				if strings.Contains(l, "fire") {
					fires = append(fires, l)
				}
			}
			assert.Equal(t, tt.fires, fires)
			assert.Equal(t, tt.cancel, results)
		})
	}
}

// cancelAfter is a timer tag: when it fires, the process cancels *a.
type cancelAfter struct {
	a *TimerID
	r *[]bool
}

func (cancelAfter) String() string { return "cancel" }

// cancelOther is a timer tag: when it fires, the process cancels *b.
type cancelOther struct {
	b *TimerID
	r *[]bool
}

func (cancelOther) String() string { return "cancel-other" }

func TestCancelAfterSlotReuse(t *testing.T) {
	w := newWorld(Config{Seed: 1})
	var a, b TimerID
	var got []bool
	w.add("p", hooks{
		init: func(env *Env) { a = env.After(Mono, time.Second, "a") },
		fire: func(env *Env, tag any) {
			if tag == "a" {
				b = env.After(Mono, time.Second, "b") // reuses a's slot
				got = append(got, env.Cancel(a))
			}
		},
	})
	w.run(time.Minute)
	require.Equal(t, a.idx, b.idx, "the test needs slot reuse")
	assert.Equal(t, []bool{false}, got)
	assert.Equal(t, []string{"0s p init", "1s p fire a", "2s p fire b"}, w.log)
}

// TestTimerForEver: a timer too far away never fires, on any clock and
// drift, and can still be cancelled.
func TestTimerForEver(t *testing.T) {
	const forever = time.Duration(math.MaxInt64)
	tests := []struct {
		name  string
		clock Clock
		ppb   int64
	}{
		{"wall", Wall, 0},
		{"mono", Mono, 0},
		{"wall, slow", Wall, -500_000_000},
		{"mono, fast", Mono, PPB},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(Config{Seed: 1})
			var id TimerID
			var cancelled bool
			w.addClock("p", hooks{
				init: func(env *Env) {
					id = env.After(tt.clock, forever, "never")
					env.SetTimer(tt.clock, math.MaxInt64, "never either")
					env.After(Mono, time.Hour, "cancel")
				},
				fire: func(env *Env, tag any) {
					if tag == "cancel" {
						cancelled = env.Cancel(id)
					}
				},
			}, ClockSpec{DriftPPB: tt.ppb})
			w.run(1000 * time.Hour)
			assert.True(t, cancelled)
			for _, l := range w.log {
				assert.NotContains(t, l, "never")
			}
		})
	}
}

// TestCancelledTimersLeaveTheQueue sets and cancels many long timers, as a
// client does with request timeouts whose replies come first, and checks
// that the queue does not keep their events until their due time (issue
// 15: a Redlock client kept ~4,400 of them), that the timers that were not
// cancelled still fire at their time, and that the budget summary does not
// count cancelled timers as pending.
func TestCancelledTimersLeaveTheQueue(t *testing.T) {
	tests := []struct {
		name    string
		timers  int // set and cancelled, one per millisecond
		keepOne int // every keepOne-th timer is kept (0: none)
	}{
		{"all cancelled", 20000, 0},
		{"one in a hundred kept", 20000, 100},
		{"fewer than a compaction", compactMin / 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(Config{Seed: 1})
			var fired []time.Duration
			maxQueued := 0
			w.add("p", hooks{
				init: func(env *Env) { env.After(Mono, ms, -1) },
				fire: func(env *Env, tag any) {
					i := tag.(int)
					if i >= 0 {
						fired = append(fired, time.Duration(w.k.Now()))
						return
					}
					for n := 0; n < tt.timers; n++ {
						id := env.After(Mono, time.Hour+time.Duration(n)*ms, n)
						if tt.keepOne == 0 || n%tt.keepOne != 0 {
							require.True(t, env.Cancel(id))
						}
						if q := w.k.QueuedEvents(); q > maxQueued {
							maxQueued = q
						}
					}
				},
			})
			require.NoError(t, w.k.Run(At(time.Minute)))
			p, _ := w.k.Lookup("p")
			kept := 0
			if tt.keepOne > 0 {
				kept = (tt.timers + tt.keepOne - 1) / tt.keepOne
			}
			assert.Equal(t, kept, w.k.ActiveTimers(p))
			assert.LessOrEqual(t, maxQueued, 2*compactMin+2*kept+2, "the queue kept cancelled timers")
			if kept == 0 && tt.timers < compactMin {
				assert.NotContains(t, w.k.pendingSummary(), "timers", "cancelled timers reported as pending")
			}
			require.NoError(t, w.k.Run(At(2*time.Hour)))
			require.Len(t, fired, kept)
			for j, at := range fired {
				assert.Equal(t, time.Hour+ms+time.Duration(j*tt.keepOne)*ms, at)
			}
		})
	}
}
