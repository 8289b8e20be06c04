package faults_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
)

// TestKindTable checks that every entry of the table is complete and
// consistent: a unique name, fields whose pointers have the type their
// FieldType says, and enums with a default among their values.
func TestKindTable(t *testing.T) {
	require.Equal(t, []string{"clock-jump", "clock-drift", "pause", "crash", "restart", "partition", "heal", "drop", "delay", "promote", "clock-strobe", "partition-ring", "reshard", "manual-failover", "order"}, faults.Kinds,
		"the order of Kinds is the generator's draw order: changing it changes every fuzz schedule")
	seen := map[string]bool{}
	for _, k := range faults.Kinds {
		t.Run(k, func(t *testing.T) {
			require.False(t, seen[k], "kind declared twice")
			seen[k] = true
			d, ok := faults.Lookup(k)
			require.True(t, ok)
			assert.Equal(t, k, d.Name)
			names := map[string]bool{}
			for _, f := range d.Fields {
				assert.False(t, names[f.Name], "field %s declared twice", f.Name)
				names[f.Name] = true
				var s faults.Spec
				p := f.Ptr(&s)
				switch f.Type {
				case faults.FieldProc, faults.FieldEnum, faults.FieldString:
					assert.IsType(t, (*string)(nil), p, f.Name)
				case faults.FieldDuration:
					assert.IsType(t, (*time.Duration)(nil), p, f.Name)
				case faults.FieldRange:
					assert.IsType(t, (*sim.Range)(nil), p, f.Name)
				case faults.FieldOptRange:
					assert.IsType(t, (**sim.Range)(nil), p, f.Name)
				case faults.FieldFloat:
					assert.IsType(t, (*float64)(nil), p, f.Name)
				case faults.FieldInt:
					assert.IsType(t, (*int)(nil), p, f.Name)
				case faults.FieldGroups:
					assert.IsType(t, (*[][]string)(nil), p, f.Name)
				default:
					t.Errorf("field %s: unknown type %d", f.Name, f.Type)
				}
				if f.Type == faults.FieldEnum {
					assert.Contains(t, f.Enum, f.Default, f.Name)
				}
			}
			// Real mode asks the declaration, never a list of kinds.
			assert.True(t, d.Real != "" || d.RealRefusal != "", "a built-in kind says how real mode runs it, or why it cannot")
			assert.NotNil(t, d.Words)
			assert.NotNil(t, d.Apply)
			assert.True(t, d.NotDrawn || d.Generate != nil)
		})
	}
	_, ok := faults.Lookup("meteor")
	assert.False(t, ok)
}

// TestKindLiveness checks that an applied fault's record carries the
// liveness its kind declares: the checker reads it instead of a kind list
// (checker's helpers_test.go mirrors these for hand-written histories).
func TestKindLiveness(t *testing.T) {
	s := time.Second
	tests := []struct {
		spec faults.Spec
		want sim.FaultLiveness
	}{
		{faults.Spec{Kind: faults.KindClockJump, Node: "a", By: s}, sim.LiveSettles},
		{faults.Spec{Kind: faults.KindClockDrift, Node: "a", Rate: 0.01}, sim.LiveSettles},
		{faults.Spec{Kind: faults.KindPause, Node: "a", For: sim.Fixed(s)}, sim.LiveSpan},
		{faults.Spec{Kind: faults.KindCrash, Node: "a"}, sim.LiveCrash},
		{faults.Spec{Kind: faults.KindRestart, Node: "a"}, sim.LiveRestart},
		{faults.Spec{Kind: faults.KindPartition, Groups: [][]string{{"a"}, {"b"}}}, sim.LiveLink},
		{faults.Spec{Kind: faults.KindHeal}, sim.LiveHeal},
		{faults.Spec{Kind: faults.KindDrop, From: "a", To: "b", Count: 1}, sim.LiveLink},
		{faults.Spec{Kind: faults.KindDelay, From: "a", To: "b", By: s, For: sim.Fixed(s)}, sim.LiveLink},
		{faults.Spec{Kind: faults.KindPromote, Node: "b"}, sim.LiveSettles},
		{faults.Spec{Kind: faults.KindClockStrobe, Node: "a", By: s, Period: 100 * time.Millisecond, For: sim.Fixed(s)}, sim.LiveSpan},
		{faults.Spec{Kind: faults.KindPartitionRing, Ring: [][]string{{"a"}, {"b"}, {"c"}}}, sim.LiveLink},
		{faults.Spec{Kind: faults.KindReshard, Key: "lock", From: "a", To: "b"}, sim.LiveSettles},
		{faults.Spec{Kind: faults.KindManualFailover, Node: "a"}, sim.LiveSettles},
		{faults.Spec{Kind: faults.KindOrder, Node: "a", From: "b"}, sim.LiveNone},
	}
	require.Len(t, tests, len(faults.Kinds), "one case per kind")
	for _, tt := range tests {
		t.Run(tt.spec.Kind, func(t *testing.T) {
			w := newWorld(t, 1, []string{"a", "b", "c"}, nil)
			tt.spec.At = at(s)
			require.NoError(t, faults.Install(w.K, []faults.Spec{tt.spec}, w.hooks()))
			h := w.run(5 * time.Second)
			require.Len(t, h.Faults, 1)
			assert.Equal(t, tt.want, h.Faults[0].Liveness)
			d, _ := faults.Lookup(tt.spec.Kind)
			assert.Equal(t, d.Liveness, h.Faults[0].Liveness)
		})
	}
}

