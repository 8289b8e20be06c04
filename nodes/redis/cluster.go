package redis

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/sim"
)

// Redis Cluster mode (cluster-enabled yes), modelled on Redis 7.0.15,
// src/cluster.c and src/cluster.h (cited below as "C 7.0.15 cluster.c:N"),
// the version Debian ships here, and the cluster specification
// (redis-doc docs/reference/cluster-spec.md).
//
// A node built with Config.Cluster knows every node of its cluster from
// the start, as `redis-cli --cluster create` leaves them (slots assigned,
// CLUSTER MEET done, replicas attached, configEpoch 1..N in creation order,
// redis-cli.c clusterManagerCommandCreate). From then on the nodes talk over
// the cluster bus (cluster_bus.go): PING/PONG with gossip, FAIL, failover
// auth requests and acks, UPDATE. The bus is the kernel's connection
// between two processes, so partitions, pauses and crashes act on it as on
// any connection.
//
// Simplifications (also in docs/design/redis-cluster.md):
//   - Slots migrate by CLUSTER SETSLOT and MIGRATE (cluster_migrate.go,
//     with its own simplifications); CLUSTER ADDSLOTS/DELSLOTS/MEET/
//     FORGET/RESET are not modelled.
//   - Node ids are the SHA-1 of the node's process name (Redis draws 40
//     random hex digits), so every node knows every id from the start.
//   - The bus has its own kernel connection per pair of nodes (busConn),
//     apart from replication; Redis has two per pair (an inbound and an
//     outbound link), and its connections do not share a retransmission
//     queue as the kernel's connections of one pair do.
//   - nodes.conf is written synchronously on every change (Redis saves
//     and fsyncs it from clusterBeforeSleep, so the difference is within one
//     event-loop iteration).
//   - Replica migration (cluster_migration.go) picks the first orphaned
//     master in member order where Redis takes the first in its nodes
//     dict's order.
//   - Pub/Sub over the bus, modules' messages and the ping extensions
//     (hostnames, forgotten nodes) are not modelled.

// ClusterSlots is CLUSTER_SLOTS (C 7.0.15 cluster.h:8).
const ClusterSlots = 16384

// Cluster timing constants (C 7.0.15 cluster.h:16-18, cluster.c:4425-4427).
const (
	failReportValidityMult = 2    // CLUSTER_FAIL_REPORT_VALIDITY_MULT
	failUndoTimeMult       = 2    // CLUSTER_FAIL_UNDO_TIME_MULT
	mfTimeout              = 5000 // CLUSTER_MF_TIMEOUT, ms
	mfPauseMult            = 2    // CLUSTER_MF_PAUSE_MULT
	maxRejoinDelay         = 5000 // CLUSTER_MAX_REJOIN_DELAY, ms
	minRejoinDelay         = 500  // CLUSTER_MIN_REJOIN_DELAY, ms
	writableDelay          = 2000 // CLUSTER_WRITABLE_DELAY, ms
)

// Defaults of the cluster settings (redis.conf of 7.0.15 and config.c).
const (
	// DefaultNodeTimeout is cluster-node-timeout 15000 (redis.conf:1590;
	// config.c createLongLongConfig "cluster-node-timeout", 15000).
	DefaultNodeTimeout = 15 * time.Second
	// DefaultReplicaValidityFactor is cluster-replica-validity-factor 10
	// (redis.conf:1640).
	DefaultReplicaValidityFactor = 10
	// DefaultMigrationBarrier is cluster-migration-barrier 1
	// (redis.conf:1660; config.c:3067).
	DefaultMigrationBarrier = 1
)

