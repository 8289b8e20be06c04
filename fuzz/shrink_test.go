package fuzz

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

func at(d time.Duration) *sim.Range { return &sim.Range{Lo: d, Hi: d} }

// TestShrinkRemovesNoise pads Kleppmann's three-fault schedule with faults
// that do not matter; shrinking removes them and keeps the violation.
func TestShrinkRemovesNoise(t *testing.T) {
	base := builtin(t, "redlock-clock-jump")
	noise := []faults.Spec{
		{At: at(20 * time.Second), Kind: "pause", Node: "storage", For: sim.Fixed(time.Millisecond)},
		{At: at(25 * time.Second), Kind: "clock-drift", Node: "storage", Rate: 0.01},
		{At: at(29 * time.Second), Kind: "drop", From: "c1", To: "c2", Count: 4},
		{On: &faults.Trigger{Event: "released", Proc: "c2", Count: 1}, Kind: "crash", Node: "A", Mode: "power", RestartAfter: at(time.Second)},
		{At: at(28 * time.Second), Kind: "delay", From: "A", To: "c1", By: 3 * time.Second, For: sim.Fixed(time.Second)},
	}
	specs := append(append([]faults.Spec(nil), noise[:2]...), base.Faults...)
	specs = append(specs, noise[2:]...)
	s, err := base.WithFaults(specs)
	require.NoError(t, err)
	r, err := Shrink(s, 1, ShrinkOptions{Kind: checker.KindLockSafety})
	require.NoError(t, err)
	assert.False(t, r.Exhausted)
	require.LessOrEqual(t, len(r.After), len(base.Faults), "%v", specStrings(r.After))
	for _, f := range r.After {
		assert.Contains(t, []string{"partition", "clock-jump"}, f.Kind)
	}
	assert.Len(t, r.Removed, len(specs)-len(r.After))
	assert.Less(t, r.DurationAfter, r.DurationBefore)
	assert.Equal(t, checker.Violated, r.Outcome.Verdicts.Of(checker.LockSafety))
	// The result replays: its own run violates the lock.
	o, err := scenarios.Run(r.Scenario, 1, scenarios.Options{})
	require.NoError(t, err)
	assert.Equal(t, checker.Violated, o.Verdicts.Of(checker.LockSafety))
	assert.Equal(t, r.DurationAfter, r.Scenario.Duration)
	// Shrinking is deterministic.
	again, err := Shrink(s, 1, ShrinkOptions{Kind: checker.KindLockSafety})
	require.NoError(t, err)
	assert.Equal(t, specStrings(r.After), specStrings(again.After))
	assert.Equal(t, r.Runs, again.Runs)
}

func TestShrinkBudget(t *testing.T) {
	base := builtin(t, "redlock-clock-jump")
	r, err := Shrink(base, 1, ShrinkOptions{Kind: checker.KindLockSafety, MaxRuns: 3})
	require.NoError(t, err)
	assert.True(t, r.Exhausted)
	assert.Equal(t, 3, r.Runs)
	assert.Contains(t, r.Summary(), "stopped at the run budget")
}

