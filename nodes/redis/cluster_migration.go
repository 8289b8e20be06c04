package redis

import "github.com/locksim/locksim/sim"

// Replica migration (C 7.0.15 cluster.c:3750-3856, clusterHandleSlaveMigration,
// and its caller in clusterCron, :4111-4139 and :4226-4234): a replica of a
// master with the most working replicas moves to a master left without a
// working replica (an orphaned master), so that the next failure of that
// master still has a replica to promote.
//
//   - A master is a migration target only while it has the MIGRATE_TO flag
//     (cnode.migrateTo): set when a replica attaches to it
//     (clusterNodeAddSlave, :1122-1133) or when a replica of a master that
//     had replicas becomes a master (clusterSetNodeAsMaster, :1840-1846),
//     or when a master gets its first slot while some master has replicas
//     (clusterAddSlot, :4335-4346); cleared when its last replica leaves it
//     (clusterNodeRemoveSlave, :1103-1119) or when it turns replica
//     (:2414-2418, clusterSetMaster :4606-4609). A failed replica stays in
//     its master's list: it still counts for the flag and as a candidate.
//   - clusterCron, on a replica: orphaned masters are the masters not FAIL,
//     with slots, MIGRATE_TO and no replica that is not FAIL
//     (clusterCountNonFailingSlaves, :1136-1142); max_slaves is the most
//     non-FAIL replicas of a non-FAIL master; the replica tries to migrate
//     when there is an orphaned master, max_slaves >= 2, its own master has
//     max_slaves and cluster-allow-replica-migration is yes.
//   - clusterHandleSlaveMigration: not unless the cluster state is ok;
//     not unless its master keeps more than cluster-migration-barrier
//     replicas that are neither FAIL nor PFAIL (counting itself); the
//     candidate is the replica with the smallest node ID among the replicas
//     (FAIL ones included) of the masters with max_slaves non-FAIL
//     replicas; the target the first orphaned master with slots; each
//     orphaned master's orphaned_time starts when a replica's check first
//     sees it orphaned and is reset when it is not; the candidate migrates
//     (clusterSetMaster: CLUSTER REPLICATE's effect, a full resync from the
//     target) once the target has been orphaned for more than
//     CLUSTER_SLAVE_MIGRATION_DELAY.
//
// Simplification: Redis takes the first orphaned master in its nodes dict's
// order (a hash table's); the model takes the first in member order.

// slaveMigrationDelay is CLUSTER_SLAVE_MIGRATION_DELAY, 5000 ms (C 7.0.15
// cluster.h:20).
const slaveMigrationDelay = 5000

// countNonFailingSlaves is clusterCountNonFailingSlaves: the replicas of m
// (in this node's view) not flagged FAIL.
func (cs *clusterState) countNonFailingSlaves(m int) int {
	ok := 0
	for i := range cs.nodes {
		if nd := &cs.nodes[i]; !nd.master && nd.slaveof == m && !nd.fail {
			ok++
		}
	}
	return ok
}

// numSlaves is m's numslaves: every replica that names m as its master.
func (cs *clusterState) numSlaves(m int) int {
	c := 0
	for i := range cs.nodes {
		if nd := &cs.nodes[i]; !nd.master && nd.slaveof == m {
			c++
		}
	}
	return c
}

// mastersHaveSlaves is clusterMastersHaveSlaves (C 7.0.15 cluster.c:4311-4323).
func (cs *clusterState) mastersHaveSlaves() bool {
	for i := range cs.nodes {
		if nd := &cs.nodes[i]; nd.master && cs.numSlaves(i) > 0 {
			return true
		}
	}
	return false
}

// slaveLeft runs after a replica stopped naming old as its master
// (clusterNodeRemoveSlave): the last one gone clears old's MIGRATE_TO.
func (cs *clusterState) slaveLeft(old int) {
	if old >= 0 && old < len(cs.nodes) && cs.numSlaves(old) == 0 {
		cs.nodes[old].migrateTo = false
	}
}

// slaveJoined runs after a replica named m as its master
// (clusterNodeAddSlave): m gets MIGRATE_TO.
func (cs *clusterState) slaveJoined(m int) {
	if m >= 0 && m < len(cs.nodes) {
		cs.nodes[m].migrateTo = true
	}
}

