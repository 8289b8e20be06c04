package redis

import (
	"strconv"
	"sync"

	"github.com/locksim/locksim/sim"
)

// The cluster bus: failure detection, failover elections and
// configuration propagation (C 7.0.15 cluster.c). Times are the node's
// mstime(), its wall clock in ms (env.WallMs), as in Redis.
//
// The bus runs on its own kernel connection between two nodes (busConn,
// sim.Env.SendOn), apart from the client and replication connection, as
// Redis's bus links are TCP connections of their own to the bus port
// (cluster.c:3944-3975 clusterNodeCronHandleReconnect, :2673
// clusterLinkConnectHandler): freeing a bus link, or a reset of it,
// leaves replication alone, and the other way round. Simplification: one
// bus connection per pair, where Redis has two (each node's outbound link
// and the peer's inbound one, cluster.c:785 createClusterLink).

// busConn is the number of the kernel connection the bus uses.
const busConn = 1

// Trace event kinds of cluster mode.
const (
	// EventClusterPFail: this node flagged another as PFAIL (no pong within
	// cluster-node-timeout).
	EventClusterPFail sim.Kind = "cluster-pfail"
	// EventClusterFail: this node flagged another as FAIL (a majority of
	// masters' reports, or a FAIL message), or cleared the flag.
	EventClusterFail sim.Kind = "cluster-fail"
	// EventClusterState: this node's view of the cluster state changed
	// (ok or fail).
	EventClusterState sim.Kind = "cluster-state"
	// EventClusterElection: a replica scheduled or started an election,
	// or a master granted its vote.
	EventClusterElection sim.Kind = "cluster-election"
	// EventClusterFailover: a replica took its master's slots, a master
	// became a replica after a configuration change, CLUSTER FAILOVER ran,
	// or a configEpoch collision was resolved.
	EventClusterFailover sim.Kind = "cluster-failover"
	// EventClusterSlot: slot migration on this node: a slot assigned by
	// CLUSTER SETSLOT NODE, a configEpoch bumped after an import, a
	// MIGRATE sent, keys of a slot lost to a new owner deleted.
	EventClusterSlot sim.Kind = "cluster-slot"
)

// BusType is the type of a cluster bus message (CLUSTERMSG_TYPE_*,
// C 7.0.15 cluster.h:88-100).
type BusType uint8

// The bus message types the model sends.
const (
	BusPing BusType = iota + 1
	BusPong
	BusFail
	BusAuthRequest
	BusAuthAck
	BusUpdate
	BusMFStart
)

var busTypeNames = [...]string{BusPing: "ping", BusPong: "pong", BusFail: "fail", BusAuthRequest: "auth-request", BusAuthAck: "auth-ack", BusUpdate: "update", BusMFStart: "mfstart"}

// BusMsg is one cluster bus message (clusterMsg, C 7.0.15 cluster.h:
// 320-370): the header every message carries (the sender's epochs, role,
// replication offset and the slots of the sender's master), and the
// type's data. Nodes are indexes into ClusterConfig.Members. A message is
// never changed after it is sent (Slots and AboutSlots are shared
// snapshots).
type BusMsg struct {
	Type         BusType
	Sender       int
	CurrentEpoch uint64
	ConfigEpoch  uint64
	Offset       int64
	SlaveOf      int // -1: the sender is a master
	Slots        *slotBits
	Paused       bool // CLUSTERMSG_FLAG0_PAUSED: a master paused for a manual failover
	NoFailover   bool // the sender's CLUSTER_NODE_NOFAILOVER flag
	ForceAck     bool // CLUSTERMSG_FLAG0_FORCEACK
	Reply        bool // a PONG answering a PING (it arrives on the sender's outbound link)
	Gossip       []Gossip
	// About is the failing node of a FAIL and the node of an UPDATE, whose
	// configEpoch and slots AboutEpoch and AboutSlots are.
	About      int
	AboutEpoch uint64
	AboutSlots *slotBits
}

// Gossip is one gossip section entry (clusterMsgDataGossip): a node, the
// sender's view of its failure flags, and when the sender last got its
// pong, in seconds.
type Gossip struct {
	Node        int
	PFail, Fail bool
	PongSec     int64
}

// AppendTrace renders the message for the trace.
func (m *BusMsg) AppendTrace(b []byte) []byte {
	b = append(b, "bus "...)
	b = append(b, busTypeNames[m.Type]...)
	b = append(b, " epoch "...)
	b = strconv.AppendUint(b, m.CurrentEpoch, 10)
	b = append(b, '/')
	b = strconv.AppendUint(b, m.ConfigEpoch, 10)
	if m.Type == BusFail || m.Type == BusUpdate {
		b = append(b, " about "...)
		b = strconv.AppendInt(b, int64(m.About), 10)
	}
	return b
}

// slotBits is a set of slots (the myslots bitmap).
type slotBits [ClusterSlots / 64]uint64

func (s *slotBits) has(i int) bool { return s[i/64]&(1<<(i%64)) != 0 }
func (s *slotBits) set(i int)      { s[i/64] |= 1 << (i % 64) }

// cnode is this node's view of one cluster node (clusterNode).
type cnode struct {
	name         string
	nodeID       string
	id           sim.ProcID
	master       bool
	slaveof      int // master's index, -1 if none
	configEpoch  uint64
	numSlots     int
	bits         *slotBits // its slots as this node sees them (rebuilt on change)
	pfail, fail  bool
	pingSent     int64
	pongReceived int64
	dataReceived int64
	linkCtime    int64
	relink       bool // the link was freed: reconnect with a PING on the next cron
	failTime     int64
	votedTime    int64
	reports      []failReport
	replOffset   int64
	// migrateTo is CLUSTER_NODE_MIGRATE_TO and orphanedTime the node's
	// orphaned_time (cluster_migration.go).
	migrateTo    bool
	orphanedTime int64
	// noFailover is CLUSTER_NODE_NOFAILOVER: this node's own
	// cluster-replica-no-failover, another's as its last message said.
	noFailover bool
}

// failReport is clusterNodeFailReport.
type failReport struct {
	sender int
	time   int64
}

// cluster states (CLUSTER_OK, CLUSTER_FAIL).
const (
	clusterOK   = 0
	clusterFail = 1
)

