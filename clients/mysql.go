package clients

import (
	"time"

	"github.com/locksim/locksim/nodes/mysql"
	"github.com/locksim/locksim/sim"
)

// mysqlConn is the client's one MySQL connection, opened on first use and
// kept between cycles (as a connection pool keeps it). It is forgotten when
// the server closes it (wait_timeout, KILL: mysql.Closed), when the kernel
// connection ends, and when a statement times out: a read timeout makes the
// driver close the socket (Connector/J's socketTimeout), which the server
// sees as a hangup and which rolls back the open transaction.
type mysqlConn struct {
	noExtras
	c    *client
	node sim.ProcID
	conn mysql.ConnID // 0: none
	gone bool         // the server closed conn; the next statement finds out
	val  string
}

func (m *mysqlConn) cfg() LockConfig { return m.c.cfg.Lock }

func (m *mysqlConn) value() string { return m.val }

func (m *mysqlConn) retryDelay() time.Duration { return m.cfg().RetryDelay.Draw(m.c.env.Rand()) }

// receive hands replies to their requests and notes a closed connection.
// NB: a connection the server closed is noticed by the client only when
// it next uses it: the statement fails with CR_SERVER_GONE_ERROR 2006
// (the C client does not reconnect by default, MYSQL_OPT_RECONNECT off
// since 5.0.3; Connector/J throws CommunicationsException), and the one
// after it opens a new connection. The holder of a FOR UPDATE lock goes on
// believing until its COMMIT fails.
func (m *mysqlConn) receive(_ sim.ProcID, msg sim.Message) bool {
	switch r := msg.(type) {
	case mysql.Reply:
		m.c.complete(r.ID, noValue, msg)
		return true
	case mysql.Closed:
		if r.Conn == m.conn {
			m.c.env.Logf(KindClient, "mysql: server closed conn %d (%s)", r.Conn, r.Reason)
			m.gone = true
		}
		return true
	}
	return false
}

// connEnded forgets the connection when the kernel connection to the node
// ends.
func (m *mysqlConn) connEnded(peer sim.ProcID, _ sim.ConnEnd) {
	if peer == m.node {
		m.conn, m.gone = 0, false
	}
}

// connect opens the connection if there is none and calls then.
func (m *mysqlConn) connect(then func(ok bool)) {
	c := m.c
	m.node = c.addr(m.cfg().Node)
	if m.conn != 0 {
		then(true)
		return
	}
	id := c.newID()
	c.request(m.node, id, mysql.Connect{ID: id}, m.cfg().NodeTimeout, func(msg sim.Message, ok bool) {
		if !ok {
			c.env.Logf(KindClient, "mysql: connect: no reply")
			then(false)
			return
		}
		m.conn, m.gone = msg.(mysql.Reply).Conn, false
		then(true)
	})
}

// stmt runs one statement on the connection (opening it first if needed)
// and calls cb with the reply; ok is false on a timeout or a lost
// connection.
func (m *mysqlConn) stmt(s mysql.Stmt, cb func(r mysql.Reply, ok bool)) {
	c := m.c
	if m.gone {
		m.conn, m.gone = 0, false
		cb(mysql.Reply{Conn: m.conn, Code: mysql.ErrServerGone, Msg: "MySQL server has gone away"}, true)
		return
	}
	m.connect(func(ok bool) {
		if !ok {
			cb(mysql.Reply{}, false)
			return
		}
		conn := m.conn
		id := c.newID()
		c.request(m.node, id, mysql.Request{ID: id, Conn: conn, Stmt: s}, m.cfg().NodeTimeout, func(msg sim.Message, ok bool) {
			if !ok {
				if m.conn == conn && conn != 0 {
					c.env.Logf(KindClient, "mysql: statement timed out; closing conn %d", conn)
					c.env.Close(m.node)
					m.conn = 0
				}
				cb(mysql.Reply{}, false)
				return
			}
			r := msg.(mysql.Reply)
			if r.Code == mysql.ErrServerGone || r.Code == mysql.ErrServerLost {
				m.conn = 0
			}
			cb(r, true)
		})
	})
}

// logErr records a failed statement.
func (m *mysqlConn) logErr(what string, r mysql.Reply, ok bool) {
	if !ok {
		m.c.env.Logf(KindClient, "mysql: %s: no reply", what)
		return
	}
	m.c.env.Logf(KindClient, "mysql: %s: ERROR %d: %s", what, r.Code, r.Msg)
}

