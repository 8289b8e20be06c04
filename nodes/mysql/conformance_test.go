package mysql

// Differential conformance suite: the same statement sequences, on several
// connections, run against the model (in a sim kernel) and against a real
// MariaDB server (through github.com/go-sql-driver/mysql), and every outcome
// is compared: error number and text, the row a SELECT returned, affected
// rows, and whether a statement was still waiting for a lock at a checkpoint.
// The real server is the specification.
//
// Timing: a statement expected to block is sent asynchronously; the script
// then settles (until the real server replies or shows the statement in a
// lasting lock wait; 50 ms virtual) and records whether it is still
// waiting. Lock wait timeouts are set to 3 s per session so waits end fast;
// sleeps are real on the server and virtual in the model.
//
// mariadb-server must be installed (apt-get install -y mariadb-server). The
// suite initialises a data directory in t.TempDir() with mariadb-install-db,
// starts its own mariadbd on a free loopback port with --skip-grant-tables
// and stops it by PID. When the binaries are missing it skips loudly, and it
// fails when CI=true.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/realmode/launch"
	"github.com/locksim/locksim/sim"
)

// ---- the real server ----

// mariadb is the real server, started through realmode/launch (as real
// mode starts it).
type mariadb struct {
	t   *testing.T
	srv *launch.Server
}

// startMariaDB initialises a data directory in t.TempDir() and starts
// mariadbd on it with the lock table locksim.locks; it is stopped by PID
// when the test ends.
func startMariaDB(t *testing.T) *mariadb {
	t.Helper()
	if _, _, err := launch.MariaDBBinaries("", ""); err != nil {
		simtest.NeedBinaries(t, "the MariaDB conformance suite of nodes/mysql", "apt-get install -y mariadb-server", launch.MariaDBInstallProgram, launch.MariaDBServerProgram)
	}
	// The driver logs dropped connections, which the suite causes on purpose.
	require.NoError(t, gomysql.SetLogger(log.New(io.Discard, "", 0)))
	srv, err := launch.StartMariaDB(launch.MariaDBOptions{Dir: t.TempDir(), Database: "locksim",
		Tables: []launch.MariaDBTable{{Name: tab, KeyName: "PRIMARY"}}, FlushLogAtTrxCommit: -1})
	if srv != nil {
		t.Cleanup(srv.Stop)
	}
	require.NoError(t, err)
	return &mariadb{t: t, srv: srv}
}

// start restarts mariadbd on the same data directory after crash.
func (m *mariadb) start() { require.NoError(m.t, m.srv.Restart()) }

// crash kills mariadbd with SIGKILL (kill -9) and waits for it to exit.
func (m *mariadb) crash() { require.NoError(m.t, m.srv.Kill()) }

var dialSeq struct {
	sync.Mutex
	n int
}

// realConn is one connection to the real server, on its own *sql.DB pinned
// to one *sql.Conn, with its socket kept so that a test can close it the way
// a dying client's kernel does.
type realConn struct {
	db   *sql.DB
	conn *sql.Conn
	sock net.Conn
	id   int64 // CONNECTION_ID()
}

func (m *mariadb) open(t *testing.T, schema string) *sql.DB {
	db, err := sql.Open("mysql", "root@tcp("+m.srv.Addr()+")/"+schema+"?interpolateParams=true")
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func (m *mariadb) connect(t *testing.T) *realConn {
	t.Helper()
	dialSeq.Lock()
	dialSeq.n++
	netName := "locksim-conformance-" + strconv.Itoa(dialSeq.n)
	dialSeq.Unlock()
	rc := &realConn{}
	var mu sync.Mutex
	gomysql.RegisterDialContext(netName, func(ctx context.Context, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			mu.Lock()
			rc.sock = c
			mu.Unlock()
		}
		return c, err
	})
	db, err := sql.Open("mysql", "root@"+netName+"("+m.srv.Addr()+")/locksim?interpolateParams=true")
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	rc.db = db
	rc.conn, err = db.Conn(context.Background())
	require.NoError(t, err)
	require.NoError(t, rc.conn.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&rc.id))
	t.Cleanup(func() { _ = rc.conn.Close(); _ = db.Close() })
	return rc
}

// ---- scripts ----

// outcome is what the suite compares.
type outcome struct {
	Code     int
	State    string // SQLSTATE
	Msg      string
	Found    bool
	Value    string
	Affected int64
	Waiting  bool // still waiting at the checkpoint after an async send
}

