package faults_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
)

// TestSpecString checks the words summaries and explanations use for each
// fault kind and trigger.
func TestSpecString(t *testing.T) {
	s := time.Second
	tests := []struct {
		name string
		spec faults.Spec
		want string
	}{
		{"clock-jump forward", faults.Spec{At: at(2 * s), Kind: "clock-jump", Node: "C", By: 30 * s}, "clock-jump C by +30s at 2s"},
		{"clock-jump backward", faults.Spec{At: at(0), Kind: "clock-jump", Node: "C", By: -5 * s}, "clock-jump C by -5s at 0s"},
		{"clock-drift", faults.Spec{At: at(s), Kind: "clock-drift", Node: "A", Rate: -0.02}, "clock-drift A rate -0.02 at 1s"},
		{"pause with a range", faults.Spec{At: at(s), Kind: "pause", Node: "c1", For: sim.Range{Lo: 10 * s, Hi: 20 * s}}, "pause c1 for 10s..20s at 1s"},
		{"crash default mode", faults.Spec{At: at(s), Kind: "crash", Node: "A"}, "crash A mode process at 1s"},
		{"crash power with restart", faults.Spec{At: at(s), Kind: "crash", Node: "A", Mode: "power", RestartAfter: rng(s, 2*s)}, "crash A mode power restart after 1s..2s at 1s"},
		{"restart", faults.Spec{At: at(s), Kind: "restart", Node: "A"}, "restart A at 1s"},
		{"promote", faults.Spec{At: at(s), Kind: "promote", Node: "R"}, "promote R at 1s"},
		{"partition", faults.Spec{At: at(0), Kind: "partition", Groups: [][]string{{"c1", "A"}, {"B"}}}, "partition [c1 A] [B] at 0s"},
		{"partition with heal", faults.Spec{At: at(0), Kind: "partition", Groups: [][]string{{"A"}, {"B"}}, HealAfter: rng(5*s, 5*s)}, "partition [A] [B] heal after 5s at 0s"},
		{"heal", faults.Spec{At: at(9 * s), Kind: "heal"}, "heal at 9s"},
		{"drop", faults.Spec{At: at(s), Kind: "drop", From: "A", To: "c1", Count: 3}, "drop A->c1 next 3 at 1s"},
		{"delay", faults.Spec{At: at(s), Kind: "delay", From: "A", To: "c1", By: 50 * ms, For: sim.Fixed(2 * s)}, "delay A->c1 by 50ms for 2s at 1s"},
		{"timed at a range", faults.Spec{At: rng(s, 3*s), Kind: "heal"}, "heal at 1s..3s"},
		{
			"trigger, first event",
			faults.Spec{On: &faults.Trigger{Event: "acquired", Proc: "c1", Count: 1}, Kind: "pause", Node: "c1", For: sim.Fixed(s)},
			"pause c1 for 1s on acquired of c1",
		},
		{
			"trigger, Nth event, after",
			faults.Spec{On: &faults.Trigger{Event: "key-set", Proc: "A", Count: 3}, After: sim.Range{Lo: 0, Hi: 100 * ms}, Kind: "crash", Node: "A"},
			"crash A mode process on key-set of A (#3) after 0s..100ms",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.spec.String())
		})
	}
}

// TestSpecTargets checks the processes each kind touches, sorted.
func TestSpecTargets(t *testing.T) {
	tests := []struct {
		name string
		spec faults.Spec
		want []string
	}{
		{"node kinds", faults.Spec{Kind: "pause", Node: "c1"}, []string{"c1"}},
		{"partition lists every group member", faults.Spec{Kind: "partition", Groups: [][]string{{"c2", "D"}, {"A", "c1"}}}, []string{"A", "D", "c1", "c2"}},
		{"drop", faults.Spec{Kind: "drop", From: "c1", To: "A"}, []string{"A", "c1"}},
		{"delay", faults.Spec{Kind: "delay", From: "A", To: "B"}, []string{"A", "B"}},
		{"heal touches no process", faults.Spec{Kind: "heal"}, nil},
		{"the trigger's process is not a target", faults.Spec{Kind: "crash", Node: "A", On: &faults.Trigger{Event: "acquired", Proc: "c1"}}, []string{"A"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.spec.Targets())
		})
	}
}

// TestSpecTargetsDoesNotReorderGroups checks that Targets sorts a copy: the
// spec's partition groups keep their order.
func TestSpecTargetsDoesNotReorderGroups(t *testing.T) {
	spec := faults.Spec{Kind: "partition", Groups: [][]string{{"c2", "B", "A"}}}
	spec.Targets()
	assert.Equal(t, [][]string{{"c2", "B", "A"}}, spec.Groups)
}

// TestEventLists checks that every client and any-process trigger event is
// one Install accepts, that the lists do not overlap, and that a node
// event is accepted only on a process whose kind declares it
// (Hooks.Events), with an error naming the process and the event.
func TestEventLists(t *testing.T) {
	seen := map[string]bool{}
	w := newWorld(t, 1, []string{"a", "b"}, nil)
	for _, list := range [][]string{faults.ClientEvents, faults.AnyEvents} {
		for _, e := range list {
			assert.False(t, seen[e], "event %q listed twice", e)
			seen[e] = true
			spec := faults.Spec{On: &faults.Trigger{Event: e, Proc: "a"}, Kind: "heal"}
			assert.NoError(t, faults.Install(w.K, []faults.Spec{spec}, faults.Hooks{}), "event %q", e)
		}
	}
	assert.Len(t, seen, 8, "SCENARIO_FORMAT.md lists eight core client and process events (key-set and promoted are Redis's)")
	assert.Len(t, faults.Kinds, 15, "SCENARIO_FORMAT.md lists ten core fault kinds, and the README two from Jepsen (clock-strobe, partition-ring), reshard and manual-failover (Redis Cluster) and order (same-instant order)")

	hooks := faults.Hooks{Events: func(p sim.ProcID) []faults.NodeEvent {
		if w.K.Name(p) == "a" {
			return []faults.NodeEvent{{Name: "key-set", Trace: "item-stored"}}
		}
		return nil
	}}
	on := func(proc string) []faults.Spec {
		return []faults.Spec{{On: &faults.Trigger{Event: "key-set", Proc: proc}, Kind: "heal"}}
	}
	assert.NoError(t, faults.Install(w.K, on("a"), hooks))
	assert.EqualError(t, faults.Install(w.K, on("b"), hooks), `faults[0]: on.event: b never emits event "key-set"`)
	assert.EqualError(t, faults.Install(w.K, on("a"), faults.Hooks{}), `faults[0]: on.event: a never emits event "key-set"`)
}