// todo flags (CLUSTER_TODO_*).
const (
	todoHandleFailover = 1 << iota
	todoUpdateState
	todoHandleManualFailover
	todoSaveConfig
)

// clusterState is this node's server.cluster.
type clusterState struct {
	cfg   *ClusterConfig
	me    int
	nodes []cnode
	// slots is the owner per slot (-1 unassigned), shared copy-on-write:
	// with the cluster's initial layout and with the nodes.conf records
	// until this node changes a slot (setSlotOwner), so that a run's six
	// nodes do not each build and copy 32 KB tables.
	slots      *slotTable
	slotsOwned bool

	currentEpoch, lastVoteEpoch uint64
	state                       int
	size                        int
	todo                        int

	firstCallTime, amongMinorityTime int64
	iteration                        int64
	pfailNodes                       int
	unassigned                       int // slots without an owner (recount)

	// Elections (failover_auth_*).
	authTime  int64
	authCount int
	authSent  bool
	authRank  int
	authEpoch uint64
	// Manual failover (mf_*).
	mfEnd          int64
	mfSlave        int
	mfMasterOffset int64
	mfCanStart     bool
	paused         int64 // master: writes paused until (wall ms); 0 none

	// Slot migration (cluster_migrate.go): migrating_slots_to and
	// importing_slots_from (slot -> node; nil when none), and the clients
	// that sent ASKING (CLIENT_ASKING).
	migrating, importing map[int]int
	asking               map[sim.ProcID]bool
	// readonly are the connections that sent READONLY (CLIENT_READONLY).
	readonly map[sim.ProcID]bool
	// okSlaves is orphanScan's scratch: non-FAIL replicas per master.
	okSlaves []int
}

// timeout is cluster-node-timeout in ms.
func (cs *clusterState) timeout() int64 { return cs.cfg.NodeTimeout.Milliseconds() }

// clusterInit builds the cluster view from the configuration (or from
// nodes.conf after a restart) and returns this node's master's name ("" for
// a master).
func (n *Node) clusterInit() string {
	cfg := n.cfg.Cluster
	cs := &clusterState{cfg: cfg, me: -1, state: clusterFail, mfSlave: -1, mfMasterOffset: -1}
	n.cl = cs
	idx := map[string]int{}
	for i, m := range cfg.Members {
		idx[m.Name] = i
	}
	now := n.env.WallMs()
	lay := cfg.layout
	if lay == nil {
		lay = cfg.buildLayout()
	}
	cs.slots = lay.slots
	for i, m := range cfg.Members {
		nd := cnode{name: m.Name, nodeID: NodeID(m.Name), master: m.ReplicaOf == "", slaveof: -1, configEpoch: m.ConfigEpoch, id: sim.NoProc, linkCtime: now}
		if m.ReplicaOf != "" {
			nd.slaveof = idx[m.ReplicaOf]
		}
		if id, ok := n.env.Lookup(m.Name); ok {
			nd.id = id
		}
		if m.Name == n.env.Name() {
			cs.me = i
		}
		cs.nodes = append(cs.nodes, nd)
	}
	if cs.me < 0 {
		panic("redis: cluster node " + n.env.Name() + " is not a member of its cluster")
	}
	// redis-cli set the epochs: currentEpoch is the greatest configEpoch
	// a node has seen, which the first pings spread; start from it.
	for _, nd := range cs.nodes {
		if nd.configEpoch > cs.currentEpoch {
			cs.currentEpoch = nd.configEpoch
		}
	}
	if !n.clusterLoadConfig() {
		// A fresh start is the cluster as redis-cli --cluster create left
		// it once the nodes joined: state ok, the writable delay passed.
		// A restart (nodes.conf on disk) starts FAIL, as Redis does
		// (clusterInit), and waits CLUSTER_WRITABLE_DELAY.
		for i := range cs.nodes {
			cs.nodes[i].numSlots, cs.nodes[i].bits = lay.numSlots[i], lay.bits[i]
		}
		cs.unassigned = 0
		cs.state = clusterOK
		cs.firstCallTime = now - writableDelay
		cs.size = 0
		for _, nd := range cs.nodes {
			if nd.master && nd.numSlots > 0 {
				cs.size++
			}
		}
		n.clusterSaveConfig()
	}
	cs.initMigrateTo()
	me := &cs.nodes[cs.me]
	me.noFailover = cfg.ReplicaNoFailover // clusterUpdateMyselfFlags (cluster.c:551-561)
	if me.master || me.slaveof < 0 {
		return ""
	}
	return cs.nodes[me.slaveof].name
}

// recount rebuilds every node's slot count and bitmap from the slot table.
func (cs *clusterState) recount() {
	var had []bool // masters that served slots before
	for i := range cs.nodes {
		had = append(had, cs.nodes[i].numSlots > 0)
		cs.nodes[i].numSlots = 0
		cs.nodes[i].bits = new(slotBits)
	}
	cs.unassigned = 0
	for s, o := range cs.slots {
		if o >= 0 {
			cs.nodes[o].numSlots++
			cs.nodes[o].bits.set(s)
		} else {
			cs.unassigned++
		}
	}
	// A master's first slot flags it MIGRATE_TO when some master has
	// replicas (clusterAddSlot, C 7.0.15 cluster.c:4335-4346).
	for i := range cs.nodes {
		if nd := &cs.nodes[i]; nd.master && !had[i] && nd.numSlots > 0 && cs.mastersHaveSlaves() {
			nd.migrateTo = true
		}
	}
}

// setSlotOwner moves slot s to node o (clusterDelSlot + clusterAddSlot);
// call recount after a batch. The table is copied first if it is shared.
func (cs *clusterState) setSlotOwner(s int, o int) {
	if !cs.slotsOwned {
		t := *cs.slots
		cs.slots, cs.slotsOwned = &t, true
	}
	cs.slots[s] = int16(o)
}

// slotTable is the owner of every slot.
type slotTable [ClusterSlots]int16

// clusterLayout is the initial slot table and every member's slots, built
// once per cluster (ClusterConfig.Prepare) and shared by its nodes.
type clusterLayout struct {
	slots    *slotTable
	bits     []*slotBits
	numSlots []int
}

