package zookeeper

import (
	"sort"
	"strconv"
	"time"

	"github.com/locksim/locksim/sim"
)

// Trace event kinds the server logs.
const (
	// KindSessionOpen: a session was created ("s1 timeout 6s requested 6s").
	KindSessionOpen sim.Kind = "session-open"
	// KindSessionExpired: the server expired a session it had not heard from.
	KindSessionExpired sim.Kind = "session-expired"
	// KindSessionClosed: a client closed its session (OpClose).
	KindSessionClosed sim.Kind = "session-closed"
	// KindZnodeCreated: a znode was created ("/lock/n-0000000000 zxid 3
	// ephemeral s1").
	KindZnodeCreated sim.Kind = "znode-created"
	// KindZnodeDeleted: a znode was deleted; the text says why (deleted,
	// closed, expired, lock-delay over).
	KindZnodeDeleted sim.Kind = "znode-deleted"
	// KindWatchFired: a watch notification was sent ("/lock/n-0000000000 to
	// s2").
	KindWatchFired sim.Kind = "watch-fired"
	// KindLockDelay: an expired session's ephemeral node became a lock-delay
	// tombstone.
	KindLockDelay sim.Kind = "lock-delay"
)

// EpochFile is the file on the server's disk that holds its epoch (see
// Server).
const EpochFile = "epoch"

// session is the server's record of a live session.
type session struct {
	id      int64
	timeout time.Duration
	// expiresAt is the expiry bucket on the server's monotonic clock.
	expiresAt int64
	// proc is the process that last spoke for the session (its connection):
	// SessionExpired goes there.
	proc sim.ProcID
	// ephemerals are the session's ephemeral nodes, in creation order.
	ephemerals []string
	// sent counts the messages sent to the session (Reply.Seq).
	sent uint64
}

// watcher is a registered one-shot exists watch.
type watcher struct {
	session int64
	proc    sim.ProcID
}

// tomb is a lock-delay tombstone due for removal at a monotonic deadline.
type tomb struct {
	path string
	at   int64
}

// expiryTick is the tag of the server's expiry timer.
type expiryTick struct{}

func (expiryTick) AppendTrace(b []byte) []byte { return append(b, "zk-expiry-check"...) }

// Server is the ZooKeeper service, one logical linearizable process (see
// the package doc). Build it with New.
//
// Session expiry follows SessionTrackerImpl (3.9.5): every request touches
// its session, which then expires at roundToNextInterval(now + timeout),
// the next multiple of TickTime after now + timeout on the server's
// monotonic clock (ExpiryQueue.java:53-55 and 84-87; Time.currentElapsedTime
// is System.nanoTime, common/Time.java:33-35); the tracker wakes at each
// bucket boundary and expires the whole bucket (SessionTrackerImpl.java:39-44
// and 158-176). A session therefore lives between timeout and
// timeout+TickTime after the last request the server heard. The model sets
// one timer at the earliest bucket (or tombstone deadline) rather than
// waking every tick; the expiry instants are the same.
type Server struct {
	cfg   Config
	epoch int64
	zxid  int64
	tree  tree

	sessions    map[int64]*session
	nextSession int64
	watches     map[string][]watcher
	tombs       []tomb // in deadline order (LockDelay is constant)

	timer    sim.TimerID
	timerAt  int64
	timerSet bool
}

// New returns a ZooKeeper service process. It panics if cfg is invalid
// (callers validate configurations first; see Config.Validate).
func New(cfg Config) sim.Process {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	return &Server{cfg: cfg}
}

// Zxid returns the last zxid the service assigned (for tests and
// inspection).
func (s *Server) Zxid() int64 { return s.zxid }

// Init starts the service with an empty tree and no sessions. It reads and
// bumps the epoch on disk so that zxids and session ids stay increasing
// across a restart: the first start has epoch 0 (zxids 1, 2, 3, ...), the
// next start epoch 1 (zxids 1<<32+1, ...), as a ZAB leader election starts
// a new epoch in the zxid's high 32 bits.
func (s *Server) Init(env *sim.Env) {
	f := env.Disk().File(EpochFile)
	if recs := f.Records(); len(recs) > 0 {
		s.epoch = recs[len(recs)-1].(int64) + 1
	}
	f.Replace([]any{s.epoch})
	s.zxid = s.epoch << 32
	s.nextSession = s.epoch<<32 + 1
	s.tree = newTree()
	s.sessions = map[int64]*session{}
	s.watches = map[string][]watcher{}
	s.recover(env)
}

