package memcached

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// probe is a test client process that collects replies.
type probe struct {
	env     *sim.Env
	next    uint64
	replies map[uint64]Reply
	pending []pendingReq
}

// pendingReq is a request sent and not yet answered.
type pendingReq struct {
	to  sim.ProcID
	req Request
}

// ConnEnded resends what was pending on a connection that ended (the node
// restarted), as a client library reconnects: the test asks the restarted
// node, not the connection.
func (p *probe) ConnEnded(env *sim.Env, peer sim.ProcID, why sim.ConnEnd) {
	for _, r := range p.pending {
		if _, done := p.replies[r.req.ID]; !done && r.to == peer {
			env.Send(peer, r.req)
		}
	}
}

func (p *probe) Init(env *sim.Env) { p.env = env; p.replies = map[uint64]Reply{} }
func (p *probe) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	if r, ok := msg.(Reply); ok {
		p.replies[r.ID] = r
	}
}
func (p *probe) Fire(env *sim.Env, tag any) {}

// world is a kernel with one memcached node "M" and a probe client "c".
type world struct {
	t testing.TB
	k *sim.Kernel
	p *probe
	m sim.ProcID
}

func newWorld(t testing.TB, cfg Config, clock sim.ClockSpec) *world {
	t.Helper()
	require.NoError(t, cfg.Validate())
	k := sim.New(sim.Config{Seed: 1, KeepTrace: true, Network: sim.NetConfig{Latency: sim.Fixed(100 * time.Microsecond)}})
	w := &world{t: t, k: k, p: &probe{}}
	w.m = k.Add("M", func() sim.Process { return New(cfg) }, clock)
	k.Add("c", func() sim.Process { return w.p }, sim.ClockSpec{})
	require.NoError(t, k.Run(0))
	return w
}

// do sends r over the network and returns the reply.
func (w *world) do(r Request) Reply {
	w.t.Helper()
	w.p.next++
	r.ID = w.p.next
	w.p.pending = append(w.p.pending, pendingReq{to: w.m, req: r})
	w.p.env.Send(w.m, r)
	require.NoError(w.t, w.k.Run(w.k.Now().Add(time.Millisecond)))
	rep, ok := w.p.replies[r.ID]
	require.True(w.t, ok, "no reply to %s", r.Line())
	return rep
}

func (w *world) advance(d time.Duration) {
	require.NoError(w.t, w.k.Run(w.k.Now().Add(d)))
}

func (w *world) node() *Node { return w.k.Process(w.m).(*Node) }

func (w *world) events(kind sim.Kind) []string {
	var out []string
	for _, e := range w.k.Trace() {
		if e.Kind == kind && e.Proc == "M" {
			out = append(out, e.Text)
		}
	}
	return out
}

// Request builders.
func set(k, v string, exp int64) Request { return Request{Cmd: CmdSet, Key: k, Value: v, Exptime: exp} }
func add(k, v string, exp int64) Request { return Request{Cmd: CmdAdd, Key: k, Value: v, Exptime: exp} }
func replace(k, v string, exp int64) Request {
	return Request{Cmd: CmdReplace, Key: k, Value: v, Exptime: exp}
}
func casReq(k, v string, exp int64, cas uint64) Request {
	return Request{Cmd: CmdCas, Key: k, Value: v, Exptime: exp, CAS: cas}
}
func get(keys ...string) Request        { return Request{Cmd: CmdGet, Keys: keys} }
func gets(keys ...string) Request       { return Request{Cmd: CmdGets, Keys: keys} }
func del(k string) Request              { return Request{Cmd: CmdDelete, Key: k} }
func touch(k string, exp int64) Request { return Request{Cmd: CmdTouch, Key: k, Exptime: exp} }
func incr(k string, d uint64) Request   { return Request{Cmd: CmdIncr, Key: k, Delta: d} }
func decr(k string, d uint64) Request   { return Request{Cmd: CmdDecr, Key: k, Delta: d} }
func flushAll() Request                 { return Request{Cmd: CmdFlushAll} }
