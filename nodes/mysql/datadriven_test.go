package mysql

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/assert"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/sim"
)

// TestInteractions runs the step files in testdata/interactions: each step
// drives a MySQL node "db" and probe clients (c1, c2, c3 unless told; 1 ms
// latency) through named connections and prints what happened; the file
// holds the expected output under "----". After a model change, rewrite
// the files and review the diff:
//
//	go test ./nodes/mysql -run TestInteractions -rewrite
//
// The grammar (an unknown command or a leftover argument fails at its
// file:line):
//
//	server [clients=(c1, ...)] [lock-wait-timeout=DUR] [wait-timeout=DUR]
//	       [rollback-on-timeout] [no-deadlock-detect] [flush-log=0|1|2]
//	    configure db (before any other step; DefaultConfig otherwise) and
//	    name the client processes. The first other step starts the world.
//	connect NAME [client=C]
//	    open a connection of client C (c1 by default) and call it NAME;
//	    print its connection id.
//	hangup NAME          close NAME's socket without COM_QUIT.
//	closed               print the close notices the clients received
//	                     since the previous closed step, or "(none)".
//	rows [table=T]       print the committed rows of table T (locks).
//	conns                print the connections the server holds open.
//
// the steps of simtest.ConversationSteps (do, send, wait) with a
// connection's NAME as the target and a statement as the request, written
// as the model's trace writes it:
//
//	BEGIN | COMMIT | ROLLBACK | PING | QUIT
//	INSERT TABLE KEY VALUE | UPDATE TABLE KEY VALUE | DELETE TABLE KEY
//	SELECT TABLE KEY [FOR UPDATE]
//	SET VARIABLE=N       (autocommit, innodb_lock_wait_timeout, wait_timeout)
//	KILL [QUERY] NAME    (a connection's name, or a number)
//
// (a reply prints as "OK [affected N] [row VALUE | no row]" or as the
// client prints an error: "ERROR CODE (STATE): MESSAGE"); and the shared
// steps of simtest.SharedSteps (advance, pause, crash, restart, events,
// losses ...); events prints by default the row-lock, transaction and
// connection events, the faults and the connection ends.
func TestInteractions(t *testing.T) {
	simtest.RunInteractions(t, "testdata/interactions", func(*testing.T) simtest.Model {
		return &mysqlDD{cfg: DefaultConfig(), clients: []string{"c1", "c2", "c3"}}
	})
}

var mysqlDDKinds = []sim.Kind{
	KindConnOpen, KindConnClosed, KindRowLocked, KindLockWait, KindLockReleased, KindCommit,
	KindRollback, KindDeadlock, KindLockTimeout, KindRecovered,
	sim.KindCrash, sim.KindRestart, sim.KindPause, sim.KindResume, sim.KindClockJump, sim.KindConnEnd,
}

type mysqlDD struct {
	cfg     Config
	clients []string
	w       *world
	conns   map[string]*tconn
	selects map[uint64]bool // the requests that are SELECTs
	closed  []string        // close notices, in the order received
	shown   int             // close notices printed
}

func (h *mysqlDD) SetupSteps() []string { return []string{"server"} }
func (h *mysqlDD) Steps() []string      { return []string{"connect", "hangup", "closed", "rows", "conns"} }

