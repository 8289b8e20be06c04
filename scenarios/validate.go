package scenarios

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/nodes/storage"
)

// xref is what a kind's cross-reference checks see: the reader for errors,
// at for the line of a field, and ref to check that a name is a process of
// the wanted kind.
type xref struct {
	r  *reader
	at func(path string) *yaml.Node
	// procs maps each declared name to its kind.
	procs map[string]*ProcKind
	order []string
	// byName maps a kind name to its kind (clients included).
	byName map[string]*ProcKind
	// noPromote are the replicas promote cannot act on, with their note
	// ("cluster replica of C2"): nil where unknown (WithFaults' fast path).
	noPromote map[string]string
}

// ref reports whether name is a declared process of one of the wanted kinds
// (any kind when none is given), with an error at path when not.
func (x *xref) ref(path, name string, want ...string) bool {
	k, ok := x.procs[name]
	if !ok {
		names := append([]string(nil), x.order...)
		sort.Strings(names)
		x.r.errf(x.at(path), path, "unknown process %q (known: %s)", name, strings.Join(names, ", "))
		return false
	}
	if len(want) == 0 {
		return true
	}
	for _, w := range want {
		if k.Name == w {
			return true
		}
	}
	var of []string
	for _, n := range x.order {
		if x.procs[n].Name == want[0] {
			of = append(of, n)
		}
	}
	list := "none declared"
	if len(of) > 0 {
		list = strings.Join(of, ", ")
	}
	x.r.errf(x.at(path), path, "%q is %s; expected %s (%s)", name, k.What, x.byName[want[0]].What, list)
	return false
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
	x := &xref{r: r, at: at, procs: map[string]*ProcKind{}, byName: map[string]*ProcKind{clientKind.Name: clientKind}}
	for _, k := range kinds {
		x.byName[k.Name] = k
	}
	add := func(name string, k *ProcKind, path string) {
		if name == "" {
			r.errf(at(path), path, "a name is required")
			return
		}
		if !processNameRE.MatchString(name) {
			r.errf(at(path), path, "%q is not a valid name: use letters, digits, '_', '-' and '.', starting with a letter", name)
			return
		}
		if prev, dup := x.procs[name]; dup {
			r.errf(at(path), path, "name %q is already used by %s", name, prev.What)
			return
		}
		x.procs[name] = k
		x.order = append(x.order, name)
	}
	// replicas are the Redis replicas, for fault fields that need one
	// (faults.Field.Replica).
	replicas := map[string]bool{}
	for _, p := range s.Servers() {
		add(p.Name, p.Kind, p.Path)
		if p.Role == RoleReplica && !p.NoPromote {
			replicas[p.Name] = true
		}
		if p.Role == RoleReplica && p.NoPromote {
			if x.noPromote == nil {
				x.noPromote = map[string]string{}
			}
			x.noPromote[p.Name] = p.Note
		}
	}
	for i, c := range s.Clients {
		add(c.Name, clientKind, fmt.Sprintf("clients[%d].name", i))
	}
	if len(x.order) > MaxProcesses {
		r.errf(at("clients"), "clients", "the world has %d processes (servers, resource and clients), more than the limit of %d", len(x.order), MaxProcesses)
	}
	ref := x.ref

	for i, l := range s.Links {
		path := fmt.Sprintf("network.links[%d]", i)
		ref(path+".from", l.From)
		ref(path+".to", l.To)
		if l.From == l.To && l.From != "" {
			r.errf(at(path+".to"), path+".to", "a link needs two different processes")
		}
	}

	validateLatency(r, s, at)
	// Each kind's own cross-references (replicaof, sentinel.master, ...).
	for _, k := range kinds {
		if k.check != nil {
			k.check(x, s)
		}
	}

	// Clients.
	for i := range s.Clients {
		path := fmt.Sprintf("clients[%d].lock", i)
		validateLock(x, s, &s.Clients[i], path)
	}

	validateMeaning(r, s, root, at)

	validateFaults(x, s.Faults, s.Duration, replicas)
	if s.Expect.Of(checker.Liveness) == "" && s.Expect.MaxWait > 0 {
		r.errf(at("expect.max_wait"), "expect.max_wait", "only applies with expect.%s", checker.Liveness)
	}
	if w := s.Expect.LivenessWindow; w != nil {
		const path = "expect." + ExpectLivenessWindow
		switch {
		case s.Expect.Of(checker.Liveness) == "":
			r.errf(at(path), path, "only applies with expect.%s", checker.Liveness)
		case s.Expect.MaxWait > 0:
			r.errf(at("expect.max_wait"), "expect.max_wait", "and %s.within both bound the waits: give one (within bounds them inside the window)", path)
		}
		if w.Fault > len(s.Faults) {
			r.errf(at(path+".after"), path+".after", "faults[%d]: the schedule has %d fault(s)", w.Fault-1, len(s.Faults))
		}
		if w.Fault == 0 && s.Duration > 0 && w.At.Duration() >= s.Duration {
			r.errf(at(path+".after"), path+".after", "%s is not before the end of the run (duration %s)", w.At.Duration(), s.Duration)
		}
	}
	// What a fault schedule is checked against, kept for WithFaults
	// (faultsfast.go): the maps are only read from then on.
	s.procs = &procIndex{procs: x.procs, order: x.order, byName: x.byName, replicas: replicas}
}

