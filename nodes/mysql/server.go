package mysql

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/sim"
)

// Trace event kinds the MySQL node logs.
const (
	KindConnOpen     sim.Kind = "mysql-conn-open"     // "conn 3"
	KindConnClosed   sim.Kind = "mysql-conn-closed"   // "conn 3: wait_timeout"
	KindRowLocked    sim.Kind = "mysql-row-locked"    // "trx 7 conn 3 X locks.a"
	KindLockWait     sim.Kind = "mysql-lock-wait"     // "trx 8 conn 4 waits S locks.a"
	KindLockReleased sim.Kind = "mysql-lock-released" // "trx 7 conn 3 released 2: locks.a locks.b"
	KindCommit       sim.Kind = "mysql-commit"        // "trx 7 conn 3 rows 1"
	KindRollback     sim.Kind = "mysql-rollback"      // "trx 7 conn 3 rows 1: deadlock victim"
	KindDeadlock     sim.Kind = "mysql-deadlock"      // "trx 8 conn 4 closes a cycle of 2; victim trx 8"
	KindLockTimeout  sim.Kind = "mysql-lock-timeout"  // "trx 8 conn 4 waited 50s"
	KindFlush        sim.Kind = "mysql-redo-flush"    // "3 commits"
	KindRecovered    sim.Kind = "mysql-recovered"     // "rows 2 from 5 commits"
)

// RedoFile is the name of the node's redo log on its disk.
const RedoFile = "redo"

// flushInterval is InnoDB's once-a-second log flush for
// innodb_flush_log_at_trx_commit 0 and 2 (MySQL manual
// innodb-parameters.html#sysvar_innodb_flush_log_at_trx_commit: "flushed to
// disk once per second"; the master thread's srv_sync_log_buffer_in_background).
const flushInterval = time.Second

// rowImage is one row's state after a commit; a redo record is the images
// a transaction committed, in change order.
type rowImage struct {
	Table, Key string
	Exists     bool
	Value      string
}

// redoRecord is what one commit appends to the redo log: its sequence
// number (the GTID's seq_no; the log doubles as the binary log) and its row
// images. A checkpoint is one record with Snapshot set: every committed row
// as of Seq.
type redoRecord struct {
	Seq      uint64
	Snapshot bool
	Rows     []rowImage
}

type table struct {
	cfg  Table
	rows map[string]*entry
}

// trx is an InnoDB transaction.
type trx struct {
	id       uint64
	conn     *conn
	implicit bool     // an autocommit statement's own transaction
	entries  []*entry // keys it has lock requests on, in first-request order
	changes  []*entry // keys it changed, in first-change order
	undo     int      // row changes (undo records)
	nLocks   int      // granted lock requests

	waiting   *lockReq // the request it waits for, or nil
	waitEntry *entry
	waitTimer sim.TimerID
}

func (t *trx) weight() int { return t.undo + t.nLocks }

func (t *trx) addEntry(e *entry) {
	for _, x := range t.entries {
		if x == e {
			return
		}
	}
	t.entries = append(t.entries, e)
}

// conn is a connection (a session): its variables, its transaction and the
// statements it sent that wait their turn.
type conn struct {
	id              ConnID
	owner           sim.ProcID
	autocommit      bool
	lockWaitTimeout time.Duration
	waitTimeout     time.Duration
	trx             *trx
	busy            *Request  // the statement waiting for a lock
	queue           []Request // statements received behind it
	idle            sim.TimerID
	closed          bool
	hungUp          bool // the client is gone; close when the running statement ends
}

// Timer tags.
type idleTag struct{ Conn ConnID }
type waitTag struct {
	Conn ConnID
	Trx  uint64
}
type flushTag struct{}

func (t idleTag) AppendTrace(b []byte) []byte {
	return strconv.AppendUint(append(b, "wait_timeout conn "...), uint64(t.Conn), 10)
}

func (t waitTag) AppendTrace(b []byte) []byte {
	return strconv.AppendUint(append(b, "lock_wait_timeout trx "...), t.Trx, 10)
}

func (flushTag) AppendTrace(b []byte) []byte { return append(b, "redo flush"...) }

