package simtest

import (
	"time"

	"github.com/locksim/locksim/sim"
)

// Arrival is a reply and the true time it reached the probe.
type Arrival[R any] struct {
	Reply R
	At    sim.Time
}

// sent is a request the probe sent, with the process it went to.
type sent struct {
	id  uint64
	to  sim.ProcID
	msg sim.Message
}

// Probe is a test client process. The test sends requests through it (Send,
// Do); it collects the replies of type R, matched to requests by IDOf, with
// their arrival times. When a connection ends (the server crashed or
// restarted, a reset), it sends every request still unanswered on that
// connection again, on the new one, as go-redis retries a command that
// failed on a bad connection; OnConnEnded replaces that behaviour where a
// client library does something else (a MySQL statement fails with
// CR_SERVER_LOST).
//
// Messages that are not of type R go to Other, if set.
type Probe[R any] struct {
	// IDOf returns the request id a reply answers.
	IDOf func(R) uint64
	// Other, if set, receives every message that is not a reply.
	Other func(env *sim.Env, from sim.ProcID, msg sim.Message)
	// OnConnEnded, if set, replaces the resend on a connection's end.
	OnConnEnded func(p *Probe[R], peer sim.ProcID, why sim.ConnEnd)
	// Ends counts the connection ends seen, per peer.
	Ends map[sim.ProcID]int

	env     *sim.Env
	k       *sim.Kernel
	next    uint64
	replies map[uint64]Arrival[R]
	pending []sent
}

// NewProbe returns a probe that matches replies by idOf.
func NewProbe[R any](idOf func(R) uint64) *Probe[R] {
	return &Probe[R]{IDOf: idOf}
}

// Init implements sim.Process.
func (p *Probe[R]) Init(env *sim.Env) {
	p.env = env
	if p.replies == nil {
		p.replies = map[uint64]Arrival[R]{}
		p.Ends = map[sim.ProcID]int{}
	}
}

// Bind tells the probe the kernel, whose clock stamps the arrivals; the
// World helpers call it.
func (p *Probe[R]) Bind(k *sim.Kernel) { p.k = k }

// Env is the probe's environment (valid after the world started).
func (p *Probe[R]) Env() *sim.Env { return p.env }

// Fire implements sim.Process; the probe sets no timers.
func (p *Probe[R]) Fire(env *sim.Env, tag any) {}

// Receive implements sim.Process.
func (p *Probe[R]) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	r, ok := msg.(R)
	if !ok {
		if p.Other != nil {
			p.Other(env, from, msg)
		}
		return
	}
	var at sim.Time
	if p.k != nil {
		at = p.k.Now()
	}
	p.replies[p.IDOf(r)] = Arrival[R]{Reply: r, At: at}
}

// ConnEnded implements sim.ConnObserver.
func (p *Probe[R]) ConnEnded(env *sim.Env, peer sim.ProcID, why sim.ConnEnd) {
	p.Ends[peer]++
	if p.OnConnEnded != nil {
		p.OnConnEnded(p, peer, why)
		return
	}
	p.Resend(peer)
}

// Resend sends again every request to peer that has no reply yet.
func (p *Probe[R]) Resend(peer sim.ProcID) {
	for _, s := range p.Pending(peer) {
		p.env.Send(peer, s)
	}
}

// Pending returns the unanswered requests sent to peer, in the order sent.
func (p *Probe[R]) Pending(peer sim.ProcID) []sim.Message {
	var out []sim.Message
	for _, s := range p.pending {
		if _, done := p.replies[s.id]; !done && s.to == peer {
			out = append(out, s.msg)
		}
	}
	return out
}

// SetReply records a reply the probe made up itself (a library's error for
// a lost connection) as arriving now.
func (p *Probe[R]) SetReply(id uint64, r R) {
	var at sim.Time
	if p.k != nil {
		at = p.k.Now()
	}
	p.replies[id] = Arrival[R]{Reply: r, At: at}
}

// NextID allocates the next request id (ids start at 1).
func (p *Probe[R]) NextID() uint64 { p.next++; return p.next }

// SendMsg sends msg, whose id is id, to peer and remembers it as pending.
func (p *Probe[R]) SendMsg(to sim.ProcID, id uint64, msg sim.Message) {
	p.pending = append(p.pending, sent{id: id, to: to, msg: msg})
	p.env.Send(to, msg)
}

// Send allocates an id, builds the request with it and sends it to peer.
func (p *Probe[R]) Send(to sim.ProcID, build func(id uint64) sim.Message) uint64 {
	id := p.NextID()
	p.SendMsg(to, id, build(id))
	return id
}

// Reply returns the reply to id, if it arrived.
func (p *Probe[R]) Reply(id uint64) (Arrival[R], bool) {
	a, ok := p.replies[id]
	return a, ok
}

// Answered reports whether the reply to id arrived.
func (p *Probe[R]) Answered(id uint64) bool { _, ok := p.replies[id]; return ok }

// AddProbe adds p to w under name with true clocks and binds it.
func AddProbe[R any](w *World, name string, p *Probe[R]) sim.ProcID {
	p.Bind(w.K)
	return w.AddProcess(name, p, sim.ClockSpec{})
}

// Wait runs w until the reply to id arrives or limit passes.
func Wait[R any](w *World, p *Probe[R], id uint64, limit time.Duration) (Arrival[R], bool) {
	w.T.Helper()
	w.RunUntil(limit, func() bool { return p.Answered(id) })
	return p.Reply(id)
}

// Do sends a request built with a fresh id to the process called to and
// waits up to a minute of true time for its reply; no reply fails the test.
func Do[R any](w *World, p *Probe[R], to string, build func(id uint64) sim.Message) Arrival[R] {
	w.T.Helper()
	id := p.Send(w.ID(to), build)
	a, ok := Wait(w, p, id, time.Minute)
	if !ok {
		w.T.Fatalf("simtest: no reply from %s to %v within a minute", to, build(id))
	}
	return a
}
