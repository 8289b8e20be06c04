package zookeeper

import (
	"strconv"
	"time"

	"github.com/locksim/locksim/sim"
)

// State is a client Session's view of its session.
type State uint8

const (
	// StateIdle: Connect has not been called.
	StateIdle State = iota
	// StateConnecting: OpConnect sent, no answer yet. Calls are queued.
	StateConnecting
	// StateConnected: the session is established and the server was heard
	// from within the read timeout.
	StateConnected
	// StateDisconnected: the connection broke (nothing heard for the read
	// timeout, a call unanswered for as long, or a lost message); the
	// Session is reconnecting. The session may still be alive on the server.
	StateDisconnected
	// StateExpired: the session is gone (the server said so, or with
	// ClientExpiry the client concluded so). Its ephemeral nodes are deleted.
	StateExpired
	// StateClosed: Close was called.
	StateClosed
)

var stateNames = [...]string{"idle", "connecting", "connected", "disconnected", "expired", "closed"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "?"
}

// EventKind says what a SessionEvent reports.
type EventKind uint8

const (
	// EventConnected: the session was established (ZooKeeper's
	// SyncConnected). Session.ID and Session.Timeout are now known.
	EventConnected EventKind = iota + 1
	// EventDisconnected: the connection broke (ZooKeeper's Disconnected).
	// Outstanding calls have completed with ErrConnectionLoss in the same
	// batch of events. The session may still be alive: a lock holder must
	// assume it may lose the lock at any moment (Curator's SUSPENDED).
	EventDisconnected
	// EventReconnected: the session was revalidated on a new connection
	// (SyncConnected again). Watches were re-registered; a watched node
	// deleted meanwhile is reported by an EventWatch that follows.
	EventReconnected
	// EventExpired: the session expired (ZooKeeper's Expired). Every
	// outstanding and queued call has completed with ErrSessionExpired in the
	// same batch. Start a new session with Connect to continue.
	EventExpired
	// EventReply: a call completed; SessionEvent.Reply holds the answer.
	EventReply
	// EventWatch: a node watched with OpExists+Watch was deleted;
	// SessionEvent.Path names it. Watches are one-shot.
	EventWatch
)

var eventNames = [...]string{"?", "connected", "disconnected", "reconnected", "expired", "reply", "watch"}

func (k EventKind) String() string {
	if int(k) < len(eventNames) {
		return eventNames[k]
	}
	return "?"
}

// SessionEvent is something a Session reports to its client process.
type SessionEvent struct {
	Kind EventKind
	// Reply is the answer to a call (EventReply). Reply.ID is the id Call
	// returned; Reply.Op the call's Op.
	Reply Reply
	// Path is the deleted node (EventWatch).
	Path string
}

// MaxPingInterval bounds the default heartbeat: the ZooKeeper client sends a
// ping at least every 10 s (ClientCnxn.java:1184 MAX_SEND_PING_INTERVAL and
// 1263-1268, 3.9.5).
const MaxPingInterval = 10 * time.Second

// sessionTimer is the tag of a Session's timers. The type is unexported so
// that a client process can hand every tag it does not recognise to
// Session.Fire.
type sessionTimer struct {
	kind uint8 // timerHeartbeat, timerWatchdog, timerDeferred
	gen  uint32
}

const (
	timerHeartbeat uint8 = iota + 1
	timerWatchdog
	timerDeferred
)

func (t sessionTimer) AppendTrace(b []byte) []byte {
	switch t.kind {
	case timerHeartbeat:
		b = append(b, "zk-heartbeat"...)
	case timerWatchdog:
		b = append(b, "zk-read-timeout"...)
	default:
		b = append(b, "zk-deferred"...)
	}
	return strconv.AppendUint(append(b, " g"...), uint64(t.gen), 10)
}

// call is an outstanding request.
type call struct {
	id    uint64
	op    Op
	path  string
	watch bool
	sent  int64 // client monotonic clock
}