// ClusterConfig turns on cluster mode. Every node of a cluster gets the
// same ClusterConfig; a node finds itself in Members by its process name.
type ClusterConfig struct {
	// Members are the cluster's nodes in creation order (the order of
	// redis-cli --cluster create's arguments).
	Members []ClusterMember
	// NodeTimeout is cluster-node-timeout.
	NodeTimeout time.Duration
	// ReplicaValidityFactor is cluster-replica-validity-factor (0: a
	// replica always tries to fail over, however old its data).
	ReplicaValidityFactor int
	// RequireFullCoverage is cluster-require-full-coverage (yes,
	// redis.conf:1681): the cluster state is FAIL while a slot is
	// unassigned or served by a FAIL master.
	RequireFullCoverage bool
	// AllowReadsWhenDown is cluster-allow-reads-when-down (no,
	// redis.conf:1707).
	AllowReadsWhenDown bool
	// MigrationBarrier is cluster-migration-barrier (1, redis.conf:1660;
	// config.c:3067, 0..INT_MAX):
	// a replica migrates to an orphaned master only if its own master keeps
	// more than this many working replicas (cluster_migration.go).
	MigrationBarrier int
	// AllowReplicaMigration is cluster-allow-replica-migration (yes,
	// redis.conf:1668, config.c:3009): replicas migrate to orphaned masters, and a master
	// (or the replica of a master) left without slots by another node's
	// claim becomes the new owner's replica.
	AllowReplicaMigration bool
	// ReplicaNoFailover is cluster-replica-no-failover (no, config.c:2993):
	// a replica never starts an automatic failover of its master, but
	// still runs a manual one (CLUSTER FAILOVER); it announces the
	// nofailover flag, and sibling replicas leave it out of their rank
	// (cluster.c:3462, :3606). Per node.
	ReplicaNoFailover bool

	// layout is the initial slot layout (Prepare), nil until computed.
	layout *clusterLayout
}

// ClusterMember is one node as redis-cli --cluster create configured it.
type ClusterMember struct {
	Name      string
	ReplicaOf string      // "" for a master
	Slots     []SlotRange // a master's slots
	// ConfigEpoch is what CLUSTER SET-CONFIG-EPOCH gave the node.
	ConfigEpoch uint64
}

// SlotRange is the slots From..To, both included.
type SlotRange struct{ From, To int }

// DefaultClusterConfig returns the settings' defaults with no members.
func DefaultClusterConfig() ClusterConfig {
	return ClusterConfig{NodeTimeout: DefaultNodeTimeout, ReplicaValidityFactor: DefaultReplicaValidityFactor, RequireFullCoverage: true,
		MigrationBarrier: DefaultMigrationBarrier, AllowReplicaMigration: true}
}

// CreateCluster lays out a cluster as `redis-cli --cluster create
// --cluster-replicas replicas` does with the nodes names (each on its own
// host): the first masters = len(names)/(replicas+1) nodes are masters
// with 16384/masters slots each (the last takes the rest; slot ranges by
// lround of a float cursor), the rest are replicas assigned after rotating
// their list by one, master by master; configEpoch 1..N in argument order
// (R 7.0.15 src/redis-cli.c:6152-6305, clusterManagerCommandCreate).
func CreateCluster(names []string, replicas int) ([]ClusterMember, error) {
	if replicas < 0 {
		return nil, fmt.Errorf("replicas: %d is negative", replicas)
	}
	masters := len(names) / (replicas + 1) // CLUSTER_MANAGER_MASTERS_COUNT
	if masters < 3 {
		// "Redis Cluster requires at least 3 master nodes" (redis-cli.c:6155).
		return nil, fmt.Errorf("redis cluster requires at least 3 master nodes; %d nodes with %d replicas per master give %d", len(names), replicas, masters)
	}
	out := make([]ClusterMember, len(names))
	for i, n := range names {
		out[i] = ClusterMember{Name: n, ConfigEpoch: uint64(i + 1)}
	}
	perNode := float32(ClusterSlots) / float32(masters)
	first, cursor := 0, float32(0)
	for i := 0; i < masters; i++ {
		last := int(lround(float64(cursor + perNode - 1)))
		if last > ClusterSlots || i == masters-1 {
			last = ClusterSlots - 1
		}
		if last < first {
			last = first
		}
		out[i].Slots = []SlotRange{{first, last}}
		first = last + 1
		cursor += perNode
	}
	// The replicas' list rotated by one (redis-cli.c:6225-6229); with every
	// node on its own host each master takes the next one in turn.
	rest := append([]int(nil), seq(masters, len(names))...)
	if len(rest) > 1 {
		rest = append(rest[1:], rest[0])
	}
	next := 0
	for pass := 0; pass < 2 && next < len(rest); pass++ {
		for m := 0; m < masters && next < len(rest); m++ {
			for k := 0; k < replicas && next < len(rest); k++ {
				out[rest[next]].ReplicaOf = names[m]
				next++
				if pass == 1 {
					break // assign_unused: one more each
				}
			}
		}
	}
	return out, nil
}

func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// lround rounds half away from zero, as C's lround.
func lround(x float64) int64 {
	if x < 0 {
		return -int64(-x + 0.5)
	}
	return int64(x + 0.5)
}

