package mysql

import "strconv"

// Server error numbers, SQLSTATEs and texts of MariaDB 10.11 (include/
// mysqld_error.h and sql/share/errmsg-utf8.txt; the numbers are MySQL's too).
// The conformance suite compares numbers and texts with a real mariadbd.
const (
	// ErrDupEntry is ER_DUP_ENTRY: an INSERT of a key that exists.
	ErrDupEntry = 1062
	// ErrNoSuchThread is ER_NO_SUCH_THREAD: KILL of an unknown connection.
	ErrNoSuchThread = 1094
	// ErrNoSuchTable is ER_NO_SUCH_TABLE.
	ErrNoSuchTable = 1146
	// ErrLockWaitTimeout is ER_LOCK_WAIT_TIMEOUT.
	ErrLockWaitTimeout = 1205
	// ErrLockDeadlock is ER_LOCK_DEADLOCK: the transaction was chosen as a
	// deadlock victim and rolled back.
	ErrLockDeadlock = 1213
	// ErrUnknownSystemVariable is ER_UNKNOWN_SYSTEM_VARIABLE.
	ErrUnknownSystemVariable = 1193
	// ErrWrongValueForVar is ER_WRONG_VALUE_FOR_VAR.
	ErrWrongValueForVar = 1231
	// ErrOptionPreventsStatement is ER_OPTION_PREVENTS_STATEMENT: a write
	// on a read_only server.
	ErrOptionPreventsStatement = 1290
	// ErrQueryInterrupted is ER_QUERY_INTERRUPTED: KILL QUERY of a waiting
	// statement.
	ErrQueryInterrupted = 1317
	// ErrConnectionKilled is ER_CONNECTION_KILLED (MariaDB): the statement's
	// connection was killed while the statement ran.
	ErrConnectionKilled = 1927
	// ErrServerGone is the client library's CR_SERVER_GONE_ERROR: a statement
	// on a connection the server no longer has (closed by wait_timeout or
	// KILL, or lost in a server restart). The server sends nothing in that
	// case; the client library reports this when the socket is found closed.
	ErrServerGone = 2006
	// ErrServerLost is the client library's CR_SERVER_LOST: the connection
	// was closed while a statement was running (KILL of a waiting
	// connection). The server sends no error packet; the client library
	// reports this when the read of the reply finds the socket closed.
	ErrServerLost = 2013
)

func errReply(code int, state, msg string) Reply {
	return Reply{Code: code, State: state, Msg: msg}
}

func errDupEntry(key, index string) Reply {
	return errReply(ErrDupEntry, "23000", "Duplicate entry '"+key+"' for key '"+index+"'")
}

func errNoSuchTable(db, table string) Reply {
	return errReply(ErrNoSuchTable, "42S02", "Table '"+db+"."+table+"' doesn't exist")
}

func errNoSuchThread(id ConnID) Reply {
	return errReply(ErrNoSuchThread, "HY000", "Unknown thread id: "+strconv.FormatUint(uint64(id), 10))
}

var (
	replyLockWaitTimeout = errReply(ErrLockWaitTimeout, "HY000", "Lock wait timeout exceeded; try restarting transaction")
	replyDeadlock        = errReply(ErrLockDeadlock, "40001", "Deadlock found when trying to get lock; try restarting transaction")
	replyReadOnly        = errReply(ErrOptionPreventsStatement, "HY000", "The MariaDB server is running with the --read-only option so it cannot execute this statement")
	replyInterrupted     = errReply(ErrQueryInterrupted, "70100", "Query execution was interrupted")
	replyKilled          = errReply(ErrConnectionKilled, "70100", "Connection was killed")
	replyServerGone      = errReply(ErrServerGone, "HY000", "MySQL server has gone away")
	replyServerLost      = errReply(ErrServerLost, "HY000", "Lost connection to MySQL server during query")
)

func errUnknownVariable(name string) Reply {
	return errReply(ErrUnknownSystemVariable, "HY000", "Unknown system variable '"+name+"'")
}

func errWrongValue(name string, v int64) Reply {
	return errReply(ErrWrongValueForVar, "42000", "Variable '"+name+"' can't be set to the value of '"+strconv.FormatInt(v, 10)+"'")
}