// Session is the client side of a ZooKeeper session, a state machine that a
// lock client process embeds and drives: it forwards messages to Handle and
// timer tags to Fire, and issues requests with Call. It models ZooKeeper's
// ClientCnxn (3.9.5):
//
//   - it connects, then sends OpPing every heartbeat (default: a third of
//     the negotiated timeout, at most MaxPingInterval; the ZooKeeper client
//     pings after readTimeout/2 of idleness, ClientCnxn.java:1263);
//   - it tracks when it last heard from the server on the client's
//     monotonic clock and reports EventDisconnected when it has heard
//     nothing for readTimeout = 2/3 of the session timeout
//     (ClientCnxn.java:1430 and 1239-1258), when a call stays unanswered for
//     as long, when the kernel reports that the connection ended
//     (ConnEnded: the server's host reset it), or when it detects a gap in
//     Reply.Seq (which the kernel's connections never produce);
//   - on a broken connection it fails the outstanding calls with
//     ErrConnectionLoss (ClientCnxn.java:1384-1398 cleanup) and sends
//     reconnect attempts (OpConnect with its session id and its watched
//     paths, ZooKeeper's SetWatches) every heartbeat until one is answered:
//     EventReconnected, or EventExpired when the server no longer knows the
//     session (ClientCnxn.java:1413-1423);
//   - the server also reports expiry by a SessionExpired message.
//
// Every Call completes with exactly one EventReply: the server's reply, or a
// synthesized one with Err ErrConnectionLoss (the connection broke first; the
// request may or may not have been applied) or ErrSessionExpired (the
// session is gone; ClientCnxn.java:782-796 answers SESSIONEXPIRED once the
// client is closed). Calls made while Connecting are queued and sent on
// EventConnected; calls made while Disconnected fail at once with
// ErrConnectionLoss (simplification: ZooKeeper queues them until the next
// connection attempt fails); calls made after EventExpired or Close fail
// with ErrSessionExpired. Immediate failures are delivered from Fire, at the
// same instant, never from Call itself.
//
// The lock recipe (recipes.md, "Locks", 3.9.5) on top of it: Call OpCreate
// /lock/n- with Ephemeral and Sequential (Reply.Path is the node, Reply.Zxid
// its creation zxid, usable as a fencing token); Call OpGetChildren /lock;
// if the node is the lowest, the lock is held; otherwise Call OpExists with
// Watch on the next lower node only (no herd effect) and, on its EventWatch
// (or a reply with Exists false), get the children again. Release with
// OpDelete or Close. On EventDisconnected a holder can no longer be sure; on
// EventExpired it has lost the lock.
//
// The zero value is ready for Connect. A process embeds one Session (Handle
// consumes every zookeeper message from the server, whatever its session).
// The events slice that Handle and Fire return is reused: it is valid until
// the next call into the Session.
type Session struct {
	// ClientExpiry, set before Connect, makes the client declare its session
	// expired on its own after hearing nothing from the server for 4/3 of
	// the session timeout, as ZooKeeper clients since 3.9.3 do
	// (ZOOKEEPER-4508; ClientCnxn.java:423 and 1243-1251, 3.9.5). Off by
	// default: earlier clients, and Curator over them, wait for the server.
	ClientExpiry bool

	server        sim.ProcID
	state         State
	id            int64
	requested     time.Duration
	timeout       time.Duration
	heartbeat     time.Duration
	userHeartbeat time.Duration
	nextID        uint64
	attemptFrom   uint64 // the current (re)connection's OpConnect ids are >= this
	seq           uint64
	lastHeard     int64
	pending       []call
	queued        []Request
	watches       []string
	deferred      []Reply
	gen           uint32

	hb, wd, df          sim.TimerID
	hbSet, wdSet, dfSet bool
	wdAt                int64

	ev []SessionEvent
}

// Connect starts a new session with the service process server, asking for
// timeout. heartbeat is the ping interval; 0 means the default (a third of
// the negotiated timeout, at most MaxPingInterval). Connect may be called
// again after EventExpired (or at any time) to start a fresh session; the old
// one is abandoned (not closed), its timers cancelled, its late messages
// ignored, and its calls that have not completed get no event.
func (s *Session) Connect(env *sim.Env, server sim.ProcID, timeout, heartbeat time.Duration) {
	s.stopTimers(env)
	s.gen++
	s.server, s.state, s.id = server, StateConnecting, 0
	s.requested, s.timeout, s.userHeartbeat = timeout, 0, heartbeat
	s.heartbeat = s.pingInterval(timeout)
	s.seq, s.lastHeard = 0, env.Mono()
	s.pending, s.queued, s.watches, s.deferred = nil, nil, nil, nil
	s.attemptFrom = s.nextID + 1
	s.sendConnect(env)
	s.armHeartbeat(env)
}