// Validate checks the layout: at least one master with slots, every slot
// assigned once, every replica's master a master of the cluster.
func (c *ClusterConfig) Validate() error {
	if c.NodeTimeout <= 0 {
		return fmt.Errorf("cluster: NodeTimeout: %v must be positive", c.NodeTimeout)
	}
	if c.ReplicaValidityFactor < 0 {
		return fmt.Errorf("cluster: ReplicaValidityFactor: %d is negative", c.ReplicaValidityFactor)
	}
	if c.MigrationBarrier < 0 {
		return fmt.Errorf("cluster: MigrationBarrier: %d is negative", c.MigrationBarrier)
	}
	if len(c.Members) == 0 {
		return fmt.Errorf("cluster: no members")
	}
	idx := map[string]int{}
	for i, m := range c.Members {
		if _, dup := idx[m.Name]; dup {
			return fmt.Errorf("cluster: member %q listed twice", m.Name)
		}
		idx[m.Name] = i
	}
	// The masters' slot ranges, sorted: they must tile 0..16383 without
	// overlap (a range check, not a pass over the 16384 slots: every node
	// of every run validates its config).
	type owned struct {
		SlotRange
		m int
	}
	var ranges []owned
	for i, m := range c.Members {
		if m.ReplicaOf != "" {
			j, ok := idx[m.ReplicaOf]
			if !ok {
				return fmt.Errorf("cluster: %s replicates %q, which is not a member", m.Name, m.ReplicaOf)
			}
			if c.Members[j].ReplicaOf != "" {
				return fmt.Errorf("cluster: %s replicates %s, which is a replica itself", m.Name, m.ReplicaOf)
			}
			if len(m.Slots) > 0 {
				return fmt.Errorf("cluster: replica %s has slots", m.Name)
			}
			continue
		}
		for _, r := range m.Slots {
			if r.From < 0 || r.To >= ClusterSlots || r.From > r.To {
				return fmt.Errorf("cluster: %s: slot range %d-%d out of 0-%d", m.Name, r.From, r.To, ClusterSlots-1)
			}
			ranges = append(ranges, owned{r, i})
		}
	}
	sort.Slice(ranges, func(a, b int) bool { return ranges[a].From < ranges[b].From })
	next := 0
	for k, r := range ranges {
		if r.From < next {
			return fmt.Errorf("cluster: slot %d assigned to both %s and %s", r.From, c.Members[ranges[k-1].m].Name, c.Members[r.m].Name)
		}
		if r.From > next {
			return fmt.Errorf("cluster: slot %d is not assigned to any master", next)
		}
		next = r.To + 1
	}
	if next < ClusterSlots {
		return fmt.Errorf("cluster: slot %d is not assigned to any master", next)
	}
	return nil
}

// ---- key slots ----

// crc16 is CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0, no
// reflection (src/crc16.c; cluster-spec.md "Key distribution model").
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for b := 0; b < 8; b++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// KeySlot is keyHashSlot: CRC16 of the key, or of its hash tag (the part
// between the first '{' and the first '}' after it, when not empty), mod
// 16384 (C 7.0.15 cluster.c:939-959).
func KeySlot(key string) int {
	s := strings.IndexByte(key, '{')
	if s >= 0 {
		if e := strings.IndexByte(key[s+1:], '}'); e > 0 {
			return int(crc16(key[s+1:s+1+e]) & 0x3FFF)
		}
	}
	return int(crc16(key) & 0x3FFF)
}

// NodeID is the 40-hex-digit id the model gives the node called name (the
// SHA-1 of the name; Redis draws it at random, cluster.c createClusterNode).
func NodeID(name string) string {
	h := sha1.Sum([]byte(name))
	return hex.EncodeToString(h[:])
}

// commandKeys returns the keys of a command, as the command table's key
// specs give them, for the commands the model knows (getKeysFromCommand).
func commandKeys(spec *cmdSpec, a []string) []string {
	switch spec.name {
	case "get", "set", "setnx", "getset", "pttl", "ttl", "expire", "pexpire", "expireat", "pexpireat",
		"incr", "decr", "incrby", "decrby", "hexists", "hget", "hincrby", "hset":
		return a[1:2]
	case "del", "exists", "watch":
		return a[1:]
	case "restore", "restore-asking":
		return a[1:2]
	case "migrate":
		return migrateKeys(a)
	case "eval", "evalsha":
		nk, err := strconv.Atoi(a[2])
		if err != nil || nk <= 0 || 3+nk > len(a) {
			return nil
		}
		return a[3 : 3+nk]
	}
	return nil
}

