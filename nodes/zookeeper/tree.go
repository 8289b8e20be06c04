package zookeeper

import (
	"fmt"
	"sort"
	"strings"
)

// znode is one node of the data tree. Znodes carry no data: the lock recipes
// only need their existence, names and creation zxids.
type znode struct {
	path string
	// owner is the session of an ephemeral node, 0 for a persistent one.
	owner int64
	// czxid is the zxid of the transaction that created the node.
	czxid int64
	// cversion counts the children ever created under the node; it is the
	// next sequence number (PrepRequestProcessor.java:668-670, 3.9.5: the
	// suffix is the parent's cversion, formatted "%010d", and every create
	// increments it, line 684).
	cversion int32
	// children holds the names (not paths) of the children, sorted.
	children []string
	// tomb is set while the node is a lock-delay tombstone: its session
	// expired, yet it stays listed until the lock-delay passes.
	tomb bool
}

// tree is the data tree: znodes by path. The map is only ever indexed;
// every listing comes from the sorted children slices.
type tree struct {
	nodes map[string]*znode
}

func newTree() tree {
	return tree{nodes: map[string]*znode{"/": {path: "/"}}}
}

func (t *tree) get(path string) *znode { return t.nodes[path] }

// validatePath checks a path as ZooKeeper's PathUtils.validatePath does, in
// part: absolute, no trailing slash, no empty, "." or ".." components.
func validatePath(path string) error {
	if path == "/" {
		return nil
	}
	if !strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/") {
		return fmt.Errorf("path %q must start with / and must not end with /", path)
	}
	for _, c := range strings.Split(path[1:], "/") {
		if c == "" || c == "." || c == ".." {
			return fmt.Errorf("path %q has an invalid component %q", path, c)
		}
	}
	return nil
}

// parentOf returns the parent path of a valid path other than "/".
func parentOf(path string) string {
	i := strings.LastIndexByte(path, '/')
	if i == 0 {
		return "/"
	}
	return path[:i]
}

func nameOf(path string) string { return path[strings.LastIndexByte(path, '/')+1:] }

// join returns the path of child name under parent.
func join(parent, name string) string {
	if parent == "/" {
		return "/" + name
	}
	return parent + "/" + name
}

// ancestors returns the proper ancestors of a valid path, from the root
// down ("/a/b/c" gives "/", "/a", "/a/b").
func ancestors(path string) []string {
	out := []string{"/"}
	for i := 1; i < len(path); i++ {
		if path[i] == '/' {
			out = append(out, path[:i])
		}
	}
	return out
}

// lineage returns a valid path and its ancestors, from the root down.
func lineage(path string) []string {
	if path == "/" {
		return []string{"/"}
	}
	return append(ancestors(path), path)
}

// add inserts a node under its parent, which must exist, keeping the
// children sorted and bumping the parent's cversion.
func (t *tree) add(n *znode) {
	p := t.nodes[parentOf(n.path)]
	name := nameOf(n.path)
	i := sort.SearchStrings(p.children, name)
	p.children = append(p.children, "")
	copy(p.children[i+1:], p.children[i:])
	p.children[i] = name
	p.cversion++
	t.nodes[n.path] = n
}

// remove deletes a node (which must exist and have no children).
func (t *tree) remove(n *znode) {
	p := t.nodes[parentOf(n.path)]
	name := nameOf(n.path)
	if i := sort.SearchStrings(p.children, name); i < len(p.children) && p.children[i] == name {
		p.children = append(p.children[:i], p.children[i+1:]...)
	}
	delete(t.nodes, n.path)
}

// sequential returns path with the sequence suffix of its parent (which
// must exist): 10 digits, zero-padded, as ZooKeeper
// (PrepRequestProcessor.java:670; zookeeperProgrammers.md, "Sequence Nodes").
func (t *tree) sequential(path string) string {
	return fmt.Sprintf("%s%010d", path, t.nodes[parentOf(path)].cversion)
}