// initMigrateTo sets MIGRATE_TO on the masters that have a replica, as the
// CLUSTER REPLICATE of redis-cli --cluster create (or the slave lines of
// nodes.conf at a restart, clusterLoadConfig) leave it. Simplification: a
// master without replicas is not flagged, where Redis may flag it when it
// learns the master's first slot after some replica's master
// (clusterAddSlot, depending on the order of the gossip).
func (cs *clusterState) initMigrateTo() {
	for i := range cs.nodes {
		nd := &cs.nodes[i]
		nd.migrateTo = nd.master && cs.numSlaves(i) > 0
	}
}

// orphanScan is clusterCron's part of the node loop for a replica
// (cluster.c:4111-4139): the number of orphaned masters, the most
// non-FAIL replicas of a master, and this node's master's.
func (cs *clusterState) orphanScan() (orphaned, maxSlaves, thisSlaves int) {
	me := &cs.nodes[cs.me]
	if me.master {
		return 0, 0, 0
	}
	// The non-FAIL replicas of every master in one pass (this runs on
	// every cron tick of every replica).
	if cap(cs.okSlaves) < len(cs.nodes) {
		cs.okSlaves = make([]int, len(cs.nodes))
	}
	cnt := cs.okSlaves[:len(cs.nodes)]
	for i := range cnt {
		cnt[i] = 0
	}
	for i := range cs.nodes {
		if nd := &cs.nodes[i]; !nd.master && nd.slaveof >= 0 && !nd.fail {
			cnt[nd.slaveof]++
		}
	}
	for i := range cs.nodes {
		nd := &cs.nodes[i]
		if i == cs.me || !nd.master || nd.fail {
			continue
		}
		ok := cnt[i]
		if ok == 0 && nd.numSlots > 0 && nd.migrateTo {
			orphaned++
		}
		if ok > maxSlaves {
			maxSlaves = ok
		}
		if me.slaveof == i {
			thisSlaves = ok
		}
	}
	return orphaned, maxSlaves, thisSlaves
}

// clusterHandleSlaveMigration is C 7.0.15 cluster.c:3773-3855.
func (n *Node) clusterHandleSlaveMigration(maxSlaves int) {
	cs := n.cl
	if cs.state != clusterOK {
		return
	}
	me := &cs.nodes[cs.me]
	mine := me.slaveof
	if mine < 0 {
		return
	}
	ok := 0
	for i := range cs.nodes {
		if nd := &cs.nodes[i]; !nd.master && nd.slaveof == mine && !nd.fail && !nd.pfail {
			ok++
		}
	}
	if ok <= cs.cfg.MigrationBarrier {
		return
	}
	now := n.env.WallMs()
	target, candidate := -1, cs.me
	for i := range cs.nodes {
		nd := &cs.nodes[i]
		orphaned := nd.master && !nd.fail && nd.migrateTo
		okSlaves := 0
		if nd.master {
			okSlaves = cs.countNonFailingSlaves(i)
		}
		if okSlaves > 0 {
			orphaned = false
		}
		if orphaned {
			if target < 0 && nd.numSlots > 0 {
				target = i
			}
			if nd.orphanedTime == 0 {
				nd.orphanedTime = now
			}
		} else {
			nd.orphanedTime = 0
		}
		if nd.master && okSlaves == maxSlaves {
			for j := range cs.nodes {
				if r := &cs.nodes[j]; !r.master && r.slaveof == i && r.nodeID < cs.nodes[candidate].nodeID {
					candidate = j
				}
			}
		}
	}
	if target >= 0 && candidate == cs.me && now-cs.nodes[target].orphanedTime > slaveMigrationDelay {
		t := &cs.nodes[target]
		n.logfAttrs(EventClusterFailover, []sim.Attr{sim.Str("orphaned_master", t.name), sim.Str("old_master", cs.nodes[mine].name)},
			"migrating to orphaned master %s (orphaned for %dms)", t.name, now-t.orphanedTime)
		n.clusterSetMaster(target)
		cs.todo |= todoSaveConfig | todoUpdateState
	}
}