func TestShrinkErrors(t *testing.T) {
	tests := []struct {
		name string
		scen string
		kind string
		err  string
	}{
		{name: "no violation", scen: "redlock-crash-fsync-always", kind: checker.KindLockSafety, err: "does not violate lock-safety"},
		{name: "unknown kind", scen: "redlock-clock-jump", kind: "speed", err: `unknown property "speed"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Shrink(builtin(t, tt.scen), 1, ShrinkOptions{Kind: tt.kind})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}

func TestTargetKind(t *testing.T) {
	v, h := checker.Violated, checker.Holds
	tests := []struct {
		name   string
		expect scenarios.Expect
		o      scenarios.Outcome
		want   string
		err    string
	}{
		{name: "mismatch first", expect: scenarios.Expect{Verdicts: map[string]checker.Verdict{checker.LockSafety: "violated", checker.ResourceSafety: "holds"}},
			o: scenarios.Outcome{Verdicts: checker.VerdictsFrom(map[string]checker.Verdict{checker.LockSafety: v, checker.ResourceSafety: v, checker.Liveness: h})}, want: checker.KindResourceSafety},
		{name: "a fuzz finding", expect: scenarios.Expect{Verdicts: map[string]checker.Verdict{checker.LockSafety: "violated"}},
			o: scenarios.Outcome{Verdicts: checker.VerdictsFrom(map[string]checker.Verdict{checker.LockSafety: v, checker.ResourceSafety: v, checker.Liveness: h})}, want: checker.KindLockSafety},
		{name: "nothing expected", o: scenarios.Outcome{Verdicts: checker.VerdictsFrom(map[string]checker.Verdict{checker.LockSafety: h, checker.ResourceSafety: v, checker.Liveness: v})}, want: checker.KindResourceSafety},
		{name: "liveness mismatch", expect: scenarios.Expect{Verdicts: map[string]checker.Verdict{checker.Liveness: "holds"}},
			o: scenarios.Outcome{Verdicts: checker.VerdictsFrom(map[string]checker.Verdict{checker.LockSafety: v, checker.ResourceSafety: h, checker.Liveness: v})}, want: checker.KindLiveness},
		{name: "matches its expect of holds", expect: scenarios.Expect{Verdicts: map[string]checker.Verdict{checker.LockSafety: "holds"}},
			o: scenarios.Outcome{Verdicts: checker.VerdictsFrom(map[string]checker.Verdict{checker.LockSafety: h, checker.ResourceSafety: v, checker.Liveness: h})}, err: "violates nothing to shrink"},
		{name: "expected violation missing", expect: scenarios.Expect{Verdicts: map[string]checker.Verdict{checker.LockSafety: "violated"}},
			o: scenarios.Outcome{Verdicts: checker.VerdictsFrom(map[string]checker.Verdict{checker.LockSafety: h, checker.ResourceSafety: h, checker.Liveness: h})}, err: "expected: lock_safety violated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := TargetKind(&scenarios.Scenario{Expect: tt.expect}, &tt.o)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDurVariants(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name   string
		d      time.Duration
		min    time.Duration
		zeroOK bool
		want   []time.Duration
	}{
		{name: "time: zero, half, rounded", d: 12345 * ms, zeroOK: true, want: []time.Duration{0, 6173 * ms, 10 * time.Second, 12 * time.Second}},
		{name: "pause: no zero", d: 12345 * ms, min: ms, want: []time.Duration{6173 * ms, 10 * time.Second, 12 * time.Second}},
		{name: "round value: only half", d: 10 * time.Second, min: ms, want: []time.Duration{5 * time.Second}},
		{name: "negative jump keeps its sign", d: -25500 * ms, min: ms, want: []time.Duration{-12750 * ms, -30 * time.Second, -26 * time.Second}},
		{name: "at the minimum", d: ms, min: ms, want: nil},
		{name: "zero stays", d: 0, zeroOK: true, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, durVariants(tt.d, tt.min, tt.zeroOK))
		})
	}
}

func TestRoundSig(t *testing.T) {
	tests := []struct {
		d    time.Duration
		k    int
		want time.Duration
		sig  int
	}{
		{12345 * time.Millisecond, 1, 10 * time.Second, 5},
		{12345 * time.Millisecond, 2, 12 * time.Second, 5},
		{-2700 * time.Millisecond, 1, -3 * time.Second, 2},
		{5 * time.Second, 1, 5 * time.Second, 1},
		{1500 * time.Microsecond, 1, 2 * time.Millisecond, 2},
	}
	for _, tt := range tests {
		t.Run(tt.d.String(), func(t *testing.T) {
			assert.Equal(t, tt.want, roundSig(tt.d, tt.k))
			assert.Equal(t, tt.sig, sigDigits(tt.d))
		})
	}
}

func TestSmallVariants(t *testing.T) {
	assert.Equal(t, []int{1, 5}, intVariants(10))
	assert.Equal(t, []int{1}, intVariants(3))
	assert.Nil(t, intVariants(1))
	assert.Equal(t, []float64{0.069, 0.1}, rateVariants(0.137))
	assert.Equal(t, []float64{-0.1}, rateVariants(-0.2))
	assert.Nil(t, rateVariants(0.001))
	assert.Equal(t, []sim.Range{sim.Fixed(time.Second), sim.Fixed(3 * time.Second)}, rangeVariants(sim.Range{Lo: time.Second, Hi: 3 * time.Second}, time.Millisecond, false))
}

// TestVariants checks each kind's simpler versions, and that they do not
// share memory with the original.
func TestVariants(t *testing.T) {
	part := faults.Spec{At: at(2500 * time.Millisecond), Kind: "partition", Groups: [][]string{{"c1", "A"}, {"c2"}, {"B"}}, HealAfter: at(4 * time.Second)}
	vs := variants(part)
	require.NotEmpty(t, vs)
	var groups [][][]string
	for _, v := range vs {
		groups = append(groups, v.Groups)
	}
	assert.Contains(t, groups, [][]string{{"c2"}, {"B"}}, "drop a group")
	assert.Contains(t, groups, [][]string{{"A"}, {"c2"}, {"B"}}, "drop a member")
	assert.Equal(t, [][]string{{"c1", "A"}, {"c2"}, {"B"}}, part.Groups, "the original is untouched")
	assert.Equal(t, 4*time.Second, part.HealAfter.Lo)

	crash := faults.Spec{On: &faults.Trigger{Event: "acquired", Proc: "c1", Count: 3}, After: sim.Fixed(120 * time.Millisecond), Kind: "crash", Node: "A", Mode: "power", RestartAfter: at(3 * time.Second)}
	vs = variants(crash)
	require.NotEmpty(t, vs)
	assert.Equal(t, "", vs[0].Mode, "power loss becomes a process crash first")
	var counts []int
	for _, v := range vs {
		counts = append(counts, v.On.Count)
	}
	assert.Contains(t, counts, 1)
	assert.Equal(t, 3, crash.On.Count, "the original is untouched")

	// A two-group partition keeps two groups.
	for _, v := range variants(faults.Spec{At: at(0), Kind: "partition", Groups: [][]string{{"c1"}, {"A", "B"}}}) {
		assert.Len(t, v.Groups, 2)
	}
}

// TestVariantsByFieldType checks that each kind's fields are varied as
// their types in faults' kind table say, in field order, before the
// trigger time: the same candidates the per-kind code made.
func TestVariantsByFieldType(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		spec faults.Spec
		want func(v faults.Spec) any
		exp  []any
	}{
		{faults.Spec{At: at(0), Kind: "clock-jump", Node: "A", By: -1234 * ms},
			func(v faults.Spec) any { return v.By }, anys(durVariants(-1234*ms, ms, false))},
		{faults.Spec{At: at(0), Kind: "clock-drift", Node: "A", Rate: 0.137},
			func(v faults.Spec) any { return v.Rate }, anys(rateVariants(0.137))},
		{faults.Spec{At: at(0), Kind: "pause", Node: "A", For: sim.Fixed(7300 * ms)},
			func(v faults.Spec) any { return v.For }, anys(rangeVariants(sim.Fixed(7300*ms), ms, false))},
		{faults.Spec{At: at(0), Kind: "drop", From: "A", To: "c1", Count: 9},
			func(v faults.Spec) any { return v.Count }, anys(intVariants(9))},
		{faults.Spec{At: at(0), Kind: "delay", From: "A", To: "c1", By: 300 * ms, For: sim.Fixed(0)},
			func(v faults.Spec) any { return v.By }, anys(durVariants(300*ms, ms, false))},
		{faults.Spec{At: at(0), Kind: "crash", Node: "A", RestartAfter: at(1500 * ms)},
			func(v faults.Spec) any { return *v.RestartAfter }, anys(rangeVariants(sim.Fixed(1500*ms), 0, true))},
	}
	for _, tt := range tests {
		t.Run(tt.spec.Kind, func(t *testing.T) {
			require.NotEmpty(t, tt.exp)
			vs := variants(tt.spec)
			require.GreaterOrEqual(t, len(vs), len(tt.exp))
			var got []any
			for _, v := range vs[:len(tt.exp)] {
				got = append(got, tt.want(v))
			}
			assert.Equal(t, tt.exp, got)
		})
	}
}

func anys[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