// validateMeaning refuses a world that cannot mean anything (issue 25),
// which would otherwise run and be judged safe: an empty client list, a
// client whose workload starts at or after the end of the run, a resource
// that rejects every write without a fencing token while no client
// carries one.
func validateMeaning(r *reader, s *Scenario, root *yaml.Node, at func(string) *yaml.Node) {
	if len(s.Clients) == 0 && len(s.Counters()) == 0 {
		if n := find(root, "clients"); n != nil {
			r.errf(n, "clients", "the list is empty: the world has no client to take a lock, so there would be nothing to judge")
		} else {
			r.errf(root, "clients", "required field is missing: the world has no client to take a lock (nor a stock counter's), so there would be nothing to judge")
		}
	}
	for i, c := range s.Clients {
		if s.Duration > 0 && c.Workload.Start >= s.Duration {
			path := fmt.Sprintf("clients[%d].workload.start", i)
			r.errf(at(path), path, "%s is not before the end of the run (duration %s): %s would never start", c.Workload.Start, s.Duration, c.Name)
		}
	}
	for i, c := range s.Clients {
		if a := clients.Lookup(c.Lock.Algorithm); a != nil && a.MultiNode && c.Lock.FencingToken == clients.FencingIncr {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s:%d: clients[%d].lock.fencing_token: incr on %s takes the token from the first node that granted, one of %d independent masters: another grant may INCR another node's counter, so the tokens are not a safe fencing source (Kleppmann 2016: a fencing token needs a single linearizable counter; docs/matrix.md)",
				s.File, lineOf(at(fmt.Sprintf("clients[%d].lock", i))), i, c.Lock.Algorithm, len(c.Lock.Nodes)))
		}
	}
	validateReplicaCounts(r, s, at)
	warnInitialSync(s, at)
	if f := s.Resource.Fencing; (f == storage.FencingMonotonic || f == storage.FencingMark) && len(s.Clients) > 0 {
		carried := false
		for _, c := range s.Clients {
			if c.Lock.FencingToken != "" && c.Lock.FencingToken != clients.FencingNone {
				carried = true
			}
		}
		if !carried {
			r.errf(at("resource.fencing"), "resource.fencing", "%s rejects every write without a fencing token, and no client carries one: give the clients lock.fencing_token, or use fencing: none", f)
		}
	}
}

