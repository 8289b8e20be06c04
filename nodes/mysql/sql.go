package mysql

import "strconv"

// SQL renders a statement as the SQL text a real MySQL or MariaDB server
// runs for it, on a lock table with a unique key column "name" and a value
// column "owner" (the schema Table documents), with its arguments as
// placeholders. rows is true for the SELECTs, whose result is the owner of
// the row found (Found, Value). Ping and Quit are protocol commands
// (COM_PING, COM_QUIT), not SQL: ok is false for them, and for a Kill,
// whose target the caller maps to the real server's thread id. The
// conformance suite and real mode's gateway (realmode) both run statements
// through it.
func SQL(s Stmt) (query string, args []any, rows, ok bool) {
	switch s := s.(type) {
	case Begin:
		return "BEGIN", nil, false, true
	case Commit:
		return "COMMIT", nil, false, true
	case Rollback:
		return "ROLLBACK", nil, false, true
	case Insert:
		return "INSERT INTO " + s.Table + " (name, owner) VALUES (?, ?)", []any{s.Key, s.Value}, false, true
	case Delete:
		return "DELETE FROM " + s.Table + " WHERE name = ?", []any{s.Key}, false, true
	case Update:
		return "UPDATE " + s.Table + " SET owner = ? WHERE name = ?", []any{s.Value, s.Key}, false, true
	case Select:
		return "SELECT owner FROM " + s.Table + " WHERE name = ?", []any{s.Key}, true, true
	case SelectForUpdate:
		return "SELECT owner FROM " + s.Table + " WHERE name = ? FOR UPDATE", []any{s.Key}, true, true
	case SetSession:
		return "SET SESSION " + s.Var + " = " + strconv.FormatInt(s.Value, 10), nil, false, true
	}
	return "", nil, false, false
}

// KillSQL renders KILL [QUERY] for the real server's thread id.
func KillSQL(s Kill, thread int64) string {
	q := "KILL "
	if s.Query {
		q += "QUERY "
	}
	return q + strconv.FormatInt(thread, 10)
}

// ServerGone is the client library's reply when a statement could not be
// sent on a connection the server closed (CR_SERVER_GONE_ERROR 2006).
func ServerGone() Reply { return replyServerGone }

// ServerLost is the client library's reply when the connection closed
// while a statement ran (CR_SERVER_LOST 2013).
func ServerLost() Reply { return replyServerLost }
