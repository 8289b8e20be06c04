package scenarios

import (
	"fmt"
	"github.com/locksim/locksim/faults"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/sim"
)

// The cluster: section, a Redis Cluster (nodes/redis cluster mode), read
// and built by the redis kind: its nodes are Redis servers like those of
// the redis: list, so faults, triggers and lock nodes name them the same
// way. A lock whose node (or one of whose nodes) is a cluster node makes
// its client cluster-aware (clients/cluster.go).

// clusterSection is the top-level field and the key of the parsed section.
const clusterSection = "cluster"

// ClusterSpec is the cluster: section.
type ClusterSpec struct {
	// Name prefixes the generated node names (name1, name2, ...).
	Name string
	// Masters and Replicas (per master) lay the nodes out as
	// redis-cli --cluster create --cluster-replicas does.
	Masters, Replicas int
	// Nodes are the nodes in creation order: generated, or given with
	// their slots and masters (an explicit layout).
	Nodes []ClusterNodeSpec
	// Explicit: the layout came from nodes:, not from masters/replicas.
	Explicit bool
	// Path is the section's field path ("cluster", or "cluster[1]" in a
	// list of clusters), for errors.
	Path                  string
	NodeTimeout           time.Duration
	ReplicaValidityFactor int
	RequireFullCoverage   bool
	AllowReadsWhenDown    bool
	// MigrationBarrier and AllowReplicaMigration are
	// cluster-migration-barrier and cluster-allow-replica-migration.
	MigrationBarrier      int
	AllowReplicaMigration bool
	// ReplTimeout and ReplPingReplicaPeriod are repl-timeout and
	// repl-ping-replica-period (whole seconds): when a stalled replication
	// link is dropped, and a replica's data validity for an election.
	ReplTimeout, ReplPingReplicaPeriod time.Duration
	// ReplicaNoFailover is cluster-replica-no-failover for every node (a
	// node of an explicit layout may set its own, no_failover).
	ReplicaNoFailover bool
	AppendOnly        bool
	AppendFsync       string
	Clock             ClockSpec
}

// ClusterNodeSpec is one node of an explicit layout.
type ClusterNodeSpec struct {
	Name      string
	ReplicaOf string
	Slots     []redis.SlotRange
	// NoFailover is the node's cluster-replica-no-failover.
	NoFailover bool
	// ConfigEpoch is what CLUSTER SET-CONFIG-EPOCH gives the node at
	// creation; 0: its place in creation order (1..N, as redis-cli).
	// Two masters given the same one stage an epoch collision
	// (clusterHandleConfigEpochCollision).
	ConfigEpoch uint64
}

// maxClusterNodes bounds the nodes of a cluster (the bus pings every node:
// the cost grows with the square of the count).
const maxClusterNodes = 30

// Cluster returns the scenario's (first) cluster, nil if it has none.
func (s *Scenario) Cluster() *ClusterSpec {
	if cs := s.Clusters(); len(cs) > 0 {
		return cs[0]
	}
	return nil
}

// Clusters returns the scenario's clusters, in file order.
func (s *Scenario) Clusters() []*ClusterSpec { return sectionOf[[]*ClusterSpec](s, clusterSection) }

// readCluster reads the cluster: section: one cluster (a mapping) or
// several independent ones (a list, for Redlock over clusters; their
// default name prefixes are C, D, E, ...).
func (r *reader) readCluster(top *obj, s *Scenario) {
	n := top.get(clusterSection)
	if n == nil {
		return
	}
	var out []*ClusterSpec
	if n.Kind == yaml.SequenceNode {
		if len(n.Content) > maxClusters {
			r.errf(n, clusterSection, "at most %d clusters, got %d", maxClusters, len(n.Content))
			return
		}
		for i, c := range n.Content {
			out = append(out, r.readClusterSpec(c, fmt.Sprintf("%s[%d]", clusterSection, i), string(rune('C'+i))))
		}
	} else {
		out = append(out, r.readClusterSpec(n, clusterSection, "C"))
	}
	setSection(s, clusterSection, out)
}

// maxClusters bounds a list of clusters (Redlock takes 3 or 5).
const maxClusters = 9

