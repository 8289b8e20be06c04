package scenarios

import (
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/internal/suggest"
)

func (r *reader) client(n *yaml.Node, path string) ClientSpec {
	var c ClientSpec
	o := r.mapping(n, path)
	o.str("name", &c.Name)
	if ln := o.get("lock"); ln == nil {
		r.errf(n, path+".lock", "required field is missing (algorithm and its parameters)")
	} else {
		c.Lock = r.lock(ln, path+".lock")
	}
	wn := o.get("workload")
	wo := r.mapping(wn, path+".workload")
	c.Workload.Cycles = 1
	wo.duration("start", &c.Workload.Start)
	if wo.integer("cycles", &c.Workload.Cycles) && c.Workload.Cycles < 0 {
		r.errf(wo.get("cycles"), path+".workload.cycles", "must be 0 (until the end) or more, got %d", c.Workload.Cycles)
	}
	wo.duration("hold", &c.Workload.Hold)
	wo.duration("think", &c.Workload.Think)
	wo.duration("timeout", &c.Workload.Timeout)
	wo.integer("reentry", &c.Workload.Reentry)
	wo.duration("inner_at", &c.Workload.InnerAt)
	wo.duration("inner_hold", &c.Workload.InnerHold)
	wo.done()
	for _, f := range []struct {
		key string
		v   int64
	}{{"start", int64(c.Workload.Start)}, {"hold", int64(c.Workload.Hold)}, {"think", int64(c.Workload.Think)}, {"timeout", int64(c.Workload.Timeout)},
		{"reentry", int64(c.Workload.Reentry)}, {"inner_at", int64(c.Workload.InnerAt)}, {"inner_hold", int64(c.Workload.InnerHold)}} {
		if f.v < 0 {
			r.errf(wo.get(f.key), path+".workload."+f.key, "must not be negative")
		}
	}
	c.Clock = r.clock(o, path)
	o.done()
	return c
}

// lock reads a lock block: algorithm first (it decides the defaults and
// which parameters exist), then every parameter through clients.LockConfig.Set.
func (r *reader) lock(n *yaml.Node, path string) clients.LockConfig {
	o := r.mapping(n, path)
	an, alg, ok := o.scalar("algorithm")
	if !ok {
		r.errf(n, path+".algorithm", "required field is missing (one of: %s)", strings.Join(clients.Algorithms, ", "))
		return clients.LockConfig{}
	}
	cfg, err := clients.DefaultLockConfig(alg)
	if err != nil {
		r.errf(an, path+".algorithm", "unknown algorithm %q (allowed: %s)", alg, strings.Join(clients.Algorithms, ", "))
		return clients.LockConfig{}
	}
	for i := 0; i+1 < len(o.n.Content); i += 2 {
		kn, vn := o.n.Content[i], o.n.Content[i+1]
		key := kn.Value
		if key == "algorithm" {
			continue
		}
		fp := path + "." + key
		if !cfg.Accepts(key) {
			r.errf(kn, fp, "%s takes no parameter %q (it takes: %s)%s", alg, key, strings.Join(cfg.Params(), ", "), suggest.DidYouMean(key, cfg.Params()))
			continue
		}
		var text string
		switch vn.Kind {
		case yaml.ScalarNode:
			text = vn.Value
		case yaml.SequenceNode:
			if key != "nodes" {
				// Only nodes is a list; a list elsewhere was joined
				// with commas and read as one value ([10s] as 10s).
				r.errf(vn, fp, "must be a single value, got a list")
				continue
			}
			names, ok := r.strList(vn, fp)
			if !ok {
				continue
			}
			for _, nm := range names {
				if strings.Contains(nm, ",") {
					r.errf(vn, fp, "name %q must not contain a comma", nm)
				}
			}
			text = strings.Join(names, ",")
		default:
			r.errf(vn, fp, "must be a value or a list, got %s", describe(vn))
			continue
		}
		if key == "nodes" && vn.Kind != yaml.SequenceNode {
			r.errf(vn, fp, "must be a list like [A, B, C], got %s", describe(vn))
			continue
		}
		if err := cfg.Set(key, text); err != nil {
			r.errf(vn, fp, "%s", trimField(err.Error(), key))
		}
	}
	return cfg
}

// trimField drops the "lock.KEY: " prefix of a clients error: the scenario
// error names the full path itself.
func trimField(msg, key string) string {
	return strings.TrimPrefix(msg, "lock."+key+": ")
}

// validateLock checks a client's lock block against the scenario: node
// references of the kind its algorithm needs (clients.Algorithm.NodeKind)
// and the algorithm's own validation.
func validateLock(x *xref, s *Scenario, c *ClientSpec, path string) {
	r, at, ref := x.r, x.at, x.ref
	l := c.Lock
	alg := clients.Lookup(l.Algorithm)
	if alg == nil {
		return
	}
	want := x.byName[alg.NodeKind]
	if want == nil {
		r.errf(at(path+".algorithm"), path+".algorithm", "%s needs %s nodes, a kind this scenario format does not know", alg.Name, alg.NodeKind)
		return
	}
	var wantProcs []string
	for _, n := range x.order {
		if x.procs[n] == want {
			wantProcs = append(wantProcs, n)
		}
	}
	if want.DefaultLockNode && len(wantProcs) == 0 {
		r.errf(at(path+".algorithm"), path+".algorithm", "%s needs a %s: block (%s)", alg.Name, want.Section, want.What)
		return
	}
	if l.Accepts("node") {
		if l.Node == "" {
			if want.DefaultLockNode {
				l.Node = wantProcs[0]
				c.Lock.Node = wantProcs[0]
			} else {
				r.errf(at(path), path+".node", "required for %s (the server that holds the lock)", l.Algorithm)
			}
		} else {
			ref(path+".node", l.Node, want.Name)
		}
	}
	if l.Accepts("nodes") {
		if len(l.Nodes) == 0 {
			r.errf(at(path), path+".nodes", "required for %s (the independent masters)", l.Algorithm)
		}
		// A node listed twice is the lock configuration's to report
		// (clients.LockConfig.Validate, with its index): once.
		for _, nm := range l.Nodes {
			ref(path+".nodes", nm, want.Name)
		}
	}
	if alg.NodeKind == clients.NodeMySQL && l.Table != "" {
		// The lock table must be one of its node's tables.
		for _, m := range s.MySQL() {
			if m.Name != l.Node {
				continue
			}
			var names []string
			found := false
			for _, t := range m.Config.Tables {
				names = append(names, t.Name)
				found = found || t.Name == l.Table
			}
			if !found {
				r.errf(at(path+".table"), path+".table", "%q is not a table of MySQL server %s (its tables: %s)", l.Table, m.Name, strings.Join(names, ", "))
			}
		}
	}
	cfg := clients.Config{Name: c.Name, Lock: l, Workload: c.Workload, Resource: s.Resource.Name, ResourceFencing: s.Resource.Fencing}
	if err := cfg.Validate(); err != nil {
		msg := err.Error()
		field := path
		if strings.HasPrefix(msg, "lock.") || strings.HasPrefix(msg, "workload.") {
			if i := strings.Index(msg, ": "); i > 0 {
				field = strings.TrimSuffix(path, ".lock") + "." + msg[:i]
				msg = msg[i+2:]
			}
		}
		r.errf(at(field), field, "%s", msg)
	}
}
