package scenarios

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// maxAliasNodes bounds the nodes that aliases add to a YAML tree when they
// are expanded: a few aliases of aliases can stand for billions of nodes
// ("billion laughs"); a scenario's aliases stand for hundreds. The nodes
// written out in the file are counted apart (maxWrittenNodes), so that an
// error says which is too large (issue 33: a file of 100,000 nodes without
// an alias was refused as if its aliases expanded too far).
const maxAliasNodes = 100_000

// maxWrittenNodes bounds the nodes written out in a scenario file: parsing
// one costs about a kilobyte and ten microseconds a node (measured: a 15
// MB file of 300,000 faults, 3.3 million nodes, took 47 s and 2.5 GB to
// refuse), and a scenario has hundreds. simrun fuzz keeps what it writes
// inside it (faults.MaxFaultsLimit).
const maxWrittenNodes = 100_000

// writtenNodes counts the nodes of the tree as written, an alias counting
// as one node (not followed).
func writtenNodes(n *yaml.Node) int {
	c := 1
	for _, k := range n.Content {
		c += writtenNodes(k)
	}
	return c
}

// expandAliases returns doc with every alias (*name) replaced by a copy of
// its anchored node and every merge key (<<: *name, or a list of them)
// replaced by the merged mapping's fields that the mapping does not set
// itself (YAML 1.1 merge keys, https://yaml.org/type/merge.html). Anchors
// are dropped. The rest of the loader then sees plain YAML, and sweeps,
// fuzzing and shrinking edit and write back a tree without shared nodes.
// Copied nodes keep the line of their anchor.
func expandAliases(file string, doc *yaml.Node) (*yaml.Node, *Error) {
	written := writtenNodes(doc)
	if written > maxWrittenNodes {
		return nil, &Error{File: file, Line: doc.Line, Msg: fmt.Sprintf("the file holds %d YAML nodes, more than a scenario may (%d; a scenario has hundreds, a fuzz finding at most a few tens of thousands)", written, maxWrittenNodes)}
	}
	budget := written + maxAliasNodes
	var expand func(n *yaml.Node, depth int) (*yaml.Node, *Error)
	expand = func(n *yaml.Node, depth int) (*yaml.Node, *Error) {
		if budget--; budget < 0 {
			return nil, &Error{File: file, Line: n.Line, Msg: fmt.Sprintf("the YAML aliases expand to more than %d nodes beyond the %d written in the file (a YAML bomb?)", maxAliasNodes, written)}
		}
		if depth > 100 {
			return nil, &Error{File: file, Line: n.Line, Msg: "YAML nested too deeply (or an alias refers to itself)"}
		}
		if n.Kind == yaml.AliasNode {
			if n.Alias == nil {
				return nil, &Error{File: file, Line: n.Line, Msg: fmt.Sprintf("YAML alias *%s has no anchor", n.Value)}
			}
			return expand(n.Alias, depth+1)
		}
		c := *n
		c.Anchor = ""
		c.Content = nil
		if n.Kind != yaml.MappingNode {
			for _, k := range n.Content {
				e, err := expand(k, depth+1)
				if err != nil {
					return nil, err
				}
				c.Content = append(c.Content, e)
			}
			return &c, nil
		}
		// A mapping: its own fields first, then the merged ones it lacks.
		own := map[string]bool{}
		var merges []*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
				merges = append(merges, v)
				continue
			}
			own[k.Value] = true
			ek, err := expand(k, depth+1)
			if err != nil {
				return nil, err
			}
			ev, err := expand(v, depth+1)
			if err != nil {
				return nil, err
			}
			c.Content = append(c.Content, ek, ev)
		}
		for _, m := range merges {
			sources := []*yaml.Node{m}
			if m.Kind == yaml.SequenceNode {
				sources = m.Content
			}
			for _, src := range sources {
				e, err := expand(src, depth+1)
				if err != nil {
					return nil, err
				}
				if e.Kind != yaml.MappingNode {
					return nil, &Error{File: file, Line: m.Line, Msg: "a merge key (<<) takes a mapping or a list of mappings"}
				}
				for i := 0; i+1 < len(e.Content); i += 2 {
					if key := e.Content[i].Value; !own[key] {
						own[key] = true
						c.Content = append(c.Content, e.Content[i], e.Content[i+1])
					}
				}
			}
		}
		return &c, nil
	}
	return expand(doc, 0)
}
