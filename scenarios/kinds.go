package scenarios

import (
	"fmt"

	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/sim"
)

// ProcKind is one process kind of the scenario format, declared once: its
// scenario section (reading, defaults and validation with file:line
// errors), its processes (names, clocks, report lanes), the trigger events
// its processes emit, its cross-reference checks and how it is built into a
// World. Each kind lives in its own file (kind_redis.go, kind_memcached.go,
// ...) beside the node package's DefaultConfig, Validate and New; kinds
// lists them. docs/design/extending.md walks through adding one.
type ProcKind struct {
	// Name is the kind's name, as lock algorithms name the node kind they
	// need (clients.Algorithm.NodeKind).
	Name string
	// Section is the kind's top-level field in a scenario file.
	Section string
	// Doc says what the section declares and lists its options with their
	// defaults (Markdown); simrun docs writes it into
	// docs/reference/process-kinds.md with the kind's trigger events.
	Doc string
	// What names one process of the kind in errors ("a Redis server").
	What string
	// TriggerEvents are the trigger events a process of the kind emits,
	// each with the trace kind its node logs for it, so that on: {event: E,
	// node: X} can name it; validation refuses an event X's kind does not
	// declare. The fuzz generator triggers on the first (the lock taken on
	// the server).
	TriggerEvents []faults.NodeEvent
	// LockServer: the kind's processes hold the lock state that clients
	// lock on (Redis, memcached, MySQL), so the fuzz generator aims its
	// server faults and triggers at them (fuzz.WorldOf).
	LockServer bool
	// Promotable: the promote fault applies to the kind's replicas
	// (Redis's REPLICAOF NO ONE).
	Promotable bool
	// DefaultLockNode: a lock of this kind that names no node uses the
	// kind's first process (ZooKeeper's session service).
	DefaultLockNode bool
	// Ensemble: the kind's process stands for a replicated ensemble that
	// one crash does not take down (ZooKeeper, nodes/zookeeper doc), so
	// fault families that crash lock servers leave it out (simrun matrix).
	Ensemble bool

	// read reads the kind's section of the top-level mapping into s.
	read func(r *reader, top *obj, s *Scenario)
	// procs lists the kind's processes in build order.
	procs func(s *Scenario) []Proc
	// check runs the kind's cross-reference checks once every name is known
	// (nil: none).
	check func(x *xref, s *Scenario)
	// build adds the kind's processes to a world.
	build func(b *builder) error
}

// Proc is one process of a scenario as its kind declares it.
type Proc struct {
	Name string
	// Kind is the process's kind (nil for a client).
	Kind *ProcKind
	// Path is the field that names the process ("redis[0].name"), for
	// errors.
	Path  string
	Clock ClockSpec
	// ReplicaOf names the process it replicates from ("": none).
	ReplicaOf string
	// Role, Lane, Note and AOF describe its lane in reports: what it
	// stands for, what it draws (record.Lane), the line under its name,
	// whether a Redis node's restart loads its AOF.
	Role Role
	Lane record.Lane
	Note string
	AOF  bool
	// NoPromote: the promote fault does not apply although the process
	// replicates (a Redis Cluster replica: REPLICAOF is refused in cluster
	// mode; the cluster fails over by itself).
	NoPromote bool
}

// Role says what a process's lane in a report stands for (record.Role,
// where the roles are spelled; each kind's file names its own).
type Role = record.Role

// kinds is the one list of process kinds, in build order: process ids and
// random streams follow it, so a new kind goes before storage (existing
// scenarios, which have none of its processes, keep their traces).
var kinds = []*ProcKind{
	redisKind,
	sentinelKind,
	zookeeperKind,
	memcachedKind,
	mysqlKind,
	fillerKind,
	counterKind,
	storageKind,
}

// clientKind stands for lock clients in cross-reference checks; clients are
// read by client.go, not by a kind.
var clientKind = &ProcKind{Name: "client", Section: "clients", What: "a client"}

// TriggerEvents returns every node trigger event name some kind declares,
// once each, in kind order.
func TriggerEvents() []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range kinds {
		for _, e := range k.TriggerEvents {
			if !seen[e.Name] {
				seen[e.Name] = true
				out = append(out, e.Name)
			}
		}
	}
	return out
}

// Kinds returns the process kinds in build order.
func Kinds() []*ProcKind { return append([]*ProcKind(nil), kinds...) }

// KindNamed returns the kind called name, or nil.
func KindNamed(name string) *ProcKind {
	for _, k := range kinds {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// Servers returns every non-client process of s in build order, with its
// kind, lane and clock.
func (s *Scenario) Servers() []Proc {
	var out []Proc
	for _, k := range kinds {
		for _, p := range k.procs(s) {
			p.Kind = k
			out = append(out, p)
		}
	}
	return out
}

// ServersOf returns the processes of kind k in s.
func (s *Scenario) ServersOf(k *ProcKind) []Proc {
	out := k.procs(s)
	for i := range out {
		out[i].Kind = k
	}
	return out
}

// Processes returns every process name of the scenario in build order.
func (s *Scenario) Processes() []string {
	var out []string
	for _, p := range s.Servers() {
		out = append(out, p.Name)
	}
	for _, c := range s.Clients {
		out = append(out, c.Name)
	}
	return out
}

// sectionOf returns the parsed section called section (a kind's Section)
// in s, T's zero value when the scenario has none. Each kind's file wraps it
// in a typed accessor (Scenario.Redis, ...). Keyed by the section's name,
// not the *ProcKind, so that a kind's own functions can read it without an
// initialization cycle.
func sectionOf[T any](s *Scenario, section string) T {
	for _, sec := range s.sections {
		if sec.name == section {
			v, _ := sec.v.(T)
			return v
		}
	}
	var zero T
	return zero
}

// setSection stores a kind's parsed section in s (the kind's read does,
// when the scenario has the section). A short slice, not a map: most
// scenarios have one or two sections, and fuzzing parses one per run.
func setSection(s *Scenario, section string, v any) {
	for i := range s.sections {
		if s.sections[i].name == section {
			s.sections[i].v = v
			return
		}
	}
	s.sections = append(s.sections, parsedSection{name: section, v: v})
}

// parsedSection is one kind's parsed section in a Scenario.
type parsedSection struct {
	name string
	v    any
}

// builder is what a kind's build sees: the kernel, the scenario and the
// Sentinel discovery that clients of a monitored master use.
type builder struct {
	k *sim.Kernel
	s *Scenario
	// opt may substitute a process (real mode's gateways to real servers).
	opt BuildOptions
	// discovery is set by the sentinel kind.
	discovery *clients.Discovery
	// clusters are set by the redis kind for the cluster: section.
	clusters []*clients.Cluster
}

// add adds a process with its initial clock; BuildOptions.Substitute may
// replace its model (real mode).
func (b *builder) add(name string, c ClockSpec, f func() sim.Process) error {
	f = b.opt.substitute(name, f)
	ppb, err := sim.RateFromDrift(c.Drift)
	if err != nil {
		return fmt.Errorf("%s: clock: %w", name, err)
	}
	b.k.Add(name, f, sim.ClockSpec{Offset: c.Offset, DriftPPB: ppb})
	return nil
}
