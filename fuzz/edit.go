package fuzz

import (
	"bytes"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenarios"
)

// field is one top-level field to set (Value non-nil) or remove.
type field struct {
	Key   string
	Value *yaml.Node
}

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

// quoted is a string scalar that must stay a string (a title with a colon).
func quoted(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Style: yaml.DoubleQuotedStyle}
}

// rewrite returns a copy of s with top-level fields replaced, added (at the
// end) or removed, validated as a file would be.
func rewrite(s *scenarios.Scenario, fields []field) (*scenarios.Scenario, error) {
	doc := scenarios.Clone(s.Tree())
	root := doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	for _, f := range fields {
		found := -1
		for j := 0; j+1 < len(root.Content); j += 2 {
			if root.Content[j].Value == f.Key {
				found = j
			}
		}
		switch {
		case found >= 0 && f.Value == nil:
			root.Content = append(root.Content[:found], root.Content[found+2:]...)
		case found >= 0:
			root.Content[found+1] = f.Value
		case f.Value != nil:
			root.Content = append(root.Content, scalar(f.Key), f.Value)
		}
	}
	return scenarios.FromNode(s.File, doc)
}

// expectNode is an expect block that claims the given properties are
// violated; maxWait (when a liveness violation is claimed) keeps the base's
// bound, which decides the liveness verdict.
func expectNode(props []string, e scenarios.Expect) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, p := range props {
		m.Content = append(m.Content, scalar(expectKey(p)), scalar(string(checker.Violated)))
		if expectKey(p) == checker.Liveness && e.MaxWait > 0 {
			m.Content = append(m.Content, scalar("max_wait"), scalar(e.MaxWait.String()))
		}
	}
	return m
}

// Variant returns base with the fault schedule specs, the run's duration
// (0 keeps the base's), and an expect block claiming props violated; title
// and source describe where it came from, and seed becomes the file's
// default seed. The base's why is dropped: it explains the base's own
// schedule, which is gone.
func Variant(base *scenarios.Scenario, specs []faults.Spec, props []string, seed uint64, title, source string) (*scenarios.Scenario, error) {
	s, err := base.WithFaults(specs)
	if err != nil {
		return nil, err
	}
	fields := []field{
		{"title", quoted(title)},
		{"source", quoted(source)},
		{"why", nil},
		{"seed", scalar(strconv.FormatUint(seed, 10))},
		{"expect", expectNode(props, base.Expect)},
	}
	return rewrite(s, fields)
}

// withDuration returns s with another duration.
func withDuration(s *scenarios.Scenario, d string) (*scenarios.Scenario, error) {
	return rewrite(s, []field{{"duration", scalar(d)}})
}

// FileBytes renders s as a scenario file with a comment header (one "# "
// line per header line; an empty one leaves a blank line).
func FileBytes(s *scenarios.Scenario, header []string) ([]byte, error) {
	body, err := s.Marshal()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	for _, h := range header {
		if h == "" {
			b.WriteByte('\n')
			continue
		}
		for _, line := range strings.Split(h, "\n") {
			b.WriteString(strings.TrimRight("# "+line, " "))
			b.WriteByte('\n')
		}
	}
	b.Write(body)
	return b.Bytes(), nil
}