func (o outcome) String() string {
	if o.Waiting {
		return "waiting"
	}
	if o.Code == ErrServerGone || o.Code == ErrServerLost {
		// NB: whether a statement on a connection the server closed fails
		// in the write (2006) or in the read of the reply (2013) is decided
		// by the client's socket, not by the server: both are "the
		// connection is gone".
		return "connection lost (2006/2013)"
	}
	if o.Code != 0 {
		return fmt.Sprintf("ERROR %d (%s): %s", o.Code, o.State, o.Msg)
	}
	s := "OK"
	if o.Affected != 0 {
		s += fmt.Sprintf(" affected %d", o.Affected)
	}
	if o.Found {
		s += " row " + o.Value
	}
	return s
}

func fromReply(r Reply) outcome {
	return outcome{Code: r.Code, State: r.State, Msg: r.Msg, Found: r.Found, Value: r.Value, Affected: r.Affected}
}

// op kinds of a script step.
type opKind uint8

const (
	opDo        opKind = iota // run the statement and record its outcome
	opSend                    // send it, settle, record whether it waits
	opCollect                 // record the outcome of an earlier opSend
	opSleep                   // sleep d (virtual time in the model)
	opHangup                  // close the connection's socket without COM_QUIT
	opCrash                   // kill -9 the server and restart it
	opReconnect               // open the connection again (after a crash)
)

type step struct {
	op   opKind
	conn int // connection index
	stmt Stmt
	kill int // for a Kill statement: the index of the target connection (stmt's Target is ignored)
	ref  int // opCollect: the index of the opSend step
	d    time.Duration
}

func do(conn int, s Stmt) step   { return step{op: opDo, conn: conn, stmt: s} }
func send(conn int, s Stmt) step { return step{op: opSend, conn: conn, stmt: s} }
func collect(ref int) step       { return step{op: opCollect, ref: ref} }
func sleep(d time.Duration) step { return step{op: opSleep, d: d} }
func killConn(conn, target int, query bool) step {
	return step{op: opDo, conn: conn, stmt: Kill{Query: query}, kill: target}
}

const tab = "locks"

func ins(k, v string) Stmt { return Insert{Table: tab, Key: k, Value: v} }
func del(k string) Stmt    { return Delete{Table: tab, Key: k} }
func sfu(k string) Stmt    { return SelectForUpdate{Table: tab, Key: k} }
func sel(k string) Stmt    { return Select{Table: tab, Key: k} }
func upd(k, v string) Stmt { return Update{Table: tab, Key: k, Value: v} }
func lwt(s int64) Stmt     { return SetSession{Var: VarLockWaitTimeout, Value: s} }

type script struct {
	name  string
	conns int
	steps []step
	// unordered lists groups of steps whose outcomes may come in either
	// order on the real server (threads woken together race); they are
	// compared as multisets.
	unordered [][]int
}

// Settle times after an async send: long enough for the statement to reach
// its lock wait. NB: on the real server the settle is a condition, not a
// sleep (see settle): realSettle is only how long a lock wait must be seen
// to last, so that a wait that the deadlock detector is about to end is not
// taken for a lasting one.
const (
	realSettle  = 200 * time.Millisecond
	modelSettle = 50 * time.Millisecond
)

// lockWaitQuery tells whether a connection's transaction waits for a lock:
// INFORMATION_SCHEMA.INNODB_TRX shows trx_state 'LOCK WAIT' while
// trx->lock.wait_lock is set (MariaDB 10.11 storage/innobase/trx/trx0i_s.cc
// fill_trx_row: "LOCK WAIT" when trx->lock.wait_lock is set).
const lockWaitQuery = "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = ? AND trx_state = 'LOCK WAIT'"