// buildLayout computes the layout of the members' slots.
func (c *ClusterConfig) buildLayout() *clusterLayout {
	lay := &clusterLayout{slots: new(slotTable)}
	for i := range lay.slots {
		lay.slots[i] = -1
	}
	for i, m := range c.Members {
		b := new(slotBits)
		n := 0
		for _, r := range m.Slots {
			for s := r.From; s <= r.To; s++ {
				lay.slots[s] = int16(i)
				b.set(s)
				n++
			}
		}
		lay.bits = append(lay.bits, b)
		lay.numSlots = append(lay.numSlots, n)
	}
	return lay
}

// Prepare computes the cluster's initial layout once, so that every node
// built from copies of c shares it instead of computing its own. Call it
// after setting Members and before copying c for the nodes (optional).
func (c *ClusterConfig) Prepare() { c.layout = c.buildLayout() }

// myMaster is the node whose slots this node's messages claim.
func (cs *clusterState) myMaster() int {
	me := &cs.nodes[cs.me]
	if !me.master && me.slaveof >= 0 {
		return me.slaveof
	}
	return cs.me
}

// header fills the header of a message (clusterBuildMessageHdr, C 7.0.15
// cluster.c:2840-2900): the slots and configEpoch are the master's for a
// replica, the offset is the master's repl offset or the replica's
// processed offset.
func (cs *clusterState) header(n *Node, m *BusMsg) {
	m.Sender = cs.me
	m.CurrentEpoch = cs.currentEpoch
	mm := cs.myMaster()
	m.ConfigEpoch = cs.nodes[mm].configEpoch
	m.Slots = cs.nodes[mm].bits
	m.SlaveOf = -1
	if me := &cs.nodes[cs.me]; !me.master {
		m.SlaveOf = me.slaveof
	}
	m.Offset = n.offset
	m.Paused = cs.paused != 0 && cs.me == mm
	m.NoFailover = cs.nodes[cs.me].noFailover
}

// sendBus sends m to node i.
func (cs *clusterState) sendBus(n *Node, i int, m *BusMsg) {
	nd := &cs.nodes[i]
	if i == cs.me || nd.id == sim.NoProc {
		return
	}
	cs.header(n, m)
	n.env.SendOn(busConn, nd.id, m)
}

// busPool recycles the pings and pongs (sim.Recycler): they are most of
// a cluster run's allocations otherwise. The receiver keeps nothing of a
// message after Receive (onBus reads it; Slots bitmaps are immutable and
// owned by the sender's view, not by the message).
var busPool = sync.Pool{New: func() any { return new(BusMsg) }}

// newPing returns a pooled message of type typ.
func newPing(typ BusType, reply bool) *BusMsg {
	m := busPool.Get().(*BusMsg)
	g := m.Gossip[:0]
	*m = BusMsg{Type: typ, Reply: reply, Gossip: g}
	return m
}

// Recycle returns a pooled ping or pong to the pool (sim.Recycler).
func (m *BusMsg) Recycle() {
	g := m.Gossip[:0]
	*m = BusMsg{Gossip: g}
	busPool.Put(m)
}

// broadcast sends a message built by mk to every other node.
func (cs *clusterState) broadcast(n *Node, mk func() *BusMsg) {
	for i := range cs.nodes {
		if i != cs.me {
			cs.sendBus(n, i, mk())
		}
	}
}

// sendPing is clusterSendPing (C 7.0.15 cluster.c:2925-3040): the gossip
// section has max(3, nodes/10) entries (at most nodes-2), drawn at random
// among the other nodes that are not PFAIL, plus every PFAIL node.
func (cs *clusterState) sendPing(n *Node, i int, typ BusType, reply bool) {
	now := n.env.WallMs()
	if typ == BusPing {
		cs.nodes[i].pingSent = now
	}
	m := newPing(typ, reply)
	fresh := len(cs.nodes) - 2
	wanted := len(cs.nodes) / 10
	if wanted < 3 {
		wanted = 3
	}
	if wanted > fresh {
		wanted = fresh
	}
	r := n.env.Rand()
	for iter := wanted * 3; fresh > 0 && len(m.Gossip) < wanted && iter > 0; iter-- {
		j := r.Intn(len(cs.nodes))
		nd := &cs.nodes[j]
		if j == cs.me || nd.pfail {
			continue
		}
		dup := false
		for _, g := range m.Gossip {
			if g.Node == j {
				dup = true
			}
		}
		if dup {
			continue
		}
		m.Gossip = append(m.Gossip, Gossip{Node: j, Fail: nd.fail, PongSec: nd.pongReceived / 1000})
		fresh--
	}
	for j := range cs.nodes {
		if cs.nodes[j].pfail && j != cs.me {
			m.Gossip = append(m.Gossip, Gossip{Node: j, PFail: true, PongSec: cs.nodes[j].pongReceived / 1000})
		}
	}
	nd := &cs.nodes[i]
	if i == cs.me || nd.id == sim.NoProc {
		m.Recycle()
		return
	}
	cs.header(n, m)
	n.env.SendPooledOn(busConn, nd.id, m)
}

