package storage

import "sync"

// Pooled reads and writes (issue 15), as nodes/redis/resp/pool.go: a
// client's read or write request goes out as a *ReadReq or *WriteReq from
// these pools (sim.Env.SendPooled), the node answers a pointer with a
// pooled *ReadReply or *WriteReply (and a value with a value), and the
// kernel recycles each after its Receive returns or when it is lost
// (sim.Recycler). A receiver
// must not keep the pointer past its Receive: it copies the fields out.
// sync.Pool cannot change a result: every object is overwritten whole when
// taken.
var (
	readReqs    = sync.Pool{New: func() any { return new(ReadReq) }}
	readReplies = sync.Pool{New: func() any { return new(ReadReply) }}
	writeReqs   = sync.Pool{New: func() any { return new(WriteReq) }}
	writeReps   = sync.Pool{New: func() any { return new(WriteReply) }}
)

// NewReadReq returns a pooled copy of m.
func NewReadReq(m ReadReq) *ReadReq {
	p := readReqs.Get().(*ReadReq)
	*p = m
	return p
}

// NewWriteReq returns a pooled copy of m.
func NewWriteReq(m WriteReq) *WriteReq {
	p := writeReqs.Get().(*WriteReq)
	*p = m
	return p
}

func newReadReply(m ReadReply) *ReadReply {
	p := readReplies.Get().(*ReadReply)
	*p = m
	return p
}

func newWriteReply(m WriteReply) *WriteReply {
	p := writeReps.Get().(*WriteReply)
	*p = m
	return p
}

// Recycle returns m to its pool (sim.Recycler); only the kernel calls it.
func (m *ReadReq) Recycle() {
	if poisonRecycled {
		*m = ReadReq{ID: poisonID, Section: -1, LockValue: poisonText}
		return
	}
	*m = ReadReq{}
	readReqs.Put(m)
}

// Recycle returns m to its pool (sim.Recycler); only the kernel calls it.
func (m *WriteReq) Recycle() {
	if poisonRecycled {
		*m = WriteReq{ID: poisonID, Section: -1, LockValue: poisonText}
		return
	}
	*m = WriteReq{}
	writeReqs.Put(m)
}

// Recycle returns m to its pool (sim.Recycler); only the kernel calls it.
func (m *ReadReply) Recycle() {
	if poisonRecycled {
		*m = ReadReply{ID: poisonID, Section: -1, Err: poisonText}
		return
	}
	*m = ReadReply{}
	readReplies.Put(m)
}

// Recycle returns m to its pool (sim.Recycler); only the kernel calls it.
func (m *WriteReply) Recycle() {
	if poisonRecycled {
		*m = WriteReply{ID: poisonID, Section: -1, Err: poisonText}
		return
	}
	*m = WriteReply{}
	writeReps.Put(m)
}

// What a recycled message holds in a race build, where recycled messages
// are poisoned and never reused: a receiver that kept one reads an id no
// request has and a text that names the mistake.
const (
	poisonID   = ^uint64(0)
	poisonText = "storage: pooled message used after its Receive returned (it was recycled)"
)
