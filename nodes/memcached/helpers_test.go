package memcached

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/sim"
)

// probe is the shared test client (internal/simtest) speaking memcached: on
// a connection that ended (the node restarted) it resends what was pending,
// as a client library reconnects: the test asks the restarted node, not the
// connection.
type probe = simtest.Probe[Reply]

// world is a shared simtest.World with one memcached node "M" and a probe
// client "c".
type world struct {
	*simtest.World
	p *probe
	m sim.ProcID
}

func newWorld(t testing.TB, cfg Config, clock sim.ClockSpec) *world {
	t.Helper()
	require.NoError(t, cfg.Validate())
	sw := simtest.NewWorld(t, 100*time.Microsecond)
	w := &world{World: sw, p: simtest.NewProbe(func(r Reply) uint64 { return r.ID })}
	w.m = sw.Add("M", func() sim.Process { return New(cfg) }, clock)
	simtest.AddProbe(sw, "c", w.p)
	sw.Start()
	return w
}

// do sends r over the network and returns the reply (within 1 ms).
func (w *world) do(r Request) Reply {
	w.T.Helper()
	id := w.p.Send(w.m, func(id uint64) sim.Message { r.ID = id; return r })
	w.Advance(time.Millisecond)
	rep, ok := w.p.Reply(id)
	require.True(w.T, ok, "no reply to %s", r.Line())
	return rep.Reply
}

func (w *world) node() *Node { return w.K.Process(w.m).(*Node) }

func (w *world) events(kind sim.Kind) []string { return w.Texts(kind, "M") }

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