// Call sends a request on the session and returns its id; the answer comes
// as an EventReply whose Reply.ID is that id. req.ID and req.Session are
// filled in. Call panics before Connect.
func (s *Session) Call(env *sim.Env, req Request) uint64 {
	s.nextID++
	req.ID = s.nextID
	switch s.state {
	case StateIdle:
		panic("zookeeper: Session.Call before Connect")
	case StateConnecting:
		s.queued = append(s.queued, req)
	case StateConnected:
		s.send(env, req)
	case StateDisconnected:
		s.fail(env, req, ErrConnectionLoss)
	default:
		s.fail(env, req, ErrSessionExpired)
	}
	return req.ID
}

// Close closes the session: it sends OpClose (the server deletes the
// session's ephemeral nodes at once) and stops. Outstanding calls are
// dropped without events; later calls fail with ErrSessionExpired.
func (s *Session) Close(env *sim.Env) {
	switch s.state {
	case StateConnected, StateDisconnected:
		s.nextID++
		env.Send(s.server, Request{ID: s.nextID, Session: s.id, Op: OpClose})
	}
	s.stopTimers(env)
	s.state = StateClosed
	s.pending, s.queued, s.deferred = nil, nil, nil
}

// State returns the session's state.
func (s *Session) State() State { return s.state }

// ID returns the session id (0 until EventConnected).
func (s *Session) ID() int64 { return s.id }

// Timeout returns the negotiated session timeout (0 until EventConnected).
func (s *Session) Timeout() time.Duration { return s.timeout }

// Heartbeat returns the ping interval in use.
func (s *Session) Heartbeat() time.Duration { return s.heartbeat }

// ReadTimeout returns how long the Session waits without hearing from the
// server before it reports EventDisconnected: 2/3 of the negotiated timeout
// (ClientCnxn.java:1430).
func (s *Session) ReadTimeout() time.Duration { return s.timeout * 2 / 3 }

// LastHeard returns the client monotonic clock reading at which the server
// was last heard from.
func (s *Session) LastHeard() int64 { return s.lastHeard }

// Handle consumes the zookeeper messages (Reply, WatchEvent, SessionExpired)
// that the server sends; it returns consumed false for any other message,
// which the client process handles itself. Messages that belong to an
// abandoned session or a broken connection are consumed without events.
func (s *Session) Handle(env *sim.Env, from sim.ProcID, msg sim.Message) (consumed bool, events []SessionEvent) {
	switch msg.(type) {
	case Reply, WatchEvent, SessionExpired:
	default:
		return false, nil
	}
	if s.state == StateIdle || from != s.server {
		return false, nil
	}
	s.ev = s.ev[:0]
	switch m := msg.(type) {
	case Reply:
		s.onReply(env, m)
	case WatchEvent:
		if s.state == StateConnected && m.Session == s.id && s.inSeq(env, m.Seq) {
			s.heard(env)
			s.watches = removeString(s.watches, m.Path)
			s.emit(SessionEvent{Kind: EventWatch, Path: m.Path})
		}
	case SessionExpired:
		if m.Session == s.id && (s.state == StateConnected || s.state == StateDisconnected) {
			s.expire(env)
		}
	}
	return true, s.ev
}

// ConnEnded handles the end of the connection with a process (the client
// forwards its ConnObserver calls): a connected session counts it as a
// broken connection (EventDisconnected, then reconnect attempts); a
// connection attempt that was reset is retried at the next heartbeat.
func (s *Session) ConnEnded(env *sim.Env, peer sim.ProcID) []SessionEvent {
	s.ev = s.ev[:0]
	if peer == s.server && s.state == StateConnected {
		s.disconnect(env)
	}
	return s.ev
}