// Cluster redirection error codes (C 7.0.15 cluster.h:23-30).
const (
	redirNone = iota
	redirCrossSlot
	redirMoved
	redirDownState
	redirDownUnbound
	redirDownROState
)

// clusterRedirect is getNodeByQuery for one command (or, for EXEC, the
// commands it queued) and clusterRedirectClient's reply (C 7.0.15
// cluster.c:6656-6916): CROSSSLOT when the keys hash to different slots,
// CLUSTERDOWN when the slot is unassigned or the cluster state is FAIL
// (reads allowed with cluster-allow-reads-when-down); in a slot this node
// migrates, ASK to the target when none of the keys is here and TRYAGAIN
// when only some are; in a slot it imports, the command is served after
// ASKING (TRYAGAIN when it names several keys and some are missing);
// a replica serves the reads of a READONLY connection in its master's
// slots; otherwise MOVED to the slot's master when this node does not
// serve it (go-redis's ReadOnly is off by default, so its clients never
// send READONLY). It returns nil when this node serves the command.
func (n *Node) clusterRedirect(spec *cmdSpec, a []string) *Value {
	cs := n.cl
	slot, write, ok := -1, spec.write, false
	first := ""
	multiple, migrating, importing := false, false, false
	missing, existing := 0, 0
	check := func(spec *cmdSpec, a []string) *Value {
		for _, k := range commandKeys(spec, a) {
			s := KeySlot(k)
			if !ok {
				slot, ok, first = s, true, k
				if cs.slots[s] >= 0 {
					to, from := cs.slotOpen(s)
					if int(cs.slots[s]) == cs.me && to >= 0 {
						migrating = true
					} else if from >= 0 {
						importing = true
					}
				}
			} else if k != first {
				if s != slot {
					v := Err("CROSSSLOT Keys in request don't hash to the same slot")
					return &v
				}
				multiple = true
			}
			// Count the keys not here (lookupKeyReadWithFlags with
			// LOOKUP_NOEXPIRE: an expired key is missing, not deleted).
			if migrating || importing {
				if e := n.db[k]; e == nil || n.keyIsExpired(e) {
					missing++
				} else {
					existing++
				}
			}
		}
		return nil
	}
	if spec.name == "exec" {
		if c := n.txOf(n.cur.client, false); c != nil {
			for _, q := range c.queue {
				if qs, e := resolve(q); e == nil {
					if v := check(qs, q); v != nil {
						return v
					}
					write = write || qs.write
				}
			}
		}
	} else if v := check(spec, a); v != nil {
		return v
	}
	if !ok {
		return nil // no key: served here (cluster.c:6784)
	}
	owner := cs.slots[slot]
	if owner < 0 {
		v := Err("CLUSTERDOWN Hash slot not served")
		return &v
	}
	if cs.state != clusterOK {
		if !cs.cfg.AllowReadsWhenDown {
			v := Err("CLUSTERDOWN The cluster is down")
			return &v
		}
		if write {
			v := Err("CLUSTERDOWN The cluster is down and only accepts read commands")
			return &v
		}
	}
	// MIGRATE works on the local keys while the slot is open
	// (cluster.c:6817-6820).
	if (migrating || importing) && spec.name == "migrate" {
		return nil
	}
	if migrating && missing > 0 {
		if existing > 0 {
			v := Err("TRYAGAIN Multiple keys request during rehashing of slot")
			return &v
		}
		to, _ := cs.slotOpen(slot)
		v := Err("ASK " + strconv.Itoa(slot) + " " + cs.nodes[to].name + ":" + strconv.Itoa(ListenPort))
		return &v
	}
	if importing && (cs.asking[n.cur.client] || spec.asking) {
		if multiple && missing > 0 {
			v := Err("TRYAGAIN Multiple keys request during rehashing of slot")
			return &v
		}
		return nil
	}
	// A READONLY connection reads its master's slots on this replica
	// (cluster.c:6850-6861).
	if me := &cs.nodes[cs.me]; cs.readonly[n.cur.client] && !write && !me.master && me.slaveof == int(owner) {
		return nil
	}
	if int(owner) != cs.me {
		v := Err("MOVED " + strconv.Itoa(slot) + " " + cs.nodes[owner].name + ":" + strconv.Itoa(ListenPort))
		return &v
	}
	return nil
}

