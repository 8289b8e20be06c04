package scenarios_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// sameAsYAML applies specs to base both ways and requires the same result:
// the same error text, or the same scenario (faults, world) and the same
// file when written. It reports whether the schedule was valid.
// direct requires a valid schedule to go the direct way (not through the
// YAML path, which the direct path leaves the cases it cannot vouch for).
func sameAsYAML(t *testing.T, base *scenarios.Scenario, specs []faults.Spec, direct bool, what string) bool {
	t.Helper()
	want, werr := base.WithFaultsYAML(specs)
	got, gerr := base.WithFaults(specs)
	if werr != nil {
		require.Error(t, gerr, "%s: the YAML path refuses the schedule: %v", what, werr)
		assert.Equal(t, werr.Error(), gerr.Error(), what)
		return false
	}
	require.NoError(t, gerr, what)
	if direct {
		require.True(t, scenarios.Pending(got), "%s: a valid schedule goes the direct way", what)
	}
	require.Equal(t, scenarios.WithoutTree(want), scenarios.WithoutTree(got), what)
	wb, err := want.Marshal()
	require.NoError(t, err)
	gb, err := got.Marshal()
	require.NoError(t, err)
	require.Equal(t, string(wb), string(gb), what)
	return true
}

// TestWithFaultsMatchesYAMLOnGenerated compares the direct path with the
// YAML path on generated schedules for every catalogue scenario, and on
// each schedule broken in one of many ways.
func TestWithFaultsMatchesYAMLOnGenerated(t *testing.T) {
	all, err := scenarios.Catalogue()
	require.NoError(t, err)
	breaks := []struct {
		name string
		edit func(f *faults.Spec)
	}{
		{"unknown process", func(f *faults.Spec) {
			if f.Node != "" {
				f.Node = "nobody"
			} else if f.On != nil {
				f.On.Proc = "nobody"
			} else {
				f.From = "nobody"
			}
		}},
		{"negative at", func(f *faults.Spec) { f.At, f.On = &sim.Range{Lo: -time.Second, Hi: -time.Second}, nil }},
		{"at after the end", func(f *faults.Spec) { f.At, f.On = &sim.Range{Lo: 1000 * time.Hour, Hi: 1000 * time.Hour}, nil }},
		{"empty at range", func(f *faults.Spec) { f.At, f.On = &sim.Range{Lo: 2 * time.Second, Hi: time.Second}, nil }},
		{"at and on", func(f *faults.Spec) {
			f.At, f.On = &sim.Range{Lo: time.Second, Hi: time.Second}, &faults.Trigger{Event: "acquired", Proc: "c1"}
		}},
		{"no trigger", func(f *faults.Spec) { f.At, f.On = nil, nil }},
		{"count zero", func(f *faults.Spec) { f.At, f.On = nil, &faults.Trigger{Event: "acquired", Proc: "c1", Count: 0} }},
		{"count negative", func(f *faults.Spec) { f.At, f.On = nil, &faults.Trigger{Event: "acquired", Proc: "c1", Count: -3} }},
		{"unknown event", func(f *faults.Spec) { f.At, f.On = nil, &faults.Trigger{Event: "teatime", Proc: "c1"} }},
		{"no trigger process", func(f *faults.Spec) { f.At, f.On = nil, &faults.Trigger{Event: "acquired"} }},
		{"node event on a client", func(f *faults.Spec) { f.At, f.On = nil, &faults.Trigger{Event: "key-set", Proc: "c1"} }},
		{"client event on a server", func(f *faults.Spec) {
			f.At, f.On = nil, &faults.Trigger{Event: "acquired", Proc: "A"}
		}},
		{"empty after", func(f *faults.Spec) {
			f.At, f.On = nil, &faults.Trigger{Event: "acquired", Proc: "c1"}
			f.After = sim.Range{Lo: time.Second}
		}},
		{"after with at", func(f *faults.Spec) {
			f.At, f.On = &sim.Range{Lo: time.Second, Hi: time.Second}, nil
			f.After = sim.Fixed(time.Second)
		}},
		{"unknown kind", func(f *faults.Spec) { f.Kind = "meteor" }},
		{"no kind", func(f *faults.Spec) { f.Kind = "" }},
		{"fields of another kind", func(f *faults.Spec) { f.Rate, f.Mode, f.HealAfter = 0.5, "power", &sim.Range{Hi: time.Second} }},
		{"zero fields", func(f *faults.Spec) {
			*f = faults.Spec{At: f.At, On: f.On, After: f.After, Kind: f.Kind}
		}},
		{"NaN rate", func(f *faults.Spec) { f.Kind, f.Node, f.Rate = "clock-drift", "A", math.NaN() }},
		{"huge rate", func(f *faults.Spec) { f.Kind, f.Node, f.Rate = "clock-drift", "A", 1e9 }},
		{"negative pause", func(f *faults.Spec) { f.Kind, f.Node, f.For = "pause", "c1", sim.Fixed(-time.Second) }},
		{"empty pause range", func(f *faults.Spec) { f.Kind, f.Node, f.For = "pause", "c1", sim.Range{Lo: time.Second} }},
		{"bad crash mode", func(f *faults.Spec) { f.Kind, f.Node, f.Mode = "crash", "A", "gently" }},
		{"empty restart range", func(f *faults.Spec) {
			f.Kind, f.Node, f.RestartAfter = "crash", "A", &sim.Range{Lo: time.Second}
		}},
		{"empty partition group", func(f *faults.Spec) { f.Kind, f.Groups = "partition", [][]string{{"c1"}, {}} }},
		{"no partition groups", func(f *faults.Spec) { f.Kind, f.Groups = "partition", nil }},
		{"process in two groups", func(f *faults.Spec) { f.Kind, f.Groups = "partition", [][]string{{"c1", "A"}, {"A"}} }},
		{"promote a master", func(f *faults.Spec) { f.Kind, f.Node = "promote", "A" }},
		{"drop to itself", func(f *faults.Spec) { f.Kind, f.From, f.To, f.Count = "drop", "c1", "c1", 1 }},
		{"negative drop count", func(f *faults.Spec) { f.Kind, f.From, f.To, f.Count = "drop", "c1", "A", -1 }},
	}
	valid, invalid := 0, 0
	for _, base := range all {
		t.Run(base.Name, func(t *testing.T) {
			w := fuzz.WorldOf(base)
			for seed := uint64(1); seed <= 12; seed++ {
				_, specs := fuzz.Schedule(w, seed, nil, 0)
				if sameAsYAML(t, base, specs, true, fmt.Sprintf("seed %d", seed)) {
					valid++
				} else {
					invalid++
				}
				if len(specs) == 0 {
					continue
				}
				b := breaks[int(seed)%len(breaks)]
				for j := range []int{0, 1} {
					bad := append([]faults.Spec(nil), specs...)
					i := (int(seed) + j) % len(bad)
					if bad[i].On != nil {
						on := *bad[i].On
						bad[i].On = &on
					}
					b = breaks[(int(seed)*2+j)%len(breaks)]
					b.edit(&bad[i])
					if sameAsYAML(t, base, bad, false, fmt.Sprintf("seed %d, fault %d: %s", seed, i, b.name)) {
						valid++
					} else {
						invalid++
					}
				}
			}
		})
	}
	// Both kinds of outcome were compared.
	assert.Greater(t, valid, 100)
	assert.Greater(t, invalid, 30)
}

