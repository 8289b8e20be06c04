package scenarios

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/nodes/sentinel"
	"github.com/locksim/locksim/sim"
)

// Process kind and lane role of the sentinel kind.
const (
	KindSentinel      = "sentinel"
	RoleSentinel Role = "sentinel"
)

// sentinelSection is the kind's top-level field and the key of its parsed section.
const sentinelSection = "sentinel"

// sentinelKind: the sentinel: block, Sentinel processes monitoring one
// Redis master (nodes/sentinel). Clients whose lock uses the monitored
// master discover it through them.
var sentinelKind = &ProcKind{
	Name: KindSentinel, Section: sentinelSection, What: "a sentinel",
	Doc: "Redis Sentinel 7.2.4 processes monitoring one master:\n\n- `master` (required): the master the sentinels monitor; clients whose lock names it discover the current master from Sentinel.\n- `count` (default 3), `names`: how many sentinels, named `s1..sN` unless `names` lists them.\n- `quorum`, `down_after`, `failover_timeout`: as in sentinel.conf (defaults 2, 30s, 180s).\n- `clock`: as for Redis servers.",
	read: func(r *reader, top *obj, s *Scenario) {
		if n := top.get(sentinelSection); n != nil {
			setSection(s, sentinelSection, r.sentinel(n))
		}
	},
	procs: func(s *Scenario) []Proc {
		sp := s.Sentinel()
		if sp == nil {
			return nil
		}
		var out []Proc
		for _, n := range sp.Names {
			out = append(out, Proc{Name: n, Path: "sentinel.names", Clock: sp.Clock, Role: RoleSentinel, Note: "sentinel"})
		}
		return out
	},
	check: func(x *xref, s *Scenario) {
		sp := s.Sentinel()
		if sp == nil || !x.ref("sentinel.master", sp.Master, KindRedis) {
			return
		}
		for _, rs := range s.Redis() {
			if rs.Name == sp.Master && rs.ReplicaOf != "" {
				x.r.errf(x.at("sentinel.master"), "sentinel.master", "%q is a replica; Sentinel monitors a master", rs.Name)
			}
		}
	},
	build: func(b *builder) error {
		sp := b.s.Sentinel()
		if sp == nil {
			return nil
		}
		cfg := sentinel.DefaultConfig()
		cfg.Master = sp.Master
		cfg.Replicas = replicasOf(b.s)[sp.Master]
		cfg.Sentinels = sp.Names
		cfg.Quorum = sp.Quorum
		cfg.DownAfter = sp.DownAfter
		cfg.FailoverTimeout = sp.FailoverTimeout
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("sentinel: %w", err)
		}
		for _, n := range sp.Names {
			if err := b.add(n, sp.Clock, func() sim.Process { return sentinel.New(cfg) }); err != nil {
				return err
			}
		}
		b.discovery = &clients.Discovery{Master: sp.Master, MasterName: cfg.MasterName, Sentinels: sp.Names}
		return nil
	},
}

// maxSentinels bounds sentinel.count: real deployments run 3 or 5, and the
// bound keeps a typo from building millions of processes.
const maxSentinels = 99

func (r *reader) sentinel(n *yaml.Node) *SentinelSpec {
	// Defaults: sentinel.conf's (quorum 2 in the example, down-after 30 s,
	// failover-timeout 180 s; reference section 3.4) with three sentinels.
	s := &SentinelSpec{Quorum: 2, DownAfter: 30e9, FailoverTimeout: 180e9}
	o := r.mapping(n, "sentinel")
	if !o.str("master", &s.Master) {
		r.errf(n, "sentinel.master", "required field is missing (the Redis master to monitor)")
	}
	count := 3
	o.integer("count", &count)
	// counted: the sentinels are known, so a quorum can be judged against
	// them (a refused count said what is wrong; a quorum error after it
	// said "allowed: 1..0", issue 33 item 12).
	counted := true
	if !o.strs("names", &s.Names) {
		if count < 1 || count > maxSentinels {
			r.errf(o.get("count"), "sentinel.count", "must be between 1 and %d, got %d", maxSentinels, count)
			count, counted = 0, false
		}
		for i := 1; i <= count; i++ {
			s.Names = append(s.Names, fmt.Sprintf("s%d", i))
		}
	} else if len(s.Names) == 0 {
		r.errf(o.get("names"), "sentinel.names", "lists no sentinel (allowed: 1 to %d names)", maxSentinels)
		counted = false
	} else if o.has("count") && count != len(s.Names) {
		r.errf(o.get("count"), "sentinel.count", "is %d but names lists %d sentinels", count, len(s.Names))
	}
	o.integer("quorum", &s.Quorum)
	// Both are numbers of milliseconds (R 7.0.15 sentinel.c:1870-1883,
	// down-after-milliseconds and failover-timeout); positive, below.
	o.serverDuration("down_after", &s.DownAfter, time.Millisecond, 0, "down-after-milliseconds")
	o.serverDuration("failover_timeout", &s.FailoverTimeout, time.Millisecond, 0, "failover-timeout")
	s.Clock = r.clock(o, "sentinel")
	o.done()
	switch {
	case s.Quorum < 1:
		r.errf(n, "sentinel.quorum", "must be at least 1, got %d", s.Quorum)
	case counted && s.Quorum > len(s.Names):
		r.errf(n, "sentinel.quorum", "%d can never be reached with %d sentinels (allowed: 1..%d)", s.Quorum, len(s.Names), len(s.Names))
	}
	if s.DownAfter <= 0 {
		r.errf(n, "sentinel.down_after", "must be positive")
	}
	if s.FailoverTimeout <= 0 {
		r.errf(n, "sentinel.failover_timeout", "must be positive")
	}
	return s
}

// Sentinel returns the scenario's sentinel: section, or nil.
func (s *Scenario) Sentinel() *SentinelSpec { return sectionOf[*SentinelSpec](s, sentinelSection) }
