package realmode

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// gateway is the kernel process that stands for a real server (a
// redis-server or a redis-sentinel) under the server's own process name.
// It forwards every redis.Request it receives to the real server over real
// TCP, one connection per sender, and the driver injects each reply as the
// gateway's message to that sender. A connection that breaks (the server
// was killed) loses the requests in flight, and their senders time out, as
// the model's clients do when a crashed node never answers; the next
// request dials again.
type gateway struct {
	rt    *runtime
	name  string
	srv   *server
	env   *sim.Env
	conns map[sim.ProcID]*conn
	dead  bool
}

func (g *gateway) Init(env *sim.Env) {
	g.env = env
	g.conns = map[sim.ProcID]*conn{}
	g.rt.gateways[g.name] = g
}

func (g *gateway) Fire(env *sim.Env, tag any) {}

func (g *gateway) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	var req redis.Request
	switch m := msg.(type) {
	case redis.Request:
		req = m
	case *redis.Request:
		req = *m // pooled (resp/pool.go): recycled when Receive returns
	default:
		return
	}
	c := g.conns[from]
	if c == nil {
		c = &conn{g: g, to: from, ip: net.ParseIP(g.rt.clientIP[env.NameOf(from)]), reqs: make(chan redis.Request, 1024), quit: make(chan struct{})}
		g.conns[from] = c
		g.rt.wg.Add(1)
		go c.write()
	}
	select {
	case c.reqs <- req:
	default:
		// NB: a client with a thousand requests outstanding to one paused
		// server; the model would queue them all, real mode drops the rest
		// (its sender times out).
		env.Logf(KindReal, "request %d to %s dropped: 1024 requests already wait on this connection", req.ID, g.name)
	}
}

// close ends every connection of this gateway instance (its process
// crashed in the kernel: the real server was killed or shut down).
func (g *gateway) close() {
	g.dead = true
	for _, c := range g.conns {
		c.close()
	}
}

// KindReal marks trace events that only real mode records (a dial that
// failed, a request dropped).
const KindReal sim.Kind = "real"

// conn is one client's connection to the real server.
type conn struct {
	g    *gateway
	to   sim.ProcID
	ip   net.IP // the client's loopback address (nil: any)
	reqs chan redis.Request
	quit chan struct{}
	once sync.Once

	mu      sync.Mutex
	nc      net.Conn
	pending []redis.Request
}

func (c *conn) close() {
	c.once.Do(func() {
		close(c.quit)
		c.mu.Lock()
		if c.nc != nil {
			c.nc.Close()
		}
		c.mu.Unlock()
	})
}

// write sends requests in order, dialling when there is no live connection.
func (c *conn) write() {
	defer c.g.rt.wg.Done()
	var buf []byte
	for {
		var req redis.Request
		select {
		case <-c.quit:
			return
		case req = <-c.reqs:
		}
		c.mu.Lock()
		nc := c.nc
		c.mu.Unlock()
		if nc == nil {
			// From the client's own loopback address, so that the
			// server (and a proxy) sees who talks to it.
			d := net.Dialer{Timeout: time.Second}
			if c.ip != nil {
				d.LocalAddr = &net.TCPAddr{IP: c.ip}
			}
			var err error
			nc, err = d.Dial("tcp", c.g.srv.addr)
			if err != nil {
				continue // refused: the server is down; the sender times out
			}
			c.mu.Lock()
			select {
			case <-c.quit:
				c.mu.Unlock()
				nc.Close()
				return
			default:
			}
			c.nc = nc
			c.pending = c.pending[:0]
			c.mu.Unlock()
			c.g.rt.wg.Add(1)
			go c.read(nc)
		}
		c.mu.Lock()
		c.pending = append(c.pending, req)
		c.mu.Unlock()
		buf = appendCommand(buf[:0], req.Args)
		if _, err := nc.Write(buf); err != nil {
			c.drop(nc)
		}
	}
}

// drop forgets a broken connection and what was in flight on it.
func (c *conn) drop(nc net.Conn) {
	nc.Close()
	c.mu.Lock()
	if c.nc == nc {
		c.nc = nil
		c.pending = c.pending[:0]
	}
	c.mu.Unlock()
}

// read reads replies in order and hands each to the driver.
func (c *conn) read(nc net.Conn) {
	defer c.g.rt.wg.Done()
	br := bufio.NewReader(nc)
	for {
		v, err := readValue(br)
		if err != nil {
			c.drop(nc)
			return
		}
		c.mu.Lock()
		if c.nc != nc || len(c.pending) == 0 {
			c.mu.Unlock()
			continue
		}
		req := c.pending[0]
		c.pending = c.pending[1:]
		c.mu.Unlock()
		g, to := c.g, c.to
		c.g.rt.inject(func() { g.reply(to, req, v) })
	}
}

// reply runs on the driver's goroutine: it records what the real server
// did that fault triggers watch for and injects the reply.
func (g *gateway) reply(to sim.ProcID, req redis.Request, v redis.Value) {
	if g.dead || g.rt.gateways[g.name] != g {
		return // an earlier incarnation's connection
	}
	if isKeySet(req.Args, v) {
		// The real server stored the key before it replied: the trigger
		// "key-set" fires when real mode sees that reply (later than the
		// model's event by the reply's way back).
		g.env.Log(redis.EventKeySet, req.Args[1])
	}
	if g.srv.sentinel {
		v = g.rt.names(v)
	}
	g.rt.k.Inject(g.env.ID(), to, redis.Reply{ID: req.ID, Value: v})
}

// isKeySet reports whether a reply says that a lock command stored its key:
// SET ... NX answered +OK, SETNX answered :1.
func isKeySet(args []string, v redis.Value) bool {
	if len(args) < 2 {
		return false
	}
	switch strings.ToUpper(args[0]) {
	case "SET":
		return v.IsOK()
	case "SETNX":
		return v.Kind == redis.KindInt && v.Int == 1
	}
	return false
}
