package scenarios

import (
	"math"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
)

// Fault schedules applied without a YAML round trip (issue 15).
//
// The YAML path (withFaultsYAML) renders each fault as a mapping, puts the
// list in a deep copy of the scenario's tree and parses the whole tree
// again: for a fuzz run that is a tenth of its CPU and most of its
// allocations, spent re-reading clients and servers that did not change.
// WithFaults instead reads each spec as the YAML path would read it back
// (canonicalFault: only the fields the kind declares, a count of 1 when
// none is given, after only on a triggered fault, each field's check run
// in reading order) and checks the schedule's references with the same
// functions the YAML path uses (validateFaults). Whenever that finds a
// problem, or a value it cannot vouch for, it hands the schedule to the
// YAML path, so that a bad schedule gets exactly the errors a file with it
// would get; a good one gets the same Scenario. The scenario's tree is
// built only when someone asks for it (Tree, Marshal: shrink output,
// findings).

// procIndex is what a fault schedule's references are checked against: the
// world's processes by name and kind, and its Redis replicas. Built by
// validate; read-only afterwards (fuzz workers share it).
type procIndex struct {
	procs    map[string]*ProcKind
	order    []string
	byName   map[string]*ProcKind
	replicas map[string]bool
}

// pendingDoc is the tree of a scenario made by WithFaults, built once on
// demand.
type pendingDoc struct {
	base  *Scenario
	specs []faults.Spec
	once  sync.Once
	doc   *yaml.Node
}

// Tree returns the scenario's YAML tree (built on first use for a scenario
// made by WithFaults). Read it through Tree rather than Doc.
func (s *Scenario) Tree() *yaml.Node {
	if s.Doc != nil || s.pending == nil {
		return s.Doc
	}
	p := s.pending
	p.once.Do(func() { p.doc = p.base.faultsDoc(p.specs) })
	return p.doc
}

// WithFaults returns a copy of s whose fault schedule is specs, validated
// as a file with that schedule would be (same errors, same faults).
func (s *Scenario) WithFaults(specs []faults.Spec) (*Scenario, error) {
	if fs, ok := s.applyFaults(specs); ok {
		c := *s
		c.Faults = fs
		if w := c.Expect.LivenessWindow; w != nil && w.Fault > 0 {
			// The window named a fault of the schedule replaced (faultsDoc).
			c.Expect.LivenessWindow = nil
		}
		c.Doc = nil
		c.pending = &pendingDoc{base: s, specs: fs}
		return &c, nil
	}
	return s.withFaultsYAML(specs)
}

// applyFaults returns specs as the YAML path would read them back, or false
// when a spec is invalid or not one it can vouch for.
func (s *Scenario) applyFaults(specs []faults.Spec) ([]faults.Spec, bool) {
	if s.procs == nil {
		return nil, false
	}
	var out []faults.Spec // nil when empty, as a file without faults
	if len(specs) > 0 {
		out = make([]faults.Spec, len(specs))
	}
	for i := range specs {
		if !canonicalFault(&specs[i], &out[i]) {
			return nil, false
		}
	}
	// The same reference checks as a file's faults, with a reader of its
	// own; any error sends the schedule to the YAML path for its message.
	r := &reader{file: s.File}
	ix := s.procs
	x := &xref{r: r, at: func(string) *yaml.Node { return nil }, procs: ix.procs, order: ix.order, byName: ix.byName}
	validateFaults(x, out, s.Duration, ix.replicas)
	if len(r.errs) > 0 {
		return nil, false
	}
	return out, true
}

