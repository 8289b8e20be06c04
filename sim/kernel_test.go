package sim

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEqualTimeOrder checks that events due at the same true time run in
// the order they were scheduled, whatever their kind.
func TestEqualTimeOrder(t *testing.T) {
	const s = time.Second
	w := newWorld(Config{Seed: 1, Network: NetConfig{Latency: noLatency}})
	w.at(10*s, func() { w.logf("-", "call 1 (scheduled at 0s)") })
	w.at(5*s, func() { w.logf("-", "call at 5s") })
	w.at(10*s, func() { w.logf("-", "call 2 (scheduled at 0s)") })
	w.add("a", hooks{
		init: func(env *Env) { env.After(Mono, s, "set") },
		fire: func(env *Env, tag any) {
			if tag == "set" {
				env.After(Wall, 9*s, "a's timer (set at 1s)")
			}
		},
	})
	w.add("b", hooks{init: func(env *Env) {
		env.After(Mono, 10*s, "b's timer (set at 0s)")
		env.After(Mono, 10*s-1, "send")
	}, fire: func(env *Env, tag any) {
		if tag == "send" {
			send(env, "c", "first")
			send(env, "a", "second")
			send(env, "c", "third")
		}
	}})
	w.add("c", hooks{})
	w.at(5*s, func() { w.k.At(At(10*s), func() { w.logf("-", "call 3 (scheduled at 5s)") }) })
	w.run(time.Minute)
	assert.Equal(t, []string{
		"0s a init",
		"0s b init",
		"0s c init",
		"1s a fire set",
		"5s - call at 5s",
		"9.999999999s b fire send",
		"9.999999999s c got first from b",
		"9.999999999s a got second from b",
		"9.999999999s c got third from b",
		"10s - call 1 (scheduled at 0s)",
		"10s - call 2 (scheduled at 0s)",
		"10s b fire b's timer (set at 0s)",
		"10s a fire a's timer (set at 1s)",
		"10s - call 3 (scheduled at 5s)",
	}, w.log)
}

// TestAtInThePast: a callback scheduled for an earlier time runs now.
func TestAtInThePast(t *testing.T) {
	w := newWorld(Config{Seed: 1})
	w.at(time.Second, func() { w.k.At(0, func() { w.logf("-", "late") }) })
	w.run(time.Minute)
	assert.Equal(t, []string{"1s - late"}, w.log)
}

func TestRunUntil(t *testing.T) {
	w := newWorld(Config{Seed: 1})
	w.add("p", hooks{init: func(env *Env) {
		env.After(Mono, time.Second, 1)
		env.After(Mono, 2*time.Second, 2)
	}})
	w.run(time.Second)
	assert.Equal(t, []string{"0s p init", "1s p fire 1"}, w.log, "events at exactly until run")
	assert.Equal(t, At(time.Second), w.k.Now())
	w.run(1500 * ms)
	assert.Equal(t, At(1500*ms), w.k.Now(), "the clock advances to until")
	w.run(time.Minute)
	assert.Equal(t, []string{"0s p init", "1s p fire 1", "2s p fire 2"}, w.log)
	assert.Equal(t, int64(3), w.k.Events())
}