// clusterCron runs every 100 ms (serverCron's run_with_period(100),
// R 7.0.15 src/server.c:1411-1413; clusterCron, cluster.c:4032-4245).
func (n *Node) clusterCron() {
	cs := n.cl
	cs.iteration++
	now := n.env.WallMs()
	t := cs.timeout()
	update := false
	cs.pfailNodes = 0
	for i := range cs.nodes {
		nd := &cs.nodes[i]
		if i == cs.me {
			continue
		}
		if nd.pfail {
			cs.pfailNodes++
		}
		if nd.relink {
			// clusterNodeCronHandleReconnect and clusterLinkConnectHandler:
			// a new link sends a PING, keeping the old ping_sent.
			nd.relink = false
			nd.linkCtime = now
			old := nd.pingSent
			cs.sendPing(n, i, BusPing, false)
			// Simplification: Redis sets ping_sent for this ping only when
			// the connect succeeded (clusterLinkConnectHandler); a connect
			// to a dead process fails and sets nothing, and the model cannot
			// tell at send time, so the reconnect ping never starts the
			// failure clock: the regular pings do. After a freed link
			// ping_sent is set already (the free needs it) and is kept.
			nd.pingSent = old
		}
	}
	// Every 10 iterations ping the node with the oldest pong among 5
	// random ones (cluster.c:4100-4124).
	if cs.iteration%10 == 0 {
		r := n.env.Rand()
		minNode := -1
		var minPong int64
		for j := 0; j < 5; j++ {
			k := r.Intn(len(cs.nodes))
			nd := &cs.nodes[k]
			if k == cs.me || nd.pingSent != 0 {
				continue
			}
			if minNode < 0 || minPong > nd.pongReceived {
				minNode, minPong = k, nd.pongReceived
			}
		}
		if minNode >= 0 {
			cs.sendPing(n, minNode, BusPing, false)
		}
	}
	for i := range cs.nodes {
		if i == cs.me {
			continue
		}
		nd := &cs.nodes[i]
		now = n.env.WallMs()
		pingDelay, dataDelay := now-nd.pingSent, now-nd.dataReceived
		// Free a link that waits for a pong for over half the timeout with
		// no data at all (cluster.c:4140-4157); the bus connection is
		// closed (not the client or replication one) and the next cron
		// reconnects.
		if now-nd.linkCtime > t && nd.pingSent != 0 && pingDelay > t/2 && dataDelay > t/2 {
			n.env.CloseOn(busConn, nd.id)
			nd.relink = true
		}
		if !nd.relink && nd.pingSent == 0 && now-nd.pongReceived > t/2 {
			cs.sendPing(n, i, BusPing, false)
			continue
		}
		if cs.mfEnd != 0 && cs.nodes[cs.me].master && cs.mfSlave == i {
			cs.sendPing(n, i, BusPing, false)
			continue
		}
		if nd.pingSent == 0 {
			continue
		}
		delay := pingDelay
		if dataDelay < delay {
			delay = dataDelay
		}
		if delay > t && !nd.pfail && !nd.fail {
			nd.pfail = true
			update = true
			n.logfAttrs(EventClusterPFail, []sim.Attr{sim.Str("node", nd.name)}, "%s possibly failing (no pong for %dms)", nd.name, delay)
		}
	}
	// The orphaned-master part of the node loop reads FAIL flags only,
	// which the loop above does not change (cluster.c:4111-4139).
	orphaned, maxSlaves, thisSlaves := cs.orphanScan()
	cs.manualFailoverCheckTimeout(n)
	if !cs.nodes[cs.me].master {
		n.clusterHandleManualFailover()
		n.clusterHandleSlaveFailover()
		// Replica migration (cluster.c:4226-4234).
		if orphaned > 0 && maxSlaves >= 2 && thisSlaves == maxSlaves && cs.cfg.AllowReplicaMigration {
			n.clusterHandleSlaveMigration(maxSlaves)
		}
	}
	if update || cs.state == clusterFail {
		n.clusterUpdateState()
	}
}

// clusterBeforeSleep runs what events asked for (C 7.0.15
// cluster.c:4246-4280).
func (n *Node) clusterBeforeSleep() {
	cs := n.cl
	todo := cs.todo
	cs.todo = 0
	if todo&todoHandleManualFailover != 0 && !cs.nodes[cs.me].master {
		n.clusterHandleManualFailover()
		n.clusterHandleSlaveFailover()
	} else if todo&todoHandleFailover != 0 {
		n.clusterHandleSlaveFailover()
	}
	if todo&todoUpdateState != 0 {
		n.clusterUpdateState()
	}
	if todo&todoSaveConfig != 0 || cs.todo&todoSaveConfig != 0 {
		cs.todo &^= todoSaveConfig
		n.clusterSaveConfig()
	}
	if cs.paused != 0 && n.env.WallMs() >= cs.paused {
		n.unpauseWrites()
	}
}

