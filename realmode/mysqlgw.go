package realmode

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"log"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/locksim/locksim/nodes/mysql"
	"github.com/locksim/locksim/realmode/launch"
	"github.com/locksim/locksim/sim"
)

// mysqlGateway is the kernel process that stands for a real mariadbd under
// the MySQL node's process name. The model's protocol is connection
// oriented (nodes/mysql proto.go): each Connect opens a real connection
// (go-sql-driver/mysql, from the client's own loopback address through the
// proxy) whose CONNECTION_ID() is the Conn the client gets back, and each
// Request runs on its connection's own goroutine, in order, as a server
// thread runs a connection's statements (one waiting for a row lock holds
// the ones behind it). The driver injects each reply as the gateway's
// message. When the client's kernel connection to the gateway ends (the
// client crashed, or closed it after a statement timeout) the gateway
// closes the client's real sockets, and mariadbd ends those sessions,
// rolling back and freeing their row locks, as the model's node does on
// ConnEnded.
//
// NB: the model's server tells a client at once that it closed its
// connection (wait_timeout, KILL: mysql.Closed, the FIN); the gateway does
// not watch idle sockets, so a client learns it at its next statement,
// which the driver fails as CR_SERVER_GONE_ERROR 2006, the reply the
// model's client gives itself then. The client's verdict-relevant view is
// the same; its trace lacks the "server closed conn" note.
type mysqlGateway struct {
	rt    *runtime
	name  string
	srv   *server
	env   *sim.Env
	conns map[mysql.ConnID]*sqlConn
	dead  bool
}

// sqlConn is one real connection and the goroutine that runs its
// statements.
type sqlConn struct {
	id    mysql.ConnID
	owner sim.ProcID
	db    *sql.DB
	conn  *sql.Conn
	sock  atomic.Pointer[net.Conn]
	stmts chan mysql.Request
	quit  chan struct{}
	once  sync.Once
}

// close closes the real socket (mariadbd sees the client hang up) and
// stops the connection's goroutine.
func (c *sqlConn) close() {
	c.once.Do(func() {
		close(c.quit)
		if s := c.sock.Load(); s != nil {
			(*s).Close()
		}
	})
}

var (
	// dialSeq numbers the driver's dial functions: each real connection
	// registers its own, which dials from the client's loopback address
	// and keeps the socket.
	dialSeq atomic.Uint64
	// quietDriver silences the driver's log of connections the run drops
	// on purpose (crashes, hangups).
	quietDriver sync.Once
)

func (g *mysqlGateway) Init(env *sim.Env) {
	g.env = env
	g.conns = map[mysql.ConnID]*sqlConn{}
	g.rt.gateways[g.name] = g
}

func (g *mysqlGateway) Fire(env *sim.Env, tag any) {}

func (g *mysqlGateway) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	switch m := msg.(type) {
	case mysql.Connect:
		ip := g.rt.clientIP[env.NameOf(from)]
		g.rt.wg.Add(1)
		go g.connect(from, ip, m)
	case mysql.Request:
		c := g.conns[m.Conn]
		if c == nil || c.owner != from {
			rep := mysql.ServerGone()
			rep.ID, rep.Conn = m.ID, m.Conn
			g.rt.k.Inject(env.ID(), from, rep)
			return
		}
		if _, quit := m.Stmt.(mysql.Quit); quit {
			g.drop(c)
			return
		}
		select {
		case c.stmts <- m:
		default:
			env.Logf(KindReal, "a statement on conn %d dropped: 1024 statements already wait on it", m.Conn)
		}
	case mysql.Hangup:
		if c := g.conns[m.Conn]; c != nil && c.owner == from {
			g.drop(c)
		}
	}
}

// ConnEnded closes every real connection peer opened: its kernel
// connection to the server ended, and all its MySQL connections were on
// it (nodes/mysql Node.ConnEnded).
func (g *mysqlGateway) ConnEnded(env *sim.Env, peer sim.ProcID, why sim.ConnEnd) {
	var ids []mysql.ConnID
	for id, c := range g.conns {
		if c.owner == peer {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		g.drop(g.conns[id])
	}
}

func (g *mysqlGateway) drop(c *sqlConn) {
	delete(g.conns, c.id)
	c.close()
}

// close ends every real connection of this gateway instance (its server
// was killed or shut down).
func (g *mysqlGateway) close() {
	g.dead = true
	for _, c := range g.conns {
		c.close()
	}
	g.conns = map[mysql.ConnID]*sqlConn{}
}

// connect opens a real connection for a Connect and, on the driver's
// goroutine, answers it with the connection's CONNECTION_ID(). A server
// that does not answer leaves the Connect unanswered (the client times
// out), as the model's does when its node is down.
func (g *mysqlGateway) connect(from sim.ProcID, ip string, m mysql.Connect) {
	defer g.rt.wg.Done()
	quietDriver.Do(func() { _ = gomysql.SetLogger(log.New(io.Discard, "", 0)) })
	c := &sqlConn{owner: from, stmts: make(chan mysql.Request, 1024), quit: make(chan struct{})}
	network := "locksim-real-" + strconv.FormatUint(dialSeq.Add(1), 10)
	gomysql.RegisterDialContext(network, func(ctx context.Context, addr string) (net.Conn, error) {
		d := net.Dialer{Timeout: time.Second}
		if ip != "" {
			d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(ip)}
		}
		nc, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.sock.Store(&nc)
		}
		return nc, err
	})
	db, err := sql.Open(launch.SQLDriver, "root@"+network+"("+g.srv.addr+")/"+g.srv.database+"?interpolateParams=true&timeout=1s")
	if err != nil {
		return
	}
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var id int64
	if c.conn, err = db.Conn(ctx); err == nil {
		err = c.conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id)
	}
	if err != nil {
		db.Close()
		return
	}
	c.db, c.id = db, mysql.ConnID(id)
	g.rt.wg.Add(1)
	go g.run(c)
	g.rt.inject(func() {
		if g.dead || g.rt.gateways[g.name] != g {
			c.close()
			return
		}
		g.conns[c.id] = c
		g.rt.k.Inject(g.env.ID(), from, mysql.Reply{ID: m.ID, Conn: c.id})
	})
}

