package fuzz

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locksim/locksim/faults"
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