// ---- the CLUSTER command ----

func cmdCluster(n *Node, a []string) Value {
	if n.cl == nil {
		return Err("ERR This instance has cluster support disabled")
	}
	cs := n.cl
	sub := strings.ToLower(a[1])
	switch sub {
	case "keyslot":
		if len(a) != 3 {
			return errArity("cluster|keyslot")
		}
		return Int(int64(KeySlot(a[2])))
	case "myid":
		return Bulk(cs.nodes[cs.me].nodeID)
	case "slots":
		return cs.replySlots(n)
	case "shards":
		return cs.replyShards(n)
	case "nodes":
		return Bulk(cs.nodesDescription(n))
	case "info":
		return Bulk(cs.info())
	case "countkeysinslot":
		if len(a) != 3 {
			return errArity("cluster|countkeysinslot")
		}
		s, ok := parseLL(a[2])
		if !ok || s < 0 || s >= ClusterSlots {
			return Err("ERR Invalid slot")
		}
		return Int(int64(len(n.keysInSlot(int(s)))))
	case "failover":
		return n.clusterFailoverCommand(a[2:])
	case "setslot":
		if len(a) < 4 {
			return errArity("cluster|setslot")
		}
		return n.clusterSetSlot(a)
	case "getkeysinslot":
		if len(a) != 4 {
			return errArity("cluster|getkeysinslot")
		}
		return n.clusterGetKeysInSlot(a)
	case "bumpepoch":
		// CLUSTER BUMPEPOCH (cluster.c:5558-5565).
		st := "STILL"
		if n.bumpConfigEpochWithoutConsensus() {
			st = "BUMPED"
		}
		return Status(st + " " + strconv.FormatUint(cs.nodes[cs.me].configEpoch, 10))
	}
	return errUnknownSubcommand(a[0], a[1])
}

// replySlots is clusterReplyMultiBulkSlots (C 7.0.15 cluster.c:5204-5239):
// one entry per run of slots served by one master, with the master and
// its replicas that are not FAIL and have a replication offset
// (isReplicaAvailable), each as [host, port, id, {}] (addNodeToNodeReply,
// cluster.c:5000-5050; the empty map is an empty array in RESP2).
func (cs *clusterState) replySlots(n *Node) Value {
	var out []Value
	start := -1
	for i := 0; i <= ClusterSlots; i++ {
		if start >= 0 && (i == ClusterSlots || cs.slots[i] != cs.slots[start]) {
			if cs.slots[start] >= 0 {
				m := int(cs.slots[start])
				entry := []Value{Int(int64(start)), Int(int64(i - 1)), cs.nodeReply(m)}
				for _, r := range cs.replicasOf(m) {
					if cs.replicaAvailable(n, r) {
						entry = append(entry, cs.nodeReply(r))
					}
				}
				out = append(out, Array(entry...))
			}
			start = -1
		}
		if start < 0 && i < ClusterSlots {
			start = i
		}
	}
	return Array(out...)
}

func (cs *clusterState) nodeReply(i int) Value {
	return Array(Bulk(cs.nodes[i].name), Int(ListenPort), Bulk(cs.nodes[i].nodeID), Array())
}

// replicaAvailable is isReplicaAvailable (C 7.0.15 cluster.c:4988-4998).
func (cs *clusterState) replicaAvailable(n *Node, r int) bool {
	if cs.nodes[r].fail {
		return false
	}
	off := cs.nodes[r].replOffset
	if r == cs.me {
		off = n.offset
	}
	return off != 0
}

// replicasOf lists the nodes this node believes replicate m, in member
// order.
func (cs *clusterState) replicasOf(m int) []int {
	var out []int
	for i := range cs.nodes {
		if !cs.nodes[i].master && cs.nodes[i].slaveof == m {
			out = append(out, i)
		}
	}
	return out
}