// onBus processes one bus message (clusterProcessPacket, C 7.0.15
// cluster.c:2120-2640).
func (n *Node) onBus(m *BusMsg) {
	cs := n.cl
	if m.Sender < 0 || m.Sender >= len(cs.nodes) || m.Sender == cs.me {
		return
	}
	now := n.env.WallMs()
	sender := &cs.nodes[m.Sender]
	sender.dataReceived = now
	if m.CurrentEpoch > cs.currentEpoch {
		cs.currentEpoch = m.CurrentEpoch
	}
	if m.ConfigEpoch > sender.configEpoch {
		sender.configEpoch = m.ConfigEpoch
		cs.todo |= todoSaveConfig
	}
	sender.replOffset = m.Offset
	// The sender's nofailover flag, as it announced it (cluster.c:2361-2371).
	sender.noFailover = m.NoFailover
	if cs.mfEnd != 0 && !cs.nodes[cs.me].master && cs.nodes[cs.me].slaveof == m.Sender && m.Paused && cs.mfMasterOffset == -1 {
		cs.mfMasterOffset = m.Offset
		cs.todo |= todoHandleManualFailover
	}
	switch m.Type {
	case BusPing, BusPong:
		if m.Type == BusPing {
			cs.sendPing(n, m.Sender, BusPong, true)
		}
		if m.Type == BusPong && m.Reply {
			sender.pongReceived = now
			sender.pingSent = 0
			if sender.pfail {
				sender.pfail = false
				cs.todo |= todoUpdateState
			} else if sender.fail {
				n.clearNodeFailureIfNeeded(m.Sender)
			}
		}
		// Role switch (cluster.c:2400-2436).
		if m.SlaveOf < 0 {
			cs.setNodeAsMaster(m.Sender)
		} else {
			if sender.master {
				// A master turned replica loses its slots.
				for s := range cs.slots {
					if int(cs.slots[s]) == m.Sender {
						cs.setSlotOwner(s, -1)
					}
				}
				sender.master, sender.migrateTo = false, false
				cs.recount()
				cs.todo |= todoUpdateState | todoSaveConfig
			}
			if sender.slaveof != m.SlaveOf {
				old := sender.slaveof
				sender.slaveof = m.SlaveOf
				cs.slaveLeft(old)
				cs.slaveJoined(m.SlaveOf)
				cs.todo |= todoSaveConfig
			}
		}
		// Slots (cluster.c:2438-2504).
		senderMaster := m.Sender
		if !sender.master {
			senderMaster = sender.slaveof
		}
		dirty := false
		if senderMaster >= 0 {
			dirty = *cs.nodes[senderMaster].bits != *m.Slots
		}
		if sender.master && dirty {
			n.updateSlotsConfigWith(m.Sender, m.ConfigEpoch, m.Slots)
		}
		if dirty {
			for s := 0; s < ClusterSlots; s++ {
				if !m.Slots.has(s) {
					continue
				}
				o := cs.slots[s]
				if int(o) == m.Sender || o < 0 {
					continue
				}
				if cs.nodes[o].configEpoch > m.ConfigEpoch {
					cs.sendBus(n, m.Sender, &BusMsg{Type: BusUpdate, About: int(o), AboutEpoch: cs.nodes[o].configEpoch, AboutSlots: cs.nodes[o].bits})
					break
				}
			}
		}
		if cs.nodes[cs.me].master && sender.master && m.ConfigEpoch == cs.nodes[cs.me].configEpoch {
			n.handleConfigEpochCollision(m.Sender)
		}
		n.processGossip(m)
	case BusFail:
		f := m.About
		if f >= 0 && f < len(cs.nodes) && f != cs.me && !cs.nodes[f].fail {
			cs.nodes[f].fail, cs.nodes[f].pfail, cs.nodes[f].failTime = true, false, now
			cs.todo |= todoUpdateState | todoSaveConfig
			n.logfAttrs(EventClusterFail, []sim.Attr{sim.Str("node", cs.nodes[f].name), sim.Str("from", sender.name)}, "%s marked FAIL (FAIL message from %s)", cs.nodes[f].name, sender.name)
		}
	case BusAuthRequest:
		n.sendFailoverAuthIfNeeded(m)
	case BusAuthAck:
		if sender.master && sender.numSlots > 0 && m.CurrentEpoch >= cs.authEpoch {
			cs.authCount++
			cs.todo |= todoHandleFailover
		}
	case BusMFStart:
		if sender.slaveof != cs.me || !cs.nodes[cs.me].master {
			return
		}
		cs.resetManualFailover(n)
		cs.mfEnd = now + mfTimeout
		cs.mfSlave = m.Sender
		// pauseClients(PAUSE_DURING_FAILOVER, CLIENT_PAUSE_WRITE) for
		// CLUSTER_MF_TIMEOUT x CLUSTER_MF_PAUSE_MULT (cluster.c:2598-2610).
		cs.paused = now + mfTimeout*mfPauseMult
		cs.sendPing(n, m.Sender, BusPing, false)
	case BusUpdate:
		a := m.About
		if a < 0 || a >= len(cs.nodes) || cs.nodes[a].configEpoch >= m.AboutEpoch {
			return
		}
		if !cs.nodes[a].master {
			cs.setNodeAsMaster(a)
		}
		cs.nodes[a].configEpoch = m.AboutEpoch
		n.updateSlotsConfigWith(a, m.AboutEpoch, m.AboutSlots)
	}
}

// setNodeAsMaster is clusterSetNodeAsMaster.
func (cs *clusterState) setNodeAsMaster(i int) {
	nd := &cs.nodes[i]
	if nd.master {
		return
	}
	old := nd.slaveof
	nd.master, nd.slaveof = true, -1
	if old >= 0 {
		cs.slaveLeft(old)
		if i != cs.me {
			nd.migrateTo = true
		}
	}
	cs.todo |= todoSaveConfig
}

// processGossip is clusterProcessGossipSection (C 7.0.15
// cluster.c:1653-1760): failure reports from masters, and pong times of
// nodes this node has no doubt about.
func (n *Node) processGossip(m *BusMsg) {
	cs := n.cl
	sender := &cs.nodes[m.Sender]
	for _, g := range m.Gossip {
		if g.Node < 0 || g.Node >= len(cs.nodes) {
			continue
		}
		nd := &cs.nodes[g.Node]
		if sender.master && g.Node != cs.me {
			if g.PFail || g.Fail {
				cs.addFailureReport(n, g.Node, m.Sender)
				n.markNodeAsFailingIfNeeded(g.Node)
			} else {
				cs.delFailureReport(g.Node, m.Sender)
			}
		}
		if !g.PFail && !g.Fail && nd.pingSent == 0 && cs.failureReports(n, g.Node) == 0 {
			pong := g.PongSec * 1000
			if pong <= n.env.WallMs()+500 && pong > nd.pongReceived {
				nd.pongReceived = pong
			}
		}
	}
}

// addFailureReport is clusterNodeAddFailureReport (cluster.c:1018-1040).
func (cs *clusterState) addFailureReport(n *Node, failing, sender int) {
	nd := &cs.nodes[failing]
	now := n.env.WallMs()
	for i := range nd.reports {
		if nd.reports[i].sender == sender {
			nd.reports[i].time = now
			return
		}
	}
	nd.reports = append(nd.reports, failReport{sender: sender, time: now})
}

func (cs *clusterState) delFailureReport(failing, sender int) {
	nd := &cs.nodes[failing]
	for i := range nd.reports {
		if nd.reports[i].sender == sender {
			nd.reports = append(nd.reports[:i], nd.reports[i+1:]...)
			return
		}
	}
}

// failureReports is clusterNodeFailureReportsCount after
// clusterNodeCleanupFailureReports: reports older than node timeout x
// CLUSTER_FAIL_REPORT_VALIDITY_MULT are dropped (cluster.c:1048-1062).
func (cs *clusterState) failureReports(n *Node, i int) int {
	nd := &cs.nodes[i]
	now := n.env.WallMs()
	max := cs.timeout() * failReportValidityMult
	kept := nd.reports[:0]
	for _, r := range nd.reports {
		if now-r.time <= max {
			kept = append(kept, r)
		}
	}
	nd.reports = kept
	return len(kept)
}

