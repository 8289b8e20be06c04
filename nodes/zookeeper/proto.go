package zookeeper

import (
	"strconv"
	"time"
)

// Op is a ZooKeeper operation.
type Op uint8

const (
	OpConnect     Op = iota + 1 // open a session with Timeout
	OpPing                      // heartbeat: renews the session
	OpCreate                    // create Path (Ephemeral, Sequential)
	OpDelete                    // delete Path
	OpGetChildren               // list the children of Path (sorted)
	OpExists                    // does Path exist; with Watch, notify when it is deleted
	OpClose                     // close the session (deletes its ephemeral nodes at once)
)

var opNames = [...]string{"?", "connect", "ping", "create", "delete", "get-children", "exists", "close"}

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "?"
}

// Error codes in Reply.Err (names as in ZooKeeper's KeeperException.Code).
const (
	ErrNodeExists     = "NODEEXISTS"
	ErrNoNode         = "NONODE"
	ErrSessionExpired = "SESSIONEXPIRED"
	ErrLockDelay      = "LOCKDELAY" // Chubby-style lock-delay in force (not in ZooKeeper)
)

// Request is a client's request. Session is 0 for OpConnect.
type Request struct {
	ID         uint64
	Session    int64
	Op         Op
	Path       string
	Ephemeral  bool
	Sequential bool
	Watch      bool
	Timeout    time.Duration // OpConnect: the requested session timeout
}

// Reply answers a Request. Zxid is the transaction id of the change the
// request made (OpCreate: the new node's creation zxid, usable as a fencing
// token), or the service's last zxid otherwise.
type Reply struct {
	ID       uint64
	Session  int64
	Err      string
	Path     string // OpCreate: the created path (with its sequence suffix)
	Children []string
	Exists   bool
	Zxid     int64
	Timeout  time.Duration // OpConnect: the negotiated session timeout
}

// WatchEvent notifies a session that a watched node was deleted.
type WatchEvent struct {
	Session int64
	Path    string
}

// SessionExpired tells a client that its session is gone (sent in answer to
// any request on an expired session, as ZooKeeper does on reconnect).
type SessionExpired struct {
	Session int64
}

func (r Request) AppendTrace(b []byte) []byte {
	b = strconv.AppendUint(append(b, "zk "...), r.ID, 10)
	b = append(append(b, ' '), r.Op.String()...)
	b = strconv.AppendInt(append(b, " s"...), r.Session, 10)
	if r.Path != "" {
		b = append(append(b, ' '), r.Path...)
	}
	return b
}

func (r Reply) AppendTrace(b []byte) []byte {
	b = strconv.AppendUint(append(b, "zk-reply "...), r.ID, 10)
	b = strconv.AppendInt(append(b, " s"...), r.Session, 10)
	if r.Err != "" {
		b = append(append(b, ' '), r.Err...)
	}
	if r.Path != "" {
		b = append(append(b, ' '), r.Path...)
	}
	return strconv.AppendInt(append(b, " zxid "...), r.Zxid, 10)
}

func (w WatchEvent) AppendTrace(b []byte) []byte {
	return append(strconv.AppendInt(append(b, "watch s"...), w.Session, 10), " deleted "+w.Path...)
}

func (s SessionExpired) AppendTrace(b []byte) []byte {
	return strconv.AppendInt(append(b, "session-expired s"...), s.Session, 10)
}
