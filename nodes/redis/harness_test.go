package redis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// probe is a tiny test client process: the test sends requests through it
// and it collects the replies with their true arrival time.
type probe struct {
	env     *sim.Env
	next    uint64
	replies map[uint64]Value
	at      map[uint64]sim.Time
	k       *sim.Kernel
	pending []pendingReq
}

// pendingReq is a request without a reply yet.
type pendingReq struct {
	id   uint64
	to   sim.ProcID
	args []string
}

// ConnEnded resends the requests pending on a connection that ended, as
// go-redis retries a command that failed on a bad connection (on a new one).
func (p *probe) ConnEnded(env *sim.Env, peer sim.ProcID, why sim.ConnEnd) {
	for _, r := range p.pending {
		if r.to == peer {
			if _, done := p.replies[r.id]; !done {
				env.Send(peer, Request{ID: r.id, Args: r.args})
			}
		}
	}
}

func (p *probe) Init(env *sim.Env) {
	p.env = env
	p.replies = map[uint64]Value{}
	p.at = map[uint64]sim.Time{}
}

func (p *probe) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	if r, ok := msg.(Reply); ok {
		p.replies[r.ID] = r.Value
		p.at[r.ID] = p.k.Now()
	}
}

func (p *probe) Fire(env *sim.Env, tag any) {}

// nodeSpec names a node and its config for a test world.
type nodeSpec struct {
	name  string
	cfg   Config
	clock sim.ClockSpec
}

// world is a kernel with Redis nodes and one probe client "c".
type world struct {
	t   testing.TB
	k   *sim.Kernel
	p   *probe
	ids map[string]sim.ProcID
}

func newWorld(t testing.TB, latency time.Duration, nodes ...nodeSpec) *world {
	t.Helper()
	k := sim.New(sim.Config{Seed: 1, KeepTrace: true, Network: sim.NetConfig{Latency: sim.Fixed(latency)}})
	w := &world{t: t, k: k, ids: map[string]sim.ProcID{}}
	for _, n := range nodes {
		cfg := n.cfg
		require.NoError(t, cfg.Validate())
		w.ids[n.name] = k.Add(n.name, func() sim.Process { return New(cfg) }, n.clock)
	}
	w.p = &probe{k: k}
	w.ids["c"] = k.Add("c", func() sim.Process { return w.p }, sim.ClockSpec{})
	require.NoError(t, k.Run(0))
	return w
}

// send sends a request now and returns its id.
func (w *world) send(node string, args ...string) uint64 {
	w.p.next++
	w.p.env.Send(w.ids[node], Request{ID: w.p.next, Args: args})
	w.p.pending = append(w.p.pending, pendingReq{id: w.p.next, to: w.ids[node], args: args})
	return w.p.next
}

// wait runs the kernel until the reply to id arrives (at most limit).
func (w *world) wait(id uint64, limit time.Duration) (Value, bool) {
	end := w.k.Now().Add(limit)
	for w.k.Now() < end {
		if v, ok := w.p.replies[id]; ok {
			return v, true
		}
		require.NoError(w.t, w.k.Run(w.k.Now().Add(100*time.Microsecond)))
	}
	v, ok := w.p.replies[id]
	return v, ok
}

// do sends a request and waits for its reply.
func (w *world) do(node string, args ...string) Value {
	w.t.Helper()
	id := w.send(node, args...)
	v, ok := w.wait(id, time.Minute)
	require.True(w.t, ok, "no reply to %v from %s", args, node)
	return v
}

// advance runs the kernel for d of true time.
func (w *world) advance(d time.Duration) {
	require.NoError(w.t, w.k.Run(w.k.Now().Add(d)))
}

func (w *world) node(name string) *Node {
	p := w.k.Process(w.ids[name])
	if p == nil {
		return nil
	}
	return p.(*Node)
}

// events returns the trace events of a kind emitted by a process.
func (w *world) events(kind sim.Kind, proc string) []sim.Event {
	var out []sim.Event
	for _, e := range w.k.Trace() {
		if e.Kind == kind && e.Proc == proc {
			out = append(out, e)
		}
	}
	return out
}

func master() Config { return DefaultConfig() }

func replicaOf(m string) Config {
	c := DefaultConfig()
	c.ReplicaOf = m
	return c
}

func aof(policy FsyncPolicy) Config {
	c := DefaultConfig()
	c.AppendOnly = true
	c.AppendFsync = policy
	return c
}