// TestCheckFields checks each kind's field validation, as the scenario
// reader and the installer both run it.
func TestCheckFields(t *testing.T) {
	s := time.Second
	tests := []struct {
		name string
		spec faults.Spec
		want string // "" for valid
	}{
		{"clock jump backwards", faults.Spec{Kind: "clock-jump", Node: "a", By: -s}, ""},
		{"pause of zero", faults.Spec{Kind: "pause", Node: "a"}, "for: must be positive"},
		{"crash mode", faults.Spec{Kind: "crash", Node: "a", Mode: "gentle"}, `mode: unknown crash mode "gentle" (allowed: process, power, clean)`},
		{"crash restart after negative", faults.Spec{Kind: "crash", Node: "a", RestartAfter: &sim.Range{Lo: -s, Hi: -s}}, "restart_after: must not be negative"},
		{"crash restarted at once", faults.Spec{Kind: "crash", Node: "a", RestartAfter: &sim.Range{}}, ""},
		{"partition of one group", faults.Spec{Kind: "partition", Groups: [][]string{{"a", "b"}}}, "groups: needs at least two groups"},
		{"partition healed at once", faults.Spec{Kind: "partition", Groups: [][]string{{"a"}, {"b"}}, HealAfter: &sim.Range{}}, "heal_after: must be positive"},
		{"drop of none", faults.Spec{Kind: "drop", From: "a", To: "b"}, "count: must be at least 1, got 0"},
		{"drop on a loop", faults.Spec{Kind: "drop", From: "a", To: "a", Count: 1}, "to: a link needs two different processes"},
		{"delay by nothing", faults.Spec{Kind: "delay", From: "a", To: "b", For: sim.Fixed(s)}, "by: must be positive"},
		{"drift out of range", faults.Spec{Kind: "clock-drift", Node: "a", Rate: 2}, "rate: drift 2 out of range"},
		{"jump reverted at once", faults.Spec{Kind: "clock-jump", Node: "a", By: s, RevertAfter: &sim.Range{}}, "revert_after: must be positive"},
		{"strobe of nothing", faults.Spec{Kind: "clock-strobe", Node: "a", Period: s, For: sim.Fixed(s)}, "delta: must not be zero"},
		{"strobe without period", faults.Spec{Kind: "clock-strobe", Node: "a", By: s, For: sim.Fixed(s)}, "period: must be positive"},
		{"strobe flooding the trace", faults.Spec{Kind: "clock-strobe", Node: "a", By: s, Period: time.Millisecond, For: sim.Fixed(200 * s)}, "for: flips the clock 200000 times (for / period); at most 100000"},
		{"strobe backwards", faults.Spec{Kind: "clock-strobe", Node: "a", By: -s, Period: time.Millisecond, For: sim.Fixed(s)}, ""},
		{"ring of two", faults.Spec{Kind: "partition-ring", Ring: [][]string{{"a"}, {"b"}}}, "ring: needs at least three positions"},
		{"ring of three", faults.Spec{Kind: "partition-ring", Ring: [][]string{{"a"}, {"b"}, {"c"}}}, ""},
		{"reshard without key", faults.Spec{Kind: "reshard", From: "a", To: "b"}, "key: must name the key whose slot migrates"},
		{"reshard to itself", faults.Spec{Kind: "reshard", Key: "lock", From: "a", To: "a"}, "to: is a, the master the slot migrates from: a reshard moves the slot to another master of the cluster"},
		{"cluster failover unknown mode", faults.Spec{Kind: "manual-failover", Node: "a", Mode: "hard"}, "mode: unknown mode \"hard\" (allowed: default, force, takeover: CLUSTER FAILOVER [FORCE|TAKEOVER])"},
		{"cluster failover force", faults.Spec{Kind: "manual-failover", Node: "a", Mode: "force"}, ""},
		{"reshard held negative", faults.Spec{Kind: "reshard", Key: "lock", From: "a", To: "b", Hold: sim.Fixed(-s)}, "hold: must not be negative"},
		{"reshard held open", faults.Spec{Kind: "reshard", Key: "lock", From: "a", To: "b", Hold: sim.Fixed(s)}, ""},
		{"order of a timer from a peer", faults.Spec{Kind: "order", Node: "a", Event: "timer", From: "b"}, "from: names the sender of a delivery; a timer has none"},
		{"order of a delivery to itself", faults.Spec{Kind: "order", Node: "a", From: "a"}, "from: a process does not deliver to itself"},
		{"order of an unknown event", faults.Spec{Kind: "order", Node: "a", Event: "soon"}, `event: unknown event "soon" (allowed: any, timer)`},
		{"order of a delivery", faults.Spec{Kind: "order", Node: "a", From: "b"}, ""},
		{"unknown kind", faults.Spec{Kind: "meteor"}, `kind: unknown fault kind "meteor"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := faults.CheckFields(tt.spec)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestGeneratedFaultsPassChecks checks that the generator, which draws
// through the same table, only makes faults its own checks accept.
func TestGeneratedFaultsPassChecks(t *testing.T) {
	w := faults.GenWorld{
		Clients: []string{"c1", "c2"}, Masters: []string{"A", "B", "C"}, Replicas: []string{"R"},
		Others: []string{"storage"}, Duration: 30 * time.Second, TTL: 2 * time.Second,
		Reshards: []faults.ReshardTarget{{Key: "lock", From: "B", Masters: []string{"A", "B", "C"}}},
	}
	kinds := map[string]bool{}
	for seed := uint64(0); seed < 300; seed++ {
		for _, s := range faults.Generate(sim.NewRand(seed, "t"), w, faults.GenOptions{}) {
			kinds[s.Kind] = true
			require.NoError(t, faults.CheckFields(s), "seed %d: %s", seed, s)
		}
	}
	assert.Len(t, kinds, len(faults.Kinds)-2, "every kind generated but order and manual-failover")
	assert.False(t, kinds[faults.KindManualFailover], "the generator never draws a manual failover")
	assert.False(t, kinds[faults.KindOrder], "the generator never draws an order choice")
	assert.NotContains(t, faults.Applicable(w), faults.KindOrder)
	err := faults.CheckKinds([]string{faults.KindOrder}, w)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "never drawn at random")
}

// TestRegister: a registered kind is looked up, listed last (the
// generator's draw order of the built-in kinds is kept) and refused by
// real mode until it says how real mode runs it; the undo removes it; a
// clash or an incomplete declaration panics.
func TestRegister(t *testing.T) {
	before := append([]string(nil), faults.Kinds...)
	d := faults.KindDef{Name: "meteor", NotDrawn: true,
		Words: func(*strings.Builder, faults.Spec) {},
		Apply: func(_ *faults.Installer, _ faults.Spec, _ sim.ProcID, rec sim.FaultRecord) sim.FaultRecord {
			return rec
		}}
	undo := faults.Register(d)
	_, ok := faults.Lookup("meteor")
	assert.True(t, ok)
	assert.Equal(t, append(append([]string(nil), before...), "meteor"), faults.Kinds)
	assert.Contains(t, faults.RealRefusal("meteor"), "fault kind meteor registered no real-mode emulation")
	assert.Empty(t, faults.RealRefusal(faults.KindPause))
	assert.Contains(t, faults.RealRefusal(faults.KindOrder), "real servers share no instant")
	assert.Panics(t, func() { faults.Register(d) }, "a name taken")
	undo()
	_, ok = faults.Lookup("meteor")
	assert.False(t, ok)
	assert.Equal(t, before, faults.Kinds)
	assert.Panics(t, func() { faults.Register(faults.KindDef{Name: "x", NotDrawn: true}) }, "no Words, no Apply")
	drawn := d
	drawn.Name, drawn.NotDrawn = "y", false
	assert.Panics(t, func() { faults.Register(drawn) }, "drawn without Generate")
}
