package fuzz

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenarios"
)

func TestSignature(t *testing.T) {
	jump := func(node string, by time.Duration) faults.Spec {
		return faults.Spec{Kind: "clock-jump", Node: node, By: by}
	}
	tests := []struct {
		name  string
		specs []faults.Spec
		want  string
	}{
		{name: "sizes and order do not matter", specs: []faults.Spec{jump("C", time.Second), jump("A", 9*time.Second), jump("C", 2*time.Second)}, want: "clock-jump A, clock-jump C"},
		{name: "links", specs: []faults.Spec{{Kind: "delay", From: "c1", To: "A"}}, want: "delay c1->A"},
		{name: "partition groups sorted", specs: []faults.Spec{{Kind: "partition", Groups: [][]string{{"c1", "C"}, {"B", "A"}}}}, want: "partition {A B}|{C c1}"},
		{name: "heal", specs: []faults.Spec{{Kind: "heal"}}, want: "heal"},
		{name: "none", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Signature(tt.specs))
		})
	}
}

// TestGroups: shrunk findings with the same property and signature form
// one group; unshrunk findings are left out.
func TestGroups(t *testing.T) {
	shrunk := func(specs ...faults.Spec) *ShrinkResult { return &ShrinkResult{After: specs} }
	a := faults.Spec{Kind: "clock-jump", Node: "A", By: time.Second}
	a2 := faults.Spec{Kind: "clock-jump", Node: "A", By: 7 * time.Second}
	p := faults.Spec{Kind: "pause", Node: "c1"}
	res := &Result{Findings: []*Finding{
		{Number: 1, Kinds: []string{"lock-safety"}, Shrunk: shrunk(a)},
		{Number: 2, Kinds: []string{"lock-safety"}, Shrunk: shrunk(p)},
		{Number: 3, Kinds: []string{"lock-safety"}},
		{Number: 4, Kinds: []string{"lock-safety"}, Shrunk: shrunk(a2)},
		{Number: 5, Kinds: []string{"resource-safety"}, Shrunk: shrunk(a)},
	}}
	assert.Equal(t, []Group{
		{Kind: "lock-safety", Signature: "clock-jump A", Findings: []int{1, 4}},
		{Kind: "lock-safety", Signature: "pause c1", Findings: []int{2}},
		{Kind: "resource-safety", Signature: "clock-jump A", Findings: []int{5}},
	}, Groups(res))
}

// symmetricWorld: five Redlock masters of one configuration (A..E) but E,
// whose clock runs fast, a replica R of A, and three clients: c1 and c2
// alike, c3 starting later.
const symmetricWorld = `
name: symmetric
duration: 30s
redis:
  - {name: A}
  - {name: B}
  - {name: C}
  - {name: D}
  - {name: E, clock: {drift: 0.01}}
  - {name: R, replicaof: A}
clients:
  - name: c1
    lock: {algorithm: redlock, nodes: [A, B, C, D, E]}
    workload: {cycles: 1, hold: 1s}
  - name: c2
    lock: {algorithm: redlock, nodes: [E, D, C, B, A]}
    workload: {cycles: 1, hold: 1s}
  - name: c3
    lock: {algorithm: redlock, nodes: [A, B, C, D, E]}
    workload: {start: 2s, cycles: 1, hold: 1s}
`

// TestSymmetry: the classes of interchangeable processes: same kind,
// entry and references, up to names; a node with another clock, a master
// with a replica, a replica, a client that starts later stay alone.
func TestSymmetry(t *testing.T) {
	s, err := scenarios.Parse("symmetric.yaml", []byte(symmetricWorld))
	require.NoError(t, err)
	y := SymmetryOf(s)
	assert.Equal(t, [][]string{{"B", "C", "D"}, {"c1", "c2"}}, y.Classes())

	pause := func(n string) faults.Spec { return faults.Spec{Kind: "pause", Node: n} }
	crash := func(n string) faults.Spec { return faults.Spec{Kind: "crash", Node: n} }
	part := func(gs ...[]string) faults.Spec { return faults.Spec{Kind: "partition", Groups: gs} }
	tests := []struct {
		name string
		a, b []faults.Spec
		same bool
	}{
		{"one node of a class", []faults.Spec{pause("B")}, []faults.Spec{pause("D")}, true},
		{"two nodes", []faults.Spec{pause("B"), crash("C")}, []faults.Spec{crash("B"), pause("D")}, true},
		{"two nodes, one fault each, not the same node twice", []faults.Spec{pause("B"), crash("C")}, []faults.Spec{pause("D"), crash("D")}, false},
		{"clients", []faults.Spec{pause("c1"), crash("C")}, []faults.Spec{pause("c2"), crash("B")}, true},
		{"partitions", []faults.Spec{part([]string{"c1", "B", "C"}, []string{"D", "A"})}, []faults.Spec{part([]string{"D", "A"}, []string{"c2", "C", "B"})}, true},
		{"partition sides differ", []faults.Spec{part([]string{"c1", "B"}, []string{"C", "D"})}, []faults.Spec{part([]string{"c1", "B", "C"}, []string{"D"})}, false},
		{"links", []faults.Spec{{Kind: "delay", From: "c1", To: "B"}}, []faults.Spec{{Kind: "delay", From: "c2", To: "D"}}, true},
		{"a node with another clock", []faults.Spec{pause("B")}, []faults.Spec{pause("E")}, false},
		{"a master and its replica", []faults.Spec{pause("A")}, []faults.Spec{pause("R")}, false},
		{"the master of a replica", []faults.Spec{pause("A")}, []faults.Spec{pause("B")}, false},
		{"a client that starts later", []faults.Spec{pause("c1")}, []faults.Spec{pause("c3")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ca, cb := y.Canonical(tt.a), y.Canonical(tt.b)
			if tt.same {
				assert.Equal(t, ca, cb)
			} else {
				assert.NotEqual(t, ca, cb)
			}
		})
	}
	// The canonical form renames onto each class's first members.
	assert.Equal(t, "crash B, pause C, pause c1", y.Canonical([]faults.Spec{pause("D"), crash("C"), pause("c2")}))
	// Without symmetry it is the signature.
	var none *Symmetry
	assert.Equal(t, "pause D", none.Canonical([]faults.Spec{pause("D")}))
}

