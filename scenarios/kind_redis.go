package scenarios

import (
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/sim"
)

// Process kind and lane roles of the redis kind.
const (
	KindRedis        = clients.NodeRedis
	RoleRedis   Role = "redis"
	RoleReplica Role = "replica"
)

// redisSection is the kind's top-level field and the key of its parsed section.
const redisSection = "redis"

// redisKind: the redis: list of Redis servers (nodes/redis).
var redisKind = &ProcKind{
	Name: KindRedis, Section: redisSection, What: "a Redis server",
	Doc: "Redis 7 servers (`nodes/redis`), a list. Each entry:\n\n- `name` (required): every process name (servers, sentinels, clients, `resource.name`) uses letters, digits, `_`, `-` and `.`, starting with a letter.\n- `appendonly`: AOF on (default false: RDB only, save points 3600 1, 300 100, 60 10000).\n- `appendfsync`: `always`, `everysec` (default) or `no`.\n- `replicaof`: asynchronous replica of that server; `replication_delay`: extra delay of everything the replica receives (default 0).\n- `maxmemory` (bytes of the model's per-key accounting, 0 = no limit), `maxmemory_policy` (`noeviction` (default), `allkeys-lru`, `volatile-lru`, `volatile-ttl`, `allkeys-random`, `volatile-random`; LFU is not modelled), `maxmemory_samples` (default 5).\n- `min_replicas_to_write`, `min_replicas_max_lag`: Redis' min-replicas-to-write (defaults 0, 10s).\n- `repl_diskless_sync_delay`: as a master, a full sync starts from its once-a-second replicationCron when the longest-waiting replica has waited this long (whole seconds; default 5s, Redis 7.0).\n- `clock`: `{offset, drift}`, the initial wall-clock offset and rate error (0.01 = 1% fast).\n\nA `cluster:` section builds Redis Clusters of these servers (see [Redis Cluster](../design/redis-cluster.md) and [writing scenarios](../guide/scenarios.md)).",
	TriggerEvents: []faults.NodeEvent{
		{Name: "key-set", Trace: redis.EventKeySet, Means: "the server stored a key (SET, SETNX, a script's SET, HSET/HINCRBY creating a hash)"},
		{Name: "promoted", Trace: redis.EventPromoted, Means: "the replica became a master (REPLICAOF NO ONE)"},
	},
	LockServer: true, Promotable: true,
	read: func(r *reader, top *obj, s *Scenario) {
		var out []RedisSpec
		for i, n := range top.list(redisSection) {
			out = append(out, r.redis(n, fmt.Sprintf("redis[%d]", i)))
		}
		if len(out) > 0 {
			setSection(s, redisSection, out)
		}
		r.readCluster(top, s) // the cluster: section (kind_redis_cluster.go)
	},
	procs: func(s *Scenario) []Proc {
		var out []Proc
		for i, rs := range s.Redis() {
			p := Proc{Name: rs.Name, Path: fmt.Sprintf("redis[%d].name", i), Clock: rs.Clock, Role: RoleRedis, Lane: record.LaneKeyspace, AOF: rs.AppendOnly}
			if rs.ReplicaOf != "" {
				p.Role, p.Note, p.ReplicaOf = RoleReplica, "replica of "+rs.ReplicaOf, rs.ReplicaOf
			}
			out = append(out, p)
		}
		return append(out, clusterProcs(s)...)
	},
	check: func(x *xref, s *Scenario) {
		checkCluster(x, s)
		for i, rs := range s.Redis() {
			if rs.ReplicaOf == "" {
				continue
			}
			path := fmt.Sprintf("redis[%d].replicaof", i)
			if x.ref(path, rs.ReplicaOf, KindRedis) && rs.ReplicaOf == rs.Name {
				x.r.errf(x.at(path), path, "a server cannot replicate itself")
			}
		}
		validateReplicationCycles(x.r, s, x.at)
	},
	build: func(b *builder) error {
		for _, r := range b.s.Redis() {
			cfg := redis.DefaultConfig()
			cfg.AppendOnly = r.AppendOnly
			cfg.AppendFsync = redis.FsyncPolicy(r.AppendFsync)
			cfg.ReplicaOf = r.ReplicaOf
			cfg.ReplicationDelay = r.ReplicationDelay
			cfg.MinReplicasToWrite = r.MinReplicasToWrite
			if r.MinReplicasMaxLag > 0 {
				cfg.MinReplicasMaxLag = r.MinReplicasMaxLag
			}
			cfg.ReplDisklessSyncDelay = r.ReplDisklessSyncDelay
			cfg.MaxMemory = r.MaxMemory
			cfg.MaxMemoryPolicy = redis.EvictionPolicy(r.MaxMemoryPolicy)
			cfg.MaxMemorySamples = r.MaxMemorySamples
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("redis %s: %w", r.Name, err)
			}
			if err := b.add(r.Name, r.Clock, func() sim.Process { return redis.New(cfg) }); err != nil {
				return err
			}
		}
		return buildCluster(b)
	},
}