// validateReplicaCounts refuses replica counts a Redis replication group
// can never reach: a master whose min_replicas_to_write exceeds the other
// servers of its group refuses every write (-NOREPLICAS, server.c), and a
// lock whose wait_replicas exceeds them never sees its WAIT acknowledged,
// so every acquire fails. A group is the servers linked by replicaof (a
// failover or a promote only moves servers within it). Cluster nodes are
// not counted (their replicas come from the cluster: section).
func validateReplicaCounts(r *reader, s *Scenario, at func(string) *yaml.Node) {
	of := map[string]string{}
	for _, rs := range s.Redis() {
		of[rs.Name] = rs.ReplicaOf
	}
	root := func(name string) string {
		for i := 0; i <= len(of) && of[name] != ""; i++ {
			if _, ok := of[of[name]]; !ok {
				break // a replicaof of an unknown server, reported elsewhere
			}
			name = of[name]
		}
		return name
	}
	members := map[string][]string{}
	for _, rs := range s.Redis() {
		members[root(rs.Name)] = append(members[root(rs.Name)], rs.Name)
	}
	others := func(name string) string {
		var o []string
		for _, m := range members[root(name)] {
			if m != name {
				o = append(o, m)
			}
		}
		if len(o) == 0 {
			return fmt.Sprintf("%s's replication group has no other server", name)
		}
		return fmt.Sprintf("%s's replication group has only %d other server(s) (%s)", name, len(o), strings.Join(o, ", "))
	}
	for i, rs := range s.Redis() {
		if rs.ReplicaOf == "" && rs.MinReplicasToWrite > len(members[rs.Name])-1 {
			path := fmt.Sprintf("redis[%d].min_replicas_to_write", i)
			r.errf(at(path), path, "%s needs %d good replica(s) to accept a write, but %s: it would refuse every write (-NOREPLICAS)", rs.Name, rs.MinReplicasToWrite, others(rs.Name))
		}
	}
	for i, c := range s.Clients {
		if c.Lock.WaitReplicas <= 0 {
			continue
		}
		if _, ok := of[c.Lock.Node]; !ok {
			continue
		}
		if n := len(members[root(c.Lock.Node)]) - 1; c.Lock.WaitReplicas > n {
			path := fmt.Sprintf("clients[%d].lock.wait_replicas", i)
			r.errf(at(path), path, "WAIT %d can never be acknowledged: %s: every acquire would fail", c.Lock.WaitReplicas, others(c.Lock.Node))
		}
	}
}

// lineOf is n's line, 0 for none.
func lineOf(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	return n.Line
}