// TestGroupsSymmetric: findings whose shrunk schedules differ only by
// interchangeable nodes are one group, shown with its first finding's
// signature; the others stay apart.
func TestGroupsSymmetric(t *testing.T) {
	s, err := scenarios.Parse("symmetric.yaml", []byte(symmetricWorld))
	require.NoError(t, err)
	shrunk := func(specs ...faults.Spec) *ShrinkResult { return &ShrinkResult{After: specs} }
	pause := func(n string) faults.Spec { return faults.Spec{Kind: "pause", Node: n} }
	res := &Result{Symmetry: SymmetryOf(s), Findings: []*Finding{
		{Number: 1, Kinds: []string{"lock-safety"}, Shrunk: shrunk(pause("C"), pause("D"))},
		{Number: 2, Kinds: []string{"lock-safety"}, Shrunk: shrunk(pause("E"))},
		{Number: 3, Kinds: []string{"lock-safety"}, Shrunk: shrunk(pause("B"), pause("C"))},
		{Number: 4, Kinds: []string{"lock-safety"}, Shrunk: shrunk(pause("A"))},
	}}
	assert.Equal(t, []Group{
		{Kind: "lock-safety", Signature: "pause C, pause D", Findings: []int{1, 3}},
		{Kind: "lock-safety", Signature: "pause E", Findings: []int{2}},
		{Kind: "lock-safety", Signature: "pause A", Findings: []int{4}},
	}, Groups(res))
	var b strings.Builder
	writeInterchangeable(&b, res.Symmetry)
	assert.Equal(t, "  (signatures that differ only by interchangeable processes group together: {B C D} {c1 c2})\n", b.String())
}

// TestSymmetrySurvivesBaseFile: a merge finds the classes from the
// campaign's base.yaml (BaseBytes), the whole campaign from the scenario:
// both must give the same classes, or merged groups would differ.
func TestSymmetrySurvivesBaseFile(t *testing.T) {
	for _, name := range scenarios.BuiltinNames() {
		s, err := scenarios.Builtin(name)
		require.NoError(t, err)
		b, err := BaseBytes(s)
		require.NoError(t, err)
		back, err := scenarios.Parse(BaseFile, b)
		require.NoError(t, err, name)
		assert.Equal(t, SymmetryOf(s).Classes(), SymmetryOf(back).Classes(), name)
	}
}

// TestExploreGroupsSymmetric: explore's groups are keyed like Groups, up
// to interchangeable processes after the environment's faults, and only
// the first schedule of each group is kept (written and shrunk).
func TestExploreGroupsSymmetric(t *testing.T) {
	s, err := scenarios.Parse("symmetric.yaml", []byte(symmetricWorld))
	require.NoError(t, err)
	env := faults.Spec{Kind: "partition", Groups: [][]string{{"A"}, {"E"}}}
	pause := func(n string) faults.Spec { return faults.Spec{Kind: "pause", Node: n} }
	res := &Result{Symmetry: SymmetryOf(s), Findings: []*Finding{
		{Run: 3, Kinds: []string{"lock-safety"}, Faults: []faults.Spec{env, pause("B")}},
		{Run: 5, Kinds: []string{"lock-safety"}, Faults: []faults.Spec{env, pause("E")}},
		{Run: 8, Kinds: []string{"lock-safety"}, Faults: []faults.Spec{env, pause("D")}},
	}}
	groups := groupFindings(res, 1)
	assert.Equal(t, []ExploreGroup{
		{Kind: "lock-safety", Signature: "pause B", Schedules: []int{3, 8}, Finding: 1},
		{Kind: "lock-safety", Signature: "pause E", Schedules: []int{5}, Finding: 2},
	}, groups)
	var kept []bool
	for _, f := range res.Findings {
		kept = append(kept, f.Kept)
	}
	assert.Equal(t, []bool{true, true, false}, kept)
}