// Node is the MySQL/InnoDB server: a sim.Process serving Connect, Request
// and Hangup. Build it with New.
type Node struct {
	cfg     Config
	env     *sim.Env
	tables  map[string]*table
	conns   map[ConnID]*conn
	nextCID ConnID
	nextTrx uint64

	redo      *sim.File
	unflushed []any // commits not yet written (flush 0)
	dirtyLog  bool  // commits written, not yet fsynced (flush 2)
	flushing  bool  // a flush timer is set

	seq      uint64 // sequence number of the last commit
	readOnly bool
	repl     replState

	wakeq    []*entry
	draining bool
	recheck  bool // gap locks appeared under waiters: search for deadlocks
	scratch  []byte
}

// New returns a MySQL node process. It panics if cfg is invalid (callers
// validate configurations first; see Config.Validate).
func New(cfg Config) sim.Process {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	return &Node{cfg: cfg}
}

// Init starts the server: crash recovery replays the redo log (committed
// transactions only: uncommitted ones never reached it, which is what
// InnoDB's rollback of incomplete transactions at recovery leaves), then the
// log is checkpointed into one record. A started server has no connections.
func (n *Node) Init(env *sim.Env) {
	n.env = env
	n.tables = map[string]*table{}
	for _, t := range n.cfg.Tables {
		n.tables[t.Name] = &table{cfg: t, rows: map[string]*entry{}}
	}
	n.conns = map[ConnID]*conn{}
	n.redo = env.Disk().File(RedoFile)
	recs := n.redo.Records()
	for _, r := range recs {
		rec := r.(redoRecord)
		if rec.Snapshot {
			for _, tab := range n.tables {
				clear(tab.rows)
			}
		}
		if rec.Seq > n.seq {
			n.seq = rec.Seq
		}
		for _, img := range rec.Rows {
			tab := n.tables[img.Table]
			if tab == nil {
				continue // a table no longer configured
			}
			if img.Exists {
				tab.rows[img.Key] = &entry{tab: tab, key: img.Key, exist: true, value: img.Value}
			} else {
				delete(tab.rows, img.Key)
			}
		}
	}
	snap := n.snapshot()
	if len(recs) > 0 {
		n.redo.Replace([]any{snap})
	}
	n.logRows(KindRecovered, snap.Rows, true, "rows %d from %d commits, seq %d", len(snap.Rows), len(recs), n.seq)
	n.initReplication()
}

// snapshot returns every committed row, tables in configuration order, keys
// sorted.
func (n *Node) snapshot() redoRecord {
	out := redoRecord{Seq: n.seq, Snapshot: true}
	for _, tc := range n.cfg.Tables {
		for _, k := range n.keys(tc.Name) {
			e := n.tables[tc.Name].rows[k]
			out.Rows = append(out.Rows, rowImage{Table: tc.Name, Key: k, Exists: true, Value: e.value})
		}
	}
	return out
}