func (r *reader) redis(n *yaml.Node, path string) RedisSpec {
	def := redis.DefaultConfig()
	s := RedisSpec{AppendFsync: "everysec", MaxMemoryPolicy: string(def.MaxMemoryPolicy), MaxMemorySamples: def.MaxMemorySamples, ReplDisklessSyncDelay: def.ReplDisklessSyncDelay}
	o := r.mapping(n, path)
	o.str("name", &s.Name)
	o.boolean("appendonly", &s.AppendOnly)
	if o.str("appendfsync", &s.AppendFsync) {
		switch s.AppendFsync {
		case "always", "everysec", "no":
		default:
			r.errf(o.get("appendfsync"), path+".appendfsync", "unknown value %q (allowed: always, everysec, no)", s.AppendFsync)
		}
	}
	o.str("replicaof", &s.ReplicaOf)
	o.rng("replication_delay", &s.ReplicationDelay)
	o.integer("min_replicas_to_write", &s.MinReplicasToWrite)
	// min-replicas-max-lag is a number of seconds (R 7.0.15 config.c:3093).
	o.serverDuration("min_replicas_max_lag", &s.MinReplicasMaxLag, time.Second, 0, "min-replicas-max-lag")
	if o.duration("repl_diskless_sync_delay", &s.ReplDisklessSyncDelay) {
		if d := s.ReplDisklessSyncDelay; d < 0 || d%time.Second != 0 {
			r.errf(o.get("repl_diskless_sync_delay"), path+".repl_diskless_sync_delay", "must be 0s (start a full sync at once) or a whole number of seconds (repl-diskless-sync-delay), got %v", d)
			s.ReplDisklessSyncDelay = def.ReplDisklessSyncDelay
		}
	}
	var maxmem int
	if o.integer("maxmemory", &maxmem) {
		if maxmem < 0 {
			r.errf(o.get("maxmemory"), path+".maxmemory", "must be 0 (no limit) or a number of bytes, got %d", maxmem)
		}
		s.MaxMemory = int64(maxmem)
	}
	if o.str("maxmemory_policy", &s.MaxMemoryPolicy) {
		switch redis.EvictionPolicy(s.MaxMemoryPolicy) {
		case redis.NoEviction, redis.AllKeysLRU, redis.VolatileLRU, redis.VolatileTTL, redis.AllKeysRandom, redis.VolatileRandom:
		default:
			r.errf(o.get("maxmemory_policy"), path+".maxmemory_policy", "unknown eviction policy %q (allowed: noeviction, allkeys-lru, volatile-lru, volatile-ttl, allkeys-random, volatile-random; the LFU policies are not modelled)", s.MaxMemoryPolicy)
		}
	}
	if o.integer("maxmemory_samples", &s.MaxMemorySamples) && s.MaxMemorySamples < 1 {
		r.errf(o.get("maxmemory_samples"), path+".maxmemory_samples", "must be 1 or more (maxmemory-samples), got %d", s.MaxMemorySamples)
	}
	s.Clock = r.clock(o, path)
	o.done()
	return s
}

// Redis returns the scenario's Redis servers (the redis: section), in file
// order.
func (s *Scenario) Redis() []RedisSpec { return sectionOf[[]RedisSpec](s, redisSection) }

// replicasOf maps each Redis master to its replicas, in file order.
func replicasOf(s *Scenario) map[string][]string {
	out := map[string][]string{}
	for _, r := range s.Redis() {
		if r.ReplicaOf != "" {
			out[r.ReplicaOf] = append(out[r.ReplicaOf], r.Name)
		}
	}
	return out
}

// validateReplicationCycles refuses replicaof chains that loop (A of B, B
// of A): every server of the loop is a replica, so none accepts a write and
// the run would only show failed attempts. Each cycle is named once, at the
// first of its servers in file order.
func validateReplicationCycles(r *reader, s *Scenario, at func(string) *yaml.Node) {
	of := map[string]string{}
	index := map[string]int{}
	for i, rs := range s.Redis() {
		index[rs.Name] = i
		if rs.ReplicaOf != "" && rs.ReplicaOf != rs.Name {
			of[rs.Name] = rs.ReplicaOf
		}
	}
	reported := map[string]bool{}
	for _, rs := range s.Redis() {
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