// replyShards is CLUSTER SHARDS (C 7.0.15 cluster.c:5100-5200): per master
// with slots, its slot ranges and its nodes with their role, offset and
// health. Simplification: the node fields are id, endpoint, ip, port,
// role, replication-offset and health.
func (cs *clusterState) replyShards(n *Node) Value {
	var out []Value
	for m := range cs.nodes {
		if !cs.nodes[m].master || cs.nodes[m].numSlots == 0 {
			continue
		}
		var ranges []Value
		start := -1
		for s := 0; s <= ClusterSlots; s++ {
			mine := s < ClusterSlots && int(cs.slots[s]) == m
			if mine && start < 0 {
				start = s
			}
			if !mine && start >= 0 {
				ranges = append(ranges, Int(int64(start)), Int(int64(s-1)))
				start = -1
			}
		}
		nodes := []Value{cs.shardNode(n, m)}
		for _, r := range cs.replicasOf(m) {
			nodes = append(nodes, cs.shardNode(n, r))
		}
		out = append(out, Array(Bulk("slots"), Array(ranges...), Bulk("nodes"), Array(nodes...)))
	}
	return Array(out...)
}

func (cs *clusterState) shardNode(n *Node, i int) Value {
	nd := &cs.nodes[i]
	role, off := "master", nd.replOffset
	if !nd.master {
		role = "replica"
	}
	if i == cs.me {
		off = n.offset
	}
	health := "online"
	if nd.fail || nd.pfail {
		health = "fail"
	}
	return Array(Bulk("id"), Bulk(nd.nodeID), Bulk("port"), Int(ListenPort), Bulk("ip"), Bulk(nd.name),
		Bulk("endpoint"), Bulk(nd.name), Bulk("role"), Bulk(role), Bulk("replication-offset"), Int(off),
		Bulk("health"), Bulk(health))
}