// readClusterSpec reads one cluster's mapping at path.
func (r *reader) readClusterSpec(n *yaml.Node, path, defName string) *ClusterSpec {
	def := redis.DefaultClusterConfig()
	cs := &ClusterSpec{Path: path, Name: defName, NodeTimeout: def.NodeTimeout, ReplicaValidityFactor: def.ReplicaValidityFactor,
		RequireFullCoverage: def.RequireFullCoverage, AllowReadsWhenDown: def.AllowReadsWhenDown, AppendFsync: "everysec",
		MigrationBarrier: def.MigrationBarrier, AllowReplicaMigration: def.AllowReplicaMigration}
	rdef := redis.DefaultConfig()
	cs.ReplTimeout, cs.ReplPingReplicaPeriod = rdef.ReplTimeout, rdef.ReplPingReplicaPeriod
	o := r.mapping(n, path)
	o.str("name", &cs.Name)
	hasM := o.integer("masters", &cs.Masters)
	o.integer("replicas", &cs.Replicas)
	// cluster-node-timeout is a number of milliseconds (R 7.0.15
	// config.c:3110).
	o.serverDuration("node_timeout", &cs.NodeTimeout, time.Millisecond, time.Millisecond, "cluster-node-timeout")
	if o.integer("replica_validity_factor", &cs.ReplicaValidityFactor) && cs.ReplicaValidityFactor < 0 {
		r.errf(o.get("replica_validity_factor"), path+".replica_validity_factor", "must be 0 or more, got %d", cs.ReplicaValidityFactor)
	}
	o.boolean("require_full_coverage", &cs.RequireFullCoverage)
	o.boolean("allow_reads_when_down", &cs.AllowReadsWhenDown)
	// cluster-migration-barrier takes 0..INT_MAX (R 7.0.15 config.c:3067).
	if o.integer("migration_barrier", &cs.MigrationBarrier) && cs.MigrationBarrier < 0 {
		r.errf(o.get("migration_barrier"), path+".migration_barrier", "must be 0 or more (cluster-migration-barrier), got %d", cs.MigrationBarrier)
	}
	o.boolean("allow_replica_migration", &cs.AllowReplicaMigration)
	// repl-timeout and repl-ping-replica-period are whole seconds, at
	// least 1 (R 7.0.15 config.c:3085-3086).
	o.serverDuration("repl_timeout", &cs.ReplTimeout, time.Second, time.Second, "repl-timeout")
	o.serverDuration("repl_ping_replica_period", &cs.ReplPingReplicaPeriod, time.Second, time.Second, "repl-ping-replica-period")
	o.boolean("replica_no_failover", &cs.ReplicaNoFailover)
	o.boolean("appendonly", &cs.AppendOnly)
	if o.str("appendfsync", &cs.AppendFsync) {
		switch cs.AppendFsync {
		case "always", "everysec", "no":
		default:
			r.errf(o.get("appendfsync"), path+".appendfsync", "unknown value %q (allowed: always, everysec, no)", cs.AppendFsync)
		}
	}
	if cs.Replicas < 0 {
		r.errf(o.get("replicas"), path+".replicas", "must be 0 or more, got %d", cs.Replicas)
	}
	if nodes := o.get("nodes"); nodes != nil {
		cs.Explicit = true
		if hasM {
			r.errf(o.get("masters"), path+".masters", "give either masters/replicas or an explicit nodes: layout, not both")
		}
		if nodes.Kind != yaml.SequenceNode {
			r.errf(nodes, path+".nodes", "must be a list of nodes ({name, slots} or {name, replicaof})")
		} else if len(nodes.Content) > maxClusterNodes {
			r.errf(nodes, path+".nodes", "%d nodes; at most %d", len(nodes.Content), maxClusterNodes)
		} else {
			for i, nn := range nodes.Content {
				path := fmt.Sprintf(path+".nodes[%d]", i)
				no := r.mapping(nn, path)
				var ns ClusterNodeSpec
				no.str("name", &ns.Name)
				no.str("replicaof", &ns.ReplicaOf)
				no.boolean("no_failover", &ns.NoFailover)
				var epoch int
				if no.integer("config_epoch", &epoch) {
					// CLUSTER SET-CONFIG-EPOCH refuses a negative one
					// (cluster.c:5853-5855); 0 would be the node's
					// state before any, which redis-cli never leaves.
					if epoch < 1 {
						r.errf(no.get("config_epoch"), path+".config_epoch", "must be 1 or more (CLUSTER SET-CONFIG-EPOCH), got %d", epoch)
					}
					ns.ConfigEpoch = uint64(epoch)
				}
				var slots string
				if no.str("slots", &slots) {
					rs, err := parseSlotRanges(slots)
					if err != nil {
						r.errf(no.get("slots"), path+".slots", "%v", err)
					}
					ns.Slots = rs
				}
				if ns.Name == "" {
					r.errf(nn, path+".name", "a cluster node needs a name")
				}
				if ns.ReplicaOf != "" && len(ns.Slots) > 0 {
					r.errf(no.get("slots"), path+".slots", "a replica serves no slots (it has replicaof %s)", ns.ReplicaOf)
				}
				no.done()
				cs.Nodes = append(cs.Nodes, ns)
			}
		}
	} else {
		if !hasM {
			r.errf(n, path+".masters", "missing: the number of masters (3 or more, as redis-cli --cluster create requires), or an explicit nodes: layout")
		} else if cs.Masters < 3 {
			// redis-cli.c:6155-6163: "Redis Cluster requires at least 3
			// master nodes".
			r.errf(o.get("masters"), path+".masters", "a Redis Cluster needs at least 3 masters (redis-cli --cluster create refuses fewer), got %d", cs.Masters)
		} else if total := cs.Masters * (cs.Replicas + 1); total > maxClusterNodes {
			r.errf(o.get("masters"), path+".masters", "%d masters with %d replicas each is %d nodes; at most %d", cs.Masters, cs.Replicas, total, maxClusterNodes)
		} else {
			var names []string
			for i := 1; i <= cs.Masters*(cs.Replicas+1); i++ {
				names = append(names, cs.Name+strconv.Itoa(i))
			}
			members, err := redis.CreateCluster(names, cs.Replicas)
			if err != nil {
				r.errf(o.get("masters"), path+".masters", "%v", err)
			}
			for _, m := range members {
				cs.Nodes = append(cs.Nodes, ClusterNodeSpec{Name: m.Name, ReplicaOf: m.ReplicaOf, Slots: m.Slots})
			}
		}
	}
	cs.Clock = r.clock(o, path)
	o.done()
	if cs.ReplicaNoFailover {
		for i := range cs.Nodes {
			cs.Nodes[i].NoFailover = true
		}
	}
	return cs
}