func (n *Node) keys(table string) []string {
	tab := n.tables[table]
	if tab == nil {
		return nil
	}
	var ks []string
	for k, e := range tab.rows {
		if e.exist {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return ks
}

// Rows returns the committed rows of a table, key to value (for tests and
// inspection).
func (n *Node) Rows(table string) map[string]string {
	out := map[string]string{}
	for _, k := range n.keys(table) {
		out[k] = n.tables[table].rows[k].value
	}
	return out
}

// Conns returns the ids of the open connections, sorted.
func (n *Node) Conns() []ConnID {
	ids := make([]ConnID, 0, len(n.conns))
	for id := range n.conns {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// Receive handles one message.
func (n *Node) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	n.env = env
	switch m := msg.(type) {
	case Connect:
		n.nextCID++
		c := &conn{
			id: n.nextCID, owner: from, autocommit: true,
			lockWaitTimeout: n.cfg.LockWaitTimeout, waitTimeout: n.cfg.WaitTimeout,
		}
		n.conns[c.id] = c
		env.Logf(KindConnOpen, "conn %d", c.id)
		env.Send(from, Reply{ID: m.ID, Conn: c.id})
		n.armIdle(c)
	case Request:
		c := n.conns[m.Conn]
		if c == nil || c.owner != from {
			// NB: the owner check stands for TCP: a connection belongs to the
			// socket that opened it, so another process cannot use its id.
			rep := replyServerGone
			rep.ID, rep.Conn = m.ID, m.Conn
			env.Send(from, rep)
			return
		}
		c.queue = append(c.queue, m)
		n.run(c)
	case ReplSubscribe, ReplEvent, ReplSnapshot, ReplHeartbeat, Promote:
		n.receiveRepl(from, msg)
	case Hangup:
		if c := n.conns[m.Conn]; c != nil && c.owner == from {
			// A thread waiting for a row lock is not reading its socket: it
			// notices the closed connection only when the statement ends
			// and it reads the next command (do_command gets an error).
			c.hungUp = true
			c.queue = nil
			if c.busy == nil {
				n.close(c, "client hung up", false)
			}
		}
	}
	n.drain()
}

// ConnEnded handles the end of the kernel connection to peer (a reset from
// a crashed or restarted client host, a timeout, a close): every MySQL
// connection that process opened was on it and is gone, as when the
// server's read of the socket fails (sql/sql_parse.cc do_command returns,
// the session ends and rolls back). A connection waiting for a row lock
// notices only when its statement ends, as with Hangup. NB: the kernel has
// one connection per pair of processes, so all of a client process's MySQL
// connections end together.
func (n *Node) ConnEnded(env *sim.Env, peer sim.ProcID, why sim.ConnEnd) {
	n.env = env
	ids := make([]ConnID, 0, len(n.conns))
	for id, c := range n.conns {
		if c.owner == peer {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		c := n.conns[id]
		c.hungUp = true
		c.queue = nil
		if c.busy == nil {
			n.close(c, "connection "+why.String(), false)
		}
	}
	n.replConnEnded(peer)
	n.drain()
}

// Fire handles the node's timers.
func (n *Node) Fire(env *sim.Env, tag any) {
	n.env = env
	switch t := tag.(type) {
	case idleTag:
		if c := n.conns[t.Conn]; c != nil && c.busy == nil && len(c.queue) == 0 {
			// The server thread's read of the next command times out after
			// wait_timeout and the session ends (sql/sql_parse.cc,
			// do_command; net_wait_timeout).
			n.close(c, "wait_timeout", true)
		}
	case waitTag:
		if c := n.conns[t.Conn]; c != nil && c.trx != nil && c.trx.id == t.Trx && c.trx.waiting != nil {
			n.env.Logf(KindLockTimeout, "trx %d conn %d waited %v", t.Trx, c.id, c.lockWaitTimeout)
			whole := n.cfg.RollbackOnTimeout
			n.abortWait(c.trx, replyLockWaitTimeout, whole, "lock wait timeout")
			n.run(c)
		}
	case flushTag:
		n.flushing = false
		n.flushLog()
	case heartbeatTag:
		n.heartbeat()
	case netTimeoutTag:
		n.netTimeout()
	}
	n.drain()
}

// run executes a connection's queued statements until one waits.
func (n *Node) run(c *conn) {
	for !c.closed && c.busy == nil && len(c.queue) > 0 {
		r := c.queue[0]
		c.queue[0] = Request{}
		c.queue = c.queue[1:]
		n.execute(c, r)
	}
	if c.hungUp && c.busy == nil {
		n.close(c, "client hung up", false)
	}
	n.armIdle(c)
}

func (n *Node) armIdle(c *conn) {
	n.env.Cancel(c.idle)
	c.idle = sim.TimerID{}
	if !c.closed && c.busy == nil && len(c.queue) == 0 {
		c.idle = n.env.After(sim.Mono, c.waitTimeout, idleTag{Conn: c.id})
	}
}

type status uint8

const (
	stDone      status = iota // reply with the result
	stWait                    // the statement waits for a lock
	stNoReply                 // no reply (QUIT, or the connection is gone)
	stDoneClose               // reply, then close the connection (KILL of itself)
)

// execute runs one statement and replies, or parks it while it waits.
func (n *Node) execute(c *conn, r Request) {
	rep, st := n.exec(c, r.Stmt)
	switch st {
	case stDone:
		n.reply(c, r.ID, rep)
	case stWait:
		c.busy = &r
		n.beginWait(c.trx)
	case stDoneClose:
		n.reply(c, r.ID, rep)
		n.close(c, "killed by itself", false)
	}
}

func (n *Node) reply(c *conn, id uint64, rep Reply) {
	rep.ID, rep.Conn = id, c.id
	n.env.Send(c.owner, rep)
}

var okReply = Reply{}

func (n *Node) exec(c *conn, s Stmt) (Reply, status) {
	switch s := s.(type) {
	case Begin:
		if c.trx != nil {
			n.commit(c)
		}
		c.trx = n.newTrx(c, false)
		return okReply, stDone
	case Commit:
		if c.trx != nil {
			n.commit(c)
		}
		return okReply, stDone
	case Rollback:
		if c.trx != nil {
			n.rollback(c, "ROLLBACK")
		}
		return okReply, stDone
	case Ping:
		return okReply, stDone
	case Quit:
		n.close(c, "quit", false)
		return okReply, stNoReply
	case SetSession:
		return n.setSession(c, s), stDone
	case Kill:
		return n.kill(c, s)
	case Insert:
		return n.rowStmt(c, s.Table, s)
	case Delete:
		return n.rowStmt(c, s.Table, s)
	case Update:
		return n.rowStmt(c, s.Table, s)
	case Select:
		return n.rowStmt(c, s.Table, s)
	case SelectForUpdate:
		return n.rowStmt(c, s.Table, s)
	}
	// ER_EMPTY_QUERY: a request without a statement.
	return errReply(1065, "42000", "Query was empty"), stDone
}

func (n *Node) newTrx(c *conn, implicit bool) *trx {
	n.nextTrx++
	return &trx{id: n.nextTrx, conn: c, implicit: implicit}
}

func (n *Node) setSession(c *conn, s SetSession) Reply {
	switch s.Var {
	case VarAutocommit:
		if s.Value != 0 && s.Value != 1 {
			return errWrongValue(s.Var, s.Value)
		}
		// "If autocommit is 0 and you change it to 1, MySQL performs an
		// automatic COMMIT of any open transaction" (MySQL manual,
		// commit.html).
		if s.Value == 1 && !c.autocommit && c.trx != nil {
			n.commit(c)
		}
		c.autocommit = s.Value == 1
	case VarLockWaitTimeout:
		// Out-of-range values are clipped with a warning, as the server does.
		c.lockWaitTimeout = clip(s.Value, 0, int64(InfiniteLockWait/time.Second))
	case VarWaitTimeout:
		c.waitTimeout = clip(s.Value, 1, int64(MaxWaitTimeout/time.Second))
	default:
		return errUnknownVariable(s.Var)
	}
	return okReply
}

func clip(v, lo, hi int64) time.Duration {
	if v < lo {
		v = lo
	}
	if v > hi {
		v = hi
	}
	return time.Duration(v) * time.Second
}

// kill is KILL [QUERY | CONNECTION] id (sql/sql_parse.cc, kill_one_thread):
// the target's running statement is interrupted; KILL CONNECTION also ends
// the session, which rolls back its transaction (MySQL manual kill.html).
func (n *Node) kill(c *conn, s Kill) (Reply, status) {
	target := n.conns[s.Target]
	if target == nil {
		return errNoSuchThread(s.Target), stDone
	}
	if s.Query {
		if target.trx != nil && target.trx.waiting != nil {
			n.abortWait(target.trx, replyInterrupted, false, "KILL QUERY")
			if target != c {
				n.run(target)
			}
		}
		return okReply, stDone
	}
	if target == c {
		// Killing one's own connection: the KILL statement itself is
		// interrupted and the session ends.
		return replyKilled, stDoneClose
	}
	n.close(target, "killed by conn "+strconv.FormatUint(uint64(c.id), 10), true)
	return okReply, stDone
}

// close ends a session: its waiting statement is answered (error 1927 when
// the connection was killed), its transaction rolled back, its locks
// released (THD::cleanup -> ha_rollback_trans; MySQL manual
// innodb-autocommit-commit-rollback.html: a session that ends with a
// transaction open has it rolled back). notify sends Closed to the client,
// after answering a statement that was waiting with ErrServerLost.
func (n *Node) close(c *conn, reason string, notify bool) {
	if c.closed {
		return
	}
	if c.busy != nil && notify {
		// MariaDB closes the socket without an error packet: the client
		// library reports the lost connection.
		n.reply(c, c.busy.ID, replyServerLost)
	}
	if c.trx != nil {
		if c.trx.waiting != nil {
			n.cancelWait(c.trx)
		}
		if notify {
			// The server ends the session on its own (wait_timeout) or at
			// another connection's KILL, and the rollback frees the
			// transaction's row locks (MySQL manual kill.html): losses for
			// the history, the holder asked for none of them.
			for _, e := range c.trx.entries {
				if !e.heldBy(c.trx) {
					continue
				}
				n.env.KeyLostBy(e.key, sim.LossConnectionKilled, "table "+e.tab.cfg.Name+", conn "+strconv.FormatUint(uint64(c.id), 10)+" "+reason, c.owner)
			}
		}
		n.rollback(c, reason)
	}
	c.busy, c.queue, c.closed = nil, nil, true
	n.env.Cancel(c.idle)
	delete(n.conns, c.id)
	if notify && n.env.TraceKeeps(KindConnClosed) {
		// The server ended the session on its own: whose it was, for the
		// reports' row lane (record.LaneRows).
		n.env.LogfAttrs(KindConnClosed, []sim.Attr{sim.Str("holder", n.env.NameOf(c.owner)), sim.Str("reason", reason)}, "conn %d: %s", c.id, reason)
	} else {
		n.env.Logf(KindConnClosed, "conn %d: %s", c.id, reason)
	}
	if notify {
		n.env.Send(c.owner, Closed{Conn: c.id, Reason: reason})
	}
}

// rowStmt runs a statement on one row, inside the connection's transaction
// or, with autocommit and none open, in a transaction of its own that ends
// with the statement.
func (n *Node) rowStmt(c *conn, name string, s Stmt) (Reply, status) {
	tab := n.tables[name]
	if tab == nil {
		return errNoSuchTable(n.cfg.Database, name), stDone
	}
	if n.readOnly {
		switch s.(type) {
		case Insert, Delete, Update:
			return replyReadOnly, stDone
		}
	}
	if c.trx == nil {
		c.trx = n.newTrx(c, c.autocommit)
	}
	t := c.trx
	rep, st := n.rowOp(t, tab, s)
	if st == stWait {
		return rep, st
	}
	if t.implicit {
		if rep.OK() {
			n.commit(c)
		} else {
			n.rollback(c, "statement failed in autocommit")
		}
	}
	return rep, st
}

func (n *Node) entry(tab *table, key string) *entry {
	e := tab.rows[key]
	if e == nil {
		e = &entry{tab: tab, key: key}
		tab.rows[key] = e
	}
	return e
}

// gc forgets a key with no record and no locks. NB: a finished
// transaction may still name an entry that was forgotten and replaced by a
// new one for the same key, so only the map's own entry is removed.
func (n *Node) gc(e *entry) {
	if !e.physical() && len(e.locks) == 0 && e.tab.rows[e.key] == e {
		delete(e.tab.rows, e.key)
	}
}

// rowOp executes the statement's row access after taking its lock; it is run
// again from the start when a lock wait ends, so it changes nothing before
// every lock it needs is granted.
func (n *Node) rowOp(t *trx, tab *table, s Stmt) (Reply, status) {
	switch s := s.(type) {
	case Select:
		// A consistent nonlocking read. Simplification: it sees the latest
		// committed image (READ COMMITTED), not a REPEATABLE READ snapshot.
		e := tab.rows[s.Key]
		if e == nil {
			return okReply, stDone
		}
		ex, v := e.view(t)
		return Reply{Found: ex, Value: v}, stDone
	case SelectForUpdate:
		e := n.entry(tab, s.Key)
		if !n.lockRow(t, e) {
			return okReply, stWait
		}
		ex, v := e.current()
		n.gc(e)
		return Reply{Found: ex, Value: v}, stDone
	case Delete:
		e := n.entry(tab, s.Key)
		if !n.lockRow(t, e) {
			return okReply, stWait
		}
		if ex, _ := e.current(); !ex {
			n.gc(e)
			return okReply, stDone
		}
		n.touch(t, e)
		e.dExst = false
		return Reply{Affected: 1}, stDone
	case Update:
		e := n.entry(tab, s.Key)
		if !n.lockRow(t, e) {
			return okReply, stWait
		}
		ex, v := e.current()
		if !ex || v == s.Value {
			// Affected rows count changed rows (no CLIENT_FOUND_ROWS).
			n.gc(e)
			return okReply, stDone
		}
		n.touch(t, e)
		e.dVal = s.Value
		return Reply{Affected: 1}, stDone
	case Insert:
		e := n.entry(tab, s.Key)
		if e.physical() {
			if e.dirty != t {
				// The duplicate check takes a shared lock on the record it
				// finds and keeps it, also when the statement fails
				// (row_ins_duplicate_error_in_clust): an uncommitted insert
				// or delete of another transaction makes it wait.
				if !n.lock(t, e, modeS) {
					return okReply, stWait
				}
			}
			if ex, _ := e.current(); ex {
				return errDupEntry(s.Key, tab.cfg.KeyName), stDone
			}
			// The record is this transaction's own delete: insert again.
			if e.dirty != t {
				// Unreachable: a record no other transaction changed and
				// that does not exist is not physical.
				return errDupEntry(s.Key, tab.cfg.KeyName), stDone
			}
		} else {
			if !n.lock(t, e, modeInsert) {
				return okReply, stWait
			}
			// The inserted record carries an implicit X lock.
			n.grant(t, e, modeX)
		}
		n.touch(t, e)
		e.dExst, e.dVal = true, s.Value
		return Reply{Affected: 1}, stDone
	}
	return okReply, stDone
}

// lockRow takes the lock of a locking read, UPDATE or DELETE: an X record
// lock on an existing record, a gap lock when there is none.
func (n *Node) lockRow(t *trx, e *entry) bool {
	if e.physical() {
		return n.lock(t, e, modeX)
	}
	return n.lock(t, e, modeGap)
}

// touch records that t changes e (the undo record).
func (n *Node) touch(t *trx, e *entry) {
	t.undo++
	if e.dirty == t {
		return
	}
	e.dirty, e.dExst, e.dVal = t, e.exist, e.value
	t.changes = append(t.changes, e)
}

// lock requests a lock; it reports whether it is held. When it is not, t
// now waits for it.
func (n *Node) lock(t *trx, e *entry, mode lockMode) bool {
	for _, r := range e.locks {
		if r.trx == t && r.granted && covers(r.mode, mode) {
			return true
		}
	}
	if !e.mustWait(t, mode) {
		n.grant(t, e, mode)
		return true
	}
	r := &lockReq{trx: t, mode: mode}
	e.locks = append(e.locks, r)
	t.addEntry(e)
	t.waiting, t.waitEntry = r, e
	n.logLock(KindLockWait, t, " waits ", mode, e)
	return false
}

func (n *Node) grant(t *trx, e *entry, mode lockMode) {
	if mode == modeGap {
		n.recheck = true
	}
	e.locks = append(e.locks, &lockReq{trx: t, mode: mode, granted: true})
	t.addEntry(e)
	t.nLocks++
	n.logLock(KindRowLocked, t, " ", mode, e)
}

// logRows logs an event that changes committed rows (a commit, a
// recovery, a replicated commit) with the row images as typed fields, for
// the reports' row lane (record.LaneRows): "rows" holds [table, key,
// value, 1|0 (exists)] per row; snapshot marks a full copy of the tables,
// in which a row not listed does not exist. Built only when the event is
// kept.
func (n *Node) logRows(kind sim.Kind, rows []rowImage, snapshot bool, format string, args ...any) {
	if !n.env.TraceKeeps(kind) {
		n.env.Logf(kind, format, args...)
		return
	}
	g := make([][]string, len(rows))
	for i, r := range rows {
		exists := "0"
		if r.Exists {
			exists = "1"
		}
		g[i] = []string{r.Table, r.Key, r.Value, exists}
	}
	attrs := []sim.Attr{sim.Groups("rows", g)}
	if snapshot {
		attrs = append(attrs, sim.Int64("snapshot", 1))
	}
	n.env.LogfAttrs(kind, attrs, format, args...)
}

func (n *Node) logLock(kind sim.Kind, t *trx, sep string, mode lockMode, e *entry) {
	b := strconv.AppendUint(append(n.scratch[:0], "trx "...), t.id, 10)
	b = strconv.AppendUint(append(b, " conn "...), uint64(t.conn.id), 10)
	b = append(append(append(b, sep...), mode.String()...), ' ')
	b = append(append(append(b, e.tab.cfg.Name...), '.'), e.key...)
	n.scratch = b
	if kind != KindRowLocked || !n.env.TraceKeeps(kind) {
		n.env.LogBytes(kind, b)
		return
	}
	// A granted row lock as typed fields, for the reports' row lane
	// (record.LaneRows): which row, in which mode, for which client's
	// transaction; built only when the event is kept. The lock is held
	// until the transaction's mysql-lock-released (same trx field).
	n.env.LogBytesAttrs(kind, b, sim.Str("table", e.tab.cfg.Name), sim.Str("key", e.key), sim.Str("mode", mode.String()),
		sim.Int64("trx", int64(t.id)), sim.Str("holder", n.env.NameOf(t.conn.owner)))
}

// beginWait starts the lock wait timer of a transaction that just queued,
// and runs deadlock detection (lock_wait, lock0wait.cc; MariaDB's
// Deadlock::check_and_resolve). When the victim is the requester, its
// statement fails at once.
func (n *Node) beginWait(t *trx) {
	c := t.conn
	if c.lockWaitTimeout < InfiniteLockWait {
		t.waitTimer = n.env.After(sim.Mono, c.lockWaitTimeout, waitTag{Conn: c.id, Trx: t.id})
	}
	if !n.cfg.DeadlockDetect {
		return
	}
	// The new wait may close several cycles: break them until none is left
	// or t itself is the victim.
	for t.waiting != nil {
		cycle := findCycle(t)
		if cycle == nil {
			return
		}
		v := victim(cycle)
		n.env.Logf(KindDeadlock, "trx %d conn %d closes a cycle of %d; victim trx %d conn %d", t.id, c.id, len(cycle), v.id, v.conn.id)
		n.abortWait(v, replyDeadlock, true, "deadlock victim")
		if v != t {
			n.run(v.conn)
		}
	}
}

// cancelWait removes t's waiting request and its timer.
func (n *Node) cancelWait(t *trx) {
	e := t.waitEntry
	e.removeReq(t.waiting)
	n.env.Cancel(t.waitTimer)
	t.waiting, t.waitEntry, t.waitTimer = nil, nil, sim.TimerID{}
	n.wake(e)
}

// abortWait ends t's lock wait with an error reply to its statement. Only the
// statement is rolled back unless whole is set (deadlock victims,
// innodb_rollback_on_timeout) or the statement had a transaction of its own.
// The caller runs the connection's next statements.
func (n *Node) abortWait(t *trx, rep Reply, whole bool, why string) {
	c := t.conn
	n.cancelWait(t)
	r := c.busy
	c.busy = nil
	if whole || t.implicit {
		n.rollback(c, why)
	}
	n.reply(c, r.ID, rep)
}

// wake queues a key whose queue changed, for drain to grant its waiters.
func (n *Node) wake(e *entry) { n.wakeq = append(n.wakeq, e) }

// drain grants what the changed queues allow and runs the statements that
// were waiting, until nothing changes (lock_rec_dequeue_from_page ->
// lock_rec_grant). Granted waiters resume in queue order. When gap locks
// appeared under existing waiters (record locks inherited to the gap, a gap
// lock granted), a cycle can close without a new wait starting; drain then
// searches the waits-for graph from every waiter, as MySQL 8's background
// deadlock detector does (lock0lock.cc, Deadlock_notifier), and breaks what
// it finds.
func (n *Node) drain() {
	if n.draining {
		return
	}
	n.draining = true
	for {
		for len(n.wakeq) > 0 {
			e := n.wakeq[0]
			n.wakeq[0] = nil
			n.wakeq = n.wakeq[1:]
			n.grantWaiters(e)
		}
		if !n.recheck || !n.cfg.DeadlockDetect || !n.breakOneDeadlock() {
			break
		}
	}
	n.recheck = false
	n.wakeq = n.wakeq[:0]
	n.draining = false
}

func (n *Node) grantWaiters(e *entry) {
	var resumed []*trx
	for _, r := range e.locks {
		if r.granted || !e.grantable(r) {
			continue
		}
		r.granted = true
		if r.mode == modeGap {
			n.recheck = true
		}
		t := r.trx
		t.nLocks++
		n.env.Cancel(t.waitTimer)
		t.waiting, t.waitEntry, t.waitTimer = nil, nil, sim.TimerID{}
		n.logLock(KindRowLocked, t, " ", r.mode, e)
		resumed = append(resumed, t)
	}
	for _, t := range resumed {
		c := t.conn
		if c.closed || c.busy == nil || c.trx != t {
			continue
		}
		r := *c.busy
		c.busy = nil
		n.execute(c, r)
		n.run(c)
	}
	n.gc(e)
}

// breakOneDeadlock looks for a cycle from every waiting transaction, in
// connection order, and rolls back the victim of the first one found. It
// reports whether it found one.
func (n *Node) breakOneDeadlock() bool {
	for _, id := range n.Conns() {
		c := n.conns[id]
		if c.trx == nil || c.trx.waiting == nil {
			continue
		}
		cycle := findCycle(c.trx)
		if cycle == nil {
			continue
		}
		v := victim(cycle)
		n.env.Logf(KindDeadlock, "found from trx %d conn %d, a cycle of %d; victim trx %d conn %d", c.trx.id, c.id, len(cycle), v.id, v.conn.id)
		n.abortWait(v, replyDeadlock, true, "deadlock victim")
		n.run(v.conn)
		n.recheck = true
		return true
	}
	return false
}

// commit commits the connection's transaction: its changes reach the redo
// log as FlushLogAtTrxCommit says, then its locks are released.
func (n *Node) commit(c *conn) {
	t := c.trx
	c.trx = nil
	if len(t.changes) > 0 {
		n.seq++
		rec := redoRecord{Seq: n.seq, Rows: make([]rowImage, len(t.changes))}
		for i, e := range t.changes {
			rec.Rows[i] = rowImage{Table: e.tab.cfg.Name, Key: e.key, Exists: e.dExst, Value: e.dVal}
			e.exist, e.value = e.dExst, e.dVal
			e.dirty, e.dVal = nil, ""
		}
		n.logCommit(rec)
		n.logRows(KindCommit, rec.Rows, false, "trx %d conn %d rows %d seq %d", t.id, c.id, len(rec.Rows), rec.Seq)
		n.replicate(rec)
	}
	n.release(t)
}

// rollback undoes the connection's transaction and releases its locks.
func (n *Node) rollback(c *conn, why string) {
	t := c.trx
	c.trx = nil
	for _, e := range t.changes {
		e.dirty, e.dVal = nil, ""
	}
	if len(t.changes) > 0 || !t.implicit {
		n.env.Logf(KindRollback, "trx %d conn %d rows %d: %s", t.id, c.id, len(t.changes), why)
	}
	n.release(t)
}

// release drops every lock of a finished transaction. Where its end removed
// a record (a rolled-back insert, a committed delete), the other
// transactions' record locks on it become gap locks.
func (n *Node) release(t *trx) {
	if len(t.entries) == 0 {
		return
	}
	b := strconv.AppendUint(append(n.scratch[:0], "trx "...), t.id, 10)
	b = strconv.AppendUint(append(b, " conn "...), uint64(t.conn.id), 10)
	b = strconv.AppendInt(append(b, " released "...), int64(len(t.entries)), 10)
	b = append(b, ':')
	for _, e := range t.entries {
		b = append(append(append(append(b, ' '), e.tab.cfg.Name...), '.'), e.key...)
		e.removeTrx(t)
		if !e.physical() && e.inheritToGap() {
			n.recheck = true
		}
		n.wake(e)
	}
	n.scratch = b
	if n.env.TraceKeeps(KindLockReleased) {
		n.env.LogBytesAttrs(KindLockReleased, b, sim.Int64("trx", int64(t.id)))
	} else {
		n.env.LogBytes(KindLockReleased, b)
	}
	t.entries, t.nLocks = nil, 0
}

// logCommit makes a commit durable according to innodb_flush_log_at_trx_commit.
func (n *Node) logCommit(rec redoRecord) {
	switch n.cfg.FlushLogAtTrxCommit {
	case 1:
		// Written and flushed before the commit returns.
		n.redo.Append(rec)
		n.redo.Sync()
		n.checkpoint()
		return
	case 2:
		// Written to the OS at commit (survives a mysqld crash), flushed
		// once a second (lost in a power loss until then).
		n.redo.Append(rec)
		n.dirtyLog = true
	case 0:
		// Kept in the log buffer, written and flushed once a second: lost in
		// any crash until then.
		n.unflushed = append(n.unflushed, rec)
	}
	if !n.flushing {
		n.flushing = true
		// Simplification: the once-a-second flush is armed by the first
		// unflushed commit rather than ticking from server start, so the
		// loss window is exactly up to one second.
		n.env.After(sim.Mono, flushInterval, flushTag{})
	}
}

func (n *Node) flushLog() {
	k := len(n.unflushed)
	for i, r := range n.unflushed {
		n.redo.Append(r)
		n.unflushed[i] = nil
	}
	n.unflushed = n.unflushed[:0]
	if k > 0 || n.dirtyLog {
		n.redo.Sync()
		n.dirtyLog = false
		n.env.Logf(KindFlush, "redo log flushed (%d buffered commits written)", k)
		n.checkpoint()
	}
}

// checkpointEvery bounds the redo log's length: once every commit in it is
// durable and it holds this many records, it is replaced by one snapshot of
// the committed rows.
const checkpointEvery = 1024

// checkpoint replaces a long, fully synced redo log by a snapshot, so that a
// long run keeps bounded memory. Simplification: InnoDB checkpoints by
// flushing dirty pages and advancing the checkpoint LSN in its circular log;
// the model keeps only what recovery needs, with the same result.
func (n *Node) checkpoint() {
	if n.redo.Len() < checkpointEvery || n.redo.Synced() != n.redo.Len() {
		return
	}
	n.redo.Replace([]any{n.snapshot()})
}

// String renders a reply for test messages.
func (r Reply) String() string { return strings.TrimSpace(string(r.AppendTrace(nil))) }
