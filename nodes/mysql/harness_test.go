package mysql

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/sim"
)

// client is the shared test probe (internal/simtest) speaking MySQL: the
// test sends requests through it and it collects the replies and close
// notices with their true arrival time.
type client struct {
	*simtest.Probe[Reply]
	closed map[ConnID]string
}

func newClient() *client {
	c := &client{closed: map[ConnID]string{}}
	c.Probe = simtest.NewProbe(func(r Reply) uint64 { return r.ID })
	c.Other = func(env *sim.Env, from sim.ProcID, msg sim.Message) {
		if m, ok := msg.(Closed); ok {
			c.closed[m.Conn] = m.Reason
		}
	}
	c.OnConnEnded = c.connEnded
	return c
}

// connEnded is what the client library sees when its socket to peer ends
// (the server restarted, or the connection was reset): a connect still
// waiting is tried again on a new socket; a statement still waiting gets
// CR_SERVER_LOST (2013), as the library reports when the read of the
// reply finds the socket closed.
func (c *client) connEnded(p *simtest.Probe[Reply], peer sim.ProcID, why sim.ConnEnd) {
	for _, m := range p.Pending(peer) {
		switch r := m.(type) {
		case Connect:
			p.Env().Send(peer, r)
		case Request:
			rep := replyServerLost
			rep.ID, rep.Conn = r.ID, r.Conn
			p.SetReply(r.ID, rep)
		}
	}
}

// at returns when the reply to id arrived (0 if it did not).
func (c *client) at(id uint64) sim.Time {
	a, _ := c.Reply(id)
	return a.At
}

// world is a kernel with one MySQL node "db" and clients "c1".."cN".
type world struct {
	*simtest.World
	db      sim.ProcID
	clients map[string]*client
	next    uint64
}

const latency = time.Millisecond

func newWorld(t testing.TB, cfg Config, clients ...string) *world {
	t.Helper()
	return newWorldWith(t, cfg, nil, clients...)
}

// newWorldWith is newWorld with extra processes added by more before the
// kernel starts.
func newWorldWith(t testing.TB, cfg Config, more func(k *sim.Kernel), clients ...string) *world {
	t.Helper()
	require.NoError(t, cfg.Validate())
	sw := simtest.NewWorld(t, latency)
	w := &world{World: sw, clients: map[string]*client{}}
	w.db = sw.Add("db", func() sim.Process { return New(cfg) }, sim.ClockSpec{})
	for _, name := range clients {
		c := newClient()
		w.clients[name] = c
		simtest.AddProbe(sw, name, c.Probe)
	}
	if more != nil {
		more(sw.K)
	}
	sw.Start()
	return w
}

// conn is one connection of a test client.
type tconn struct {
	w      *world
	client string
	id     ConnID
	node   sim.ProcID // the server it is connected to
}

func (w *world) connect(client string) *tconn {
	w.T.Helper()
	w.next++
	id := w.next
	w.clients[client].SendMsg(w.db, id, Connect{ID: id})
	r, ok := w.wait(client, id, time.Second)
	require.True(w.T, ok, "no reply to connect")
	require.True(w.T, r.OK(), "connect: %v", r)
	return &tconn{w: w, client: client, id: r.Conn, node: w.db}
}

// send sends a statement now and returns the request id.
func (c *tconn) send(s Stmt) uint64 {
	c.w.next++
	req := Request{ID: c.w.next, Conn: c.id, Stmt: s}
	c.w.clients[c.client].SendMsg(c.node, req.ID, req)
	return c.w.next
}

// do sends a statement and waits up to a minute of virtual time for its reply.
func (c *tconn) do(s Stmt) Reply {
	c.w.T.Helper()
	id := c.send(s)
	r, ok := c.w.wait(c.client, id, time.Minute)
	require.True(c.w.T, ok, "no reply to %T on conn %d", s, c.id)
	return r
}

// reply returns the reply to id if it has arrived.
func (c *tconn) reply(id uint64) (Reply, bool) {
	a, ok := c.w.clients[c.client].Reply(id)
	return a.Reply, ok
}

func (c *tconn) closedReason() (string, bool) {
	r, ok := c.w.clients[c.client].closed[c.id]
	return r, ok
}

// wait runs the kernel until the reply to id arrives (at most limit).
func (w *world) wait(client string, id uint64, limit time.Duration) (Reply, bool) {
	a, ok := simtest.Wait(w.World, w.clients[client].Probe, id, limit)
	return a.Reply, ok
}

func (w *world) node() *Node {
	p := w.K.Process(w.db)
	if p == nil {
		return nil
	}
	return p.(*Node)
}

func (w *world) events(kind sim.Kind) []string { return w.Texts(kind, "") }

func cfgWith(f func(*Config)) Config {
	c := DefaultConfig()
	if f != nil {
		f(&c)
	}
	return c
}
