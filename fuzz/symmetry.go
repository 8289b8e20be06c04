package fuzz

import (
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenarios"
)

// Symmetry is what a base scenario says about its processes' symmetry:
// the classes of interchangeable processes, those that differ in nothing
// but their names. Two shrunk findings whose signatures differ only by a
// renaming within classes ({pause A, crash B} and {pause D, crash E} over
// five Redlock masters of one configuration) are one bug, and group
// together (Groups, explore's groups).
//
// Two processes are interchangeable when they are of one kind, their
// scenario entries are equal but for their names (role, configuration,
// clock, and the processes they name themselves, such as replica_of), and
// every other part of the scenario names them alike: the same clients'
// lock.nodes lists (a list of names is a set: Redlock asks every node of
// it the same), the same sentinels, links, base faults and triggers. So
// a master and its replica, a node with a different clock, a node only
// some clients use, or a node a base fault names stay distinct. The test
// is conservative: two replicas of two different masters are not paired
// with their masters' swap, so they stay distinct too.
//
// Simplification: the order of a list of names is ignored (a sequential
// Redlock contacts A before E, so their timings differ a little), and
// processes the scenario does not spell as entries of a section (the
// storage node, a Redis Cluster's generated nodes) are each their own
// class.
type Symmetry struct {
	class   map[string]int // process -> its class, for classes of two or more
	classes [][]string     // each class's members, sorted
}

// SymmetryOf returns the symmetry classes of s's processes.
func SymmetryOf(s *scenarios.Scenario) *Symmetry {
	y := &Symmetry{class: map[string]int{}}
	tree := s.Tree()
	if tree == nil {
		return y
	}
	root := tree
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	type proc struct {
		name, kind string
		item       *yaml.Node
	}
	var procs []proc
	for _, p := range s.Servers() {
		kind := ""
		if p.Kind != nil {
			kind = p.Kind.Name
		}
		procs = append(procs, proc{p.Name, kind, entryOf(root, p.Path)})
	}
	for i, c := range s.Clients {
		procs = append(procs, proc{c.Name, "client", entryOf(root, "clients["+strconv.Itoa(i)+"].name")})
	}
	names := map[string]bool{}
	for _, p := range procs {
		names[p.name] = true
	}
	// Where each process is named, outside its own entry's name field.
	refs := map[string][]string{}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Value == "name" && v.Kind == yaml.ScalarNode && names[v.Value] {
					continue // an entry's own name
				}
				walk(v, path+"."+k.Value)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				if c.Kind == yaml.ScalarNode {
					walk(c, path+"[]") // a list of names is a set
				} else {
					walk(c, path+"["+strconv.Itoa(i)+"]")
				}
			}
		case yaml.ScalarNode:
			if names[n.Value] {
				refs[n.Value] = append(refs[n.Value], path)
			}
		case yaml.AliasNode:
			if n.Alias != nil {
				walk(n.Alias, path)
			}
		}
	}
	walk(root, "")
	// A process's key: its kind, its entry without its name, and where
	// the rest of the scenario names it. An entry the path does not find
	// gets a key of its own.
	byKey := map[string][]string{}
	var keys []string
	for _, p := range procs {
		if p.item == nil {
			continue
		}
		rs := refs[p.name]
		sort.Strings(rs)
		var b strings.Builder
		b.WriteString(p.kind)
		b.WriteByte(0)
		canonicalEntry(&b, p.item, p.name)
		for _, r := range rs {
			b.WriteByte(0)
			b.WriteString(r)
		}
		k := b.String()
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], p.name)
	}
	for _, k := range keys {
		members := byKey[k]
		if len(members) < 2 {
			continue
		}
		sort.Strings(members)
		for _, m := range members {
			y.class[m] = len(y.classes)
		}
		y.classes = append(y.classes, members)
	}
	// Classes in the order of their first member, for reports.
	sort.Slice(y.classes, func(i, j int) bool { return y.classes[i][0] < y.classes[j][0] })
	for i, c := range y.classes {
		for _, m := range c {
			y.class[m] = i
		}
	}
	return y
}

// Classes returns the classes of interchangeable processes (two or more
// each), sorted by their first member.
func (y *Symmetry) Classes() [][]string {
	if y == nil {
		return nil
	}
	return y.classes
}