// parseSlotRanges reads "0-5460" or "0-100,200,300-400".
func parseSlotRanges(s string) ([]redis.SlotRange, error) {
	var out []redis.SlotRange
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		a, b, found := strings.Cut(part, "-")
		from, err1 := strconv.Atoi(a)
		to := from
		var err2 error
		if found {
			to, err2 = strconv.Atoi(b)
		}
		if err1 != nil || err2 != nil || from < 0 || to >= redis.ClusterSlots || from > to {
			return nil, fmt.Errorf("bad slot range %q (slots are 0-%d, written as a-b or a single slot, comma-separated)", part, redis.ClusterSlots-1)
		}
		out = append(out, redis.SlotRange{From: from, To: to})
	}
	return out, nil
}

// members returns the cluster's layout as the node model takes it, with
// configEpoch 1..N in creation order (redis-cli.c:6290-6298).
func (cs *ClusterSpec) members() []redis.ClusterMember {
	var out []redis.ClusterMember
	for i, n := range cs.Nodes {
		out = append(out, redis.ClusterMember{Name: n.Name, ReplicaOf: n.ReplicaOf, Slots: n.Slots, ConfigEpoch: n.Epoch(i)})
	}
	return out
}

// Epoch is the configEpoch node i of the layout is created with.
func (n ClusterNodeSpec) Epoch(i int) uint64 {
	if n.ConfigEpoch > 0 {
		return n.ConfigEpoch
	}
	return uint64(i + 1)
}

// config returns the cluster settings every node shares.
func (cs *ClusterSpec) config() redis.ClusterConfig {
	cc := redis.DefaultClusterConfig()
	cc.Members = cs.members()
	cc.NodeTimeout = cs.NodeTimeout
	cc.ReplicaValidityFactor = cs.ReplicaValidityFactor
	cc.RequireFullCoverage = cs.RequireFullCoverage
	cc.AllowReadsWhenDown = cs.AllowReadsWhenDown
	cc.MigrationBarrier = cs.MigrationBarrier
	cc.AllowReplicaMigration = cs.AllowReplicaMigration
	return cc
}

// clusterProcs lists the cluster's nodes as redis-kind processes.
func clusterProcs(s *Scenario) []Proc {
	var out []Proc
	for _, cs := range s.Clusters() {
		out = append(out, cs.procs()...)
	}
	return out
}

