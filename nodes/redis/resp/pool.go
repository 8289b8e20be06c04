package resp

import "sync"

// Pooled requests and replies (issue 15). Boxing a Request or a Reply value
// into a sim.Message allocates on every send; a *Request or *Reply taken
// from these pools and sent with sim.Env.SendPooled does not. The kernel
// calls Recycle once the message has been handled or lost (sim.Recycler),
// so a sender must not touch a pooled message after sending it and a
// receiver must not keep the pointer after its Receive returns (copy out
// the fields instead: Args and Value hold no pooled memory, they may be
// kept).
//
// The value forms (Request, Reply) stay valid messages: a Redis node
// answers a *Request with a *Reply and a Request with a Reply, so a sender
// that keeps to values (tests, the sentinel, the real-mode gateway) sees
// values only.
//
// NB: sync.Pool is safe for concurrent kernels (fuzz workers) and cannot
// change a result: every object is overwritten whole by NewRequest or
// NewReply, so which one a send gets is invisible.
var (
	requests = sync.Pool{New: func() any { return new(Request) }}
	replies  = sync.Pool{New: func() any { return new(Reply) }}
)

// NewRequest returns a pooled request.
func NewRequest(id uint64, args []string) *Request {
	r := requests.Get().(*Request)
	*r = Request{ID: id, Args: args}
	return r
}

// NewReply returns a pooled reply.
func NewReply(id uint64, v Value) *Reply {
	r := replies.Get().(*Reply)
	*r = Reply{ID: id, Value: v}
	return r
}

// Recycle returns the request to its pool (sim.Recycler); only the kernel
// calls it.
func (r *Request) Recycle() {
	if poisonRecycled {
		*r = Request{ID: poisonID, Args: []string{poisonText}}
		return
	}
	*r = Request{}
	requests.Put(r)
}

// Recycle returns the reply to its pool (sim.Recycler); only the kernel
// calls it.
func (r *Reply) Recycle() {
	if poisonRecycled {
		*r = Reply{ID: poisonID, Value: Err(poisonText)}
		return
	}
	*r = Reply{}
	replies.Put(r)
}

// What a recycled message holds in a race build, where recycled messages
// are poisoned and never reused: a receiver that kept one reads an id no
// request has and an error value that names the mistake.
const (
	poisonID   = ^uint64(0)
	poisonText = "ERR resp: pooled message used after its Receive returned (it was recycled)"
)