// Receive serves one request; a transaction it made is on disk before
// the step ends (persist).
func (s *Server) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	z := s.zxid
	s.receive(env, from, msg)
	if s.zxid != z {
		s.persist(env)
	}
}

func (s *Server) receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	req, ok := msg.(Request)
	if !ok {
		return
	}
	if req.Op == OpConnect {
		s.connect(env, from, req)
		return
	}
	sess := s.sessions[req.Session]
	if sess == nil {
		// An expired (or unknown) session: ZooKeeper answers its reconnect
		// with timeout 0, which the client reports as Expired
		// (ZooKeeperServer.java:1137-1157 finishSessionInit with valid=false;
		// ClientCnxn.java:1413-1423).
		env.Send(from, Reply{ID: req.ID, Session: req.Session, Op: req.Op, Err: ErrSessionExpired, Zxid: s.zxid})
		return
	}
	// Any request renews the session (ZooKeeperServer.java:753-763 touch).
	s.touch(env, sess, from)
	r := Reply{ID: req.ID, Session: sess.id, Op: req.Op}
	switch req.Op {
	case OpPing:
	case OpCreate:
		s.create(env, sess, req, &r)
	case OpDelete:
		s.delete(env, req.Path, &r)
	case OpGetChildren:
		if n := s.tree.get(req.Path); n == nil {
			r.Err = ErrNoNode
		} else {
			r.Exists = true
			r.Children = append([]string(nil), n.children...)
		}
	case OpExists:
		if n := s.tree.get(req.Path); n != nil {
			r.Exists = true
			if req.Watch {
				s.addWatch(req.Path, sess.id, from)
			}
		}
		// Simplification: an exists watch on a missing node is not set
		// (ZooKeeper would set one that fires on creation); the lock recipes
		// only watch for deletions.
	case OpClose:
		s.close(env, sess)
	default:
		r.Err = ErrUnimplemented
	}
	r.Zxid = s.zxid
	s.reply(env, from, sess, r)
}

// Fire runs the expiry check.
func (s *Server) Fire(env *sim.Env, tag any) {
	if _, ok := tag.(expiryTick); !ok {
		return
	}
	z := s.zxid
	defer func() {
		if s.zxid != z {
			s.persist(env)
		}
	}()
	s.timerSet = false
	now := env.Mono()
	for _, id := range s.sessionIDs() {
		if sess := s.sessions[id]; sess.expiresAt <= now {
			s.expire(env, sess)
		}
	}
	for len(s.tombs) > 0 && s.tombs[0].at <= now {
		t := s.tombs[0]
		s.tombs = s.tombs[1:]
		if n := s.tree.get(t.path); n != nil && n.tomb {
			s.zxid++
			s.removeNode(env, n, "lock-delay over")
		}
	}
	s.arm(env)
}

// connect opens a session, or revalidates one on reconnect.
func (s *Server) connect(env *sim.Env, from sim.ProcID, req Request) {
	if req.Session != 0 {
		sess := s.sessions[req.Session]
		if sess == nil {
			env.Send(from, Reply{ID: req.ID, Session: req.Session, Op: OpConnect, Err: ErrSessionExpired, Zxid: s.zxid})
			return
		}
		s.touch(env, sess, from)
		s.reply(env, from, sess, Reply{ID: req.ID, Session: sess.id, Op: OpConnect, Timeout: sess.timeout, Zxid: s.zxid})
		s.setWatches(env, from, sess, req.Watches)
		return
	}
	// createSession is a transaction of its own in ZooKeeper, with a zxid.
	s.zxid++
	sess := &session{id: s.nextSession, timeout: s.cfg.Negotiate(req.Timeout)}
	s.nextSession++
	s.sessions[sess.id] = sess
	s.touch(env, sess, from)
	env.LogfAttrs(KindSessionOpen, []sim.Attr{sim.Int64("session", sess.id), sim.Dur("timeout", sess.timeout), sim.Dur("requested", req.Timeout)},
		"s%d timeout %v requested %v", sess.id, sess.timeout, req.Timeout)
	s.reply(env, from, sess, Reply{ID: req.ID, Session: sess.id, Op: OpConnect, Timeout: sess.timeout, Zxid: s.zxid})
	s.arm(env)
}

// touch renews a session: it now expires in the bucket after now+timeout
// (ExpiryQueue.java:84-87 update, roundToNextInterval at lines 53-55).
func (s *Server) touch(env *sim.Env, sess *session, from sim.ProcID) {
	tick := int64(s.cfg.TickTime)
	t := env.Mono() + int64(sess.timeout)
	sess.expiresAt = (t/tick + 1) * tick
	sess.proc = from
}