// settle waits until a statement sent asynchronously either replied (done)
// or waits for a lock, seen by the server, twice realSettle apart without a
// reply in between (not done). Waiting on the server's own account instead
// of sleeping a fixed settle time keeps the suite exact on a loaded machine,
// where a statement that fails at once (a duplicate key, a deadlock victim)
// may take longer than any fixed settle time to reply. What stays in real
// time is the lock wait timeout of the scripts that set it (1 s, the wait
// under test): the lock wait is seen within a few polls of its start, far
// inside it.
func settle(t *testing.T, admin *realConn, connID int64, done chan outcome) (outcome, bool) {
	t.Helper()
	waiting := func() bool {
		var n int
		require.NoError(t, admin.conn.QueryRowContext(context.Background(), lockWaitQuery, connID).Scan(&n))
		return n > 0
	}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case o := <-done:
			return o, true
		case <-deadline:
			t.Fatalf("real: a statement on connection %d neither replied nor waited for a lock within 30 s", connID)
		default:
		}
		if waiting() {
			time.Sleep(realSettle)
			select {
			case o := <-done:
				return o, true
			default:
			}
			if waiting() {
				return outcome{}, false
			}
		}
		time.Sleep(lockWaitPoll)
	}
}

// lockWaitPoll spaces the polls of INNODB_TRX: InnoDB serves it from a
// cache that is refreshed only when it was last read more than 0.1 s ago
// (MariaDB 10.11 storage/innobase/trx/trx0i_s.cc CACHE_MIN_IDLE_TIME_US,
// can_cache_be_updated), so faster polls would read one stale copy forever.
// realSettle is longer too, so the second look of settle sees a fresh copy.
const lockWaitPoll = 150 * time.Millisecond

// runModel runs a script against the model.
func runModel(t *testing.T, s script) []outcome {
	names := make([]string, s.conns)
	for i := range names {
		names[i] = "c" + strconv.Itoa(i+1)
	}
	w := newWorld(t, DefaultConfig(), names...)
	conns := make([]*tconn, s.conns)
	for i := range conns {
		conns[i] = w.connect(names[i])
	}
	ids := map[int]uint64{}
	out := make([]outcome, len(s.steps))
	for i, st := range s.steps {
		c := conns[st.conn]
		stmt := st.stmt
		if k, isKill := stmt.(Kill); isKill {
			k.Target = conns[st.kill].id
			stmt = k
		}
		switch st.op {
		case opDo:
			r, got := w.wait(c.client, c.send(stmt), 2*time.Minute)
			require.True(t, got, "model: step %d: no reply", i)
			out[i] = normKill(fromReply(r), st, int64(conns[st.kill].id))
		case opSend:
			ids[i] = c.send(stmt)
			w.Advance(modelSettle)
			r, got := c.reply(ids[i])
			out[i] = outcome{Waiting: !got}
			if got {
				out[i] = fromReply(r)
			}
		case opCollect:
			ref := s.steps[st.ref]
			r, got := w.wait(conns[ref.conn].client, ids[st.ref], 2*time.Minute)
			require.True(t, got, "model: step %d: no reply to step %d", i, st.ref)
			out[i] = fromReply(r)
		case opSleep:
			w.Advance(st.d)
		case opHangup:
			w.clients[c.client].Env().Send(w.db, Hangup{Conn: c.id})
			w.Advance(modelSettle)
		case opCrash:
			w.K.Crash(w.db, sim.CrashProcess)
			w.Advance(time.Second)
			w.K.Restart(w.db)
			w.Advance(time.Millisecond)
		case opReconnect:
			conns[st.conn] = w.connect(c.client)
		}
	}
	return out
}

// realResult is the outcome of one statement on the real server.
func realExec(t *testing.T, rc *realConn, s Stmt, killID int64) outcome {
	ctx := context.Background()
	var (
		res  sql.Result
		err  error
		rows *sql.Rows
	)
	switch st := s.(type) {
	case Ping:
		err = rc.conn.PingContext(ctx)
	case Kill:
		_, err = rc.conn.ExecContext(ctx, KillSQL(st, killID))
	default:
		q, args, isRows, ok := SQL(s)
		if !ok {
			panic(fmt.Sprintf("realExec: %T", s))
		}
		if isRows {
			rows, err = rc.conn.QueryContext(ctx, q, args...)
		} else {
			res, err = rc.conn.ExecContext(ctx, q, args...)
		}
	}
	if err == nil && rows != nil {
		var o outcome
		for rows.Next() {
			var v sql.NullString
			if err = rows.Scan(&v); err != nil {
				break
			}
			o.Found, o.Value = true, v.String
		}
		if err == nil {
			err = rows.Err()
		}
		_ = rows.Close()
		if err == nil {
			return o
		}
	}
	if err != nil {
		var me *gomysql.MySQLError
		if errors.As(err, &me) {
			return outcome{Code: int(me.Number), State: string(me.SQLState[:]), Msg: me.Message}
		}
		// The driver found the socket closed. It says ErrInvalidConn when a
		// read of the reply failed (libmysqlclient's CR_SERVER_LOST), and
		// driver.ErrBadConn when the command could not be sent
		// (CR_SERVER_GONE_ERROR).
		if errors.Is(err, gomysql.ErrInvalidConn) {
			return outcome{Code: ErrServerLost, Msg: replyServerLost.Msg}
		}
		require.ErrorIs(t, err, driver.ErrBadConn)
		return outcome{Code: ErrServerGone, Msg: replyServerGone.Msg}
	}
	o := outcome{}
	if res != nil {
		o.Affected, _ = res.RowsAffected()
	}
	return o
}

