package scenarios

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/internal/suggest"
	"github.com/locksim/locksim/sim"
)

// Sweeps, fuzzing and shrinking change a scenario by editing its YAML tree
// and parsing it again, so that every variant goes through the same
// validation as a file a user wrote, and can be written back as a file.

// Clone returns a deep copy of a YAML tree.
func Clone(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = Clone(k)
	}
	return &c
}

func docRoot(doc *yaml.Node) *yaml.Node {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		return doc.Content[0]
	}
	return doc
}

// pathStep is one step of a field path: a mapping key, optionally indexed.
type pathStep struct {
	key   string
	index int // -1 when not indexed
}

// parsePath splits "clients[0].lock.ttl" into steps.
func parsePath(path string) ([]pathStep, error) {
	if path == "" {
		return nil, fmt.Errorf("empty field path")
	}
	var out []pathStep
	for _, part := range strings.Split(path, ".") {
		st := pathStep{key: part, index: -1}
		if i := strings.IndexByte(part, '['); i >= 0 {
			if !strings.HasSuffix(part, "]") {
				return nil, fmt.Errorf("field path %q: %q has no closing ]", path, part)
			}
			n, err := strconv.Atoi(part[i+1 : len(part)-1])
			if err != nil || n < 0 {
				return nil, fmt.Errorf("field path %q: %q is not a valid index", path, part)
			}
			st.key, st.index = part[:i], n
		}
		if st.key == "" {
			return nil, fmt.Errorf("field path %q: empty field name", path)
		}
		out = append(out, st)
	}
	return out, nil
}

// SetPath sets the scalar at path (for example "faults[1].by",
// "clients[0].lock.ttl" or "redis[2].clock.drift") in a YAML tree to value.
// Missing mapping fields along the path are created; list indexes must
// exist. The caller re-parses the tree to validate the result.
func SetPath(doc *yaml.Node, path, value string) error {
	steps, err := parsePath(path)
	if err != nil {
		return err
	}
	n := docRoot(doc)
	for i, st := range steps {
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("field path %q: %s is not a mapping", path, strings.Join(stepNames(steps[:i]), "."))
		}
		var val *yaml.Node
		for j := 0; j+1 < len(n.Content); j += 2 {
			if n.Content[j].Value == st.key {
				val = n.Content[j+1]
			}
		}
		last := i == len(steps)-1
		if val == nil {
			if st.index >= 0 {
				return fmt.Errorf("field path %q: there is no list %q%s", path, st.key, suggest.DidYouMean(st.key, mappingKeys(n)))
			}
			val = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			if last {
				val = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str"}
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: st.key}, val)
		}
		if st.index >= 0 {
			if val.Kind != yaml.SequenceNode || st.index >= len(val.Content) {
				return fmt.Errorf("field path %q: %s has no item %d", path, st.key, st.index)
			}
			val = val.Content[st.index]
		}
		if last {
			if val.Kind != yaml.ScalarNode {
				return fmt.Errorf("field path %q: the field holds %s, not a single value", path, describe(val))
			}
			val.Value = value
			val.Tag = ""
			val.Style = 0
			return nil
		}
		n = val
	}
	return nil
}

// mappingKeys lists a mapping node's keys, for a "did you mean".
func mappingKeys(n *yaml.Node) []string {
	var out []string
	for j := 0; j+1 < len(n.Content); j += 2 {
		out = append(out, n.Content[j].Value)
	}
	return out
}

func stepNames(steps []pathStep) []string {
	var out []string
	for _, s := range steps {
		if s.index >= 0 {
			out = append(out, fmt.Sprintf("%s[%d]", s.key, s.index))
		} else {
			out = append(out, s.key)
		}
	}
	if len(out) == 0 {
		return []string{"the document"}
	}
	return out
}

// With returns a copy of s with the given fields set (path=value pairs, in
// order), validated as a file would be.
func (s *Scenario) With(params [][2]string) (*Scenario, error) {
	doc := Clone(s.Tree())
	for _, p := range params {
		if err := SetPath(doc, p[0], p[1]); err != nil {
			return nil, err
		}
	}
	return FromNode(s.File, doc)
}