// procs lists one cluster's nodes.
func (cs *ClusterSpec) procs() []Proc {
	var out []Proc
	for i, n := range cs.Nodes {
		path := fmt.Sprintf(cs.Path+".nodes[%d].name", i)
		if !cs.Explicit {
			path = cs.Path + ".masters"
		}
		p := Proc{Name: n.Name, Path: path, Clock: cs.Clock, Role: RoleRedis, Lane: record.LaneKeyspace, AOF: cs.AppendOnly, Note: "cluster master"}
		if n.ReplicaOf != "" {
			p.Role, p.Note, p.ReplicaOf, p.NoPromote = RoleReplica, "cluster replica of "+n.ReplicaOf, n.ReplicaOf, true
		}
		out = append(out, p)
	}
	return out
}

// checkCluster refuses a cluster that cannot form: fewer than 3 masters in
// an explicit layout is allowed by Redis itself but not one master;
// unassigned or doubly assigned slots, a replica of a node that is not a
// master of the cluster.
func checkCluster(x *xref, s *Scenario) {
	for _, cs := range s.Clusters() {
		cs.check(x)
	}
	checkReshards(x, s)
	checkClusterFailovers(x, s)
}

// checkClusterFailovers refuses a manual-failover fault without a
// cluster, or whose node is not a cluster node. Any node of a cluster is
// accepted: roles change during a run, and a master answers the command
// with Redis's own error ("You should send CLUSTER FAILOVER to a
// replica"), which the trace shows.
func checkClusterFailovers(x *xref, s *Scenario) {
	cl := s.Clusters()
	for i, f := range s.Faults {
		if f.Kind != faults.KindManualFailover {
			continue
		}
		path := fmt.Sprintf("faults[%d]", i)
		if len(cl) == 0 {
			x.r.errf(x.at(path+".kind"), path+".kind", "manual-failover sends CLUSTER FAILOVER to a replica of a Redis Cluster, and the scenario has no cluster: section (promote a replica of the redis: section with kind: promote)")
			continue
		}
		if _, known := x.procs[f.Node]; !known || clusterMastersOf(cl, f.Node) != nil {
			continue
		}
		var replicas []string
		for _, cs := range cl {
			for _, n := range cs.Nodes {
				if n.ReplicaOf != "" {
					replicas = append(replicas, n.Name)
				}
			}
		}
		x.r.errf(x.at(path+".node"), path+".node", "%q is not a node of a Redis Cluster (the clusters' replicas: %s)", f.Node, strings.Join(replicas, ", "))
	}
}