// runReal runs a script against the real server after emptying the table.
func runReal(t *testing.T, m *mariadb, s script) []outcome {
	admin := m.connect(t)
	_, err := admin.conn.ExecContext(context.Background(), "DELETE FROM locks")
	require.NoError(t, err)
	conns := make([]*realConn, s.conns)
	for i := range conns {
		conns[i] = m.connect(t)
	}
	type async struct {
		done chan outcome
	}
	pendingSends := map[int]*async{}
	out := make([]outcome, len(s.steps))
	for i, st := range s.steps {
		var killID int64
		if st.op == opDo {
			if _, isKill := st.stmt.(Kill); isKill {
				killID = conns[st.kill].id
			}
		}
		switch st.op {
		case opDo:
			out[i] = normKill(realExec(t, conns[st.conn], st.stmt, killID), st, killID)
		case opSend:
			a := &async{done: make(chan outcome, 1)}
			pendingSends[i] = a
			go func(rc *realConn, s Stmt) { a.done <- realExec(t, rc, s, 0) }(conns[st.conn], st.stmt)
			o, done := settle(t, admin, conns[st.conn].id, a.done)
			out[i] = outcome{Waiting: !done}
			if done {
				out[i] = o
				a.done <- o
			}
		case opCollect:
			select {
			case out[i] = <-pendingSends[st.ref].done:
			case <-time.After(30 * time.Second):
				t.Fatalf("real: step %d: no reply to step %d within 30 s", i, st.ref)
			}
		case opSleep:
			time.Sleep(st.d)
		case opHangup:
			require.NoError(t, conns[st.conn].sock.Close())
			time.Sleep(realSettle)
		case opCrash:
			m.crash()
			m.start()
			admin = m.connect(t)
		case opReconnect:
			conns[st.conn] = m.connect(t)
		}
	}
	return out
}

// normKill replaces the thread id in "Unknown thread id: N" with the
// target's connection index, since ids differ between the two servers.
func normKill(o outcome, st step, id int64) outcome {
	if _, isKill := st.stmt.(Kill); isKill && o.Code == ErrNoSuchThread {
		o.Msg = strings.Replace(o.Msg, strconv.FormatInt(id, 10), "<conn "+strconv.Itoa(st.kill)+">", 1)
	}
	return o
}

func render(s script, out []outcome) string {
	out = append([]outcome(nil), out...)
	for _, g := range s.unordered {
		vals := make([]outcome, len(g))
		for i, j := range g {
			vals[i] = out[j]
		}
		sort.Slice(vals, func(a, b int) bool { return vals[a].String() < vals[b].String() })
		for i, j := range g {
			out[j] = vals[i]
		}
	}
	var b strings.Builder
	for i, st := range s.steps {
		switch st.op {
		case opDo, opSend:
			fmt.Fprintf(&b, "%2d conn %d %-40s -> %v\n", i, st.conn, string(st.stmt.appendStmt(nil)), out[i])
		case opCollect:
			fmt.Fprintf(&b, "%2d collect step %d -> %v\n", i, st.ref, out[i])
		}
	}
	return b.String()
}

// ---- the suite ----

