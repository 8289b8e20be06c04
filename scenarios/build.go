package scenarios

import (
	"fmt"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// World is a scenario built on a kernel, ready to run.
type World struct {
	Kernel *sim.Kernel
	// MaxWait is the liveness bound of each client.
	MaxWait map[string]time.Duration
	// Settle is the settling time of instantaneous faults for liveness: the
	// longest lease of the clients (checker.Options.Settle).
	Settle time.Duration
	// stream, when set, receives the history in pieces as the run goes
	// (Options.Stream); Judge asks it for the verdicts.
	stream *checker.Stream
}

// operatorName is the hidden process that performs operator actions (a
// manual promotion sends REPLICAOF NO ONE as redis-cli would). It is in no
// partition group, so it keeps its links.
const operatorName = "_operator"

// Build creates the processes of s on a fresh kernel with the given seed and
// installs the fault schedule. Processes are added in a fixed order (the
// kinds in kinds.go's order, then clients, then the operator), so process ids
// and random streams do not depend on anything but the scenario.
func Build(s *Scenario, seed uint64, keepTrace bool) (*World, error) {
	return BuildWith(s, seed, BuildOptions{KeepTrace: keepTrace})
}

// BuildWith is Build with options (real mode substitutes gateways for the
// servers and installs the faults itself).
func BuildWith(s *Scenario, seed uint64, opt BuildOptions) (*World, error) {
	keepTrace := opt.KeepTrace
	k := sim.New(sim.Config{Seed: seed, Network: s.Network, KeepTrace: keepTrace})
	w := &World{Kernel: k, MaxWait: map[string]time.Duration{}}
	// Each kind adds its processes, in the order of kinds (kinds.go).
	b := &builder{k: k, s: s, opt: opt}
	for _, kind := range kinds {
		if err := kind.build(b); err != nil {
			return nil, err
		}
	}
	disc := b.discovery
	replicas := replicasOf(s)
	for _, c := range s.Clients {
		cfg := clients.Config{
			Name:            c.Name,
			Lock:            c.Lock,
			Workload:        c.Workload,
			Resource:        s.Resource.Name,
			ResourceFencing: s.Resource.Fencing,
		}
		if disc != nil && usesNode(c.Lock, disc.Master) {
			cfg.Discovery = disc
		}
		cfg.Lock.Replicas = len(replicas[c.Lock.Node])
		if cls := clustersOfLock(b, c.Lock); len(cls) > 0 {
			cfg.Clusters = cls
			cfg.Lock.Replicas = b.s.Cluster().replicasPerMaster()
		}
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("client %s: %w", c.Name, err)
		}
		factory := func() sim.Process { return clients.New(cfg) }
		if opt.Client != nil {
			if f := opt.Client(c.Name, cfg); f != nil {
				factory = f
			}
		}
		if err := b.add(c.Name, c.Clock, factory); err != nil {
			return nil, err
		}
		w.MaxWait[c.Name] = maxWait(s, c)
		if l := s.lockLifetime(c.Lock); l > w.Settle {
			w.Settle = l
		}
	}
	for _, l := range s.Links {
		from, _ := k.Lookup(l.From)
		to, _ := k.Lookup(l.To)
		extra := l.Extra
		// Set at time 0, before any process starts sending.
		k.At(0, func() { k.Delay(from, to, extra, forever) })
	}
	op := &operator{}
	k.Add(operatorName, func() sim.Process { return op }, sim.ClockSpec{})
	// The node trigger events each server emits, from its kind.
	events := map[sim.ProcID][]faults.NodeEvent{}
	for _, p := range s.Servers() {
		if id, ok := k.Lookup(p.Name); ok && len(p.Kind.TriggerEvents) > 0 {
			events[id] = p.Kind.TriggerEvents
		}
	}
	hooks := faults.Hooks{Promote: func(node sim.ProcID) {
		op.send(node, redis.Request{ID: op.next(), Args: []string{"REPLICAOF", "NO", "ONE"}})
	}, Events: func(p sim.ProcID) []faults.NodeEvent { return events[p] }}
	if s.procs != nil {
		hooks.Select = s.procs.selectorSet
	}
	if cl := s.Clusters(); len(cl) > 0 {
		hooks.Reshard = func(from, to sim.ProcID, key string, hold time.Duration) string {
			return op.startReshard(from, to, key, hold, clusterMastersOf(cl, k.Name(from)))
		}
		hooks.ClusterFailover = op.clusterFailover
	}
	if opt.SkipFaults {
		return w, nil
	}
	if err := faults.Install(k, s.Faults, hooks); err != nil {
		return nil, err
	}
	return w, nil
}

// forever is a delay that outlasts any run.
const forever = time.Duration(1 << 62)

func usesNode(l clients.LockConfig, name string) bool {
	if l.Node == name {
		return true
	}
	for _, n := range l.Nodes {
		if n == name {
			return true
		}
	}
	return false
}

// maxWait is the liveness bound of a client: expect.max_wait when given,
// otherwise twice the lock's ttl plus its retry budget (SCENARIO_FORMAT.md,
// "Verdicts").
func maxWait(s *Scenario, c ClientSpec) time.Duration {
	if s.Expect.MaxWait > 0 {
		return s.Expect.MaxWait
	}
	// The lifetime and the wait bound are the algorithm's own
	// (clients.Algorithm, clients/algorithms.go); a zookeeper session's
	// lifetime is the negotiated one (lockLifetime).
	return 2*s.lockLifetime(c.Lock) + c.Lock.WaitBound() + c.Workload.Think
}

// operator is the hidden process through which faults act like a human
// operator (redis-cli REPLICAOF NO ONE). It ignores replies.
type operator struct {
	env *sim.Env
	id  uint64
	// replies waiting for a request's answer, by request id; timers by
	// tag (the reshard fault's steps, reshard.go).
	replies map[uint64]func(redis.Value)
	timers  map[uint64]func()
}

func (o *operator) Init(env *sim.Env) { o.env = env }
func (o *operator) Receive(env *sim.Env, from sim.ProcID, m sim.Message) {
	o.env = env
	if r, ok := m.(redis.Reply); ok {
		if fn := o.replies[r.ID]; fn != nil {
			delete(o.replies, r.ID)
			fn(r.Value)
		}
	}
}
func (o *operator) Fire(env *sim.Env, tag any) {
	o.env = env
	if t, ok := tag.(operatorTimer); ok {
		if fn := o.timers[uint64(t)]; fn != nil {
			delete(o.timers, uint64(t))
			fn()
		}
	}
}
func (o *operator) next() uint64 { o.id++; return o.id }

// operatorTimer tags the operator's timers.
type operatorTimer uint64

// AppendTrace renders the tag.
func (t operatorTimer) AppendTrace(b []byte) []byte { return append(b, "operator"...) }

// request sends a Redis command and calls fn with the reply.
func (o *operator) request(to sim.ProcID, args []string, fn func(redis.Value)) {
	id := o.next()
	if o.replies == nil {
		o.replies = map[uint64]func(redis.Value){}
	}
	o.replies[id] = fn
	o.send(to, redis.Request{ID: id, Args: args})
}

// after calls fn once d passed on the operator's clock.
func (o *operator) after(d time.Duration, fn func()) {
	id := o.next()
	if o.timers == nil {
		o.timers = map[uint64]func(){}
	}
	o.timers[id] = fn
	o.env.After(sim.Mono, d, operatorTimer(id))
}

func (o *operator) send(to sim.ProcID, m sim.Message) {
	if o.env != nil {
		o.env.Send(to, m)
	}
}
