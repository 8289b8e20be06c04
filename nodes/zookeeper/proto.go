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
	// ErrNotEmpty: OpDelete of a node that has children.
	ErrNotEmpty = "NOTEMPTY"
	// ErrBadArguments: an invalid path (it must start with "/", must not end
	// with "/" and has no empty, "." or ".." components), or OpDelete of "/".
	ErrBadArguments = "BADARGUMENTS"
	// ErrNoChildrenForEphemerals: OpCreate under an ephemeral node.
	ErrNoChildrenForEphemerals = "NOCHILDRENFOREPHEMERALS"
	// ErrUnimplemented: an unknown Op.
	ErrUnimplemented = "UNIMPLEMENTED"
	// ErrConnectionLoss is never sent by the server: the client-side Session
	// completes a call with it when the connection broke before the reply
	// came (the request may or may not have been applied), as ZooKeeper's
	// ClientCnxn does (ClientCnxn.java:782-796 conLossPacket, 3.9.5).
	ErrConnectionLoss = "CONNECTIONLOSS"
)

// Request is a client's request. Session is 0 for OpConnect (a new
// session); OpConnect with a Session is a reconnect of that session.
type Request struct {
	ID         uint64
	Session    int64
	Op         Op
	Path       string
	Ephemeral  bool
	Sequential bool
	Watch      bool
	Timeout    time.Duration // OpConnect: the requested session timeout
	// Watches (reconnect only) lists the paths the client still has exists
	// watches on, as ZooKeeper's SetWatches after a reconnect: the server
	// re-registers each watch, or sends WatchEvent at once for a node that
	// was deleted meanwhile (DataTree.java:1488-1497 setWatches, 3.9.5).
	Watches []string
}

// Reply answers a Request. Zxid is the transaction id of the change the
// request made (OpCreate: the new node's creation zxid, usable as a fencing
// token), or the service's last zxid otherwise.
type Reply struct {
	ID       uint64
	Session  int64
	Op       Op // the request's Op, echoed
	Err      string
	Path     string // OpCreate: the created path (with its sequence suffix)
	Children []string
	Exists   bool
	Zxid     int64
	Timeout  time.Duration // OpConnect: the negotiated session timeout
	// Seq numbers the messages (Reply and WatchEvent) the server sent to
	// this session: 1, 2, 3, ... A client that sees a gap knows a message
	// was lost, which on ZooKeeper's TCP connection means the connection
	// broke. 0 on a reply to a session the server does not know.
	Seq uint64
}

// WatchEvent notifies a session that a watched node was deleted.
type WatchEvent struct {
	Session int64
	Path    string
	Seq     uint64 // as Reply.Seq
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
	b = append(append(b, ' '), r.Op.String()...)
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
