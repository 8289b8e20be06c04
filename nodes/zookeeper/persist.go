package zookeeper

import (
	"sort"
	"time"

	"github.com/locksim/locksim/sim"
)

// DBFile is the file on the server's disk that holds its data tree and its
// sessions: ZooKeeper's snapshot and transaction log in one record.
const DBFile = "zkdb"

// dbRecord is the durable state after the last transaction. ZooKeeper
// logs every transaction and fsyncs the log before it applies the
// transaction and answers (SyncRequestProcessor ahead of
// FinalRequestProcessor; zookeeper.forceSync yes by default,
// zookeeperAdmin.md), so the record is rewritten durably at every
// transaction and a power loss loses nothing a client was told.
type dbRecord struct {
	zxid     int64
	nodes    []dbNode
	sessions []dbSession
}

type dbNode struct {
	path     string
	owner    int64
	czxid    int64
	cversion int32
	tomb     bool
}

type dbSession struct {
	id         int64
	timeout    time.Duration
	ephemerals []string
}

// persist rewrites the durable record (called after every transaction).
func (s *Server) persist(env *sim.Env) {
	rec := dbRecord{zxid: s.zxid, nodes: make([]dbNode, 0, len(s.tree.nodes))}
	for _, p := range s.tree.paths() {
		n := s.tree.nodes[p]
		rec.nodes = append(rec.nodes, dbNode{path: n.path, owner: n.owner, czxid: n.czxid, cversion: n.cversion, tomb: n.tomb})
	}
	for _, id := range s.sessionIDs() {
		sess := s.sessions[id]
		rec.sessions = append(rec.sessions, dbSession{id: id, timeout: sess.timeout, ephemerals: append([]string(nil), sess.ephemerals...)})
	}
	env.Disk().File(DBFile).Rewrite(rec)
}

// recover loads the tree and the sessions a previous incarnation left, as
// ZooKeeperServer.loadData does from the snapshot and the transaction log
// (3.8.0). Every recovered session is tracked anew from now: the session
// tracker is built with the loaded sessions and their timeouts and touches
// each (SessionTrackerImpl.java:114-118 at release-3.8.0, trackSession), so
// a session lives a timeout (rounded up to a tick) after the restart,
// whatever it had left before the crash, and its client may reconnect to
// it. Simplification: a lock-delay tombstone (not ZooKeeper's) is held for
// a whole LockDelay again from the restart.
func (s *Server) recover(env *sim.Env) {
	recs := env.Disk().File(DBFile).Records()
	if len(recs) == 0 {
		return
	}
	rec := recs[len(recs)-1].(dbRecord)
	for _, n := range rec.nodes {
		if n.path == "/" {
			s.tree.nodes["/"].cversion = n.cversion
			continue
		}
		s.tree.add(&znode{path: n.path, owner: n.owner, czxid: n.czxid, tomb: n.tomb})
		s.tree.nodes[n.path].cversion = n.cversion
	}
	// add bumped the parents' cversions: restore them.
	for _, n := range rec.nodes {
		s.tree.nodes[n.path].cversion = n.cversion
	}
	for _, d := range rec.sessions {
		sess := &session{id: d.id, timeout: d.timeout, ephemerals: append([]string(nil), d.ephemerals...), proc: sim.NoProc}
		s.sessions[d.id] = sess
		s.touch(env, sess, sim.NoProc)
	}
	at := env.Mono() + int64(s.cfg.LockDelay)
	for _, n := range rec.nodes {
		if n.tomb {
			s.tombs = append(s.tombs, tomb{path: n.path, at: at})
		}
	}
	s.arm(env)
}

// paths returns every path of the tree, parents before children.
func (t *tree) paths() []string {
	out := make([]string, 0, len(t.nodes))
	for p := range t.nodes {
		out = append(out, p)
	}
	sort.Strings(out) // "/a" sorts before "/a/b"
	return out
}
