package storage

import (
	"strconv"

	"github.com/locksim/locksim/sim"
)

// Trace event kinds the storage node logs.
const (
	// KindApplied: a read was served or a write applied. Text: "read s3
	// value 1 tok 2" or "write s3 value 2 tok 2".
	KindApplied sim.Kind = "resource-applied"
	// KindRejected: a read or a write was refused by fencing; the text ends
	// with the reason.
	KindRejected sim.Kind = "resource-rejected"
	// KindLockSet: the current-lock field was set (token-cas).
	KindLockSet sim.Kind = "resource-lock-set"
)

// FileName is the file on the node's disk that holds its durable state.
const FileName = "resource"

// Node is the storage node: a sim.Process serving ReadReq, WriteReq and
// SetLockReq. Build it with New.
type Node struct {
	cfg     Config
	st      state
	file    *sim.File
	rec     *state // the record on disk, rewritten by persist
	scratch []byte // reused buffer for trace texts
}

// New returns a storage node process. It panics if cfg is invalid (callers
// validate configurations first; see Config.Validate).
func New(cfg Config) sim.Process {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	return &Node{cfg: cfg}
}

// Value returns the counter's current value (for tests and inspection).
func (n *Node) Value() int64 { return n.st.Value }

// Init recovers the durable state: the last record of FileName, or the
// initial state (value 0, no marks, empty lock field) on a fresh disk.
func (n *Node) Init(env *sim.Env) {
	n.file = env.Disk().File(FileName)
	if recs := n.file.Records(); len(recs) > 0 {
		n.st = *recs[len(recs)-1].(*state)
	}
	// The record this incarnation persists into (persist); the disk keeps
	// the earlier incarnation's until the first persist replaces it.
	n.rec = new(state)
}

// Fire does nothing: the storage node sets no timers.
func (n *Node) Fire(env *sim.Env, tag any) {}

// Receive serves one request. Other messages are ignored. A pooled request
// (pool.go) is answered with a pooled reply, a value with a value.
func (n *Node) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	switch m := msg.(type) {
	case *ReadReq:
		env.SendPooled(from, newReadReply(n.read(env, *m)))
	case ReadReq:
		env.Send(from, n.read(env, m))
	case *WriteReq:
		env.SendPooled(from, newWriteReply(n.write(env, *m)))
	case WriteReq:
		env.Send(from, n.write(env, m))
	case SetLockReq:
		if n.st.setLock(m.LockValue) {
			n.persist()
		}
		env.LogfAttrs(KindLockSet, []sim.Attr{sim.Int64("section", int64(m.Section)), sim.Str("value", m.LockValue)}, "s%d %s", m.Section, m.LockValue)
		env.Send(from, SetLockReply{ID: m.ID, Section: m.Section})
	}
}

// read serves a read and returns the reply to send.
func (n *Node) read(env *sim.Env, m ReadReq) ReadReply {
	v := n.st.read(n.cfg.Fencing, m)
	if v.changed {
		n.persist()
	}
	// NB: a rejected read is recorded with the value the resource held (the
	// ground truth), although the client is not told it.
	if m.Section >= 0 {
		env.SectionRead(m.Section, n.st.Value, !v.ok)
	}
	reply := ReadReply{ID: m.ID, Section: m.Section, OK: v.ok, Err: v.err}
	var buf [5]sim.Attr
	// The texts are fmt's "read s%d value %d%s" and "read s%d%s: %s"
	// (appendToken), rendered with appends into n.scratch.
	b := strconv.AppendInt(append(n.scratch[:0], "read s"...), int64(m.Section), 10)
	if v.ok {
		reply.Value = n.st.Value
		b = strconv.AppendInt(append(b, " value "...), n.st.Value, 10)
		b = appendToken(b, m.Token, m.HasToken)
		env.LogBytesAttrs(KindApplied, b, opAttrs(&buf, "read", m.Section, n.st.Value, true, m.Token, m.HasToken, "")...)
	} else {
		b = append(append(appendToken(b, m.Token, m.HasToken), ": "...), v.why...)
		env.LogBytesAttrs(KindRejected, b, opAttrs(&buf, "read", m.Section, 0, false, m.Token, m.HasToken, v.why)...)
	}
	n.scratch = b[:0]
	return reply
}

// write serves a write and returns the reply to send.
func (n *Node) write(env *sim.Env, m WriteReq) WriteReply {
	v := n.st.write(n.cfg.Fencing, m)
	if v.changed {
		n.persist()
	}
	if m.Section >= 0 {
		outcome := sim.WriteAccepted
		if !v.ok {
			outcome = sim.WriteRejected
		}
		env.SectionWriteDecided(m.Section, outcome)
	}
	var buf [5]sim.Attr
	// fmt's "write s%d value %d%s" and "write s%d value %d%s: %s".
	b := strconv.AppendInt(append(n.scratch[:0], "write s"...), int64(m.Section), 10)
	b = strconv.AppendInt(append(b, " value "...), m.Value, 10)
	b = appendToken(b, m.Token, m.HasToken)
	if v.ok {
		env.LogBytesAttrs(KindApplied, b, opAttrs(&buf, "write", m.Section, m.Value, true, m.Token, m.HasToken, "")...)
	} else {
		b = append(append(b, ": "...), v.why...)
		env.LogBytesAttrs(KindRejected, b, opAttrs(&buf, "write", m.Section, m.Value, true, m.Token, m.HasToken, v.why)...)
	}
	n.scratch = b[:0]
	return WriteReply{ID: m.ID, Section: m.Section, OK: v.ok, Err: v.err}
}

// persist writes the whole state and fsyncs it before the reply leaves:
// the durable resource the articles assume (antirez 2016 also names fsync
// on every operation as the durable alternative to delayed restarts, §6.2).
// NB: the file holds only the latest state (sim.File.Rewrite), into a record
// this incarnation owns: every persist is a write and an fsync at one
// instant, and recovery reads only the last record, so earlier records
// could never matter (and made the file grow by one per write).
func (n *Node) persist() {
	*n.rec = n.st
	n.file.Rewrite(n.rec)
}

// opAttrs are the typed fields of a read or write event: op, section,
// value (when known), token (when the request carried one) and why (when
// rejected).
// buf is the caller's, so that the fields stay on its stack.
func opAttrs(buf *[5]sim.Attr, op string, section int, value int64, hasValue bool, token int64, hasToken bool, why string) []sim.Attr {
	as := append(buf[:0], sim.Str("op", op), sim.Int64("section", int64(section)))
	if hasValue {
		as = append(as, sim.Int64("value", value))
	}
	if hasToken {
		as = append(as, sim.Int64("token", token))
	}
	if why != "" {
		as = append(as, sim.Str("why", why))
	}
	return as
}

// appendToken appends what fmt rendered as " tok %d" or " no-token".
func appendToken(b []byte, token int64, has bool) []byte {
	if !has {
		return append(b, " no-token"...)
	}
	return strconv.AppendInt(append(b, " tok "...), token, 10)
}