// ParseSet splits one PATH=VALUE of simrun run --set: PATH is a field
// path as simrun sweep's --param takes it (SetPath), VALUE one value.
func ParseSet(spec string) ([2]string, error) {
	path, value, ok := strings.Cut(spec, "=")
	path, value = strings.TrimSpace(path), strings.TrimSpace(value)
	if !ok || path == "" || value == "" {
		return [2]string{}, fmt.Errorf("%q: want PATH=VALUE, e.g. clients[0].lock.ttl=5s or faults[1].by=-3s", spec)
	}
	return [2]string{path, value}, nil
}

// WithSets is With for PATH=VALUE strings (simrun run --set), applied in
// order: a later one for the same path wins. The result is validated as a
// file would be, and its YAML tree (Marshal, hence the run's record)
// carries the edited values, so a replay runs the edited scenario. The
// error names the PATH=VALUE at fault.
func (s *Scenario) WithSets(specs []string) (*Scenario, error) {
	doc := Clone(s.Tree())
	for _, spec := range specs {
		p, err := ParseSet(spec)
		if err != nil {
			return nil, err
		}
		if err := SetPath(doc, p[0], p[1]); err != nil {
			return nil, fmt.Errorf("%s: %w", spec, err)
		}
	}
	out, err := FromNode(s.File, doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(specs, " "), err)
	}
	out.Sets = append(append([]string(nil), s.Sets...), specs...)
	return out, nil
}

// FaultNode renders a fault as a YAML mapping in the scenario format.
func FaultNode(f faults.Spec) *yaml.Node { return faultNode(&f) }

// faultNode is FaultNode reading the spec in place (the kind table's
// accessors take a pointer).
func faultNode(fp *faults.Spec) *yaml.Node {
	f := *fp
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	add := func(k string, v *yaml.Node) {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, v)
	}
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }
	if f.At != nil {
		add("at", str(f.At.String()))
	}
	if f.On != nil {
		on := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
		on.Content = append(on.Content, str("event"), str(f.On.Event))
		who := "node"
		for _, e := range faults.ClientEvents {
			if e == f.On.Event {
				who = "client"
			}
		}
		on.Content = append(on.Content, str(who), str(f.On.Proc))
		if f.On.Count > 1 {
			on.Content = append(on.Content, str("count"), str(strconv.Itoa(f.On.Count)))
		}
		add("on", on)
		if f.After != (sim.Range{}) {
			add("after", str(f.After.String()))
		}
	}
	add("kind", str(f.Kind))
	if d, ok := faults.Lookup(f.Kind); ok {
		for _, fd := range d.Fields {
			if v := faultValue(fd, fp); v != nil {
				add(fd.Name, v)
			}
		}
	}
	return m
}

// Marshal renders the scenario's YAML tree as a file (comments kept).
func (s *Scenario) Marshal() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(s.Tree()); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// faultValue renders one field of a fault as its kind declares it (faults'
// kind table), or nil for an optional field that is not set.
func faultValue(fd faults.Field, f *faults.Spec) *yaml.Node {
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }
	switch p := fd.Ptr(f).(type) {
	case *string:
		if *p != "" || fd.Required {
			return str(*p)
		}
	case *time.Duration:
		if *p != 0 || fd.Required {
			by := p.String()
			if fd.Signed && *p >= 0 {
				by = "+" + by
			}
			return str(by)
		}
	case *float64:
		if *p != 0 || fd.Required {
			return str(strconv.FormatFloat(*p, 'g', -1, 64))
		}
	case *int:
		if *p != 0 || fd.Required {
			return str(strconv.Itoa(*p))
		}
	case *sim.Range:
		if *p != (sim.Range{}) || fd.Required {
			return str(p.String())
		}
	case **sim.Range:
		if *p != nil {
			return str((*p).String())
		}
	case *[][]string:
		if len(*p) > 0 || fd.Required {
			groups := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
			for _, g := range *p {
				gn := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
				for _, name := range g {
					gn.Content = append(gn.Content, str(name))
				}
				groups.Content = append(groups.Content, gn)
			}
			return groups
		}
	}
	return nil
}

// Line returns the line of the scenario's file at which the field path
// ("faults[2].kind") is written, 0 when it is not in the file (a
// scenario made by WithFaults has the line of its rendered tree).
func (s *Scenario) Line(path string) int {
	doc := s.Tree()
	if doc == nil {
		return 0
	}
	return lineOf(find(docRoot(doc), path))
}