// reply sends a message of the session's stream, numbered.
func (s *Server) reply(env *sim.Env, to sim.ProcID, sess *session, r Reply) {
	sess.sent++
	r.Seq = sess.sent
	env.Send(to, r)
}

func (s *Server) create(env *sim.Env, sess *session, req Request, r *Reply) {
	path := req.Path
	if len(path) < 2 || path[0] != '/' {
		r.Err = ErrBadArguments
		return
	}
	parent := parentOf(path)
	if validatePath(parent) != nil {
		r.Err = ErrBadArguments
		return
	}
	// Simplification: missing ancestors are created, persistent, in the same
	// transaction (as Curator's creatingParentsIfNeeded); ZooKeeper itself
	// answers NONODE. The deepest existing ancestor must not be ephemeral
	// (PrepRequestProcessor.java:680-683).
	anc := lineage(parent)
	for i := len(anc) - 1; i >= 0; i-- {
		if n := s.tree.get(anc[i]); n != nil {
			if n.owner != 0 {
				r.Err = ErrNoChildrenForEphemerals
				return
			}
			break
		}
	}
	if req.Sequential && s.tree.get(parent) != nil {
		path = s.tree.sequential(path)
	} else if req.Sequential {
		path += "0000000000" // a fresh parent's cversion is 0
	}
	if validatePath(path) != nil {
		r.Err = ErrBadArguments
		return
	}
	if s.tree.get(path) != nil {
		r.Err, r.Path = ErrNodeExists, path
		return
	}
	s.zxid++
	for _, a := range anc {
		if s.tree.get(a) == nil {
			s.tree.add(&znode{path: a, czxid: s.zxid})
			env.LogfAttrs(KindZnodeCreated, []sim.Attr{sim.Str("path", a), sim.Int64("zxid", s.zxid), sim.Int64("parent", 1)}, "%s zxid %d (parent)", a, s.zxid)
		}
	}
	n := &znode{path: path, czxid: s.zxid}
	if req.Ephemeral {
		n.owner = sess.id
		sess.ephemerals = append(sess.ephemerals, path)
	}
	s.tree.add(n)
	if n.owner != 0 {
		env.LogfAttrs(KindZnodeCreated, []sim.Attr{sim.Str("path", path), sim.Int64("zxid", n.czxid), sim.Int64("session", n.owner)}, "%s zxid %d ephemeral s%d", path, n.czxid, n.owner)
	} else {
		env.LogfAttrs(KindZnodeCreated, []sim.Attr{sim.Str("path", path), sim.Int64("zxid", n.czxid)}, "%s zxid %d", path, n.czxid)
	}
	r.Path = path
}

func (s *Server) delete(env *sim.Env, path string, r *Reply) {
	if path == "/" || validatePath(path) != nil {
		r.Err = ErrBadArguments
		return
	}
	n := s.tree.get(path)
	switch {
	case n == nil:
		r.Err = ErrNoNode
	case n.tomb:
		r.Err = ErrLockDelay
	case len(n.children) > 0:
		r.Err = ErrNotEmpty
	default:
		s.zxid++
		s.removeNode(env, n, "deleted")
	}
}

// close ends a session at its client's request: a transaction that deletes
// its ephemeral nodes at once (a clean release: no lock-delay).
func (s *Server) close(env *sim.Env, sess *session) {
	s.zxid++
	delete(s.sessions, sess.id)
	env.LogfAttrs(KindSessionClosed, []sim.Attr{sim.Int64("session", sess.id)}, "s%d", sess.id)
	for _, p := range sortedCopy(sess.ephemerals) {
		if n := s.tree.get(p); n != nil {
			s.removeNode(env, n, "closed s"+strconv.FormatInt(sess.id, 10))
		}
	}
	s.arm(env)
}