// checkReshards refuses a reshard fault without a cluster, or whose from
// and to are not two masters of one cluster (in its initial layout).
func checkReshards(x *xref, s *Scenario) {
	cl := s.Clusters()
	for i, f := range s.Faults {
		if f.Kind != faults.KindReshard {
			continue
		}
		path := fmt.Sprintf("faults[%d]", i)
		if len(cl) == 0 {
			x.r.errf(x.at(path+".kind"), path+".kind", "reshard migrates a slot of a Redis Cluster, and the scenario has no cluster: section")
			continue
		}
		masters := clusterMastersOf(cl, f.From)
		if _, known := x.procs[f.From]; known && !contains(masters, f.From) {
			x.r.errf(x.at(path+".from"), path+".from", "%q is not a master of a cluster (reshard moves a slot between two masters)", f.From)
			continue
		}
		if _, known := x.procs[f.To]; known && !contains(masters, f.To) {
			x.r.errf(x.at(path+".to"), path+".to", "%q is not a master of %s's cluster (its masters: %s)", f.To, f.From, strings.Join(masters, ", "))
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// check is checkCluster for one cluster.
func (cs *ClusterSpec) check(x *xref) {
	path := cs.Path
	if !cs.Explicit {
		return
	}
	idx := map[string]int{}
	for i, n := range cs.Nodes {
		idx[n.Name] = i
	}
	masters := 0
	for i, n := range cs.Nodes {
		path := fmt.Sprintf(cs.Path+".nodes[%d]", i)
		if n.ReplicaOf == "" {
			// A master without slots is allowed (a node added to receive
			// a reshard): it is no part of the cluster's size and does
			// not vote (clusterSendFailoverAuthIfNeeded, cluster.c:
			// 3343-3347), until it serves a slot.
			if len(n.Slots) > 0 {
				masters++
			}
			continue
		}
		j, ok := idx[n.ReplicaOf]
		if !ok {
			x.r.errf(x.at(path+".replicaof"), path+".replicaof", "%q is not a node of the cluster (known: %s)", n.ReplicaOf, clusterNames(cs))
		} else if cs.Nodes[j].ReplicaOf != "" {
			x.r.errf(x.at(path+".replicaof"), path+".replicaof", "%q is a replica itself; a cluster replica replicates a master", n.ReplicaOf)
		}
	}
	if masters < 2 {
		// One master cannot fail over (no other master votes) and the
		// majority rules degenerate: refused.
		x.r.errf(x.at(path+".nodes"), path+".nodes", "a Redis Cluster needs at least 2 masters with slots (3 to survive a failure); got %d", masters)
		return
	}
	var owner [redis.ClusterSlots]int
	for i := range owner {
		owner[i] = -1
	}
	for i, n := range cs.Nodes {
		for _, r := range n.Slots {
			for sl := r.From; sl <= r.To; sl++ {
				if owner[sl] >= 0 {
					path := fmt.Sprintf(cs.Path+".nodes[%d].slots", i)
					x.r.errf(x.at(path), path, "slot %d is already served by %s", sl, cs.Nodes[owner[sl]].Name)
					return
				}
				owner[sl] = i
			}
		}
	}
	for sl, o := range owner {
		if o < 0 {
			end := sl
			for end+1 < len(owner) && owner[end+1] < 0 {
				end++
			}
			x.r.errf(x.at(path+".nodes"), path+".nodes", "slots %d-%d are not assigned to any master: the cluster would be down (cluster-require-full-coverage) and keys there unservable", sl, end)
			return
		}
	}
}

func clusterNames(cs *ClusterSpec) string {
	var n []string
	for _, x := range cs.Nodes {
		n = append(n, x.Name)
	}
	return strings.Join(n, ", ")
}

// buildCluster adds the cluster's nodes and the routing its clients use.
func buildCluster(b *builder) error {
	for _, cs := range b.s.Clusters() {
		if err := cs.build(b); err != nil {
			return err
		}
	}
	return nil
}

// build adds one cluster's nodes and its routing.
func (cs *ClusterSpec) build(b *builder) error {
	cc := cs.config()
	cc.Prepare() // one slot layout shared by every node
	var names []string
	for _, n := range cs.Nodes {
		names = append(names, n.Name)
	}
	for _, n := range cs.Nodes {
		cfg := redis.DefaultConfig()
		cfg.AppendOnly = cs.AppendOnly
		cfg.AppendFsync = redis.FsyncPolicy(cs.AppendFsync)
		cfg.ReplTimeout, cfg.ReplPingReplicaPeriod = cs.ReplTimeout, cs.ReplPingReplicaPeriod
		c := cc
		c.ReplicaNoFailover = n.NoFailover
		cfg.Cluster = &c
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("cluster node %s: %w", n.Name, err)
		}
		if err := b.add(n.Name, cs.Clock, func() sim.Process { return redis.New(cfg) }); err != nil {
			return err
		}
	}
	b.clusters = append(b.clusters, &clients.Cluster{Nodes: names})
	return nil
}

// clustersOfLock returns the clusters a lock's node or nodes belong to,
// in the order of the cluster: section (none for standalone servers).
func clustersOfLock(b *builder, l clients.LockConfig) []*clients.Cluster {
	var out []*clients.Cluster
	for _, cl := range b.clusters {
		for _, n := range cl.Nodes {
			if usesNode(l, n) {
				out = append(out, cl)
				break
			}
		}
	}
	return out
}

// replicasPerMaster is the replicas of the first master (Redisson's
// initial view of the replicas a WAIT waits for).
func (cs *ClusterSpec) replicasPerMaster() int {
	if len(cs.Nodes) == 0 {
		return 0
	}
	n := 0
	for _, x := range cs.Nodes {
		if x.ReplicaOf == cs.Nodes[0].Name {
			n++
		}
	}
	return n
}

// MasterOfKey returns the node that serves key's slot in the initial
// layout.
func (cs *ClusterSpec) MasterOfKey(key string) string {
	slot := redis.KeySlot(key)
	for _, n := range cs.Nodes {
		for _, r := range n.Slots {
			if r.From <= slot && slot <= r.To {
				return n.Name
			}
		}
	}
	return ""
}

// clusterMastersOf returns the masters (initial layout) of the cluster
// that node belongs to.
func clusterMastersOf(cl []*ClusterSpec, node string) []string {
	for _, cs := range cl {
		var masters []string
		in := false
		for _, n := range cs.Nodes {
			if n.Name == node {
				in = true
			}
			if n.ReplicaOf == "" {
				masters = append(masters, n.Name)
			}
		}
		if in {
			return masters
		}
	}
	return nil
}
