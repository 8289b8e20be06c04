package scenarios

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/nodes/zookeeper"
	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/sim"
)

// Process kind and lane role of the zookeeper kind.
const (
	KindZooKeeper      = clients.NodeZooKeeper
	RoleZooKeeper Role = "zookeeper"
)

// zookeeperSection is the kind's top-level field and the key of its parsed section.
const zookeeperSection = "zookeeper"

// zookeeperKind: the zookeeper: block, the session service standing for an
// ensemble (nodes/zookeeper). A zookeeper lock without node uses it.
var zookeeperKind = &ProcKind{
	Name: KindZooKeeper, Section: zookeeperSection, What: "the ZooKeeper service",
	DefaultLockNode: true, Ensemble: true,
	read: func(r *reader, top *obj, s *Scenario) {
		if n := top.get(zookeeperSection); n != nil {
			setSection(s, zookeeperSection, r.zookeeper(n))
		}
	},
	procs: func(s *Scenario) []Proc {
		z := s.ZK()
		if z == nil {
			return nil
		}
		return []Proc{{Name: z.Name, Path: "zookeeper.name", Clock: z.Clock, Role: RoleZooKeeper, Lane: record.LaneZnodes, Note: "zookeeper"}}
	},
	build: func(b *builder) error {
		z := b.s.ZK()
		if z == nil {
			return nil
		}
		cfg := z.config()
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("zookeeper: %w", err)
		}
		return b.add(z.Name, z.Clock, func() sim.Process { return zookeeper.New(cfg) })
	},
}

// config is the server configuration of the section.
func (z *ZKSpec) config() zookeeper.Config {
	cfg := zookeeper.DefaultConfig()
	if z.TickTime > 0 {
		cfg.TickTime = z.TickTime
	}
	cfg.LockDelay = z.LockDelay
	cfg.MinSessionTimeout, cfg.MaxSessionTimeout = z.MinSessionTimeout, z.MaxSessionTimeout
	return cfg
}

// lockLifetime is how long one grant of l lives without renewal in s: the
// lock's Lifetime, except that a zookeeper session lives as long as the
// server negotiated it, the requested timeout clamped into [min, max]
// (ZooKeeperServer.java 1518-1527; nodes/zookeeper Config.Negotiate), not
// as long as the client asked.
func (s *Scenario) lockLifetime(l clients.LockConfig) time.Duration {
	if l.Algorithm == clients.ZooKeeper {
		if z := s.ZK(); z != nil && l.SessionTimeout > 0 {
			return z.config().Negotiate(l.SessionTimeout)
		}
	}
	return l.Lifetime()
}

// ZK returns the scenario's zookeeper: section, or nil.
func (s *Scenario) ZK() *ZKSpec { return sectionOf[*ZKSpec](s, zookeeperSection) }

func (r *reader) zookeeper(n *yaml.Node) *ZKSpec {
	s := &ZKSpec{Name: "zk"}
	o := r.mapping(n, "zookeeper")
	o.str("name", &s.Name)
	o.duration("tick_time", &s.TickTime)
	o.duration("lock_delay", &s.LockDelay)
	o.duration("min_session_timeout", &s.MinSessionTimeout)
	o.duration("max_session_timeout", &s.MaxSessionTimeout)
	s.Clock = r.clock(o, "zookeeper")
	o.done()
	if s.LockDelay < 0 {
		r.errf(n, "zookeeper.lock_delay", "must not be negative")
	}
	if s.MinSessionTimeout < 0 {
		r.errf(n, "zookeeper.min_session_timeout", "must not be negative (0: 2 ticks)")
	}
	if s.MaxSessionTimeout < 0 {
		r.errf(n, "zookeeper.max_session_timeout", "must not be negative (0: 20 ticks)")
	}
	return s
}
