package scenarios

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/faults"
)

// procKind says what a named process is, for cross-reference checks.
type procKind int

const (
	pkRedis procKind = iota + 1
	pkSentinel
	pkZK
	pkStorage
	pkClient
)

func (k procKind) String() string {
	switch k {
	case pkRedis:
		return "a Redis server"
	case pkSentinel:
		return "a sentinel"
	case pkZK:
		return "the ZooKeeper service"
	case pkStorage:
		return "the storage service"
	case pkClient:
		return "a client"
	}
	return "?"
}

// find returns the node at a field path such as "faults[2].node" (for the
// line number of a cross-reference error), or nil.
func find(root *yaml.Node, path string) *yaml.Node {
	n := root
	for _, part := range strings.Split(path, ".") {
		idx := -1
		if i := strings.IndexByte(part, '['); i >= 0 {
			fmt.Sscanf(part[i:], "[%d]", &idx)
			part = part[:i]
		}
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for j := 0; j+1 < len(n.Content); j += 2 {
			if n.Content[j].Value == part {
				next = n.Content[j+1]
			}
		}
		n = next
		if idx >= 0 {
			if n == nil || n.Kind != yaml.SequenceNode || idx >= len(n.Content) {
				return nil
			}
			n = n.Content[idx]
		}
	}
	return n
}

// validate checks what needs the whole scenario: unique names, references
// to processes of the right kind, triggers that can fire, majorities that
// can exist.
// MaxProcesses bounds the processes of a world: a larger one is refused as
// absurd (issue 15) rather than left to exhaust memory: the clients'
// state, their histories and the connections of every client to every
// server grow with it.
const MaxProcesses = 10000

