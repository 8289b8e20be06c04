package mysql

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// client is a test client process: the test sends requests through it and
// it collects the replies and close notices with their true arrival time.
type client struct {
	env     *sim.Env
	replies map[uint64]Reply
	at      map[uint64]sim.Time
	closed  map[ConnID]string
	k       *sim.Kernel
	// pending are the requests and connects sent and not yet answered, in
	// the order sent, with the server each went to.
	pending []pendingMsg
}

type pendingMsg struct {
	id  uint64
	to  sim.ProcID
	msg sim.Message
}

// ConnEnded is what the client library sees when its socket to peer ends
// (the server restarted, or the connection was reset): a connect still
// waiting is tried again on a new socket; a statement still waiting gets
// CR_SERVER_LOST (2013), as the library reports when the read of the
// reply finds the socket closed.
func (p *client) ConnEnded(env *sim.Env, peer sim.ProcID, why sim.ConnEnd) {
	for _, m := range p.pending {
		if _, done := p.replies[m.id]; done || m.to != peer {
			continue
		}
		switch r := m.msg.(type) {
		case Connect:
			env.Send(peer, r)
		case Request:
			rep := replyServerLost
			rep.ID, rep.Conn = r.ID, r.Conn
			p.replies[r.ID] = rep
			p.at[r.ID] = p.k.Now()
		}
	}
}

func (p *client) Init(env *sim.Env) {
	p.env = env
	p.replies = map[uint64]Reply{}
	p.at = map[uint64]sim.Time{}
	p.closed = map[ConnID]string{}
}

func (p *client) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	switch m := msg.(type) {
	case Reply:
		p.replies[m.ID] = m
		p.at[m.ID] = p.k.Now()
	case Closed:
		p.closed[m.Conn] = m.Reason
	}
}

func (p *client) Fire(env *sim.Env, tag any) {}

// world is a kernel with one MySQL node "db" and clients "c1".."cN".
type world struct {
	t       testing.TB
	k       *sim.Kernel
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
	k := sim.New(sim.Config{Seed: 1, KeepTrace: true, Network: sim.NetConfig{Latency: sim.Fixed(latency)}})
	w := &world{t: t, k: k, clients: map[string]*client{}}
	w.db = k.Add("db", func() sim.Process { return New(cfg) }, sim.ClockSpec{})
	for _, name := range clients {
		c := &client{k: k}
		w.clients[name] = c
		k.Add(name, func() sim.Process { return c }, sim.ClockSpec{})
	}
	if more != nil {
		more(k)
	}
	require.NoError(t, k.Run(0))
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
	w.t.Helper()
	w.next++
	id := w.next
	c := w.clients[client]
	c.pending = append(c.pending, pendingMsg{id: id, to: w.db, msg: Connect{ID: id}})
	c.env.Send(w.db, Connect{ID: id})
	r, ok := w.wait(client, id, time.Second)
	require.True(w.t, ok, "no reply to connect")
	require.True(w.t, r.OK(), "connect: %v", r)
	return &tconn{w: w, client: client, id: r.Conn, node: w.db}
}

// send sends a statement now and returns the request id.
func (c *tconn) send(s Stmt) uint64 {
	c.w.next++
	req := Request{ID: c.w.next, Conn: c.id, Stmt: s}
	cl := c.w.clients[c.client]
	cl.pending = append(cl.pending, pendingMsg{id: req.ID, to: c.node, msg: req})
	cl.env.Send(c.node, req)
	return c.w.next
}

// do sends a statement and waits up to a minute of virtual time for its reply.
func (c *tconn) do(s Stmt) Reply {
	c.w.t.Helper()
	id := c.send(s)
	r, ok := c.w.wait(c.client, id, time.Minute)
	require.True(c.w.t, ok, "no reply to %T on conn %d", s, c.id)
	return r
}

// reply returns the reply to id if it has arrived.
func (c *tconn) reply(id uint64) (Reply, bool) {
	r, ok := c.w.clients[c.client].replies[id]
	return r, ok
}

func (c *tconn) closedReason() (string, bool) {
	r, ok := c.w.clients[c.client].closed[c.id]
	return r, ok
}

// wait runs the kernel until the reply to id arrives (at most limit).
func (w *world) wait(client string, id uint64, limit time.Duration) (Reply, bool) {
	end := w.k.Now().Add(limit)
	c := w.clients[client]
	for {
		if r, ok := c.replies[id]; ok {
			return r, true
		}
		if w.k.Now() >= end {
			return Reply{}, false
		}
		require.NoError(w.t, w.k.Run(w.k.Now().Add(time.Millisecond)))
	}
}

func (w *world) advance(d time.Duration) { require.NoError(w.t, w.k.Run(w.k.Now().Add(d))) }

func (w *world) node() *Node {
	p := w.k.Process(w.db)
	if p == nil {
		return nil
	}
	return p.(*Node)
}

func (w *world) events(kind sim.Kind) []string {
	var out []string
	for _, e := range w.k.Trace() {
		if e.Kind == kind {
			out = append(out, e.Text)
		}
	}
	return out
}

func cfgWith(f func(*Config)) Config {
	c := DefaultConfig()
	if f != nil {
		f(&c)
	}
	return c
}
