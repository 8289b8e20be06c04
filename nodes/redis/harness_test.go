package redis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/sim"
)

// probe is the shared test client (internal/simtest) speaking Redis: it
// collects replies with their true arrival times and, on a connection that
// ended, resends what was pending, as go-redis retries a command that failed
// on a bad connection (on a new one).
type probe = simtest.Probe[Reply]

func newProbe() *probe { return simtest.NewProbe(func(r Reply) uint64 { return r.ID }) }

// nodeSpec names a node and its config for a test world.
type nodeSpec struct {
	name  string
	cfg   Config
	clock sim.ClockSpec
}

// world is a shared simtest.World with Redis nodes and one probe client "c".
type world struct {
	*simtest.World
	p *probe
}

func newWorld(t testing.TB, latency time.Duration, nodes ...nodeSpec) *world {
	t.Helper()
	sw := simtest.NewWorld(t, latency)
	w := &world{World: sw, p: newProbe()}
	for _, n := range nodes {
		cfg := n.cfg
		require.NoError(t, cfg.Validate())
		sw.Add(n.name, func() sim.Process { return New(cfg) }, n.clock)
	}
	simtest.AddProbe(sw, "c", w.p)
	sw.Start()
	return w
}

// send sends a request now and returns its id.
func (w *world) send(node string, args ...string) uint64 {
	return w.p.Send(w.ID(node), func(id uint64) sim.Message { return Request{ID: id, Args: args} })
}

// wait runs the kernel until the reply to id arrives (at most limit).
func (w *world) wait(id uint64, limit time.Duration) (Value, bool) {
	a, ok := simtest.Wait(w.World, w.p, id, limit)
	return a.Reply.Value, ok
}

// do sends a request and waits for its reply.
func (w *world) do(node string, args ...string) Value {
	w.T.Helper()
	id := w.send(node, args...)
	v, ok := w.wait(id, time.Minute)
	require.True(w.T, ok, "no reply to %v from %s", args, node)
	return v
}

func (w *world) node(name string) *Node {
	p := w.Process(name)
	if p == nil {
		return nil
	}
	return p.(*Node)
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