func conformanceScripts() []script {
	return []script{
		{"duplicate key against a committed row", 2, []step{
			do(0, ins("L", "a")),
			do(1, ins("L", "b")),
			do(1, sel("L")),
			do(0, del("L")),
			do(0, del("L")),
			do(1, ins("L", "b")),
			do(1, sel("L")),
			do(0, upd("L", "b")),
			do(0, upd("L", "c")),
			do(0, Insert{Table: "nope", Key: "L", Value: "a"}),
			do(0, SetSession{Var: "nope", Value: 1}),
			do(0, SetSession{Var: VarAutocommit, Value: 2}),
		}, nil},
		{"insert waits for an uncommitted insert; commit makes it a duplicate", 2, []step{
			do(0, Begin{}),
			do(0, ins("L", "a")),
			send(1, ins("L", "b")),
			do(0, Commit{}),
			collect(2),
		}, nil},
		{"insert waits for an uncommitted insert; rollback lets it in", 2, []step{
			do(0, Begin{}),
			do(0, ins("L", "a")),
			send(1, ins("L", "b")),
			do(0, Rollback{}),
			collect(2),
			do(0, sel("L")),
		}, nil},
		{"insert waits for a FOR UPDATE lock on the row, then duplicate", 2, []step{
			do(0, ins("L", "free")),
			do(0, Begin{}),
			do(0, sfu("L")),
			send(1, ins("L", "b")),
			do(0, Commit{}),
			collect(3),
		}, nil},
		{"FOR UPDATE waits until the holder commits", 3, []step{
			do(0, ins("L", "free")),
			do(0, Begin{}),
			do(0, sfu("L")),
			do(0, upd("L", "a")),
			do(1, Begin{}),
			send(1, sfu("L")),
			do(2, sel("L")),
			do(0, Commit{}),
			collect(5),
			do(1, Commit{}),
		}, nil},
		{"FOR UPDATE waits until the holder rolls back", 2, []step{
			do(0, ins("L", "free")),
			do(0, Begin{}),
			do(0, sfu("L")),
			do(0, del("L")),
			do(1, Begin{}),
			send(1, sfu("L")),
			do(0, Rollback{}),
			collect(5),
			do(1, Rollback{}),
		}, nil},
		// NB: a lock wait timeout is real time on the server: 3 s rather
		// than the minimum of 1 s leaves a loaded machine ample time to see
		// each statement waiting (settle) before its wait ends.
		{"lock wait timeout rolls back only the statement", 2, []step{
			do(0, ins("L", "free")),
			do(0, ins("M", "free")),
			do(1, lwt(3)),
			do(0, Begin{}),
			do(0, sfu("L")),
			do(1, Begin{}),
			do(1, sfu("M")),
			send(1, sfu("L")),
			collect(7),
			do(0, lwt(3)),
			send(0, sfu("M")), // b still holds M
			collect(10),
			do(1, Commit{}),
			do(0, sfu("M")),
			do(0, Commit{}),
		}, nil},
		{"deadlock: the requester is the victim on a tie", 2, []step{
			do(0, ins("A", "-")),
			do(0, ins("B", "-")),
			do(0, Begin{}),
			do(1, Begin{}),
			do(0, sfu("A")),
			do(1, sfu("B")),
			send(0, sfu("B")),
			send(1, sfu("A")),
			collect(6),
			do(0, Commit{}),
			do(1, sel("B")),
		}, nil},
		{"deadlock: the lighter transaction is the victim", 2, []step{
			do(0, ins("A", "-")),
			do(0, ins("B", "-")),
			do(0, Begin{}),
			do(1, Begin{}),
			do(1, ins("h1", "x")),
			do(1, ins("h2", "x")),
			do(1, ins("h3", "x")),
			do(0, sfu("A")),
			do(1, sfu("B")),
			send(0, sfu("B")),
			send(1, sfu("A")),
			collect(9),
			do(1, Rollback{}),
		}, nil},
		{"three inserters behind a rolled-back insert deadlock", 3, []step{
			do(0, Begin{}),
			do(0, ins("L", "a")),
			do(1, Begin{}),
			do(2, Begin{}),
			send(1, ins("L", "b")),
			send(2, ins("L", "c")),
			do(0, Rollback{}),
			collect(4),
			collect(5),
			do(1, Commit{}),
			do(2, Commit{}),
		}, [][]int{{7, 8}}},
		{"gap locks on a missing key", 2, []step{
			do(0, Begin{}),
			do(0, sfu("L")),
			do(1, Begin{}),
			do(1, sfu("L")),
			send(1, ins("L", "b")),
			do(0, ins("L", "a")),
			collect(4),
			do(1, Commit{}),
			do(0, sel("L")),
		}, nil},
		{"a killed connection releases its locks", 3, []step{
			do(0, ins("L", "free")),
			do(0, Begin{}),
			do(0, sfu("L")),
			do(0, upd("L", "a")),
			send(1, sfu("L")),
			killConn(2, 0, false),
			collect(4),
			do(2, sel("L")),
			killConn(2, 0, false),
			do(0, Ping{}),
		}, nil},
		{"KILL of a waiting connection", 3, []step{
			do(0, Begin{}),
			do(0, ins("L", "a")),
			do(1, Begin{}),
			do(1, ins("M", "b")),
			send(1, sfu("L")),
			killConn(2, 1, false),
			collect(4),
			do(1, Ping{}),
			do(0, ins("M", "a")),
			do(0, Commit{}),
			killConn(0, 0, false),
			do(0, Ping{}),
		}, nil},
		{"KILL QUERY ends a lock wait", 3, []step{
			do(0, Begin{}),
			do(0, ins("L", "a")),
			do(1, Begin{}),
			send(1, sfu("L")),
			killConn(2, 1, true),
			collect(3),
			do(1, Rollback{}),
			do(0, Commit{}),
		}, nil},
		{"a client that hangs up has its transaction rolled back", 2, []step{
			do(0, ins("L", "free")),
			do(0, Begin{}),
			do(0, sfu("L")),
			do(0, upd("L", "a")),
			send(1, sfu("L")),
			{op: opHangup, conn: 0},
			collect(4),
		}, nil},
		{"a client that hangs up while waiting keeps its locks until the wait ends", 3, []step{
			do(1, Begin{}),
			do(1, ins("M", "b")),
			do(0, Begin{}),
			do(0, ins("L", "a")),
			send(1, sfu("L")),
			{op: opHangup, conn: 1},
			send(2, ins("M", "c")),
			do(0, Commit{}),
			collect(6),
			do(2, sel("M")),
		}, nil},
		{"wait_timeout closes an idle connection and releases its locks", 2, []step{
			do(0, ins("L", "free")),
			// NB: wait_timeout is real time on the server, counted from
			// connection 0's last statement: 3 s rather than the minimum
			// of 1 s leaves a loaded machine ample time to see connection
			// 1 waiting (settle) before the idle connection is closed.
			do(0, SetSession{Var: VarWaitTimeout, Value: 3}),
			do(0, Begin{}),
			do(0, sfu("L")),
			do(0, ins("M", "a")),
			do(1, lwt(10)),
			send(1, sfu("L")),
			collect(6),
			do(1, sel("M")),
			do(0, Ping{}),
		}, nil},
		{"kill -9 and restart: committed rows stay, uncommitted are gone", 2, []step{
			do(0, ins("held", "a")),
			do(0, Begin{}),
			do(0, ins("uncommitted", "a")),
			do(1, SetSession{Var: VarAutocommit, Value: 0}),
			do(1, del("held")),
			{op: opCrash},
			do(0, Ping{}),
			{op: opReconnect, conn: 0},
			do(0, sel("held")),
			do(0, sel("uncommitted")),
			do(0, ins("held", "b")),
			do(0, ins("uncommitted", "b")),
		}, nil},
	}
}

func TestConformanceMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("the MariaDB conformance suite starts a real server; skipped with -short")
	}
	m := startMariaDB(t)

	t.Run("defaults", func(t *testing.T) {
		rc := m.connect(t)
		var wait, lockWait, flush, rollbackOnTimeout, detect int64
		require.NoError(t, rc.conn.QueryRowContext(context.Background(),
			"SELECT @@wait_timeout, @@innodb_lock_wait_timeout, @@innodb_flush_log_at_trx_commit, @@innodb_rollback_on_timeout, @@innodb_deadlock_detect").
			Scan(&wait, &lockWait, &flush, &rollbackOnTimeout, &detect))
		d := DefaultConfig()
		assert.Equal(t, int64(d.WaitTimeout/time.Second), wait)
		assert.Equal(t, int64(d.LockWaitTimeout/time.Second), lockWait)
		assert.Equal(t, int64(d.FlushLogAtTrxCommit), flush)
		assert.Equal(t, d.RollbackOnTimeout, rollbackOnTimeout == 1)
		assert.Equal(t, d.DeadlockDetect, detect == 1)
	})

	for _, s := range conformanceScripts() {
		t.Run(s.name, func(t *testing.T) {
			want := runReal(t, m, s)
			got := runModel(t, s)
			assert.Equal(t, render(s, want), render(s, got), "real MariaDB (expected) vs model (actual)")
		})
	}
}