func (h *mysqlDD) Step(a *simtest.Args, td *datadriven.TestData) string {
	switch td.Cmd {
	case "connect":
		name := a.Pos("connection name")
		client := a.String("client", h.clients[0])
		a.Done()
		if _, dup := h.conns[name]; dup {
			a.Fatalf("connection %s is already open", name)
		}
		if _, ok := h.w.clients[client]; !ok {
			a.Fatalf("unknown client %q (known: %s)", client, strings.Join(h.clients, ", "))
		}
		c := h.w.connect(client)
		h.conns[name] = c
		return fmt.Sprintf("%s: conn %d of %s (%s)\n", name, c.id, client, h.w.K.Now())
	case "hangup":
		c := h.conn(a, a.Pos("connection name"))
		a.Done()
		h.w.clients[c.client].Env().Send(h.w.db, Hangup{Conn: c.id})
		return ""
	case "closed":
		a.Done()
		out := strings.Join(h.closed[h.shown:], "")
		h.shown = len(h.closed)
		if out == "" {
			return "(none)\n"
		}
		return out
	case "conns":
		a.Done()
		n := h.w.node()
		if n == nil {
			return "(db is down)\n"
		}
		var b strings.Builder
		for _, id := range n.Conns() {
			name := "?"
			for _, k := range simtest.SortedKeys(h.conns) {
				if h.conns[k].id == id {
					name = k
				}
			}
			fmt.Fprintf(&b, "conn %d (%s)\n", id, name)
		}
		if b.Len() == 0 {
			return "(none)\n"
		}
		return b.String()
	case "rows":
		table := a.String("table", h.cfg.Tables[0].Name)
		a.Done()
		n := h.w.node()
		if n == nil {
			return "(db is down)\n"
		}
		rows := n.Rows(table)
		if len(rows) == 0 {
			return "(no rows)\n"
		}
		var b strings.Builder
		for _, k := range simtest.SortedKeys(rows) {
			fmt.Fprintf(&b, "%s %s\n", k, rows[k])
		}
		return b.String()
	}
	return ""
}

func (h *mysqlDD) Setup(a *simtest.Args, td *datadriven.TestData) {
	if cs := a.Vals("clients"); cs != nil {
		h.clients = cs
	}
	h.cfg.LockWaitTimeout = a.Duration("lock-wait-timeout", h.cfg.LockWaitTimeout)
	h.cfg.WaitTimeout = a.Duration("wait-timeout", h.cfg.WaitTimeout)
	h.cfg.RollbackOnTimeout = a.Bool("rollback-on-timeout")
	h.cfg.DeadlockDetect = !a.Bool("no-deadlock-detect")
	h.cfg.FlushLogAtTrxCommit = a.Int("flush-log", h.cfg.FlushLogAtTrxCommit)
	a.Done()
	if err := h.cfg.Validate(); err != nil {
		a.Fatalf("%v", err)
	}
}

// Start builds the world and hooks the clients' close notices.
func (h *mysqlDD) Start(t testing.TB) (*simtest.Steps, *simtest.Conversation) {
	h.w = newWorld(t, h.cfg, h.clients...)
	h.conns, h.selects = map[string]*tconn{}, map[uint64]bool{}
	for _, name := range h.clients {
		c, name := h.w.clients[name], name
		other := c.Other
		c.Other = func(env *sim.Env, from sim.ProcID, msg sim.Message) {
			other(env, from, msg)
			if m, ok := msg.(Closed); ok {
				h.closed = append(h.closed, fmt.Sprintf("%s %s: conn %d closed: %s\n", h.w.K.Now(), name, m.Conn, m.Reason))
			}
		}
	}
	return &simtest.Steps{W: h.w.World, Kinds: mysqlDDKinds}, &simtest.Conversation{W: h.w.World, Send: h.send, Reply: h.reply}
}

func (h *mysqlDD) conn(a *simtest.Args, name string) *tconn {
	c, ok := h.conns[name]
	if !ok {
		a.Fatalf("unknown connection %q (connect it first)", name)
	}
	return c
}

func (h *mysqlDD) send(a *simtest.Args, target string, words []string) uint64 {
	c := h.conn(a, target)
	s := h.parseStmt(a, words)
	id := c.send(s)
	switch s.(type) {
	case Select, SelectForUpdate:
		h.selects[id] = true
	}
	return id
}

func (h *mysqlDD) reply(id uint64) (string, sim.Time, bool) {
	for _, c := range h.w.clients {
		if a, ok := c.Reply(id); ok {
			return h.render(id, a.Reply), a.At, true
		}
	}
	return "", 0, false
}

// render prints a reply as the grammar of TestInteractions says.
func (h *mysqlDD) render(id uint64, r Reply) string {
	if !r.OK() {
		return fmt.Sprintf("ERROR %d (%s): %s", r.Code, r.State, r.Msg)
	}
	s := "OK"
	if r.Affected != 0 {
		s += fmt.Sprintf(" affected %d", r.Affected)
	}
	switch {
	case r.Found:
		s += " row " + r.Value
	case h.selects[id]:
		s += " no row"
	}
	return s
}