// expire ends a session the server has not heard from: one closeSession
// transaction deletes its ephemeral nodes (DataTree.java:1121-1135
// killSession), or turns them into lock-delay tombstones. The client is
// told with SessionExpired: the server closes the connection and the client
// reconnects and learns that its session expired (a simplification of that
// exchange into one message).
func (s *Server) expire(env *sim.Env, sess *session) {
	s.zxid++
	delete(s.sessions, sess.id)
	env.LogfAttrs(KindSessionExpired, []sim.Attr{sim.Int64("session", sess.id), sim.Dur("timeout", sess.timeout)}, "s%d timeout %v", sess.id, sess.timeout)
	for _, p := range sortedCopy(sess.ephemerals) {
		n := s.tree.get(p)
		if n == nil {
			continue
		}
		// The session's ephemeral node goes with it (killSession): the
		// server's own removal, a loss for the history (with lock-delay
		// the node stays as a tombstone first, and the detail says so).
		detail := "session s" + strconv.FormatInt(sess.id, 10) + " timeout " + sess.timeout.String()
		if s.cfg.LockDelay > 0 {
			detail += ", held back for lock-delay " + s.cfg.LockDelay.String()
		}
		env.KeyLostBy(p, sim.LossSessionExpired, detail, sess.proc)
		if s.cfg.LockDelay > 0 {
			n.tomb = true
			at := env.Mono() + int64(s.cfg.LockDelay)
			s.tombs = append(s.tombs, tomb{path: p, at: at})
			env.LogfAttrs(KindLockDelay, []sim.Attr{sim.Str("path", p), sim.Int64("session", sess.id), sim.Dur("for", s.cfg.LockDelay)}, "%s of s%d held for %v", p, sess.id, s.cfg.LockDelay)
			continue
		}
		s.removeNode(env, n, "expired s"+strconv.FormatInt(sess.id, 10))
	}
	if sess.proc != sim.NoProc {
		// (NoProc: recovered after a restart, no client has spoken for it
		// since.)
		env.Send(sess.proc, SessionExpired{Session: sess.id})
	}
}

// removeNode deletes a node in the current transaction and fires its
// watches (one-shot: they are removed).
func (s *Server) removeNode(env *sim.Env, n *znode, why string) {
	if n.owner != 0 && !n.tomb {
		if sess := s.sessions[n.owner]; sess != nil {
			sess.ephemerals = removeString(sess.ephemerals, n.path)
		}
	}
	s.tree.remove(n)
	env.LogfAttrs(KindZnodeDeleted, []sim.Attr{sim.Str("path", n.path), sim.Int64("zxid", s.zxid), sim.Str("why", why)}, "%s zxid %d %s", n.path, s.zxid, why)
	ws := s.watches[n.path]
	delete(s.watches, n.path)
	for _, w := range ws {
		sess := s.sessions[w.session]
		if sess == nil {
			continue // the watch died with its session
		}
		s.notify(env, w.proc, sess, n.path)
	}
}

func (s *Server) notify(env *sim.Env, to sim.ProcID, sess *session, path string) {
	sess.sent++
	env.Send(to, WatchEvent{Session: sess.id, Path: path, Seq: sess.sent})
	env.LogfAttrs(KindWatchFired, []sim.Attr{sim.Str("path", path), sim.Int64("session", sess.id)}, "%s to s%d", path, sess.id)
}

// addWatch registers a one-shot exists watch; a session watches a path at
// most once (ZooKeeper keeps one watcher per path and connection).
func (s *Server) addWatch(path string, id int64, proc sim.ProcID) {
	ws := s.watches[path]
	for i := range ws {
		if ws[i].session == id {
			ws[i].proc = proc
			return
		}
	}
	s.watches[path] = append(ws, watcher{session: id, proc: proc})
}

// setWatches re-registers a reconnecting client's watches, firing those
// whose node is gone (DataTree.java:1488-1497 setWatches).
func (s *Server) setWatches(env *sim.Env, from sim.ProcID, sess *session, paths []string) {
	for _, p := range paths {
		if s.tree.get(p) != nil {
			s.addWatch(p, sess.id, from)
		} else {
			s.notify(env, from, sess, p)
		}
	}
}

// arm sets the expiry timer at the earliest session bucket or tombstone
// deadline.
func (s *Server) arm(env *sim.Env) {
	next, ok := int64(0), false
	for _, sess := range s.sessions {
		if !ok || sess.expiresAt < next {
			next, ok = sess.expiresAt, true
		}
	}
	if len(s.tombs) > 0 && (!ok || s.tombs[0].at < next) {
		next, ok = s.tombs[0].at, true
	}
	if s.timerSet && (!ok || s.timerAt != next) {
		env.Cancel(s.timer)
		s.timerSet = false
	}
	if ok && !s.timerSet {
		s.timer = env.SetTimer(sim.Mono, next, expiryTick{})
		s.timerAt, s.timerSet = next, true
	}
}

// sessionIDs returns the live session ids in ascending order.
func (s *Server) sessionIDs() []int64 {
	ids := make([]int64, 0, len(s.sessions))
	for id := range s.sessions {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func removeString(s []string, v string) []string {
	for i, x := range s {
		if x == v {
			return append(s[:i], s[i+1:]...)
		}
	}
	return s
}
