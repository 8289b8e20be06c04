package storage

import (
	"fmt"

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
	cfg  Config
	st   state
	file *sim.File
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
		n.st = recs[len(recs)-1].(state)
	}
}

// Fire does nothing: the storage node sets no timers.
func (n *Node) Fire(env *sim.Env, tag any) {}

// Receive serves one request. Other messages are ignored.
func (n *Node) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	switch m := msg.(type) {
	case ReadReq:
		n.read(env, from, m)
	case WriteReq:
		n.write(env, from, m)
	case SetLockReq:
		if n.st.setLock(m.LockValue) {
			n.persist()
		}
		env.Logf(KindLockSet, "s%d %s", m.Section, m.LockValue)
		env.Send(from, SetLockReply{ID: m.ID, Section: m.Section})
	}
}

func (n *Node) read(env *sim.Env, from sim.ProcID, m ReadReq) {
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
	if v.ok {
		reply.Value = n.st.Value
		env.Logf(KindApplied, "read s%d value %d%s", m.Section, n.st.Value, tokenText(m.Token, m.HasToken))
	} else {
		env.Logf(KindRejected, "read s%d%s: %s", m.Section, tokenText(m.Token, m.HasToken), v.why)
	}
	env.Send(from, reply)
}

func (n *Node) write(env *sim.Env, from sim.ProcID, m WriteReq) {
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
	if v.ok {
		env.Logf(KindApplied, "write s%d value %d%s", m.Section, m.Value, tokenText(m.Token, m.HasToken))
	} else {
		env.Logf(KindRejected, "write s%d value %d%s: %s", m.Section, m.Value, tokenText(m.Token, m.HasToken), v.why)
	}
	env.Send(from, WriteReply{ID: m.ID, Section: m.Section, OK: v.ok, Err: v.err})
}

// persist appends the whole state and fsyncs it before the reply leaves:
// the durable resource the articles assume (antirez 2016 also names fsync
// on every operation as the durable alternative to delayed restarts, §6.2).
func (n *Node) persist() {
	n.file.Append(n.st)
	n.file.Sync()
}

func tokenText(token int64, has bool) string {
	if !has {
		return " no-token"
	}
	return fmt.Sprintf(" tok %d", token)
}