// TestEventBudget runs runaway processes: each must stop with *ErrBudget
// naming the budget, never hang. The budget applies to each Run.
func TestEventBudget(t *testing.T) {
	tests := []struct {
		name string
		h    hooks
	}{
		{"zero-duration timers", hooks{
			init: func(env *Env) { env.After(Mono, 0, "again") },
			fire: func(env *Env, _ any) { env.After(Mono, 0, "again") },
		}},
		{"zero-duration wall timers", hooks{
			init: func(env *Env) { env.After(Wall, 0, "again") },
			fire: func(env *Env, _ any) { env.After(Wall, -time.Second, "again") },
		}},
		{"messages to itself without latency", hooks{
			init: func(env *Env) { env.Send(env.ID(), "again") },
			recv: func(env *Env, _ ProcID, m Message) { env.Send(env.ID(), m) },
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(Config{Seed: 1, MaxEvents: 1000, Network: NetConfig{Latency: noLatency}})
			w.add("loop", tt.h)
			w.at(time.Second, func() { t.Error("time advanced") })
			err := w.k.Run(At(time.Hour))
			var be *ErrBudget
			require.True(t, errors.As(err, &be), "got %v", err)
			assert.Equal(t, int64(1000), be.Budget)
			assert.Equal(t, Time(0), be.At)
			assert.Contains(t, err.Error(), "budget of 1000 events")
			assert.Contains(t, err.Error(), "--max-events", "the message says how to raise the budget")
			assert.Contains(t, be.Pending, "loop: 1 ", "the looping process is named")
			assert.Equal(t, int64(1000), w.k.Events())

			err = w.k.Run(At(time.Hour))
			require.True(t, errors.As(err, &be), "a second Run gets its own budget: %v", err)
			assert.Equal(t, int64(2000), w.k.Events())
		})
	}
}

func TestDefaultBudget(t *testing.T) {
	k := New(Config{})
	assert.Equal(t, int64(DefaultMaxEvents), k.cfg.MaxEvents)
}

func TestAddErrors(t *testing.T) {
	k := New(Config{Seed: 1})
	k.Add("a", func() Process { return &counter{} }, ClockSpec{})
	assert.PanicsWithValue(t, `sim: duplicate process name "a"`, func() {
		k.Add("a", func() Process { return &counter{} }, ClockSpec{})
	})
	require.NoError(t, k.Run(0))
	assert.Panics(t, func() { k.Add("b", func() Process { return &counter{} }, ClockSpec{}) })
}

func TestLookupAndNames(t *testing.T) {
	w := newWorld(Config{Seed: 9})
	a := w.add("a", hooks{})
	b := w.add("b", hooks{})
	id, ok := w.k.Lookup("b")
	assert.True(t, ok)
	assert.Equal(t, b, id)
	_, ok = w.k.Lookup("zz")
	assert.False(t, ok)
	assert.Equal(t, "a", w.k.Name(a))
	assert.Equal(t, "", w.k.Name(NoProc))
	assert.Equal(t, "", w.k.Name(5))
	assert.Equal(t, 2, w.k.NumProcs())
	assert.Equal(t, uint64(9), w.k.Seed())
}

func TestTimeString(t *testing.T) {
	tests := []struct {
		t    Time
		want string
	}{
		{0, "0.000s"},
		{At(12003 * ms), "12.003s"},
		{At(-1500 * ms), "-1.500s"},
		{At(999_999), "0.000s"},
		{Never, "never"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.t.String())
		})
	}
	assert.Equal(t, 1.5, At(1500*ms).Seconds())
	assert.Equal(t, At(3*time.Second), At(time.Second).Add(2*time.Second))
	assert.Equal(t, 2*time.Second, At(3*time.Second).Sub(At(time.Second)))
}

// TestObserve checks that observers see every traced event and may
// schedule work (a fault trigger) that runs at once.
func TestObserve(t *testing.T) {
	w := newWorld(Config{Seed: 1, KeepTrace: true})
	var seen []string
	var p ProcID
	w.k.Observe(func(e ObservedEvent) {
		seen = append(seen, fmt.Sprintf("%v %s %d %d", e.At.Duration(), e.Kind, e.Proc, e.Peer))
		if e.Kind == "acquired" {
			w.k.At(e.At, func() { w.k.Crash(p, CrashProcess) })
		}
	})
	p = w.add("p", hooks{init: func(env *Env) {
		env.Log("acquired", "x")
		env.After(Mono, time.Second, "never")
	}})
	w.run(time.Minute)
	assert.Equal(t, []string{"0s start 0 -1", "0s acquired 0 -1", "0s crash 0 -1"}, seen)
	assert.Len(t, w.k.Trace(), len(seen))
}
