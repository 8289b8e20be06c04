package scenarios

import (
	"fmt"
	"sort"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/faults"
)

// Selector sets beyond the kinds' sections (faults/selector.go).
const (
	setServers  = "servers"
	setReplicas = "replicas"
)

// selectorSet returns the members of a fault selector's set in
// declaration order (nil when the set is unknown) and the known sets:
// each process kind's section (clients included) names its processes,
// servers the lock servers of every kind (ProcKind.LockServer), replicas
// the replicas a promote can target.
func (ix *procIndex) selectorSet(set string) (members, sets []string) {
	known := map[string]bool{setServers: true, setReplicas: true}
	for _, n := range ix.order {
		known[ix.procs[n].Section] = true
	}
	for k := range known {
		sets = append(sets, k)
	}
	sort.Strings(sets)
	if !known[set] {
		return nil, sets
	}
	members = []string{}
	for _, n := range ix.order {
		k := ix.procs[n]
		switch {
		case set == setServers && k.LockServer,
			set == setReplicas && ix.replicas[n],
			k.Section == set:
			members = append(members, n)
		}
	}
	return members, sets
}

// validateSelector checks a selector in a fault's node field: its mode
// and set, and for a field that needs a replica, that every member is one.
func validateSelector(r *reader, ix *procIndex, sel faults.Selector, fd faults.Field, fp string, at func(string) *yaml.Node) {
	members, sets := ix.selectorSet(sel.Set)
	if msg := faults.CheckSelector(sel, members, sets); msg != "" {
		r.errf(at(fp), fp, "%s", msg)
		return
	}
	if fd.Replica {
		for _, m := range members {
			if !ix.replicas[m] {
				r.errf(at(fp), fp, "selector %q may choose %q, which is not a replica (use \"%s %s\")", sel.String(), m, sel.Mode, setReplicas)
				return
			}
		}
	}
}

func selectorFieldError(fd faults.Field) string {
	return fmt.Sprintf("a selector (\"any redis\") may stand only for a fault's node, not for %s", fd.Name)
}