// TestWithFaultsMatchesYAMLOnHandWritten compares the two paths on every
// break applied to a hand-written schedule of redlock-clock-jump and of a
// world with a replica.
func TestWithFaultsMatchesYAMLOnHandWritten(t *testing.T) {
	s, err := scenarios.Builtin("redlock-clock-jump")
	require.NoError(t, err)
	at := sim.Range{Lo: time.Second, Hi: 2 * time.Second}
	heal := sim.Fixed(3 * time.Second)
	rs := sim.Fixed(time.Second)
	cases := []struct {
		name  string
		specs []faults.Spec
		ok    bool
	}{
		{"empty schedule", nil, true},
		{"every kind", []faults.Spec{
			{At: &at, Kind: "clock-jump", Node: "C", By: -5 * time.Second},
			{On: &faults.Trigger{Event: "acquired", Proc: "c1", Count: 2}, After: sim.Fixed(100 * time.Millisecond), Kind: "pause", Node: "c1", For: sim.Fixed(4 * time.Second)},
			{On: &faults.Trigger{Event: "key-set", Proc: "C", Count: 1}, Kind: "crash", Node: "C", Mode: "power", RestartAfter: &rs},
			{At: &at, Kind: "partition", Groups: [][]string{{"c1", "A"}, {"c2", "B"}}, HealAfter: &heal},
			{At: &at, Kind: "drop", From: "A", To: "c1", Count: 2},
			{At: &at, Kind: "delay", From: "c2", To: "D", By: 5 * time.Millisecond, For: sim.Fixed(time.Second)},
			{At: &at, Kind: "clock-drift", Node: "E", Rate: 0.02},
			{At: &at, Kind: "heal"},
			{At: &at, Kind: "restart", Node: "C"},
		}, true},
		{"count 1 written as 0", []faults.Spec{{On: &faults.Trigger{Event: "acquired", Proc: "c1"}, Kind: "pause", Node: "c1", For: sim.Fixed(time.Second)}}, true},
		{"stray fields dropped", []faults.Spec{{At: &at, After: sim.Fixed(time.Second), Kind: "heal", Node: "A", Rate: 3, Groups: [][]string{{"x"}}}}, true},
		{"at the last instant", []faults.Spec{{At: &sim.Range{Lo: s.Duration, Hi: s.Duration}, Kind: "heal"}}, true},
		{"a moment too late", []faults.Spec{{At: &sim.Range{Lo: s.Duration + 1, Hi: s.Duration + 1}, Kind: "heal"}}, false},
		{"two errors", []faults.Spec{{At: &at, Kind: "restart", Node: "X"}, {At: &at, Kind: "pause", Node: "Y", For: sim.Fixed(time.Second)}}, false},
		{"read error hides references", []faults.Spec{{At: &at, Kind: "restart", Node: "X"}, {Kind: "heal"}}, false},
		{"unknown kind", []faults.Spec{{At: &at, Kind: "flood"}}, false},
		{"negative at", []faults.Spec{{At: &sim.Range{Lo: -1, Hi: 0}, Kind: "heal"}}, false},
		{"clock jump to a client", []faults.Spec{{At: &at, Kind: "clock-jump", Node: "c1", By: time.Second}}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.ok, sameAsYAML(t, s, tc.specs, true, tc.name))
		})
	}
	// The direct path's scenario is a copy: the caller's specs can change
	// afterwards without changing it.
	at0 := at
	specs := []faults.Spec{{At: &at, Kind: "partition", Groups: [][]string{{"c1", "A"}, {"c2", "B"}}}}
	v, err := s.WithFaults(specs)
	require.NoError(t, err)
	specs[0].Groups[0][0] = "c2"
	*specs[0].At = sim.Fixed(0)
	assert.Equal(t, "c1", v.Faults[0].Groups[0][0])
	assert.Equal(t, at0, *v.Faults[0].At)
	// And a schedule applied to a scenario made by WithFaults starts from
	// that scenario's tree.
	v2, err := v.WithFaults(nil)
	require.NoError(t, err)
	w2, err := v.WithFaultsYAML(nil)
	require.NoError(t, err)
	assert.Equal(t, scenarios.WithoutTree(w2), scenarios.WithoutTree(v2))
}