// markNodeAsFailingIfNeeded: a node this node sees as PFAIL becomes FAIL
// when the failure reports of masters (and this node's own view, if it is a
// master) reach size/2+1; the FAIL is broadcast (C 7.0.15
// cluster.c:1505-1531).
func (n *Node) markNodeAsFailingIfNeeded(i int) {
	cs := n.cl
	nd := &cs.nodes[i]
	if !nd.pfail || nd.fail {
		return
	}
	failures := cs.failureReports(n, i)
	if cs.nodes[cs.me].master {
		failures++
	}
	if failures < cs.size/2+1 {
		return
	}
	nd.pfail, nd.fail, nd.failTime = false, true, n.env.WallMs()
	n.logfAttrs(EventClusterFail, []sim.Attr{sim.Str("node", nd.name), sim.Int64("reports", int64(failures))}, "%s marked FAIL (quorum reached: %d of %d masters)", nd.name, failures, cs.size)
	cs.broadcast(n, func() *BusMsg { return &BusMsg{Type: BusFail, About: i} })
	cs.todo |= todoUpdateState
}

// clearNodeFailureIfNeeded: a replica or a master without slots is cleared
// at once when reachable; a master still serving slots after node timeout
// x CLUSTER_FAIL_UNDO_TIME_MULT (C 7.0.15 cluster.c:1537-1568).
func (n *Node) clearNodeFailureIfNeeded(i int) {
	cs := n.cl
	nd := &cs.nodes[i]
	now := n.env.WallMs()
	if !nd.master || nd.numSlots == 0 {
		nd.fail = false
		cs.todo |= todoUpdateState
		n.logfAttrs(EventClusterFail, []sim.Attr{sim.Str("node", nd.name), sim.Str("cleared", "reachable")}, "clear FAIL of %s: reachable again", nd.name)
	}
	if nd.master && nd.numSlots > 0 && now-nd.failTime > cs.timeout()*failUndoTimeMult {
		nd.fail = false
		cs.todo |= todoUpdateState
		n.logfAttrs(EventClusterFail, []sim.Attr{sim.Str("node", nd.name), sim.Str("cleared", "undo")}, "clear FAIL of %s: reachable again and nobody is serving its slots", nd.name)
	}
}

// clusterUpdateState is C 7.0.15 cluster.c:4429-4520: the state is FAIL
// when a slot is unassigned or served by a FAIL master (with
// cluster-require-full-coverage) or when fewer than size/2+1 slot-serving
// masters are reachable (not PFAIL or FAIL); a master waits
// CLUSTER_WRITABLE_DELAY after its first call, and a master that was in the
// minority waits clamp(node timeout, 500, 5000) ms before turning OK.
func (n *Node) clusterUpdateState() {
	cs := n.cl
	now := n.env.WallMs()
	if cs.firstCallTime == 0 {
		cs.firstCallTime = now
	}
	me := &cs.nodes[cs.me]
	if me.master && cs.state == clusterFail && now-cs.firstCallTime < writableDelay {
		return
	}
	newState := clusterOK
	if cs.cfg.RequireFullCoverage {
		// Every slot assigned and its owner not FAIL: from the per-node
		// slot counts recount keeps (the same test as the loop over the
		// 16384 slots, which ran on every cron tick while the state is
		// FAIL).
		if cs.unassigned > 0 {
			newState = clusterFail
		}
		for i := range cs.nodes {
			if cs.nodes[i].numSlots > 0 && cs.nodes[i].fail {
				newState = clusterFail
			}
		}
	}
	cs.size = 0
	reachable := 0
	for i := range cs.nodes {
		nd := &cs.nodes[i]
		if nd.master && nd.numSlots > 0 {
			cs.size++
			if !nd.fail && !nd.pfail {
				reachable++
			}
		}
	}
	if reachable < cs.size/2+1 {
		newState = clusterFail
		cs.amongMinorityTime = now
	}
	if newState != cs.state {
		rejoin := cs.timeout()
		if rejoin > maxRejoinDelay {
			rejoin = maxRejoinDelay
		}
		if rejoin < minRejoinDelay {
			rejoin = minRejoinDelay
		}
		if newState == clusterOK && me.master && now-cs.amongMinorityTime < rejoin {
			return
		}
		cs.state = newState
		s := "ok"
		if newState != clusterOK {
			s = "fail"
		}
		n.logfAttrs(EventClusterState, []sim.Attr{sim.Str("state", s)}, "cluster state changed: %s", s)
		if newState == clusterOK {
			n.clusterRestartLosses()
		}
	}
}

// sendFailoverAuthIfNeeded is clusterSendFailoverAuthIfNeeded (C 7.0.15
// cluster.c:3335-3441): only a master serving slots votes, once per
// epoch, for a replica whose master is FAIL (or a forced manual failover),
// not twice within node timeout x 2 for replicas of the same master, and
// not when one of the claimed slots has a greater configEpoch here.
func (n *Node) sendFailoverAuthIfNeeded(m *BusMsg) {
	cs := n.cl
	me := &cs.nodes[cs.me]
	if !me.master || me.numSlots == 0 {
		return
	}
	if m.CurrentEpoch < cs.currentEpoch || cs.lastVoteEpoch == cs.currentEpoch {
		return
	}
	node := &cs.nodes[m.Sender]
	if node.master || node.slaveof < 0 {
		return
	}
	master := &cs.nodes[node.slaveof]
	if !master.fail && !m.ForceAck {
		return
	}
	now := n.env.WallMs()
	if now-master.votedTime < cs.timeout()*2 {
		return
	}
	for s := 0; s < ClusterSlots; s++ {
		if !m.Slots.has(s) {
			continue
		}
		o := cs.slots[s]
		if o < 0 || cs.nodes[o].configEpoch <= m.ConfigEpoch {
			continue
		}
		return
	}
	cs.lastVoteEpoch = cs.currentEpoch
	master.votedTime = now
	n.clusterSaveConfig()
	n.logfAttrs(EventClusterElection, []sim.Attr{sim.Str("vote", node.name), sim.Int64("epoch", int64(cs.currentEpoch))}, "failover auth granted to %s for epoch %d", node.name, cs.currentEpoch)
	cs.sendBus(n, m.Sender, &BusMsg{Type: BusAuthAck})
}