// mysqlInsert is the lock-table lock: INSERT takes it (error 1062, a
// duplicate key, means it is held), DELETE releases it, each in autocommit.
// The row has no expiry: a holder that dies keeps it forever (reference
// servers-and-network §7, "A lock row committed in autocommit mode needs
// an application-level expiry column to be reclaimed").
type mysqlInsert struct {
	mysqlConn
}

func (m *mysqlInsert) acquire(_ int, done func(bool)) {
	m.val = m.c.uniqueValue()
	m.stmt(mysql.Insert{Table: m.cfg().Table, Key: m.cfg().Key, Value: m.val}, func(r mysql.Reply, ok bool) {
		switch {
		case ok && r.OK():
			done(true)
		case ok && r.Code == mysql.ErrDupEntry:
			done(false)
		default:
			m.logErr("INSERT", r, ok)
			done(false)
		}
	})
}

// release is DELETE FROM table WHERE key = Key. Simplification: the real
// recipe adds "AND owner = <value>"; the model's DELETE matches the key
// alone, which is the same here since the row never expires and only its
// inserter deletes it.
func (m *mysqlInsert) release(done func()) {
	m.stmt(mysql.Delete{Table: m.cfg().Table, Key: m.cfg().Key}, func(r mysql.Reply, ok bool) {
		if !ok || !r.OK() {
			m.logErr("DELETE", r, ok)
		} else if r.Affected == 0 {
			m.c.env.LogfAttrs(KindClient, releaseFailed(), "release: no row %s to delete", m.cfg().Key)
		}
		done()
	})
}

// mysqlForUpdate is the row-lock lock: BEGIN, SELECT ... FOR UPDATE on the
// lock's row, the critical section, COMMIT. The lock belongs to the
// transaction, so the connection must stay open while it is held: the
// server rolls the transaction back (and frees the row) when the
// connection ends, including by wait_timeout while the holder is paused.
type mysqlForUpdate struct {
	mysqlConn
}

func (m *mysqlForUpdate) acquire(_ int, done func(bool)) {
	m.val = m.c.uniqueValue()
	m.lockRow(true, done)
}

// lockRow runs BEGIN and SELECT ... FOR UPDATE. The row must exist: on a
// missing row InnoDB takes only a gap lock, which does not exclude another
// transaction's gap lock. So when the row is missing the client rolls back,
// creates it with an autocommit INSERT (error 1062 means another client
// created it first, which is as good) and locks again, once.
func (m *mysqlForUpdate) lockRow(create bool, done func(bool)) {
	fail := func(what string, r mysql.Reply, ok bool) {
		m.logErr(what, r, ok)
		if ok && m.conn != 0 {
			// The statement failed but the transaction may be open (error
			// 1205 rolls back only the statement by default).
			m.stmt(mysql.Rollback{}, func(mysql.Reply, bool) { done(false) })
			return
		}
		done(false)
	}
	m.stmt(mysql.Begin{}, func(r mysql.Reply, ok bool) {
		if !ok || !r.OK() {
			fail("BEGIN", r, ok)
			return
		}
		m.stmt(mysql.SelectForUpdate{Table: m.cfg().Table, Key: m.cfg().Key}, func(r mysql.Reply, ok bool) {
			switch {
			case !ok || !r.OK():
				fail("SELECT ... FOR UPDATE", r, ok)
			case r.Found:
				done(true)
			case !create:
				m.c.env.Logf(KindClient, "mysql: lock row %s still missing", m.cfg().Key)
				m.stmt(mysql.Rollback{}, func(mysql.Reply, bool) { done(false) })
			default:
				m.stmt(mysql.Rollback{}, func(r mysql.Reply, ok bool) {
					if !ok || !r.OK() {
						fail("ROLLBACK", r, ok)
						return
					}
					m.stmt(mysql.Insert{Table: m.cfg().Table, Key: m.cfg().Key, Value: ""}, func(r mysql.Reply, ok bool) {
						if !ok || (!r.OK() && r.Code != mysql.ErrDupEntry) {
							fail("INSERT lock row", r, ok)
							return
						}
						m.lockRow(false, done)
					})
				})
			}
		})
	})
}

// release is COMMIT, which releases the transaction's row lock. On a
// connection the server closed meanwhile the client learns it only now
// (error 2006).
func (m *mysqlForUpdate) release(done func()) {
	m.stmt(mysql.Commit{}, func(r mysql.Reply, ok bool) {
		if !ok || !r.OK() {
			m.logErr("COMMIT", r, ok)
		}
		done()
	})
}
