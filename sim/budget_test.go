package sim

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMemoryBudget runs a process that grows without bound: the run must
// stop with *ErrMemory naming the budget and how to raise it, long before
// the machine runs out of memory.
func TestMemoryBudget(t *testing.T) {
	const budget = 256 << 20
	var hoard [][]byte
	w := newWorld(Config{Seed: 1, MaxMemory: budget, Network: NetConfig{Latency: noLatency}})
	w.add("hog", hooks{
		init: func(env *Env) { env.After(Mono, time.Millisecond, "grow") },
		fire: func(env *Env, _ any) {
			hoard = append(hoard, make([]byte, 16<<10))
			env.After(Mono, time.Millisecond, "grow")
		},
	})
	err := w.k.Run(At(time.Hour))
	var me *ErrMemory
	require.True(t, errors.As(err, &me), "got %v", err)
	assert.Equal(t, int64(budget), me.Budget)
	assert.Greater(t, me.InUse, int64(budget))
	assert.Less(t, me.InUse, int64(2*budget), "the budget is sampled often enough to stop near it")
	assert.Contains(t, err.Error(), "memory budget of 256.0 MiB exceeded")
	assert.Contains(t, err.Error(), "--max-memory")
	assert.Greater(t, len(hoard), 4000)
}

// TestMemoryBudgetOff: with no budget the same kind of run goes on.
func TestMemoryBudgetOff(t *testing.T) {
	n := 0
	w := newWorld(Config{Seed: 1, Network: NetConfig{Latency: noLatency}})
	w.add("p", hooks{
		init: func(env *Env) { env.After(Mono, time.Millisecond, "t") },
		fire: func(env *Env, _ any) { n++; env.After(Mono, time.Millisecond, "t") },
	})
	require.NoError(t, w.k.Run(At(10*time.Second)))
	assert.Equal(t, 10000, n)
}

func TestFormatBytes(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"}, {300 << 20, "300.0 MiB"}, {4 << 30, "4.0 GiB"}} {
		assert.Equal(t, tt.want, FormatBytes(tt.n))
	}
}

// TestTraceSink: a sink sees exactly the events a kept trace holds, in
// order, whether or not the trace is kept, and the hash does not change.
func TestTraceSink(t *testing.T) {
	run := func(keep bool, sink func(*Event)) *Kernel {
		return runPingPong(t, Config{Seed: 7, KeepTrace: keep, TraceSink: sink})
	}
	kept := run(true, nil)
	var streamed []Event
	k := run(false, func(e *Event) { streamed = append(streamed, *e) })
	assert.Nil(t, k.Trace())
	require.NotEmpty(t, streamed)
	assert.Equal(t, kept.Trace(), streamed)
	assert.Equal(t, kept.TraceHash(), k.TraceHash())
}

// TestTraceFilter: with a filter, the sink sees exactly the kept trace's
// events of the kinds it takes, the hash does not change, and the other
// events are never built (a run whose filter takes nothing allocates what
// a run without a sink does).
func TestTraceFilter(t *testing.T) {
	kept := runPingPong(t, Config{Seed: 7, KeepTrace: true})
	kinds := map[Kind]int{}
	for _, e := range kept.Trace() {
		kinds[e.Kind]++
	}
	require.Greater(t, len(kinds), 1, "the world must trace more than one kind")
	for kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			var want, got []Event
			for _, e := range kept.Trace() {
				if e.Kind == kind {
					want = append(want, e)
				}
			}
			k := runPingPong(t, Config{Seed: 7, TraceSink: func(e *Event) { got = append(got, *e) }, TraceFilter: func(k Kind) bool { return k == kind }})
			assert.Equal(t, want, got)
			assert.Equal(t, kept.TraceHash(), k.TraceHash())
		})
	}
	none := testing.AllocsPerRun(5, func() {
		runPingPong(t, Config{Seed: 7, TraceSink: func(*Event) { panic("the filter refused every kind") }, TraceFilter: func(Kind) bool { return false }})
	})
	bare := testing.AllocsPerRun(5, func() { runPingPong(t, Config{Seed: 7}) })
	assert.Equal(t, bare, none, "a filter that takes nothing must build no event")
}

// runPingPong runs a world of two processes trading pings and pongs for a
// second.
func runPingPong(t *testing.T, cfg Config) *Kernel {
	cfg.Network = NetConfig{Latency: Range{Lo: time.Millisecond, Hi: 3 * time.Millisecond}}
	w := newWorld(cfg)
	w.add("a", hooks{
		init: func(env *Env) { env.After(Mono, time.Millisecond, "tick") },
		fire: func(env *Env, _ any) {
			if id, ok := env.Lookup("b"); ok {
				env.Send(id, "ping")
			}
			env.After(Mono, 10*time.Millisecond, "tick")
		},
	})
	w.add("b", hooks{recv: func(env *Env, from ProcID, m Message) { env.Send(from, "pong") }})
	require.NoError(t, w.k.Run(At(time.Second)))
	return w.k
}
