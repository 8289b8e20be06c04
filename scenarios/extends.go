package scenarios

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/internal/suggest"
)

// A scenario may say `extends: NAME` (a built-in scenario's name, or a file
// path relative to the extending file's folder) plus fields of its own: it
// is the base with its own fields merged in, mappings merged key by key
// (recursively), every other value (lists included) replaced whole. The
// merge happens on the YAML trees before validation, so the result is
// validated as a whole and a base may itself be incomplete or extend
// another. A field's error names the file that set it. The merged tree has
// no extends field: it is the scenario text a run records, so a replay does
// not need the base.

// maxExtends bounds a chain of extends.
const maxExtends = 16

// resolveExtends returns doc (the aliases-expanded document of file) with
// its base merged in, recording in origin the file of every node that came
// from a base. chain holds the files already being resolved (a cycle).
func resolveExtends(file string, doc *yaml.Node, chain []string, origin map[*yaml.Node]string) (*yaml.Node, *Error) {
	root := docRoot(doc)
	if root.Kind != yaml.MappingNode {
		return doc, nil
	}
	at := -1
	for j := 0; j+1 < len(root.Content); j += 2 {
		if root.Content[j].Value == "extends" {
			at = j
		}
	}
	if at < 0 {
		return doc, nil
	}
	kn, vn := root.Content[at], root.Content[at+1]
	fail := func(format string, args ...any) *Error {
		return &Error{File: file, Line: kn.Line, Path: "extends", Msg: fmt.Sprintf(format, args...)}
	}
	if vn.Kind != yaml.ScalarNode || strings.TrimSpace(vn.Value) == "" {
		return nil, fail("want a built-in scenario's name or a scenario file's path")
	}
	name := strings.TrimSpace(vn.Value)
	id := fileID(file)
	chain = append(chain, id)
	if len(chain) > maxExtends {
		return nil, fail("more than %d scenarios extend one another", maxExtends)
	}
	var data []byte
	var baseFile string
	candidate := name
	if !filepath.IsAbs(name) {
		candidate = filepath.Join(filepath.Dir(file), name)
	}
	if st, err := os.Stat(candidate); err == nil && !st.IsDir() && !strings.HasPrefix(file, "catalogue/") {
		if data, err = ReadFile(candidate); err != nil {
			return nil, fail("%v", err)
		}
		baseFile = candidate
	} else if b, err := BuiltinSource(name); err == nil {
		data, baseFile = b, "catalogue/"+name+".yaml"
	} else {
		return nil, fail("%q is neither a built-in scenario nor a file (a path is relative to %s)%s", name, filepath.Dir(file), suggest.DidYouMean(name, BuiltinNames()))
	}
	for i, c := range chain {
		if c == fileID(baseFile) {
			return nil, fail("extends cycle: %s -> %s", strings.Join(chain[i:], " -> "), c)
		}
	}
	var bdoc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&bdoc); err != nil {
		return nil, yamlError(baseFile, err)
	}
	bexp, yerr := expandAliases(baseFile, &bdoc)
	if yerr != nil {
		return nil, yerr
	}
	base, berr := resolveExtends(baseFile, bexp, chain, origin)
	if berr != nil {
		return nil, berr
	}
	markOrigin(base, baseFile, origin)
	own := &yaml.Node{Kind: yaml.MappingNode, Tag: root.Tag, Line: root.Line, Column: root.Column,
		Content: append(append([]*yaml.Node(nil), root.Content[:at]...), root.Content[at+2:]...)}
	merged := mergeNodes(docRoot(base), own)
	return &yaml.Node{Kind: yaml.DocumentNode, Line: doc.Line, Content: []*yaml.Node{merged}}, nil
}

// fileID names a scenario file in a chain of extends.
func fileID(file string) string {
	if strings.HasPrefix(file, "catalogue/") {
		return file
	}
	if abs, err := filepath.Abs(file); err == nil {
		return abs
	}
	return file
}

// markOrigin records file as the origin of every node of n not already
// recorded (a node from a base's base keeps its own file).
func markOrigin(n *yaml.Node, file string, origin map[*yaml.Node]string) {
	if n == nil {
		return
	}
	if _, ok := origin[n]; !ok {
		origin[n] = file
	}
	for _, c := range n.Content {
		markOrigin(c, file, origin)
	}
}

// mergeNodes merges own over base: two mappings key by key (recursively,
// base's order then own's new keys), anything else own whole.
func mergeNodes(base, own *yaml.Node) *yaml.Node {
	if base == nil || base.Kind != yaml.MappingNode || own.Kind != yaml.MappingNode {
		return own
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: own.Tag, Style: own.Style, Line: own.Line, Column: own.Column}
	ownAt := map[string]int{}
	for j := 0; j+1 < len(own.Content); j += 2 {
		ownAt[own.Content[j].Value] = j
	}
	used := map[int]bool{}
	for j := 0; j+1 < len(base.Content); j += 2 {
		k, v := base.Content[j], base.Content[j+1]
		if o, ok := ownAt[k.Value]; ok {
			used[o] = true
			out.Content = append(out.Content, own.Content[o], mergeNodes(v, own.Content[o+1]))
			continue
		}
		out.Content = append(out.Content, k, v)
	}
	for j := 0; j+1 < len(own.Content); j += 2 {
		if !used[j] {
			out.Content = append(out.Content, own.Content[j], own.Content[j+1])
		}
	}
	return out
}