// slaveRank is clusterGetSlaveRank (C 7.0.15 cluster.c:3450-3465): the
// sibling replicas with a greater replication offset, those that never
// fail over (nofailover) left out.
func (n *Node) slaveRank() int {
	cs := n.cl
	m := cs.nodes[cs.me].slaveof
	rank := 0
	for i := range cs.nodes {
		nd := &cs.nodes[i]
		if i != cs.me && !nd.master && nd.slaveof == m && !nd.noFailover && nd.replOffset > n.offset {
			rank++
		}
	}
	return rank
}

// clusterHandleSlaveFailover is C 7.0.15 cluster.c:3575-3750.
func (n *Node) clusterHandleSlaveFailover() {
	cs := n.cl
	now := n.env.WallMs()
	authAge := now - cs.authTime
	quorum := cs.size/2 + 1
	manual := cs.mfEnd != 0 && cs.mfCanStart
	authTimeout := cs.timeout() * 2
	if authTimeout < 2000 {
		authTimeout = 2000
	}
	authRetry := authTimeout * 2
	me := &cs.nodes[cs.me]
	// cluster-replica-no-failover: no automatic failover (cluster.c:3604-3608).
	if me.master || me.slaveof < 0 || (!cs.nodes[me.slaveof].fail && !manual) || (cs.cfg.ReplicaNoFailover && !manual) || cs.nodes[me.slaveof].numSlots == 0 {
		return
	}
	// data_age, in whole seconds of the unix time as Redis measures it.
	var dataAge int64
	if n.link == linkConnected {
		dataAge = (n.wallSec() - n.lastIO) * 1000
	} else {
		dataAge = (n.wallSec() - n.downSince) * 1000
	}
	if dataAge > cs.timeout() {
		dataAge -= cs.timeout()
	}
	if f := int64(cs.cfg.ReplicaValidityFactor); f != 0 && dataAge > n.cfg.ReplPingReplicaPeriod.Milliseconds()+cs.timeout()*f && !manual {
		return
	}
	if authAge > authRetry {
		cs.authTime = now + 500 + int64(n.env.Rand().Intn(500))
		cs.authCount, cs.authSent = 0, false
		cs.authRank = n.slaveRank()
		cs.authTime += int64(cs.authRank) * 1000
		if cs.mfEnd != 0 {
			cs.authTime, cs.authRank = now, 0
			cs.todo |= todoHandleFailover
		}
		n.logfAttrs(EventClusterElection, []sim.Attr{sim.Int64("delay_ms", cs.authTime-now), sim.Int64("rank", int64(cs.authRank))}, "start of election delayed for %dms (rank #%d, offset %d)", cs.authTime-now, cs.authRank, n.offset)
		// Tell the sibling replicas our offset (CLUSTER_BROADCAST_LOCAL_SLAVES).
		for i := range cs.nodes {
			if i != cs.me && !cs.nodes[i].master && cs.nodes[i].slaveof == me.slaveof {
				cs.sendPing(n, i, BusPong, false)
			}
		}
		return
	}
	if !cs.authSent && cs.mfEnd == 0 {
		if r := n.slaveRank(); r > cs.authRank {
			cs.authTime += int64(r-cs.authRank) * 1000
			cs.authRank = r
		}
	}
	if now < cs.authTime || authAge > authTimeout {
		return
	}
	if !cs.authSent {
		cs.currentEpoch++
		cs.authEpoch = cs.currentEpoch
		n.logfAttrs(EventClusterElection, []sim.Attr{sim.Int64("epoch", int64(cs.currentEpoch))}, "starting a failover election for epoch %d", cs.currentEpoch)
		force := cs.mfEnd != 0
		cs.broadcast(n, func() *BusMsg { return &BusMsg{Type: BusAuthRequest, ForceAck: force} })
		cs.authSent = true
		n.clusterSaveConfig()
		cs.todo |= todoUpdateState
		return
	}
	if cs.authCount >= quorum {
		if me.configEpoch < cs.authEpoch {
			me.configEpoch = cs.authEpoch
		}
		n.failoverReplaceMaster()
	}
}

// failoverReplaceMaster is clusterFailoverReplaceYourMaster (C 7.0.15
// cluster.c:3537-3568): become master, take the old master's slots, pong
// everyone.
func (n *Node) failoverReplaceMaster() {
	cs := n.cl
	me := &cs.nodes[cs.me]
	old := me.slaveof
	if me.master || old < 0 {
		return
	}
	me.master, me.slaveof = true, -1
	cs.slaveLeft(old)
	n.promote("cluster failover")
	for s := range cs.slots {
		if int(cs.slots[s]) == old {
			cs.setSlotOwner(s, cs.me)
		}
	}
	cs.recount()
	n.logfAttrs(EventClusterFailover, []sim.Attr{sim.Str("master", cs.nodes[old].name), sim.Int64("config_epoch", int64(me.configEpoch))}, "took the slots of %s with configEpoch %d", cs.nodes[old].name, me.configEpoch)
	n.clusterUpdateState()
	n.clusterSaveConfig()
	cs.broadcast(n, func() *BusMsg { return &BusMsg{Type: BusPong} })
	cs.resetManualFailover(n)
}