// run executes c's statements in order until c closes.
func (g *mysqlGateway) run(c *sqlConn) {
	defer g.rt.wg.Done()
	defer func() {
		c.close()
		if c.conn != nil {
			c.conn.Close()
		}
		c.db.Close()
	}()
	for {
		var req mysql.Request
		select {
		case <-c.quit:
			return
		case <-g.rt.done:
			// The run ended before the connection was registered (or
			// closed): nobody else will close it.
			return
		case req = <-c.stmts:
		}
		rep := g.exec(c, req.Stmt)
		rep.ID, rep.Conn = req.ID, req.Conn
		g.rt.inject(func() { g.replied(c, req, rep) })
		if rep.Code == mysql.ErrServerGone || rep.Code == mysql.ErrServerLost {
			// The connection is gone; later statements find it missing.
			return
		}
	}
}

// exec runs one statement on the real connection and returns the model's
// reply for it: the server's error (number, SQLSTATE, text), the row a
// SELECT found, or the affected rows; a socket found closed gives the
// client library's 2006 (the command could not be sent) or 2013 (the
// connection closed while the statement ran), as the conformance suite
// maps them.
func (g *mysqlGateway) exec(c *sqlConn, s mysql.Stmt) mysql.Reply {
	ctx := context.Background()
	var (
		res  sql.Result
		rows *sql.Rows
		err  error
	)
	switch st := s.(type) {
	case mysql.Ping:
		err = c.conn.PingContext(ctx)
	case mysql.Kill:
		_, err = c.conn.ExecContext(ctx, mysql.KillSQL(st, int64(st.Target)))
	default:
		q, args, isRows, ok := mysql.SQL(s)
		if !ok {
			return mysql.Reply{Code: mysql.ErrServerGone, Msg: "real mode: statement not supported"}
		}
		if isRows {
			rows, err = c.conn.QueryContext(ctx, q, args...)
		} else {
			res, err = c.conn.ExecContext(ctx, q, args...)
		}
	}
	var rep mysql.Reply
	if err == nil && rows != nil {
		for rows.Next() {
			var v sql.NullString
			if err = rows.Scan(&v); err != nil {
				break
			}
			rep.Found, rep.Value = true, v.String
		}
		if err == nil {
			err = rows.Err()
		}
		rows.Close()
	}
	if err != nil {
		var me *gomysql.MySQLError
		switch {
		case errors.As(err, &me):
			return mysql.Reply{Code: int(me.Number), State: string(me.SQLState[:]), Msg: me.Message}
		case errors.Is(err, driver.ErrBadConn):
			return mysql.ServerGone()
		default:
			return mysql.ServerLost()
		}
	}
	if res != nil {
		rep.Affected, _ = res.RowsAffected()
	}
	return rep
}

// replied runs on the driver's goroutine: it logs the trigger events the
// reply shows the server emitted (row-locked: an INSERT or DELETE that
// changed a row, a SELECT ... FOR UPDATE that found one; committed: a
// COMMIT), a reply's way back later than the model's events, and injects
// the reply.
func (g *mysqlGateway) replied(c *sqlConn, req mysql.Request, rep mysql.Reply) {
	if g.dead || g.rt.gateways[g.name] != g {
		return // an earlier incarnation's connection
	}
	if rep.OK() {
		text := "conn " + strconv.FormatUint(uint64(req.Conn), 10)
		switch s := req.Stmt.(type) {
		case mysql.Insert:
			g.env.Log(mysql.KindRowLocked, text+" X "+s.Table+"."+s.Key)
		case mysql.Delete:
			if rep.Affected > 0 {
				g.env.Log(mysql.KindRowLocked, text+" X "+s.Table+"."+s.Key)
			}
		case mysql.SelectForUpdate:
			if rep.Found {
				g.env.Log(mysql.KindRowLocked, text+" X "+s.Table+"."+s.Key)
			}
		case mysql.Commit:
			g.env.Log(mysql.KindCommit, text)
		}
	}
	if rep.Code == mysql.ErrServerGone || rep.Code == mysql.ErrServerLost {
		if g.conns[c.id] == c {
			delete(g.conns, c.id)
		}
	}
	g.rt.k.Inject(g.env.ID(), c.owner, rep)
}