// canonicalFault sets dst to f as reader.fault reads faultNode(f) back, and
// reports false when that reading would give an error (or might: then the
// YAML path decides). Strings come back as they are (a tree is not
// re-tokenised); durations, floats and ints render exactly; a range
// renders exactly when it is not empty.
func canonicalFault(f, dst *faults.Spec) bool {
	*dst = faults.Spec{Kind: f.Kind}
	switch {
	case f.At != nil && f.On != nil, f.At == nil && f.On == nil:
		return false
	case f.At != nil:
		if f.At.Lo < 0 || f.At.Hi < f.At.Lo {
			return false
		}
		at := *f.At
		dst.At = &at
	default:
		// faultNode writes who as client or node by the event; either
		// reads back as Proc. after is written only when set.
		if f.On.Proc == "" || f.After.Hi < f.After.Lo {
			return false
		}
		t := faults.Trigger{Event: f.On.Event, Proc: f.On.Proc, Count: 1}
		if f.On.Count > 1 {
			t.Count = f.On.Count
		}
		dst.On = &t
		dst.After = f.After
	}
	d, ok := faults.Lookup(f.Kind)
	if !ok {
		return false
	}
	// The kind's fields in reading order, each check seeing the fields read
	// so far (reader.faultField).
	for _, fd := range d.Fields {
		present := false
		switch p := fd.Ptr(dst).(type) {
		case *string:
			v := *fd.Ptr(f).(*string)
			present = v != "" || fd.Required
			*p = v
		case *time.Duration:
			v := *fd.Ptr(f).(*time.Duration)
			present = v != 0 || fd.Required
			*p = v
		case *float64:
			v := *fd.Ptr(f).(*float64)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
			present = v != 0 || fd.Required
			*p = v
		case *int:
			v := *fd.Ptr(f).(*int)
			present = v != 0 || fd.Required
			*p = v
		case *sim.Range:
			v := *fd.Ptr(f).(*sim.Range)
			present = v != (sim.Range{}) || fd.Required
			if present && v.Hi < v.Lo {
				return false
			}
			if present {
				*p = v
			}
		case **sim.Range:
			if v := *fd.Ptr(f).(**sim.Range); v != nil {
				if v.Hi < v.Lo {
					return false
				}
				c := *v
				*p, present = &c, true
			}
		case *[][]string:
			v := *fd.Ptr(f).(*[][]string)
			if len(v) == 0 {
				if fd.Required {
					return false
				}
				break
			}
			present = true
			groups := make([][]string, len(v))
			for i, g := range v {
				if len(g) == 0 {
					return false
				}
				groups[i] = append(make([]string, 0, len(g)), g...)
			}
			*p = groups
		default:
			// A field type this file does not know: let the YAML path read it.
			return false
		}
		if present && fd.Check != nil && fd.Check(dst) != "" {
			return false
		}
	}
	return true
}

// withFaultsYAML is WithFaults through the scenario's tree: the faults
// rendered into a copy of it and the whole copy parsed again.
func (s *Scenario) withFaultsYAML(specs []faults.Spec) (*Scenario, error) {
	return FromNode(s.File, s.faultsDoc(specs))
}

// faultsDoc returns a copy of the scenario's tree with specs as its faults.
func (s *Scenario) faultsDoc(specs []faults.Spec) *yaml.Node {
	doc := Clone(s.Tree())
	root := docRoot(doc)
	list := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for i := range specs {
		list.Content = append(list.Content, faultNode(&specs[i]))
	}
	replaced := false
	for j := 0; j+1 < len(root.Content); j += 2 {
		if root.Content[j].Value == "faults" {
			root.Content[j+1] = list
			replaced = true
		}
	}
	if !replaced {
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "faults"}, list)
	}
	dropFaultWindow(root)
	return doc
}

// dropFaultWindow removes expect.liveness_window from a scenario's root
// when its window starts after a fault of the schedule (after: faults[N]):
// a new schedule has other faults, so the window it named is gone, and
// liveness is judged in the fault-free windows again.
func dropFaultWindow(root *yaml.Node) {
	for j := 0; j+1 < len(root.Content); j += 2 {
		exp := root.Content[j+1]
		if root.Content[j].Value != "expect" || exp.Kind != yaml.MappingNode {
			continue
		}
		for k := 0; k+1 < len(exp.Content); k += 2 {
			win := exp.Content[k+1]
			if exp.Content[k].Value != ExpectLivenessWindow || win.Kind != yaml.MappingNode {
				continue
			}
			for m := 0; m+1 < len(win.Content); m += 2 {
				if win.Content[m].Value == "after" && livenessWindowRE.MatchString(win.Content[m+1].Value) {
					exp.Content = append(exp.Content[:k:k], exp.Content[k+2:]...)
					return
				}
			}
		}
	}
}