// nodesDescription is CLUSTER NODES (clusterGenNodeDescription, C 7.0.15
// cluster.c:4700-4815): id ip:port@cport,hostname flags master ping_sent
// pong_recv config_epoch link_state slots.
func (cs *clusterState) nodesDescription(n *Node) string {
	var b strings.Builder
	for i := range cs.nodes {
		nd := &cs.nodes[i]
		fmt.Fprintf(&b, "%s %s:%d@%d,", nd.nodeID, nd.name, ListenPort, ListenPort+10000)
		var flags []string
		if i == cs.me {
			flags = append(flags, "myself")
		}
		if nd.master {
			flags = append(flags, "master")
		} else {
			flags = append(flags, "slave")
		}
		if nd.pfail {
			flags = append(flags, "fail?")
		}
		if nd.fail {
			flags = append(flags, "fail")
		}
		if nd.noFailover {
			flags = append(flags, "nofailover")
		}
		b.WriteString(" " + strings.Join(flags, ","))
		if !nd.master && nd.slaveof >= 0 {
			b.WriteString(" " + cs.nodes[nd.slaveof].nodeID)
		} else {
			b.WriteString(" -")
		}
		pingSent, pong := nd.pingSent, nd.pongReceived
		if i == cs.me {
			pingSent, pong = 0, 0
		}
		link := "connected"
		if i != cs.me && nd.pingSent != 0 && (nd.pfail || nd.fail) {
			link = "disconnected"
		}
		fmt.Fprintf(&b, " %d %d %d %s", pingSent, pong, cs.configEpochOf(i), link)
		if nd.master {
			start := -1
			for s := 0; s <= ClusterSlots; s++ {
				mine := s < ClusterSlots && int(cs.slots[s]) == i
				if mine && start < 0 {
					start = s
				}
				if !mine && start >= 0 {
					if start == s-1 {
						fmt.Fprintf(&b, " %d", start)
					} else {
						fmt.Fprintf(&b, " %d-%d", start, s-1)
					}
					start = -1
				}
			}
		}
		if i == cs.me {
			// Only for myself: the slots being migrated or imported
			// (cluster.c:4742-4756).
			for s := 0; s < ClusterSlots; s++ {
				if to, from := cs.slotOpen(s); to >= 0 {
					fmt.Fprintf(&b, " [%d->-%s]", s, cs.nodes[to].nodeID)
				} else if from >= 0 {
					fmt.Fprintf(&b, " [%d-<-%s]", s, cs.nodes[from].nodeID)
				}
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// info is CLUSTER INFO (clusterGenInfoString, C 7.0.15 cluster.c:5270-5330),
// the fields a client or test reads.
func (cs *clusterState) info() string {
	assigned, ok, pfail, fail := 0, 0, 0, 0
	for s := 0; s < ClusterSlots; s++ {
		o := cs.slots[s]
		if o < 0 {
			continue
		}
		assigned++
		switch {
		case cs.nodes[o].fail:
			fail++
		case cs.nodes[o].pfail:
			pfail++
		default:
			ok++
		}
	}
	state := "ok"
	if cs.state != clusterOK {
		state = "fail"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cluster_enabled:1\r\ncluster_state:%s\r\ncluster_slots_assigned:%d\r\ncluster_slots_ok:%d\r\ncluster_slots_pfail:%d\r\ncluster_slots_fail:%d\r\n", state, assigned, ok, pfail, fail)
	fmt.Fprintf(&b, "cluster_known_nodes:%d\r\ncluster_size:%d\r\ncluster_current_epoch:%d\r\ncluster_my_epoch:%d\r\n", len(cs.nodes), cs.size, cs.currentEpoch, cs.configEpochOf(cs.me))
	return b.String()
}

// configEpochOf is the configEpoch CLUSTER NODES (and so nodes.conf) and
// CLUSTER INFO's cluster_my_epoch show for a node: its master's for a
// replica (clusterGenNodeDescription, C 7.0.15 cluster.c:4705-4708;
// CLUSTER INFO, :5587-5588), as its messages carry (clusterBuildMessageHdr).
func (cs *clusterState) configEpochOf(i int) uint64 {
	if nd := &cs.nodes[i]; !nd.master && nd.slaveof >= 0 {
		return cs.nodes[nd.slaveof].configEpoch
	}
	return cs.nodes[i].configEpoch
}

// clusterFailoverCommand is CLUSTER FAILOVER [FORCE|TAKEOVER] (C 7.0.15
// cluster.c:5784-5838).
func (n *Node) clusterFailoverCommand(args []string) Value {
	cs := n.cl
	force, takeover := false, false
	switch {
	case len(args) == 0:
	case len(args) == 1 && strings.EqualFold(args[0], "force"):
		force = true
	case len(args) == 1 && strings.EqualFold(args[0], "takeover"):
		takeover = true
	default:
		return errSyntax
	}
	me := &cs.nodes[cs.me]
	if me.master {
		return Err("ERR You should send CLUSTER FAILOVER to a replica")
	}
	if me.slaveof < 0 {
		return Err("ERR I'm a replica but my master is unknown to me")
	}
	// nodeFailed (FAIL, not PFAIL) or no bus link to the master
	// (cluster.c:5803-5816; the model's link is freed while relink is set).
	if !force && !takeover && (cs.nodes[me.slaveof].fail || cs.nodes[me.slaveof].relink) {
		return Err("ERR Master is down or failed, please use CLUSTER FAILOVER FORCE")
	}
	now := n.env.WallMs()
	cs.resetManualFailover(n)
	cs.mfEnd = now + mfTimeout
	n.logf(EventClusterFailover, "CLUSTER FAILOVER %s requested", strings.ToUpper(strings.Join(args, " ")))
	switch {
	case takeover:
		// A takeover bumps the configEpoch without agreement and takes
		// the slots at once (cluster.c:5820-5830).
		n.bumpConfigEpochWithoutConsensus()
		n.failoverReplaceMaster()
	case force:
		// No handshake with the master: the election starts at once.
		cs.mfCanStart = true
		cs.todo |= todoHandleFailover
	default:
		cs.sendBus(n, me.slaveof, &BusMsg{Type: BusMFStart})
	}
	return OK()
}

// ---- persistence of the cluster configuration (nodes.conf) ----

// clusterRecord is what nodes.conf keeps: the epochs, the last vote, and
// every node's role, master and slots as this node saw them.
type clusterRecord struct {
	CurrentEpoch, LastVoteEpoch uint64
	Nodes                       []clusterNodeRecord
	Slots                       *slotTable // shared: the node copies before changing it
	// Migrating and Importing are the open slots (nodes.conf's
	// [slot->-node] and [slot-<-node], cluster.c:350-360); copies.
	Migrating, Importing map[int]int
}

type clusterNodeRecord struct {
	Master      bool
	SlaveOf     int
	ConfigEpoch uint64
	// PFail and Fail are the node's fail? and fail flags
	// (clusterGenNodeDescription writes them, clusterLoadConfig reads
	// them back, C 7.0.15 cluster.c:278-282).
	PFail, Fail bool
}

const fileNodesConf = "nodes.conf"

// clusterSaveConfig is clusterSaveConfigOrDie with fsync.
func (n *Node) clusterSaveConfig() {
	cs := n.cl
	rec := clusterRecord{CurrentEpoch: cs.currentEpoch, LastVoteEpoch: cs.lastVoteEpoch, Slots: cs.slots,
		Migrating: copySlotMap(cs.migrating), Importing: copySlotMap(cs.importing)}
	cs.slotsOwned = false // the record shares the table now
	for _, nd := range cs.nodes {
		rec.Nodes = append(rec.Nodes, clusterNodeRecord{Master: nd.master, SlaveOf: nd.slaveof, ConfigEpoch: nd.configEpoch, PFail: nd.pfail, Fail: nd.fail})
	}
	f := n.env.Disk().File(fileNodesConf)
	f.Replace([]any{&rec})
	f.Sync()
}

// clusterLoadConfig restores nodes.conf after a restart (clusterLoadConfig,
// C 7.0.15 cluster.c:138-391): roles, slots and open slots, the epochs and
// the last vote; a replica's configEpoch is read as 0 (:316-319); a node
// saved as fail comes back FAIL with its fail time set to now (:280-282),
// one saved as fail? comes back PFAIL (:278-279). The ping and pong times
// are not kept: the model's links are new after a restart, and the first
// cron pings every node (Redis sets both to now, :313-314, and pings each
// node as its new link connects).
func (n *Node) clusterLoadConfig() bool {
	recs := n.env.Disk().File(fileNodesConf).Records()
	if len(recs) == 0 {
		return false
	}
	rec := recs[len(recs)-1].(*clusterRecord)
	cs := n.cl
	cs.currentEpoch, cs.lastVoteEpoch, cs.slots, cs.slotsOwned = rec.CurrentEpoch, rec.LastVoteEpoch, rec.Slots, false
	cs.migrating, cs.importing = copySlotMap(rec.Migrating), copySlotMap(rec.Importing)
	now := n.env.WallMs()
	for i, r := range rec.Nodes {
		nd := &cs.nodes[i]
		nd.master, nd.slaveof, nd.configEpoch = r.Master, r.SlaveOf, r.ConfigEpoch
		if !r.Master && r.SlaveOf >= 0 {
			nd.configEpoch = 0
		}
		if i != cs.me {
			nd.pfail, nd.fail = r.PFail, r.Fail
			if r.Fail {
				nd.failTime = now
			}
		}
	}
	cs.recount() // (clusterInit sets MIGRATE_TO afterwards: initMigrateTo)
	return true
}

var _ = sim.NoProc

// copySlotMap copies a slot -> node map (nil when empty).
func copySlotMap(m map[int]int) map[int]int {
	if len(m) == 0 {
		return nil
	}
	out := make(map[int]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// pausedReq is a write command held by a manual failover's pause.
type pausedReq struct {
	client sim.ProcID
	id     uint64
	args   []string
	pooled bool
}

// pauseWrite holds a write command while a master is paused for a manual
// failover (pauseClients with CLIENT_PAUSE_WRITE, R 7.0.15 src/networking.c;
// EVAL and EVALSHA count as writes, as "may-replicate" commands do). It
// reports whether the command was held.
func (n *Node) pauseWrite(from sim.ProcID, id uint64, args []string, pooled bool) bool {
	cs := n.cl
	if cs.paused == 0 || len(args) == 0 {
		return false
	}
	if n.env.WallMs() >= cs.paused {
		n.unpauseWrites()
		return false
	}
	spec, errv := resolve(args)
	if errv != nil || !(spec.write || spec.name == "eval" || spec.name == "evalsha" || spec.name == "exec") {
		return false
	}
	n.pausedReqs = append(n.pausedReqs, pausedReq{client: from, id: id, args: args, pooled: pooled})
	return true
}

// unpauseWrites ends the pause and runs the held commands in order: after
// a failover they meet the new configuration (a MOVED).
func (n *Node) unpauseWrites() {
	n.cl.paused = 0
	held := n.pausedReqs
	n.pausedReqs = nil
	for _, r := range held {
		n.handleRequest(r.client, r.id, r.args, r.pooled)
	}
}

// CommandKeys returns the keys of a command the model knows, as a cluster
// client computes a command's slot (nil for a keyless or unknown command).
func CommandKeys(a []string) []string {
	spec, errv := resolve(a)
	if errv != nil {
		return nil
	}
	return commandKeys(spec, a)
}
