package redis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/locksim/locksim/sim"
)

// Keys a server loses without a command asking for it are history records
// (sim.KeyLoss) that let the checker name the cause of an overlap. Expiry
// and eviction are recorded where they happen (db.go, memory.go); this file
// records the two losses that are only visible by comparing the keyspace
// before and after: a restart that recovered less than the crashed
// instance held, and a full resync of a demoted master that replaced its
// keyspace with the new master's. Both only read the model; neither
// changes what it does.

// witnessedKey is a key a node held, with its deadline on the node's wall
// clock (0: none).
type witnessedKey struct {
	key string
	exp int64
}

// liveKeys returns the keys the node holds that have not expired on its
// wall clock, in key order (map order must not reach the history).
func (n *Node) liveKeys() []witnessedKey {
	now := n.env.WallMs()
	out := make([]witnessedKey, 0, len(n.db))
	for k, e := range n.db {
		var exp int64
		if e.hasExp {
			if e.exp <= now {
				continue
			}
			exp = e.exp
		}
		out = append(out, witnessedKey{key: k, exp: exp})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// WitnessCrash is sim.CrashWitness: the live keys at the crash, for the
// next incarnation's restart losses.
func (n *Node) WitnessCrash() any {
	if n.env == nil {
		return nil
	}
	return n.liveKeys()
}

// recordRestartLosses records, on a master that restarted after a crash,
// each key the crashed instance held (and that has not expired since)
// which the restart did not recover. A replica's restart is not a loss of
// the lock: it resynchronises from its master.
func (n *Node) recordRestartLosses(env *sim.Env) {
	memo, mode, ok := env.WitnessedCrash()
	if !ok || n.isReplica() {
		return
	}
	before, _ := memo.([]witnessedKey)
	var what string
	var detail string
	switch {
	case n.cfg.AppendOnly:
		what = fmt.Sprintf("appendfsync %s: the AOF it loaded did not have it", n.cfg.AppendFsync)
	case n.loadedFrom == "rdb":
		what = "its last RDB save did not have it"
	default:
		what = "appendonly no and no RDB file on disk"
	}
	detail = fmt.Sprintf("%s crash; %s", mode, what)
	if n.cl != nil {
		// A cluster node learns from the bus whether it still serves its
		// slots (a replica was promoted meanwhile: it becomes a replica of
		// the winner). The losses are its own only if it does: they are
		// recorded when its cluster state first turns ok
		// (clusterRestartLosses), for the keys of the slots it serves then.
		n.restartLoss = &pendingLoss{keys: before, detail: detail}
		return
	}
	n.recordLosses(before, sim.LossRestart, detail)
}

// pendingLoss is a cluster node's restart losses, waiting for the node to
// learn whether it still serves its slots.
type pendingLoss struct {
	keys   []witnessedKey
	detail string
}

// clusterRestartLosses records a restarted cluster node's restart losses
// once its state turned ok: the keys of the slots it serves as a master.
// A node that came back as a replica lost no lock: it resynchronises.
func (n *Node) clusterRestartLosses() {
	p := n.restartLoss
	if p == nil {
		return
	}
	n.restartLoss = nil
	cs := n.cl
	if !cs.nodes[cs.me].master {
		return
	}
	var mine []witnessedKey
	for _, w := range p.keys {
		if int(cs.slots[KeySlot(w.key)]) == cs.me {
			mine = append(mine, w)
		}
	}
	n.recordLosses(mine, sim.LossRestart, p.detail)
}

// recordLosses records a loss of each key of before (still live now) that
// the node no longer holds.
func (n *Node) recordLosses(before []witnessedKey, cause sim.KeyLossCause, detail string) {
	if len(before) == 0 {
		return
	}
	now := n.env.WallMs()
	for _, w := range before {
		if w.exp != 0 && w.exp <= now {
			continue // it would have expired by now anyway
		}
		if _, ok := n.db[w.key]; !ok {
			n.env.KeyLost(w.key, cause, detail)
		}
	}
}

// clientWrite reports whether the command being executed is a client's on
// this master (not the replication stream, the AOF or the node itself):
// the only writes whose author the history can name.
func (n *Node) clientWrite() bool {
	return n.cur.client >= 0 && !n.cur.fromMaster && !n.loading && !n.isReplica()
}

// noteSetter records which client stored a string key, and records a loss
// of the previous value when another client overwrote it (GETSET, a SET
// without NX): the overwrite took the key from the client that stored it.
func (n *Node) noteSetter(key string, e *entry) {
	if !n.clientWrite() {
		e.setBy = 0
		return
	}
	by := int32(n.cur.client) + 1
	if e.setBy != 0 && e.setBy != by {
		n.env.KeyLostBy(key, sim.LossOverwritten, "write from "+n.env.NameOf(n.cur.client), sim.ProcID(e.setBy-1))
		n.noteAct(key, e)
	}
	e.setBy = by
}

// noteRemoval records a client's removal of a string key another client
// stored (a release by DEL without checking the value, a GET then DEL that
// raced with an expiry) as the other client's loss, with the command and
// its client as the detail.
func (n *Node) noteRemoval(key string, e *entry, cmd string) {
	if !n.clientWrite() || e.setBy == 0 || e.setBy == int32(n.cur.client)+1 {
		return
	}
	n.env.KeyLostBy(key, sim.LossRemovedByClient, cmd+" from "+n.env.NameOf(n.cur.client), sim.ProcID(e.setBy-1))
	n.noteAct(key, e)
}

// noteAct records a client's command (the one running, n.cur.name) on a
// key another client stored (sim.KeyAct): an extension, an overwrite, a
// removal, a write to its hash. The entry's setter is the client whose
// command stored the string (noteSetter) or created the hash
// (noteHashAct).
func (n *Node) noteAct(key string, e *entry) {
	if !n.clientWrite() || e == nil || e.setBy == 0 || e.setBy == int32(n.cur.client)+1 {
		return
	}
	cmd := strings.ToUpper(n.cur.name)
	if n.cur.inScript && !strings.EqualFold(n.cur.name, "wait") {
		cmd = "a script's " + cmd
	}
	n.env.KeyActed(key, cmd, n.cur.client, sim.ProcID(e.setBy-1))
}

// noteHashAct records who created a hash (a reentrant lock's), and a
// write of another client to it (noteAct).
func (n *Node) noteHashAct(key string, e *entry, created bool) {
	if created {
		e.setBy = 0
		if n.clientWrite() {
			e.setBy = int32(n.cur.client) + 1
		}
		return
	}
	n.noteAct(key, e)
}