// entryOf returns the mapping of the entry whose name field path names
// ("redis[2].name" -> the mapping redis[2]), or nil.
func entryOf(root *yaml.Node, path string) *yaml.Node {
	parent, ok := strings.CutSuffix(path, ".name")
	if !ok {
		return nil
	}
	n := root
	for _, part := range strings.Split(parent, ".") {
		key, idx := part, -1
		if i := strings.IndexByte(part, '['); i >= 0 && strings.HasSuffix(part, "]") {
			v, err := strconv.Atoi(part[i+1 : len(part)-1])
			if err != nil {
				return nil
			}
			key, idx = part[:i], v
		}
		n = mapValue(n, key)
		if n == nil {
			return nil
		}
		if idx >= 0 {
			if n.Kind != yaml.SequenceNode || idx >= len(n.Content) {
				return nil
			}
			n = n.Content[idx]
		}
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	return n
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// canonicalEntry writes an entry without its name field, its mappings'
// keys and its lists of scalars sorted, its own name (in its own lists)
// written as "."; so two entries that differ only in their names write
// the same.
func canonicalEntry(b *strings.Builder, n *yaml.Node, self string) {
	switch n.Kind {
	case yaml.MappingNode:
		type kv struct{ k, v *yaml.Node }
		var pairs []kv
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "name" && n.Content[i+1].Value == self {
				continue
			}
			pairs = append(pairs, kv{n.Content[i], n.Content[i+1]})
		}
		sort.Slice(pairs, func(i, j int) bool { return pairs[i].k.Value < pairs[j].k.Value })
		b.WriteByte('{')
		for _, p := range pairs {
			b.WriteString(strconv.Quote(p.k.Value))
			b.WriteByte(':')
			canonicalEntry(b, p.v, self)
			b.WriteByte(',')
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		// A list of scalars (of names: lock.nodes) is a set, as where
		// the rest of the scenario names a process.
		items := make([]string, len(n.Content))
		scalars := true
		for i, c := range n.Content {
			var e strings.Builder
			canonicalEntry(&e, c, self)
			items[i] = e.String()
			scalars = scalars && c.Kind == yaml.ScalarNode
		}
		if scalars {
			sort.Strings(items)
		}
		b.WriteByte('[')
		for _, e := range items {
			b.WriteString(e)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		if n.Value == self {
			b.WriteByte('.')
			return
		}
		b.WriteString(strconv.Quote(n.Value))
	case yaml.AliasNode:
		if n.Alias != nil {
			canonicalEntry(b, n.Alias, self)
		}
	}
}

// maxRenamings bounds the renamings Canonical tries (7!): beyond it, the
// names of each class are renamed in their sorted order, which is
// deterministic but may leave two symmetric signatures apart.
const maxRenamings = 5040

// Canonical returns the signature of specs up to the symmetry: the least
// (as a string) of the signatures of every renaming of the processes they
// name onto the first members of their classes. Specs whose signatures
// differ only by interchangeable processes have one canonical signature.
// With no symmetry it is Signature(specs).
func (y *Symmetry) Canonical(specs []faults.Spec) string {
	if y == nil || len(y.classes) == 0 {
		return Signature(specs)
	}
	// The named processes of each class, sorted.
	seen := map[string]bool{}
	named := make([][]string, len(y.classes))
	for _, s := range specs {
		for _, n := range specNames(s) {
			if c, ok := y.class[n]; ok && !seen[n] {
				seen[n] = true
				named[c] = append(named[c], n)
			}
		}
	}
	var used []int
	total := 1
	for c, ns := range named {
		if len(ns) == 0 {
			continue
		}
		sort.Strings(ns)
		used = append(used, c)
		for k := 2; k <= len(ns) && total <= maxRenamings; k++ {
			total *= k
		}
	}
	if len(used) == 0 {
		return Signature(specs)
	}
	rename := map[string]string{}
	rn := func(n string) string {
		if r, ok := rename[n]; ok {
			return r
		}
		return n
	}
	if total > maxRenamings {
		for _, c := range used {
			for i, n := range named[c] {
				rename[n] = y.classes[c][i]
			}
		}
		return signatureWith(specs, rn)
	}
	best := ""
	var try func(u int)
	try = func(u int) {
		if u == len(used) {
			if s := signatureWith(specs, rn); best == "" || s < best {
				best = s
			}
			return
		}
		c := used[u]
		ns, targets := named[c], y.classes[c][:len(named[c])]
		permute(len(ns), func(p []int) {
			for i, n := range ns {
				rename[n] = targets[p[i]]
			}
			try(u + 1)
		})
	}
	try(0)
	return best
}

// permute calls f with every permutation of 0..n-1 (Heap's algorithm; f
// must not keep p).
func permute(n int, f func(p []int)) {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	var gen func(k int)
	gen = func(k int) {
		if k <= 1 {
			f(p)
			return
		}
		for i := 0; i < k-1; i++ {
			gen(k - 1)
			if k%2 == 0 {
				p[i], p[k-1] = p[k-1], p[i]
			} else {
				p[0], p[k-1] = p[k-1], p[0]
			}
		}
		gen(k - 1)
	}
	gen(n)
}

// specNames returns the process names a spec's signature names, in the
// order faultTarget writes them.
func specNames(s faults.Spec) []string {
	var out []string
	switch {
	case s.Node != "":
		out = append(out, s.Node)
	case s.From != "" || s.To != "":
		out = append(out, s.From, s.To)
	default:
		for _, g := range s.Groups {
			out = append(out, g...)
		}
	}
	return out
}