// updateSlotsConfigWith is clusterUpdateSlotsConfigWith (C 7.0.15
// cluster.c:1867-2000): slots claimed with a greater configEpoch move to
// the sender; a master left without slots (or a replica whose master was)
// becomes a replica of the sender, which replaces its data with the new
// master's: what it acknowledged and never replicated is lost.
func (n *Node) updateSlotsConfigWith(sender int, epoch uint64, slots *slotBits) {
	cs := n.cl
	if sender == cs.me {
		return
	}
	cur := cs.myMaster()
	newMaster := -1
	changed := false
	senderSlots, migratedOurs := 0, 0
	var dirty []int
	var keySlots map[int]bool // the slots this node holds keys of, built once
	for s := 0; s < ClusterSlots; s++ {
		if !slots.has(s) {
			continue
		}
		senderSlots++
		o := cs.slots[s]
		if int(o) == sender {
			continue
		}
		// A slot being imported changes only by hand (cluster.c:1905-1910).
		if _, imp := cs.importing[s]; imp {
			continue
		}
		if o < 0 || cs.nodes[o].configEpoch < epoch {
			if int(o) == cs.me {
				// Was this slot mine, and still contains keys? A dirty
				// slot (cluster.c:1915-1921).
				if keySlots == nil {
					keySlots = map[int]bool{}
					for k := range n.db {
						keySlots[KeySlot(k)] = true
					}
				}
				if keySlots[s] {
					dirty = append(dirty, s)
				}
			}
			if int(o) == cur {
				newMaster = sender
				migratedOurs++
			}
			cs.setSlotOwner(s, sender)
			changed = true
		}
	}
	if !changed {
		return
	}
	cs.recount()
	cs.todo |= todoUpdateState | todoSaveConfig
	// With cluster-allow-replica-migration no, only when the sender took
	// all of our master's slots and claims no others (cluster.c:1965-1967).
	if newMaster >= 0 && cs.nodes[cur].numSlots == 0 && (cs.cfg.AllowReplicaMigration || senderSlots == migratedOurs) {
		n.clusterSetMaster(sender)
		return
	}
	// Still serving other slots: delete the keys of the slots lost
	// (delKeysInSlot, cluster.c:1987-1997), each deletion propagated.
	for _, s := range dirty {
		for _, k := range n.keysInSlot(s) {
			n.removeKey(k)
			n.logfAttrs(EventClusterSlot, []sim.Attr{sim.Str("key", k), sim.Int64("slot", int64(s))}, "deleted %q: slot %d now served by %s", k, s, cs.nodes[sender].name)
			n.propagate(Cmd{"DEL", k})
			n.endUnit(sim.NoProc)
		}
	}
}

// clusterSetMaster makes this node a replica of node i (clusterSetMaster,
// C 7.0.15 cluster.c:4602-4618). A master turned replica forgets its open
// slots (clusterCloseAllSlots, :4609 and :4410-4415): a migration source
// that comes back as a replica, and is elected again later, serves the
// slot's keys itself instead of answering -ASK.
func (n *Node) clusterSetMaster(i int) {
	cs := n.cl
	me := &cs.nodes[cs.me]
	if i == cs.me {
		return
	}
	wasMaster, old := me.master, me.slaveof
	me.master, me.slaveof = false, i
	if wasMaster {
		me.migrateTo = false
		cs.closeAllSlots()
	} else {
		cs.slaveLeft(old)
	}
	cs.slaveJoined(i)
	n.logfAttrs(EventClusterFailover, []sim.Attr{sim.Str("new_master", cs.nodes[i].name), sim.Str("was_master", strconv.FormatBool(wasMaster))}, "configuration change detected: now a replica of %s", cs.nodes[i].name)
	n.setMaster(cs.nodes[i].name, ListenPort)
	cs.resetManualFailover(n)
}

// closeAllSlots is clusterCloseAllSlots (C 7.0.15 cluster.c:4408-4415):
// no slot migrating or importing; saved with the next nodes.conf.
func (cs *clusterState) closeAllSlots() {
	if len(cs.migrating) > 0 || len(cs.importing) > 0 {
		cs.todo |= todoSaveConfig
	}
	cs.migrating, cs.importing = nil, nil
}

// handleConfigEpochCollision is clusterHandleConfigEpochCollision (C 7.0.15
// cluster.c:1389-1410): of two masters with the same configEpoch, the one
// with the smaller node id takes a new one.
func (n *Node) handleConfigEpochCollision(sender int) {
	cs := n.cl
	if cs.nodes[sender].nodeID <= cs.nodes[cs.me].nodeID {
		return
	}
	cs.currentEpoch++
	cs.nodes[cs.me].configEpoch = cs.currentEpoch
	n.clusterSaveConfig()
	// Redis logs it (verbose, cluster.c:1399-1405).
	n.logfAttrs(EventClusterFailover, []sim.Attr{sim.Str("collision", cs.nodes[sender].name), sim.Int64("config_epoch", int64(cs.currentEpoch))}, "configEpoch collision with node %s: configEpoch set to %d", cs.nodes[sender].name, cs.currentEpoch)
}

// resetManualFailover is C 7.0.15 cluster.c:3892-3903.
func (cs *clusterState) resetManualFailover(n *Node) {
	if cs.paused != 0 {
		n.unpauseWrites()
	}
	cs.mfEnd, cs.mfCanStart, cs.mfSlave, cs.mfMasterOffset = 0, false, -1, -1
}

// manualFailoverCheckTimeout aborts a manual failover after
// CLUSTER_MF_TIMEOUT (cluster.c:3905-3912).
func (cs *clusterState) manualFailoverCheckTimeout(n *Node) {
	if cs.mfEnd != 0 && cs.mfEnd < n.env.WallMs() {
		n.logf(EventClusterFailover, "manual failover timed out")
		cs.resetManualFailover(n)
	}
}

// clusterHandleManualFailover: the replica may start once its offset
// reached the one the paused master sent (cluster.c:3914-3935).
func (n *Node) clusterHandleManualFailover() {
	cs := n.cl
	if cs.mfEnd == 0 || cs.mfCanStart || cs.mfMasterOffset == -1 {
		return
	}
	if cs.mfMasterOffset == n.offset {
		cs.mfCanStart = true
		cs.todo |= todoHandleFailover
	}
}

// clusterConnEnded handles the end of a client connection of a cluster
// node: a MIGRATE waiting on it fails, the connection's ASKING and
// READONLY flags go with it.
func (n *Node) clusterConnEnded(peer sim.ProcID) {
	cs := n.cl
	n.migrateConnEnded(peer)
	delete(cs.asking, peer)
	delete(cs.readonly, peer)
}

// clusterBusEnded handles the end of the bus connection with a cluster
// node: the bus link is freed (freeClusterLink on a read error or EOF) and
// the next cron reconnects (clusterNodeCronHandleReconnect, C 7.0.15
// cluster.c:3944-3975). A reconnect to a killed process fails
// asynchronously on loopback (the handler frees the link and sets no
// ping_sent), so failure detection starts with the next regular ping,
// as TestClusterFailoverTimelineConformance measured on redis-server 7.0.15.
func (n *Node) clusterBusEnded(peer sim.ProcID) {
	cs := n.cl
	for i := range cs.nodes {
		nd := &cs.nodes[i]
		if i == cs.me || nd.id != peer {
			continue
		}
		nd.relink = true
	}
}