// parseStmt reads a statement as the model's trace writes it.
func (h *mysqlDD) parseStmt(a *simtest.Args, words []string) Stmt {
	line := strings.Join(words, " ")
	args := words[1:]
	want := func(usage string, n int) {
		if len(args) != n {
			a.Fatalf("%s: want %s", line, usage)
		}
	}
	switch strings.ToUpper(words[0]) {
	case "BEGIN":
		want("BEGIN", 0)
		return Begin{}
	case "COMMIT":
		want("COMMIT", 0)
		return Commit{}
	case "ROLLBACK":
		want("ROLLBACK", 0)
		return Rollback{}
	case "PING":
		want("PING", 0)
		return Ping{}
	case "QUIT":
		want("QUIT", 0)
		return Quit{}
	case "INSERT":
		want("INSERT TABLE KEY VALUE", 3)
		return Insert{Table: args[0], Key: args[1], Value: args[2]}
	case "UPDATE":
		want("UPDATE TABLE KEY VALUE", 3)
		return Update{Table: args[0], Key: args[1], Value: args[2]}
	case "DELETE":
		want("DELETE TABLE KEY", 2)
		return Delete{Table: args[0], Key: args[1]}
	case "SELECT":
		if len(args) == 4 && strings.EqualFold(args[2]+" "+args[3], "FOR UPDATE") {
			return SelectForUpdate{Table: args[0], Key: args[1]}
		}
		want("SELECT TABLE KEY [FOR UPDATE]", 2)
		return Select{Table: args[0], Key: args[1]}
	case "SET":
		want("SET VARIABLE=N", 1)
		v, n, ok := strings.Cut(args[0], "=")
		x, err := strconv.ParseInt(n, 10, 64)
		if !ok || err != nil {
			a.Fatalf("%s: want SET VARIABLE=N", line)
		}
		return SetSession{Var: v, Value: x}
	case "KILL":
		k := Kill{}
		if len(args) == 2 && strings.EqualFold(args[0], "QUERY") {
			k.Query, args = true, args[1:]
		}
		want("KILL [QUERY] CONNECTION", 1)
		if c, ok := h.conns[args[0]]; ok {
			k.Target = c.id
		} else if n, err := strconv.ParseUint(args[0], 10, 64); err == nil {
			k.Target = ConnID(n)
		} else {
			a.Fatalf("%s: %q is neither a connection nor a number", line, args[0])
		}
		return k
	}
	a.Fatalf("unknown statement %q (BEGIN, COMMIT, ROLLBACK, PING, QUIT, INSERT, UPDATE, DELETE, SELECT, SET, KILL)", words[0])
	return nil
}

// TestStatementMistakes: a statement the grammar does not know fails at
// its file:line and says why.
func TestStatementMistakes(t *testing.T) {
	h := &mysqlDD{conns: map[string]*tconn{"a": {id: 7}}}
	for line, want := range map[string]string{
		"INSERT locks k":            "f.txt:1: do: INSERT locks k: want INSERT TABLE KEY VALUE",
		"SELECT locks k FOR":        "f.txt:1: do: SELECT locks k FOR: want SELECT TABLE KEY [FOR UPDATE]",
		"SET autocommit":            "f.txt:1: do: SET autocommit: want SET VARIABLE=N",
		"KILL nobody":               `f.txt:1: do: KILL nobody: "nobody" is neither a connection nor a number`,
		"BEGIN WORK":                "f.txt:1: do: BEGIN WORK: want BEGIN",
		"LOCK TABLES":               `f.txt:1: do: unknown statement "LOCK" (BEGIN, COMMIT, ROLLBACK, PING, QUIT, INSERT, UPDATE, DELETE, SELECT, SET, KILL)`,
		"KILL QUERY a":              "",
		"select locks k for update": "",
	} {
		assert.Equal(t, want, simtest.LineFailure(t, line, func(a *simtest.Args, w []string) { h.parseStmt(a, w) }), line)
	}
}
