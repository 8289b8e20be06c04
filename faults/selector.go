package faults

import (
	"fmt"
	"sort"
	"strings"

	"github.com/locksim/locksim/sim"
)

// A selector stands for a fault's node where a scenario does not name
// one, after Chaos Mesh's selectors and modes (chaos-mesh.org docs,
// "Define the Scope of Chaos Experiments": mode one, all, fixed, ...):
// "any redis" is one random process of the set, "all replicas" every one,
// "majority servers" a random majority. Install resolves it from the
// run's seed (its own "selectors" stream, so no other draw moves) and
// applies the fault to each chosen process; each record says which process
// the selector chose.
//
// Sets (resolved by Hooks.Select, from the world): a process kind's
// section (redis, memcached, mysql, sentinel, zookeeper, ...), clients,
// servers (the lock servers of every kind), masters (lock servers that
// replicate from no one), replicas (lock servers that replicate).

// Selector modes.
const (
	SelectAny      = "any"
	SelectAll      = "all"
	SelectMajority = "majority"
)

// SelectModes are the selector modes, for messages.
var SelectModes = []string{SelectAny, SelectAll, SelectMajority}

// Selector is a parsed selector: Mode and Set.
type Selector struct {
	Mode, Set string
}

func (s Selector) String() string { return s.Mode + " " + s.Set }

// ParseSelector reads "MODE SET"; ok is false when name is not of that
// shape (a process name has no space). A shape with an unknown mode is
// returned with ok true, for CheckSelector to name.
func ParseSelector(name string) (Selector, bool) {
	f := strings.Fields(name)
	if len(f) != 2 {
		return Selector{}, false
	}
	return Selector{Mode: f[0], Set: f[1]}, true
}

// CheckSelector says what is wrong with a selector whose set has members
// ("" when valid).
func CheckSelector(s Selector, members []string, sets []string) string {
	known := false
	for _, m := range SelectModes {
		known = known || m == s.Mode
	}
	switch {
	case !known:
		return fmt.Sprintf("unknown selector mode %q in %q (allowed: %s, as \"any redis\")", s.Mode, s.String(), strings.Join(SelectModes, ", "))
	case members == nil:
		return fmt.Sprintf("unknown set %q in selector %q (known: %s)", s.Set, s.String(), strings.Join(sets, ", "))
	case len(members) == 0:
		return fmt.Sprintf("selector %q selects nothing: the scenario has no %s", s.String(), s.Set)
	}
	return ""
}

// Resolve chooses from members (in declaration order) with r: one for
// any, every one for all, a random majority (n/2+1, in declaration order)
// for majority.
func (s Selector) Resolve(members []string, r *sim.Rand) []string {
	switch s.Mode {
	case SelectAny:
		return []string{members[r.Uint64n(uint64(len(members)))]}
	case SelectMajority:
		idx := make([]int, len(members))
		for i := range idx {
			idx[i] = i
		}
		for i := len(idx) - 1; i > 0; i-- {
			j := int(r.Uint64n(uint64(i + 1)))
			idx[i], idx[j] = idx[j], idx[i]
		}
		idx = idx[:len(members)/2+1]
		sort.Ints(idx)
		out := make([]string, len(idx))
		for i, j := range idx {
			out[i] = members[j]
		}
		return out
	}
	return append([]string(nil), members...)
}

// expand replaces each fault whose node is a selector by one fault per
// chosen process (Spec.Selector keeps the selector); orig maps each
// returned spec to the index of the spec it came from.
func (in *Installer) expand(specs []Spec) (out []Spec, orig []int, err error) {
	var r *sim.Rand
	for i, s := range specs {
		sel, ok := ParseSelector(s.Node)
		if !ok {
			out, orig = append(out, s), append(orig, i)
			continue
		}
		if in.hooks.Select == nil {
			return nil, nil, fmt.Errorf("faults[%d]: node: selector %q: the world declares no process sets", i, s.Node)
		}
		members, sets := in.hooks.Select(sel.Set)
		if msg := CheckSelector(sel, members, sets); msg != "" {
			return nil, nil, fmt.Errorf("faults[%d]: node: %s", i, msg)
		}
		if r == nil {
			r = in.k.Rand("selectors")
		}
		for _, name := range sel.Resolve(members, r) {
			c := s.Clone()
			c.Node, c.Selector = name, sel.String()
			out, orig = append(out, c), append(orig, i)
		}
	}
	return out, orig, nil
}
