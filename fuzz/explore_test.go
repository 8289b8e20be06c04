package fuzz

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// baseRun runs the base of pl (its environment alone) and returns its
// trace.
func baseRun(t *testing.T, s *scenarios.Scenario, env []faults.Spec) []sim.Event {
	t.Helper()
	b, err := s.WithFaults(env)
	require.NoError(t, err)
	var evs []sim.Event
	_, err = scenarios.Run(b, b.Seed, scenarios.Options{Stream: true, TraceSink: func(e *sim.Event) { evs = append(evs, *e) }})
	require.NoError(t, err)
	return evs
}

// TestExploreRedlockClockJumpMargin explores every single clock jump of
// redlock-clock-jump (any node or client, before or after each of its
// actions, each size class) and checks each schedule's verdict against the
// margin the Redlock analysis gives (Kleppmann 2016; antirez, "Is Redlock
// safe?"): c1 holds A, B and C; c2 can reach only C, D and E. A jump of C's
// wall clock by J at time T after C stored c1's key (at set) makes the key
// expire at max(T, set + TTL - J) in true time. Lock safety is violated
// exactly when that is before c1 stops holding (its release reaches C, or
// its validity TTL - drift runs out) and c2 sends a SET to C in between:
// c2 then forms the majority C, D, E without c1. Every other jump holds: A
// and B are out of c2's reach, D and E never held c1's key, and a jump of
// a client or of the storage moves no key's expiry.
func TestExploreRedlockClockJumpMargin(t *testing.T) {
	s, err := scenarios.Builtin("redlock-clock-jump")
	require.NoError(t, err)
	cfg := ExploreConfig{Base: s, Kinds: []string{faults.KindClockJump}, Workers: 2}
	pl, err := PlanExplore(&cfg)
	require.NoError(t, err)
	require.Len(t, pl.Env, 2, "the two partitions stay")

	// What the analysis needs from the base run.
	evs := baseRun(t, s, pl.Env)
	var set, release sim.Time = -1, -1
	sends := map[string]bool{} // message numbers of c2's SETs to C
	var c2Sets []sim.Time
	var acquireStart sim.Time = -1
	for _, e := range evs {
		switch {
		case e.Kind == sim.KindAcquireStart && e.Proc == "c1" && acquireStart < 0:
			acquireStart = e.At
		case e.Kind == sim.KindSend && e.Proc == "c2" && e.Peer == "C" && strings.Contains(e.Text, " SET lock "):
			sends[strings.Fields(e.Text)[0]] = true
		case e.Kind == sim.KindDeliver && e.Proc == "C" && e.Peer == "c1":
			if set < 0 {
				set = e.At
			} else if release < 0 {
				release = e.At
			}
		case e.Kind == sim.KindDeliver && e.Proc == "C" && e.Peer == "c2" && sends[e.Text]:
			c2Sets = append(c2Sets, e.At)
		}
	}
	require.True(t, set > 0 && release > set && len(c2Sets) > 3, "base run: set %s release %s c2 SETs %v", set, release, c2Sets)
	lock := s.Clients[0].Lock
	drift := time.Duration(float64(lock.TTL)*lock.DriftFactor) + lock.DriftExtra
	validityEnd := acquireStart + sim.At(lock.TTL-drift)
	holdEnd := min(release, validityEnd)

	expect := func(sp faults.Spec) bool {
		T := sim.Time(sp.At.Lo)
		if sp.Node != "C" || sp.By <= 0 || T <= set {
			return false
		}
		expiry := max(T, set+sim.At(lock.TTL-sp.By))
		for _, a := range c2Sets {
			if a > expiry && a < holdEnd {
				return true
			}
		}
		return false
	}

	er, err := Explore(context.Background(), cfg, pl)
	require.NoError(t, err)
	require.Equal(t, pl.Total, er.Runs)
	require.Empty(t, er.Errors)
	violated, mismatches := 0, 0
	for i, v := range er.Violated {
		sp := pl.Candidates[pl.Schedule(i)[0]].Spec
		if v {
			violated++
		}
		if want := expect(sp); want != v && mismatches < 10 {
			mismatches++
			assert.Equal(t, want, v, "schedule %d: %s (set %s, release %s, validity end %s)", i, sp, set, release, validityEnd)
		}
	}
	t.Logf("%d schedules, %d violated", pl.Total, violated)
	assert.Greater(t, violated, 0)
	assert.Less(t, violated, pl.Total)
}

