package mysql

import "strconv"

// Messages between clients and a MySQL node. They stand for the MySQL
// client/server protocol without being it: a connection is opened with
// Connect, each statement is a typed Request on that connection (not SQL
// text), and every request but Quit gets exactly one Reply, in order. The
// server executes a connection's statements one at a time, as a server
// thread does: a statement sent while an earlier one waits for a lock waits
// behind it (the bytes sit in the socket).

// ConnID is a connection's id, MySQL's CONNECTION_ID() (the thread id that
// KILL takes). Ids start at 1 at every server start.
type ConnID uint64

// Connect opens a connection; the Reply carries its Conn.
type Connect struct {
	ID uint64
}

// Request is one statement on a connection.
type Request struct {
	ID   uint64
	Conn ConnID
	Stmt Stmt
}

// Stmt is a statement: one of Begin, Commit, Rollback, Insert, Delete,
// Update, Select, SelectForUpdate, SetSession, Kill, Ping, Quit.
type Stmt interface {
	appendStmt(b []byte) []byte
}

// Begin is BEGIN / START TRANSACTION. An open transaction is committed
// first (an implicit commit, MySQL manual implicit-commit.html).
type Begin struct{}

// Commit is COMMIT: it makes the transaction's changes durable (according to
// FlushLogAtTrxCommit) and releases all its locks. Without a transaction it
// does nothing.
type Commit struct{}

// Rollback is ROLLBACK: it undoes the transaction's changes and releases all
// its locks.
type Rollback struct{}

// Insert is INSERT INTO Table VALUES (Key, Value).
type Insert struct {
	Table, Key, Value string
}

// Delete is DELETE FROM Table WHERE key = Key.
type Delete struct {
	Table, Key string
}

// Update is UPDATE Table SET value = Value WHERE key = Key.
type Update struct {
	Table, Key, Value string
}

// Select is SELECT value FROM Table WHERE key = Key: a nonlocking read.
type Select struct {
	Table, Key string
}

// SelectForUpdate is SELECT value FROM Table WHERE key = Key FOR UPDATE: a
// locking read that takes an exclusive lock on the row.
type SelectForUpdate struct {
	Table, Key string
}

// Session variables SetSession can set.
const (
	VarAutocommit      = "autocommit"
	VarLockWaitTimeout = "innodb_lock_wait_timeout"
	VarWaitTimeout     = "wait_timeout"
)

// SetSession is SET SESSION Var = Value for one of the Var constants
// (timeouts in seconds; autocommit 0 or 1).
type SetSession struct {
	Var   string
	Value int64
}

// Kill is KILL [CONNECTION] Target, or KILL QUERY Target when Query is set.
type Kill struct {
	Target ConnID
	Query  bool
}

// Ping is COM_PING: an empty round trip that resets the idle timer.
type Ping struct{}

// Quit is COM_QUIT: the client closes the connection. Its open transaction is
// rolled back. There is no reply.
type Quit struct{}

// Reply answers a Connect or a Request. Code 0 is success; otherwise Code,
// State (SQLSTATE) and Msg are MySQL's error. Affected is the affected-row
// count of INSERT, DELETE and UPDATE; Found and Value are the row a SELECT
// returned.
type Reply struct {
	ID       uint64
	Conn     ConnID
	Code     int
	State    string
	Msg      string
	Affected int64
	Found    bool
	Value    string
}

// OK reports whether the reply is a success.
func (r Reply) OK() bool { return r.Code == 0 }

// Closed tells a client that the server closed its connection (wait_timeout
// or KILL): it stands for the FIN the client's socket receives. A statement
// the client sends later on it is answered with ErrServerGone.
type Closed struct {
	Conn   ConnID
	Reason string
}

// Hangup tells the server that the client end of a connection is gone: the
// client closed its socket without COM_QUIT, or its process died and its
// kernel sent FIN or RST. The server then ends the session as it does when a
// read from the client fails: the open transaction is rolled back and its
// locks released. Whoever models the client's TCP endpoint sends it; a client
// machine that loses power sends nothing, and only wait_timeout frees its
// locks.
type Hangup struct {
	Conn ConnID
}

func (Begin) appendStmt(b []byte) []byte    { return append(b, "BEGIN"...) }
func (Commit) appendStmt(b []byte) []byte   { return append(b, "COMMIT"...) }
func (Rollback) appendStmt(b []byte) []byte { return append(b, "ROLLBACK"...) }
func (Ping) appendStmt(b []byte) []byte     { return append(b, "PING"...) }
func (Quit) appendStmt(b []byte) []byte     { return append(b, "QUIT"...) }

func (s Insert) appendStmt(b []byte) []byte {
	b = append(append(b, "INSERT "...), s.Table...)
	return append(append(append(append(b, ' '), s.Key...), ' '), s.Value...)
}

func (s Delete) appendStmt(b []byte) []byte {
	return append(append(append(append(b, "DELETE "...), s.Table...), ' '), s.Key...)
}

func (s Update) appendStmt(b []byte) []byte {
	b = append(append(b, "UPDATE "...), s.Table...)
	return append(append(append(append(b, ' '), s.Key...), ' '), s.Value...)
}

func (s Select) appendStmt(b []byte) []byte {
	return append(append(append(append(b, "SELECT "...), s.Table...), ' '), s.Key...)
}

func (s SelectForUpdate) appendStmt(b []byte) []byte {
	b = append(append(append(append(b, "SELECT "...), s.Table...), ' '), s.Key...)
	return append(b, " FOR UPDATE"...)
}

func (s SetSession) appendStmt(b []byte) []byte {
	b = append(append(append(b, "SET "...), s.Var...), '=')
	return strconv.AppendInt(b, s.Value, 10)
}

func (s Kill) appendStmt(b []byte) []byte {
	b = append(b, "KILL "...)
	if s.Query {
		b = append(b, "QUERY "...)
	}
	return strconv.AppendUint(b, uint64(s.Target), 10)
}

// AppendTrace renders the connect request for the trace.
func (m Connect) AppendTrace(b []byte) []byte { return append(b, "connect"...) }

// AppendTrace renders the request for the trace: "conn 3: INSERT locks a c1".
func (m Request) AppendTrace(b []byte) []byte {
	b = strconv.AppendUint(append(b, "conn "...), uint64(m.Conn), 10)
	b = append(b, ": "...)
	if m.Stmt == nil {
		return append(b, "(none)"...)
	}
	return m.Stmt.appendStmt(b)
}

// AppendTrace renders the reply for the trace.
func (m Reply) AppendTrace(b []byte) []byte {
	b = strconv.AppendUint(append(b, "conn "...), uint64(m.Conn), 10)
	if m.Code != 0 {
		b = strconv.AppendInt(append(b, " ERROR "...), int64(m.Code), 10)
		return append(append(b, ": "...), m.Msg...)
	}
	b = append(b, " OK"...)
	if m.Affected != 0 {
		b = strconv.AppendInt(append(b, " affected "...), m.Affected, 10)
	}
	if m.Found {
		b = append(append(b, " row "...), m.Value...)
	}
	return b
}

// AppendTrace renders the close notice for the trace.
func (m Closed) AppendTrace(b []byte) []byte {
	b = strconv.AppendUint(append(b, "closed conn "...), uint64(m.Conn), 10)
	return append(append(b, ": "...), m.Reason...)
}

// AppendTrace renders the hangup for the trace.
func (m Hangup) AppendTrace(b []byte) []byte {
	return strconv.AppendUint(append(b, "hangup conn "...), uint64(m.Conn), 10)
}
