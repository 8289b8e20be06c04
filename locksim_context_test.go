package locksim

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/sim"
)

// TestFacadeStructuredViolations: Result carries each violation with its
// property, lock, clients and windows (the record's), the expectation the
// run was judged against and the liveness note.
func TestFacadeStructuredViolations(t *testing.T) {
	s, err := Builtin("redlock-clock-jump")
	require.NoError(t, err)
	res, err := Run(s, Options{})
	require.NoError(t, err)
	rec := res.Record()
	require.NotEmpty(t, rec.Violations)
	require.Len(t, res.Violations, len(rec.Violations))
	props := map[string]bool{}
	for i, v := range res.Violations {
		rv := rec.Violations[i]
		props[v.Property] = true
		assert.Equal(t, rv.Lock, v.Lock)
		assert.Equal(t, rv.Clients, v.Clients)
		assert.Equal(t, rv.Explanation, v.Explanation)
		assert.Equal(t, res.Explanations[i], v.Explanation)
		require.Len(t, v.Windows, len(rv.Windows))
		for j, w := range v.Windows {
			assert.Equal(t, rv.Windows[j].Start.Duration(), w.Start)
			assert.Equal(t, rv.Windows[j].End.Duration(), w.End)
			assert.Less(t, w.Start, w.End)
		}
	}
	assert.True(t, props[checker.LockSafety], "the lock-safety violation is named by its property: %v", props)
	assert.True(t, props[checker.ResourceSafety], "%v", props)
	lock := res.Violations[0]
	assert.Equal(t, checker.LockSafety, lock.Property)
	assert.ElementsMatch(t, []string{"c1", "c2"}, lock.Clients)
	// c2 acquired at 1.109s, c1's belief ended at 5.120s.
	assert.Equal(t, 1109, int(lock.Windows[0].Start/time.Millisecond))

	assert.Equal(t, string(Violated), res.Expected[checker.LockSafety], "the expectation: %v", res.Expected)
	assert.Equal(t, rec.LivenessNote, res.LivenessNote)
	assert.Contains(t, res.LivenessNote, "no fault-free window")
}

// long is fenced-baseline run for a simulated hour: about 12 million
// events, far more than the tests let it execute.
func long(t *testing.T) *Scenario {
	s, err := Builtin("fenced-baseline")
	require.NoError(t, err)
	s, err = s.With("duration=1h")
	require.NoError(t, err)
	return s
}

// TestRunContextStops: a cancelled context stops a run cleanly, soon
// after it is cancelled, with an error that says so (errors.Is
// context.Canceled, a *sim.ErrStopped inside); a context cancelled before
// the run starts runs nothing.
func TestRunContextStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen int64
	const cancelAt = 20_000
	_, err := RunContext(ctx, long(t), Options{OnEvent: func(*sim.Event) {
		seen++
		if seen == cancelAt {
			cancel()
		}
	}})
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	var stopped *sim.ErrStopped
	require.ErrorAs(t, err, &stopped)
	var re *RunError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "fenced-baseline", re.Scenario)
	assert.GreaterOrEqual(t, seen, int64(cancelAt))
	// The kernel asks every 4096 events; a trace event is at most one a
	// kernel event, give or take the events a kernel event traces.
	assert.Less(t, seen, int64(cancelAt+5*4096), "stopped soon after the cancel")
	assert.Less(t, stopped.At, sim.At(time.Hour))

	_, err = RunContext(ctx, long(t), Options{})
	assert.ErrorIs(t, err, context.Canceled, "a context cancelled before the run")

	dl, cancel2 := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel2()
	<-dl.Done()
	_, err = RunContext(dl, long(t), Options{})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

// TestRunContextKeepsDeterminism: a context that is never cancelled
// changes nothing: the same trace hash and verdicts as Run.
func TestRunContextKeepsDeterminism(t *testing.T) {
	s, err := Builtin("fenced-baseline")
	require.NoError(t, err)
	want, err := Run(s, Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got, err := RunContext(ctx, s, Options{})
	require.NoError(t, err)
	assert.Equal(t, want.TraceHash, got.TraceHash)
	assert.Equal(t, want.Verdicts, got.Verdicts)
	assert.Equal(t, want.Events, got.Events)
}

// TestRunBudgets: Options.MaxEvents and MaxMemory stop a run that
// outgrows them, with the kernel's budget errors inside a *RunError.
func TestRunBudgets(t *testing.T) {
	tests := []struct {
		name  string
		opt   Options
		check func(t *testing.T, err error)
	}{
		{name: "events", opt: Options{MaxEvents: 10_000}, check: func(t *testing.T, err error) {
			var b *sim.ErrBudget
			require.ErrorAs(t, err, &b)
			assert.Equal(t, int64(10_000), b.Budget)
			assert.Contains(t, err.Error(), "--max-events")
		}},
		{name: "memory", opt: Options{MaxMemory: 1 << 10}, check: func(t *testing.T, err error) {
			var m *sim.ErrMemory
			require.ErrorAs(t, err, &m)
			assert.Equal(t, int64(1<<10), m.Budget)
			assert.Greater(t, m.InUse, m.Budget)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(long(t), tt.opt)
			require.Error(t, err)
			var re *RunError
			require.ErrorAs(t, err, &re)
			tt.check(t, err)
		})
	}
	// Budgets large enough change nothing.
	s, err := Builtin("fenced-baseline")
	require.NoError(t, err)
	want, err := Run(s, Options{})
	require.NoError(t, err)
	got, err := Run(s, Options{MaxEvents: want.Events + 1, MaxMemory: -1})
	require.NoError(t, err)
	assert.Equal(t, want.TraceHash, got.TraceHash)
	// The budget counts the kernel's events (messages, timers, calls run),
	// not the trace events Result.Events reports: find the smallest budget
	// the run fits in, then half of it must stop the run.
	fits := func(n int64) bool {
		_, err := Run(s, Options{MaxEvents: n})
		return err == nil
	}
	lo, hi := int64(1), want.Events
	require.True(t, fits(hi), "the run fits in as many kernel events as it traces")
	for lo < hi {
		mid := lo + (hi-lo)/2
		if fits(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	need := hi
	require.Greater(t, need, int64(100), "fenced-baseline runs more than a handful of kernel events")
	got, err = Run(s, Options{MaxEvents: need})
	require.NoError(t, err)
	assert.Equal(t, want.TraceHash, got.TraceHash, "a budget the run just fits in changes nothing")
	_, err = Run(s, Options{MaxEvents: need / 2})
	var b *sim.ErrBudget
	assert.ErrorAs(t, err, &b, "half the events it needs")
}
