package scenarios

import (
	"fmt"
	"math"
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
	Doc:             "The ZooKeeper-style session service the `zookeeper` algorithm needs (one logical service):\n\n- `name` (default `zk`), `tick_time` (default 2s).\n- `min_session_timeout`, `max_session_timeout` (defaults 2 and 20 ticks): a requested session timeout is clamped into [min, max], as zoo.cfg's `minSessionTimeout` and `maxSessionTimeout`.\n- `lock_delay`: Chubby's lock-delay after a session expires (default none).\n- `clock`: as for Redis servers.",
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
	at := func(keys ...string) *yaml.Node {
		for _, k := range keys {
			if v := o.get(k); v != nil {
				return v
			}
		}
		return n
	}
	tickAt, minAt := at("tick_time"), at("min_session_timeout", "max_session_timeout", "tick_time")
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
	if s.TickTime < 0 {
		r.errf(tickAt, "zookeeper.tick_time", "must be positive (0 or omitted: 2s), got %v", s.TickTime)
	}
	// zoo.cfg's tickTime, minSessionTimeout and maxSessionTimeout are
	// integers of milliseconds (QuorumPeerConfig.parseProperties,
	// Integer.parseInt); a finer value has no ZooKeeper counterpart (1ns
	// was taken, and the model's pings looped until the event budget).
	for _, f := range []struct {
		key string
		v   time.Duration
	}{{"tick_time", s.TickTime}, {"min_session_timeout", s.MinSessionTimeout}, {"max_session_timeout", s.MaxSessionTimeout}} {
		if f.v > 0 && f.v%time.Millisecond != 0 {
			r.errf(at(f.key), "zookeeper."+f.key, "must be a whole number of milliseconds (zoo.cfg's value is an integer of ms), got %v", f.v)
		}
	}
	// QuorumPeerConfig.parseProperties fills an unset bound with 2 or 20
	// ticks, then refuses to start with "minSessionTimeout must not be
	// larger than maxSessionTimeout" (IllegalArgumentException).
	if s.TickTime >= 0 && s.MinSessionTimeout >= 0 && s.MaxSessionTimeout >= 0 {
		cfg := s.config()
		if lo, hi := cfg.Negotiate(0), cfg.Negotiate(math.MaxInt64); lo > hi {
			r.errf(minAt, "zookeeper.min_session_timeout", "%v is above max_session_timeout %v (%s): ZooKeeper refuses to start (\"minSessionTimeout must not be larger than maxSessionTimeout\")", lo, hi, boundSource(s, cfg))
		}
	}
	return s
}

// boundSource says where the session bounds of a refused section came from:
// written, or the 2- and 20-tick defaults.
func boundSource(s *ZKSpec, cfg zookeeper.Config) string {
	switch {
	case s.MinSessionTimeout > 0 && s.MaxSessionTimeout > 0:
		return "both as written"
	case s.MinSessionTimeout > 0:
		return fmt.Sprintf("max_session_timeout unset: 20 ticks of %v", cfg.TickTime)
	default:
		return fmt.Sprintf("min_session_timeout unset: 2 ticks of %v", cfg.TickTime)
	}
}