func validate(r *reader, s *Scenario, root *yaml.Node) {
	at := func(path string) *yaml.Node {
		if n := find(root, path); n != nil {
			return n
		}
		// Fall back to the enclosing field for the line number.
		if i := strings.LastIndexAny(path, ".["); i > 0 {
			return find(root, path[:i])
		}
		return root
	}
	kinds := map[string]procKind{}
	var order []string
	add := func(name string, k procKind, path string) {
		if name == "" {
			r.errf(at(path), path, "a name is required")
			return
		}
		if !processNameRE.MatchString(name) {
			r.errf(at(path), path, "%q is not a valid name: use letters, digits, '_', '-' and '.', starting with a letter", name)
			return
		}
		if prev, dup := kinds[name]; dup {
			r.errf(at(path), path, "name %q is already used by %s", name, prev)
			return
		}
		kinds[name] = k
		order = append(order, name)
	}
	for i, rs := range s.Redis {
		add(rs.Name, pkRedis, fmt.Sprintf("redis[%d].name", i))
	}
	if s.Sentinel != nil {
		for _, n := range s.Sentinel.Names {
			add(n, pkSentinel, "sentinel.names")
		}
	}
	if s.ZK != nil {
		add(s.ZK.Name, pkZK, "zookeeper.name")
	}
	add(s.Resource.Name, pkStorage, "resource.name")
	for i, c := range s.Clients {
		add(c.Name, pkClient, fmt.Sprintf("clients[%d].name", i))
	}
	if len(order) > MaxProcesses {
		r.errf(at("clients"), "clients", "the world has %d processes (servers, resource and clients), more than the limit of %d", len(order), MaxProcesses)
	}
	known := func() string {
		names := append([]string(nil), order...)
		sort.Strings(names)
		return strings.Join(names, ", ")
	}
	ofKind := func(k procKind) string {
		var names []string
		for _, n := range order {
			if kinds[n] == k {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			return "none declared"
		}
		return strings.Join(names, ", ")
	}
	ref := func(path, name string, want ...procKind) bool {
		k, ok := kinds[name]
		if !ok {
			r.errf(at(path), path, "unknown process %q (known: %s)", name, known())
			return false
		}
		if len(want) == 0 {
			return true
		}
		for _, w := range want {
			if k == w {
				return true
			}
		}
		r.errf(at(path), path, "%q is %s; expected %s (%s)", name, k, want[0], ofKind(want[0]))
		return false
	}

	for i, l := range s.Links {
		path := fmt.Sprintf("network.links[%d]", i)
		ref(path+".from", l.From)
		ref(path+".to", l.To)
		if l.From == l.To && l.From != "" {
			r.errf(at(path+".to"), path+".to", "a link needs two different processes")
		}
	}

	// Replication and Sentinel.
	for i, rs := range s.Redis {
		if rs.ReplicaOf == "" {
			continue
		}
		path := fmt.Sprintf("redis[%d].replicaof", i)
		if ref(path, rs.ReplicaOf, pkRedis) && rs.ReplicaOf == rs.Name {
			r.errf(at(path), path, "a server cannot replicate itself")
		}
	}
	validateReplicationCycles(r, s, at)
	validateLatency(r, s, at)
	if s.Sentinel != nil {
		if ref("sentinel.master", s.Sentinel.Master, pkRedis) {
			for _, rs := range s.Redis {
				if rs.Name == s.Sentinel.Master && rs.ReplicaOf != "" {
					r.errf(at("sentinel.master"), "sentinel.master", "%q is a replica; Sentinel monitors a master", rs.Name)
				}
			}
		}
	}

	// Clients.
	for i := range s.Clients {
		path := fmt.Sprintf("clients[%d].lock", i)
		validateLock(r, s, &s.Clients[i], path, at, ref)
	}

	// Faults.
	replicas := map[string]bool{}
	for _, rs := range s.Redis {
		if rs.ReplicaOf != "" {
			replicas[rs.Name] = true
		}
	}
	for i, f := range s.Faults {
		path := fmt.Sprintf("faults[%d]", i)
		switch f.Kind {
		case "partition":
			seen := map[string]int{}
			for gi, g := range f.Groups {
				for _, n := range g {
					gp := fmt.Sprintf("%s.groups[%d]", path, gi)
					if !ref(gp, n) {
						continue
					}
					if prev, dup := seen[n]; dup && prev != gi {
						r.errf(at(gp), gp, "%q is in two groups (%d and %d)", n, prev, gi)
					}
					seen[n] = gi
				}
			}
		case "drop", "delay":
			ref(path+".from", f.From)
			ref(path+".to", f.To)
			if f.From == f.To && f.From != "" {
				r.errf(at(path+".to"), path+".to", "a link needs two different processes")
			}
		case "heal":
		case "promote":
			if ref(path+".node", f.Node, pkRedis) && !replicas[f.Node] {
				r.errf(at(path+".node"), path+".node", "%q is not a replica (replicas: %s)", f.Node, sortedKeys(replicas))
			}
		case "":
		default:
			ref(path+".node", f.Node)
		}
		if f.At != nil && time.Duration(f.At.Lo) > s.Duration {
			r.errf(at(path+".at"), path+".at", "%s is after the end of the run (duration %s): the fault can never fire", f.At, s.Duration)
		}
		if f.On != nil {
			validateTrigger(r, f.On, path+".on", kinds, at, ref)
		}
	}
	if s.Expect.Liveness == "" && s.Expect.MaxWait > 0 {
		r.errf(at("expect.max_wait"), "expect.max_wait", "only applies with expect.liveness")
	}
}

// validateReplicationCycles refuses replicaof chains that loop (A of B, B
// of A): every server of the loop is a replica, so none accepts a write and
// the run would only show failed attempts. Each cycle is named once, at the
// first of its servers in file order.
func validateReplicationCycles(r *reader, s *Scenario, at func(string) *yaml.Node) {
	of := map[string]string{}
	index := map[string]int{}
	for i, rs := range s.Redis {
		index[rs.Name] = i
		if rs.ReplicaOf != "" && rs.ReplicaOf != rs.Name {
			of[rs.Name] = rs.ReplicaOf
		}
	}
	reported := map[string]bool{}
	for _, rs := range s.Redis {
		// Walk the chain from rs; a cycle through rs comes back to it.
		chain := []string{rs.Name}
		seen := map[string]bool{rs.Name: true}
		for cur := of[rs.Name]; cur != ""; cur = of[cur] {
			if cur == rs.Name {
				if !reported[rs.Name] {
					for _, n := range chain {
						reported[n] = true
					}
					path := fmt.Sprintf("redis[%d].replicaof", index[rs.Name])
					r.errf(at(path), path, "replication cycle %s -> %s: every server of it is a replica, so none accepts writes (one of them must be a master: drop its replicaof)", strings.Join(chain, " -> "), rs.Name)
				}
				break
			}
			if seen[cur] {
				break // a cycle that does not pass through rs: named from its own servers
			}
			seen[cur] = true
			chain = append(chain, cur)
		}
	}
}

// validateLatency refuses networks on which nothing can happen within the
// run: a one-way latency that reaches the end of the run (no message can
// arrive in time), or a round trip that cannot complete before it (no
// request is ever answered). NB: this bounds only what is absurd; latencies
// longer than a lock's TTL are legitimate stories and are allowed.
func validateLatency(r *reader, s *Scenario, at func(string) *yaml.Node) {
	if s.Duration <= 0 {
		return
	}
	lat := s.Network.Latency
	switch {
	case lat.Lo >= s.Duration:
		r.errf(at("network.latency"), "network.latency", "%s is at or beyond the run's duration (%s): no message can arrive before the end", lat.Lo, s.Duration)
	case 2*lat.Lo >= s.Duration:
		r.errf(at("network.latency"), "network.latency", "a round trip takes at least %s, at or beyond the run's duration (%s): no request can be answered", 2*lat.Lo, s.Duration)
	case lat.Hi >= s.Duration:
		r.errf(at("network.latency"), "network.latency", "the range reaches %s, at or beyond the run's duration (%s): some messages could never arrive; the range must end before the run does", lat.Hi, s.Duration)
	}
	for i, l := range s.Links {
		if min := lat.Lo + l.Extra; min >= s.Duration {
			path := fmt.Sprintf("network.links[%d].extra", i)
			r.errf(at(path), path, "%s plus the network latency (%s) is at or beyond the run's duration (%s): nothing sent from %s to %s can arrive", l.Extra, lat.Lo, s.Duration, l.From, l.To)
		}
	}
}

func validateTrigger(r *reader, t *faults.Trigger, path string, kinds map[string]procKind, at func(string) *yaml.Node, ref func(string, string, ...procKind) bool) {
	isIn := func(list []string) bool {
		for _, e := range list {
			if e == t.Event {
				return true
			}
		}
		return false
	}
	procPath := path + ".client"
	if find(at(path), "node") != nil {
		procPath = path + ".node"
	}
	switch {
	case isIn(faults.ClientEvents):
		if ref(procPath, t.Proc, pkClient) && procPath != path+".client" {
			r.errf(at(procPath), procPath, "event %s comes from a client: write client: %s", t.Event, t.Proc)
		}
	case isIn(faults.NodeEvents):
		ref(procPath, t.Proc, pkRedis)
	case isIn(faults.AnyEvents):
		ref(procPath, t.Proc)
	default:
		r.errf(at(path+".event"), path+".event", "unknown event %q (known: %s)", t.Event, strings.Join(allEvents(), ", "))
	}
}

func sortedKeys(m map[string]bool) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}