// TestExploreVerdictSets explores the single-pause space of a handful of
// scenarios, safe and unsafe, and asserts which schedules violate what: a
// model change that opens or closes a window changes a count here.
// single-gc-pause-fenced's window is real: its resource checks tokens on
// writes only, so a pause of c1 before its read lets c1 and c2 read the same
// value (fencing-write-only-lost-update's lost update); with a marking
// resource (testdata/fenced-mark-pause.yaml) no pause of any length at any
// point breaks the resource.
func TestExploreVerdictSets(t *testing.T) {
	tests := []struct {
		base  string
		kinds []string
		total int
		want  map[string]int // "property signature" -> violating schedules
	}{
		{base: "single-gc-pause", kinds: []string{faults.KindPause}, total: 405, want: map[string]int{"lock-safety pause c1": 21}},
		{base: "single-gc-pause-fenced", kinds: []string{faults.KindPause}, total: 477, want: map[string]int{"resource-safety pause c1": 21}},
		{base: "testdata/fenced-mark-pause.yaml", kinds: []string{faults.KindPause}, total: 477, want: map[string]int{}},
		// The bounded model of redlock.tla: one pause finds Kleppmann's
		// counterexample (the holder paused past the TTL, or its write held
		// up at the storage); fenced with a marking resource, none breaks
		// the resource.
		{base: "redlock-tla-bounded", kinds: []string{faults.KindPause}, total: 1860, want: map[string]int{"lock-safety pause c1": 30, "lock-safety pause storage": 12}},
		{base: "redlock-tla-bounded-fenced", kinds: []string{faults.KindPause}, total: 1956, want: map[string]int{}},
		{base: "zk-session-expiry-pause", kinds: []string{faults.KindPause}, total: 798, want: map[string]int{}},
		{base: "zk-session-expiry-pause-fenced", kinds: []string{faults.KindPause}, total: 798, want: map[string]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.base, func(t *testing.T) {
			var s *scenarios.Scenario
			var err error
			if strings.HasSuffix(tt.base, ".yaml") {
				s, err = scenarios.Load(tt.base)
			} else {
				s, err = scenarios.Builtin(tt.base)
			}
			require.NoError(t, err)
			cfg := ExploreConfig{Base: s, Kinds: tt.kinds, Workers: 2}
			pl, err := PlanExplore(&cfg)
			require.NoError(t, err)
			er, err := Explore(context.Background(), cfg, pl)
			require.NoError(t, err)
			require.Empty(t, er.Errors)
			require.Empty(t, er.Inconclusive)
			assert.Equal(t, tt.total, er.Runs)
			got := map[string]int{}
			for _, g := range er.Groups {
				got[g.Kind+" "+g.Signature] = len(g.Schedules)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestExploreBadBounds: an unknown or unenumerable kind, K = 0, a space
// larger than MaxSchedules (saying how large) are refused.
func TestExploreBadBounds(t *testing.T) {
	s, err := scenarios.Builtin("single-gc-pause")
	require.NoError(t, err)
	tests := []struct {
		name string
		cfg  ExploreConfig
		err  string
	}{
		{"unknown kind", ExploreConfig{Kinds: []string{"meteor"}}, `cannot enumerate fault kind "meteor"`},
		{"no kind", ExploreConfig{Kinds: []string{}}, "no fault kind given"},
		{"K = 0", ExploreConfig{MaxFaults: -1}, "--max-faults must be at least 1"},
		{"too large", ExploreConfig{Kinds: []string{faults.KindPause}, MaxFaults: 2, MaxSchedules: 1000}, "the space has 82215 schedules (405 single faults, at most 2 per schedule), more than --max-schedules 1000"},
		{"unknown target", ExploreConfig{Targets: []string{"zz"}}, `"zz" is not a process a fault can hit`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Base = s
			_, err := PlanExplore(&tt.cfg)
			var bb *BadBounds
			require.ErrorAs(t, err, &bb)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}

func TestSpaceAndUnrank(t *testing.T) {
	assert.Equal(t, 5+10+10, spaceSize(5, 3))
	assert.Equal(t, -1, spaceSize(1<<40, 3))
	pl := &Plan{Candidates: make([]Candidate, 5), K: 2}
	pl.Total = spaceSize(5, 2)
	seen := map[string]bool{}
	for i := 0; i < pl.Total; i++ {
		c := pl.Schedule(i)
		require.NotEmpty(t, c)
		if len(c) == 2 {
			require.Less(t, c[0], c[1])
		}
		seen[strings.Trim(strings.Join(strings.Fields(strings.Trim(fmtInts(c), "[]")), ","), ",")] = true
	}
	assert.Len(t, seen, pl.Total, "every schedule is distinct")
}

func fmtInts(c []int) string {
	var b strings.Builder
	for _, x := range c {
		b.WriteString(" ")
		b.WriteString(string(rune('0' + x)))
	}
	return b.String()
}

// BenchmarkExplore measures schedules per second on the single-pause space
// of single-gc-pause (405 schedules).
func BenchmarkExplore(b *testing.B) {
	s, err := scenarios.Builtin("single-gc-pause")
	require.NoError(b, err)
	cfg := ExploreConfig{Base: s, Kinds: []string{faults.KindPause}, Workers: 1}
	pl, err := PlanExplore(&cfg)
	require.NoError(b, err)
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		er, err := Explore(context.Background(), cfg, pl)
		require.NoError(b, err)
		n += er.Runs
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "schedules/s")
}

// TestEnvelopeRedlockClockJump: the smallest forward jump of any node of
// redlock-clock-jump at any placement that breaks lock safety is the one
// the Redlock margin gives, within one step: C's key, stored at set, must
// expire (set + TTL - J) before c2's last SET that reaches C while c1 still
// holds (before its release reaches C, or its validity TTL - elapsed -
// drift ends, drift = TTL x 0.01 + 2 ms): J = set + TTL - that SET's
// arrival, rounded up to the step.
func TestEnvelopeRedlockClockJump(t *testing.T) {
	s, err := scenarios.Builtin("redlock-clock-jump")
	require.NoError(t, err)
	r, err := Envelope(EnvelopeConfig{Base: s, Param: "clock-jump.by", Lo: time.Millisecond, Hi: 30 * time.Second, Step: time.Millisecond})
	require.NoError(t, err)
	require.True(t, r.Found)

	env := []faults.Spec{s.Faults[0], s.Faults[2]}
	evs := baseRun(t, s, env)
	var set, release, start sim.Time = -1, -1, -1
	sends := map[string]bool{}
	var c2Sets []sim.Time
	for _, e := range evs {
		switch {
		case e.Kind == sim.KindAcquireStart && e.Proc == "c1" && start < 0:
			start = e.At
		case e.Kind == sim.KindSend && e.Proc == "c2" && e.Peer == "C" && strings.Contains(e.Text, " SET lock "):
			sends[strings.Fields(e.Text)[0]] = true
		case e.Kind == sim.KindDeliver && e.Proc == "C" && e.Peer == "c1":
			if set < 0 {
				set = e.At
			} else if release < 0 {
				release = e.At
			}
		case e.Kind == sim.KindDeliver && e.Proc == "C" && e.Peer == "c2" && sends[e.Text]:
			c2Sets = append(c2Sets, e.At)
		}
	}
	lock := s.Clients[0].Lock
	drift := time.Duration(float64(lock.TTL)*0.01) + 2*time.Millisecond
	require.Equal(t, drift, time.Duration(float64(lock.TTL)*lock.DriftFactor)+lock.DriftExtra, "the scenario uses Redlock's default drift")
	holdEnd := min(release, start+sim.At(lock.TTL-drift))
	var last sim.Time = -1
	for _, a := range c2Sets {
		if a < holdEnd {
			last = a
		}
	}
	require.Positive(t, last)
	want := time.Duration(set + sim.At(lock.TTL) - last)
	assert.Equal(t, "C", r.Violates.Node)
	assert.InDelta(t, float64(want), float64(r.Value), float64(r.Step), "envelope %s, margin %s", r.Value, want)
	assert.Equal(t, r.Value-r.Step, r.Holds.By)
	t.Logf("envelope %s (margin %s) in %d runs over %d placements", r.Value, want, r.Runs, r.Placements)
}