// validateFaults checks a fault schedule's references against the world's
// processes and its duration (a scenario's faults, or a schedule applied
// by WithFaults).
func validateFaults(x *xref, specs []faults.Spec, duration time.Duration, replicas map[string]bool) {
	r, at, ref := x.r, x.at, x.ref
	ix := &procIndex{procs: x.procs, order: x.order, byName: x.byName, replicas: replicas}
	for i, f := range specs {
		path := fmt.Sprintf("faults[%d]", i)
		if d, ok := faults.Lookup(f.Kind); ok {
			for _, fd := range d.Fields {
				if p, ok := fd.Ptr(&f).(*string); ok && fd.Type == faults.FieldProc {
					if sel, ok := faults.ParseSelector(*p); ok {
						fp := path + "." + fd.Name
						if fd.Name != "node" {
							r.errf(at(fp), fp, "%s", selectorFieldError(fd))
							continue
						}
						validateSelector(r, ix, sel, fd, fp, at)
						continue
					}
				}
				validateFaultField(r, &f, fd, path, at, ref, replicas, x.noPromote)
			}
			if msg := d.CheckInstant(&f); msg != "" {
				field, _, _ := strings.Cut(msg, ":")
				r.errf(at(path+"."+field), path+"."+field, "%s", strings.TrimSpace(msg[len(field)+1:]))
			}
		}
		if f.At != nil && time.Duration(f.At.Lo) > duration {
			r.errf(at(path+".at"), path+".at", "%s is after the end of the run (duration %s): the fault can never fire", f.At, duration)
		}
		if f.On != nil {
			validateTrigger(x, f.On, path+".on")
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

func validateTrigger(x *xref, t *faults.Trigger, path string) {
	r, at, ref := x.r, x.at, x.ref
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
		if ref(procPath, t.Proc, clientKind.Name) && procPath != path+".client" {
			r.errf(at(procPath), procPath, "event %s comes from a client: write client: %s", t.Event, t.Proc)
		}
	case isIn(TriggerEvents()):
		// The kinds whose processes emit the event (ProcKind.TriggerEvents).
		var emitters []*ProcKind
		for _, k := range kinds {
			for _, e := range k.TriggerEvents {
				if e.Name == t.Event {
					emitters = append(emitters, k)
				}
			}
		}
		k, known := x.procs[t.Proc]
		if !ref(procPath, t.Proc) || !known {
			return
		}
		for _, e := range emitters {
			if e == k {
				return
			}
		}
		var whats, own []string
		for _, e := range emitters {
			whats = append(whats, e.What)
		}
		if k == clientKind {
			// A client's events are faults.ClientEvents, not a kind's
			// TriggerEvents.
			own = append(own, faults.ClientEvents...)
		}
		for _, e := range k.TriggerEvents {
			own = append(own, e.Name)
		}
		own = append(own, faults.AnyEvents...)
		mine := "none"
		if len(own) > 0 {
			mine = strings.Join(own, ", ")
		}
		r.errf(at(path+".event"), path+".event", "%s never emits event %s: %q is %s (kind %s, whose events are: %s); %s is emitted by %s", t.Proc, t.Event, t.Proc, k.What, k.Name, mine, t.Event, strings.Join(whats, ", "))
	case isIn(faults.AnyEvents):
		ref(procPath, t.Proc)
	default:
		r.errf(at(path+".event"), path+".event", "unknown event %q (known: %s)", t.Event, strings.Join(allEvents(), ", "))
	}
}

// promotable lists the replicas promote can act on, for its error.
func promotable(replicas map[string]bool) string {
	if len(replicas) == 0 {
		return "the scenario has none: promote acts on a replica of the redis: section"
	}
	return "replicas: " + sortedKeys(replicas)
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

// validateFaultField checks the process names of one field of a fault as
// its kind declares it (faults' kind table): each must name a process, a
// replica where the field says so, and a process is in at most one group.
func validateFaultField(r *reader, f *faults.Spec, fd faults.Field, path string, at func(string) *yaml.Node,
	ref func(string, string, ...string) bool, replicas map[string]bool, noPromote map[string]string) {
	switch p := fd.Ptr(f).(type) {
	case *string:
		if fd.Type != faults.FieldProc || *p == "" && !fd.Required {
			return
		}
		fp := path + "." + fd.Name
		switch {
		case fd.Replica:
			if ref(fp, *p, clients.NodeRedis) && !replicas[*p] {
				if note, ok := noPromote[*p]; ok && strings.HasPrefix(note, "cluster ") {
					// REPLICAOF is refused in cluster mode (R 7.0.15
					// replication.c:3095, replicaofCommand): an operator
					// promotes a cluster replica with CLUSTER FAILOVER.
					r.errf(at(fp), fp, "%q is a %s: promote sends REPLICAOF NO ONE, which a cluster node refuses; promote it with kind: manual-failover (CLUSTER FAILOVER; mode: default, force or takeover)", *p, note)
					return
				}
				r.errf(at(fp), fp, "%q is not a replica promote can act on (%s)", *p, promotable(replicas))
			}
		default:
			ref(fp, *p)
		}
	case *[][]string:
		fp := path + "." + fd.Name
		seen := map[string]int{}
		for gi, g := range *p {
			for _, n := range g {
				gp := fmt.Sprintf("%s[%d]", fp, gi)
				if !ref(gp, n) {
					continue
				}
				if prev, dup := seen[n]; dup && prev != gi {
					r.errf(at(gp), gp, "%q is in two groups (%d and %d)", n, prev, gi)
				}
				seen[n] = gi
			}
		}
	}
}