// Fire handles the Session's own timers; it returns consumed false for any
// other tag, which the client process handles itself.
func (s *Session) Fire(env *sim.Env, tag any) (consumed bool, events []SessionEvent) {
	t, ok := tag.(sessionTimer)
	if !ok {
		return false, nil
	}
	s.ev = s.ev[:0]
	if t.gen != s.gen {
		return true, nil // a timer of an abandoned session
	}
	switch t.kind {
	case timerHeartbeat:
		s.hbSet = false
		s.onHeartbeat(env)
	case timerWatchdog:
		s.wdSet = false
		s.onWatchdog(env)
	case timerDeferred:
		s.dfSet = false
		for _, r := range s.deferred {
			s.emit(SessionEvent{Kind: EventReply, Reply: r})
		}
		s.deferred = s.deferred[:0]
	}
	return true, s.ev
}

func (s *Session) onReply(env *sim.Env, m Reply) {
	switch s.state {
	case StateConnecting:
		if m.Op == OpConnect && m.ID >= s.attemptFrom && m.Err == "" {
			s.established(env, m)
			s.emit(SessionEvent{Kind: EventConnected})
			q := s.queued
			s.queued = nil
			for _, req := range q {
				s.send(env, req)
			}
		}
		return
	case StateExpired, StateClosed:
		return
	}
	if m.Session != s.id {
		return // an abandoned session (for instance one a retried connect opened)
	}
	if m.Err == ErrSessionExpired {
		s.expire(env)
		return
	}
	if s.state == StateDisconnected {
		if m.Op == OpConnect && m.ID >= s.attemptFrom && m.Err == "" {
			s.established(env, m)
			s.emit(SessionEvent{Kind: EventReconnected})
		}
		return // anything else belongs to the broken connection
	}
	if !s.inSeq(env, m.Seq) {
		return
	}
	s.heard(env)
	for i, c := range s.pending {
		if c.id != m.ID {
			continue
		}
		s.pending = append(s.pending[:i], s.pending[i+1:]...)
		if c.op == OpExists && c.watch && m.Exists && m.Err == "" && !containsString(s.watches, c.path) {
			s.watches = append(s.watches, c.path)
		}
		s.emit(SessionEvent{Kind: EventReply, Reply: m})
		return
	}
	// A ping reply or a duplicate connect reply: hearing it was the point.
}

// established records a (re)connection from the server's connect reply.
func (s *Session) established(env *sim.Env, m Reply) {
	s.state, s.id, s.timeout = StateConnected, m.Session, m.Timeout
	s.heartbeat = s.pingInterval(m.Timeout)
	s.seq = m.Seq
	s.heard(env)
	s.armHeartbeat(env)
}

// inSeq checks the server's message numbering; a gap means a lost message,
// which TCP would never deliver out of order: the connection broke.
func (s *Session) inSeq(env *sim.Env, seq uint64) bool {
	if seq != s.seq+1 {
		s.disconnect(env)
		return false
	}
	s.seq = seq
	return true
}

func (s *Session) heard(env *sim.Env) {
	s.lastHeard = env.Mono()
	s.armWatchdog(env)
}

func (s *Session) onHeartbeat(env *sim.Env) {
	switch s.state {
	case StateConnecting, StateDisconnected:
		// A new connection attempt. Simplification: ZooKeeper retries after
		// connectTimeout = sessionTimeout / number of servers
		// (ClientCnxn.java:421); every heartbeat is that for a three-server
		// ensemble.
		s.sendConnect(env)
	case StateConnected:
		s.nextID++
		env.Send(s.server, Request{ID: s.nextID, Session: s.id, Op: OpPing})
	default:
		return
	}
	s.armHeartbeat(env)
}

func (s *Session) onWatchdog(env *sim.Env) {
	now := env.Mono()
	switch s.state {
	case StateConnected:
		if now >= s.readDeadline() {
			s.disconnect(env)
			return
		}
	case StateDisconnected:
		if s.ClientExpiry && now >= s.lastHeard+int64(s.timeout)*4/3 {
			s.expire(env)
			return
		}
	default:
		return
	}
	s.armWatchdog(env)
}

// readDeadline is when the connection counts as broken: readTimeout after
// the server was last heard from, or after the oldest outstanding call was
// sent.
func (s *Session) readDeadline() int64 {
	t := s.lastHeard
	if len(s.pending) > 0 && s.pending[0].sent < t {
		t = s.pending[0].sent
	}
	return t + int64(s.ReadTimeout())
}

