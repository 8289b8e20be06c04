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