// disconnect handles a broken connection: the client closes its socket
// (ClientCnxnSocketNIO.cleanup from SendThread's cleanAndNotifyState) and
// connects again.
func (s *Session) disconnect(env *sim.Env) {
	env.Close(s.server)
	s.state = StateDisconnected
	s.emit(SessionEvent{Kind: EventDisconnected})
	for _, c := range s.pending {
		s.emit(SessionEvent{Kind: EventReply, Reply: Reply{ID: c.id, Session: s.id, Op: c.op, Err: ErrConnectionLoss}})
	}
	s.pending = s.pending[:0]
	s.attemptFrom = s.nextID + 1
	s.sendConnect(env)
	s.armHeartbeat(env)
	s.armWatchdog(env)
}

// expire handles the end of the session.
func (s *Session) expire(env *sim.Env) {
	s.state = StateExpired
	s.emit(SessionEvent{Kind: EventExpired})
	for _, c := range s.pending {
		s.emit(SessionEvent{Kind: EventReply, Reply: Reply{ID: c.id, Session: s.id, Op: c.op, Err: ErrSessionExpired}})
	}
	for _, r := range s.queued {
		s.emit(SessionEvent{Kind: EventReply, Reply: Reply{ID: r.ID, Session: s.id, Op: r.Op, Err: ErrSessionExpired}})
	}
	s.pending, s.queued, s.watches = nil, nil, nil
	s.cancel(env, &s.hb, &s.hbSet)
	s.cancel(env, &s.wd, &s.wdSet)
}

func (s *Session) sendConnect(env *sim.Env) {
	s.nextID++
	env.Send(s.server, Request{
		ID: s.nextID, Session: s.id, Op: OpConnect, Timeout: s.requested,
		Watches: append([]string(nil), s.watches...),
	})
}

func (s *Session) send(env *sim.Env, req Request) {
	req.Session = s.id
	env.Send(s.server, req)
	s.pending = append(s.pending, call{id: req.ID, op: req.Op, path: req.Path, watch: req.Watch, sent: env.Mono()})
	s.armWatchdog(env)
}

// fail completes a call at once, from a zero-delay timer (events come only
// from Handle and Fire).
func (s *Session) fail(env *sim.Env, req Request, code string) {
	s.deferred = append(s.deferred, Reply{ID: req.ID, Session: s.id, Op: req.Op, Err: code})
	if !s.dfSet {
		s.df = env.After(sim.Mono, 0, sessionTimer{kind: timerDeferred, gen: s.gen})
		s.dfSet = true
	}
}

func (s *Session) emit(e SessionEvent) { s.ev = append(s.ev, e) }

func (s *Session) pingInterval(timeout time.Duration) time.Duration {
	if s.userHeartbeat > 0 {
		return s.userHeartbeat
	}
	return min(timeout/3, MaxPingInterval)
}

func (s *Session) armHeartbeat(env *sim.Env) {
	s.cancel(env, &s.hb, &s.hbSet)
	s.hb = env.After(sim.Mono, s.heartbeat, sessionTimer{kind: timerHeartbeat, gen: s.gen})
	s.hbSet = true
}

// armWatchdog makes sure a watchdog timer fires no later than the current
// deadline; an earlier timer re-checks and re-arms.
func (s *Session) armWatchdog(env *sim.Env) {
	var at int64
	switch {
	case s.state == StateConnected:
		at = s.readDeadline()
	case s.state == StateDisconnected && s.ClientExpiry:
		at = s.lastHeard + int64(s.timeout)*4/3
	default:
		return
	}
	if s.wdSet && s.wdAt <= at {
		return
	}
	s.cancel(env, &s.wd, &s.wdSet)
	s.wd = env.SetTimer(sim.Mono, at, sessionTimer{kind: timerWatchdog, gen: s.gen})
	s.wdAt, s.wdSet = at, true
}

func (s *Session) cancel(env *sim.Env, id *sim.TimerID, set *bool) {
	if *set {
		env.Cancel(*id)
		*set = false
	}
}

func (s *Session) stopTimers(env *sim.Env) {
	s.cancel(env, &s.hb, &s.hbSet)
	s.cancel(env, &s.wd, &s.wdSet)
	s.cancel(env, &s.df, &s.dfSet)
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
