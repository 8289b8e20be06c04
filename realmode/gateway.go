package realmode

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locksim/locksim/nodes/memcached"
	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// gateway is the kernel process that stands for a real server (a
// redis-server, a redis-sentinel, a memcached) under the server's own
// process name. It forwards every request it receives (in the server's
// protocol, its codec: redis.Request, memcached.Request) to the real server
// over real TCP, one connection per sender, and the driver injects each
// reply as the gateway's message to that sender. A connection that breaks (the server
// was killed) loses the requests in flight, and their senders time out, as
// the model's clients do when a crashed node never answers; the next
// request dials again.
type gateway struct {
	rt    *runtime
	name  string
	srv   *server
	env   *sim.Env
	conns map[sim.ProcID]*conn
	subs  map[sim.ProcID]*liveConn // a client's SUBSCRIBE on a sentinel (subscribe)
	dead  bool
}

func (g *gateway) Init(env *sim.Env) {
	g.env = env
	g.conns = map[sim.ProcID]*conn{}
	g.subs = map[sim.ProcID]*liveConn{}
	g.rt.gateways[g.name] = g
}

func (g *gateway) Fire(env *sim.Env, tag any) {}

func (g *gateway) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	req := msg
	if m, ok := msg.(*redis.Request); ok {
		req = *m // pooled (resp/pool.go): recycled when Receive returns; Args may be kept
	}
	if !g.srv.codec.accept(req) {
		return
	}
	if r, ok := req.(redis.Request); ok && g.srv.sentinel && len(r.Args) > 0 && strings.EqualFold(r.Args[0], "SUBSCRIBE") {
		g.subscribe(from, r)
		return
	}
	c := g.conns[from]
	if c == nil {
		c = &conn{g: g, to: from, ip: net.ParseIP(g.rt.clientIP[env.NameOf(from)]), reqs: make(chan sim.Message, 1024), liveConn: newLiveConn()}
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
		env.Logf(KindReal, "a request to %s dropped: 1024 requests already wait on this connection", g.name)
	}
}

// close ends every connection of this gateway instance (its process
// crashed in the kernel: the real server was killed or shut down).
func (g *gateway) close() {
	g.dead = true
	for _, c := range g.conns {
		c.close()
	}
	for _, sc := range g.subs {
		sc.close()
	}
}

// subscribe gives a client's SUBSCRIBE to a real sentinel a connection of
// its own, as go-redis does (a RESP2 connection in subscribed mode refuses
// other commands, server.c:4062-4080): the first reply is injected as the
// request's Reply, every later message as a redis.Push with Sub = the
// request's ID, its addresses turned into process names (eventNames). A
// client's new SUBSCRIBE replaces its previous one. Simplification: when
// the connection breaks (the sentinel was killed) the client is not told;
// the model's sentinel would end it with the connection.
func (g *gateway) subscribe(to sim.ProcID, req redis.Request) {
	if old := g.subs[to]; old != nil {
		old.close()
	}
	lc := newLiveConn()
	sc := &lc
	g.subs[to] = sc
	ip := net.ParseIP(g.rt.clientIP[g.env.NameOf(to)])
	g.rt.wg.Add(1)
	go g.listen(sc, to, ip, req)
}

// listen dials the subscription's connection, sends the SUBSCRIBE and
// hands every message to the driver until the connection ends.
func (g *gateway) listen(sc *liveConn, to sim.ProcID, ip net.IP, req redis.Request) {
	defer g.rt.wg.Done()
	nc, ok := sc.dial(g.srv.addr, ip, nil)
	if !ok {
		return // refused (the sentinel is down; the subscription is lost) or closed
	}
	if _, err := nc.Write(appendCommand(nil, req.Args)); err != nil {
		sc.close()
		return
	}
	br := bufio.NewReader(nc)
	for first := true; ; first = false {
		v, err := readValue(br)
		if err != nil {
			sc.close()
			return
		}
		var msg sim.Message = redis.Push{Sub: req.ID, Value: g.rt.eventNames(v)}
		if first {
			msg = redis.Reply{ID: req.ID, Value: v}
		}
		g.rt.inject(func() {
			if g.dead || g.rt.gateways[g.name] != g || g.subs[to] != sc {
				return // an earlier incarnation's or a replaced subscription
			}
			g.rt.k.Inject(g.env.ID(), to, msg)
		})
	}
}

// gatewayProc is a gateway process of either shape (gateway, mysqlGateway).
type gatewayProc interface {
	sim.Process
	// close ends the instance's real connections: its server was killed
	// or shut down.
	close()
}

// KindReal marks trace events that only real mode records (a dial that
// failed, a request dropped).
const KindReal sim.Kind = "real"

// conn is one client's connection to the real server.
type conn struct {
	g    *gateway
	to   sim.ProcID
	ip   net.IP // the client's loopback address (nil: any)
	reqs chan sim.Message
	liveConn
	pending []sim.Message // under mu
}

// liveConn is the real connection a gateway keeps for one model
// connection: quit ends its goroutines, nc (under mu) is the socket when
// dialled. The Redis and ZooKeeper gateways share it.
type liveConn struct {
	quit chan struct{}
	once sync.Once
	mu   sync.Mutex
	nc   net.Conn
}

func newLiveConn() liveConn { return liveConn{quit: make(chan struct{})} }

// close stops the connection's goroutines and closes its socket, once.
func (c *liveConn) close() {
	c.once.Do(func() {
		close(c.quit)
		c.mu.Lock()
		if c.nc != nil {
			c.nc.Close()
		}
		c.mu.Unlock()
	})
}

// dial connects to addr from the client's own loopback address ip (nil:
// any), so that the server (and a proxy) sees who talks to it, and makes
// it the live connection unless the connection was closed meanwhile;
// attached, if not nil, runs under the lock as it is made live. ok is
// false when nothing listens (the server is down) or the connection was
// closed.
func (c *liveConn) dial(addr string, ip net.IP, attached func()) (nc net.Conn, ok bool) {
	d := net.Dialer{Timeout: time.Second}
	if ip != nil {
		d.LocalAddr = &net.TCPAddr{IP: ip}
	}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.quit:
		nc.Close()
		return nil, false
	default:
	}
	c.nc = nc
	if attached != nil {
		attached()
	}
	return nc, true
}

// write sends requests in order, dialling when there is no live connection.
func (c *conn) write() {
	defer c.g.rt.wg.Done()
	var buf []byte
	for {
		var req sim.Message
		select {
		case <-c.quit:
			return
		case req = <-c.reqs:
		}
		c.mu.Lock()
		nc := c.nc
		c.mu.Unlock()
		if nc == nil {
			var ok bool
			nc, ok = c.dial(c.g.srv.addr, c.ip, func() { c.pending = c.pending[:0] })
			if !ok {
				select {
				case <-c.quit:
					return
				default:
					continue // refused: the server is down; the sender times out
				}
			}
			c.g.rt.wg.Add(1)
			go c.read(nc)
		}
		c.mu.Lock()
		c.pending = append(c.pending, req)
		c.mu.Unlock()
		buf = c.g.srv.codec.encode(buf[:0], req)
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
	codec := c.g.srv.codec
	for {
		// The reply's framing may depend on its request (memcached's
		// storage commands), which the codec asks for once the reply's
		// first line is in (the request was sent before it): nil for a
		// reply without one (a server's own error line).
		pending := func() sim.Message {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.nc == nc && len(c.pending) > 0 {
				return c.pending[0]
			}
			return nil
		}
		v, err := codec.read(br, pending)
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

// reply runs on the driver's goroutine: the codec records what the real
// server did that fault triggers watch for, and the reply is injected.
func (g *gateway) reply(to sim.ProcID, req, rep sim.Message) {
	if g.dead || g.rt.gateways[g.name] != g {
		return // an earlier incarnation's connection
	}
	g.rt.k.Inject(g.env.ID(), to, g.srv.codec.replied(g, req, rep))
}

// codec is a real server's protocol as a gateway speaks it.
type codec interface {
	// accept reports whether msg is a request of the protocol.
	accept(msg sim.Message) bool
	// encode appends req as the protocol sends it.
	encode(b []byte, req sim.Message) []byte
	// read reads one reply and returns it as the kernel message the
	// sender expects, its ID unset (replied sets it); pending returns the
	// request it answers (nil: none is pending).
	read(br *bufio.Reader, pending func() sim.Message) (sim.Message, error)
	// replied runs on the driver's goroutine once the reply arrived: it
	// logs the trigger events the reply shows the server emitted and
	// returns the reply to inject, answering req.
	replied(g *gateway, req, rep sim.Message) sim.Message
}

// respCodec is Redis's and Sentinel's RESP; cluster: the server is a
// Redis Cluster node, whose redirections and CLUSTER SLOTS name nodes by
// their announced (proxy front) addresses, which replied turns into
// process names as the model's nodes write them.
// addr (cluster only) returns the announced address of a cluster node
// by its process name: MIGRATE host port, which the model's operator
// writes with a process name as the model's nodes take it (the reshard
// fault), is sent with the real address. NB: Redis does not bind MIGRATE's
// connection to the node's address (connBlockingConnect in migrateGetSocket),
// so the proxy cannot tell who opened it: partitions between the two
// nodes do not act on it.
type respCodec struct {
	sentinel, cluster bool
	addr              func(name string) (string, bool)
}

func (respCodec) accept(msg sim.Message) bool { _, ok := msg.(redis.Request); return ok }

func (c respCodec) encode(b []byte, req sim.Message) []byte {
	args := req.(redis.Request).Args
	if c.addr != nil && len(args) >= 3 && strings.EqualFold(args[0], "MIGRATE") {
		if a, ok := c.addr(args[1]); ok {
			if h, p, err := net.SplitHostPort(a); err == nil {
				args = append([]string{args[0], h, p}, args[3:]...)
			}
		}
	}
	return appendCommand(b, args)
}

func (respCodec) read(br *bufio.Reader, _ func() sim.Message) (sim.Message, error) {
	v, err := readValue(br)
	return redis.Reply{Value: v}, err
}

func (c respCodec) replied(g *gateway, req, rep sim.Message) sim.Message {
	r, v := req.(redis.Request), rep.(redis.Reply).Value
	if isKeySet(r.Args, v) {
		// The real server stored the key before it replied: the trigger
		// "key-set" fires when real mode sees that reply (later than the
		// model's event by the reply's way back).
		g.env.Log(redis.EventKeySet, r.Args[1])
	}
	if c.sentinel {
		v = g.rt.names(v)
	}
	if c.cluster {
		v = g.rt.clusterNames(r.Args, v)
	}
	return redis.Reply{ID: r.ID, Value: v}
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

// memcachedCodec is memcached's text protocol (doc/protocol.txt): the
// request line as memcached.Request.Line renders it, and a reply of VALUE
// blocks up to END or a single status line.
type memcachedCodec struct{}

func (memcachedCodec) accept(msg sim.Message) bool { _, ok := msg.(memcached.Request); return ok }

func (memcachedCodec) encode(b []byte, req sim.Message) []byte {
	return append(b, req.(memcached.Request).Line()...)
}

// read reads VALUE blocks until the line that ends the reply (END after
// them; otherwise the only line): only get and gets answer with VALUE
// blocks, and they always end with END. After refusing a storage
// command's line with CLIENT_ERROR, memcached reads the data block as a
// command line of its own and answers ERROR (the conformance suite saw
// it): that line belongs to the same request and is skipped.
func (memcachedCodec) read(br *bufio.Reader, pending func() sim.Message) (sim.Message, error) {
	var rep memcached.Reply
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if !strings.HasPrefix(line, "VALUE ") {
			rep.Status = line
			if req, ok := pending().(memcached.Request); ok && req.Cmd.IsStorage() && strings.HasPrefix(line, "CLIENT_ERROR") {
				if _, err := br.ReadString('\n'); err != nil {
					return nil, err
				}
			}
			return rep, nil
		}
		// VALUE <key> <flags> <bytes> [<cas unique>]
		f := strings.Fields(line)
		if len(f) < 4 {
			return nil, fmt.Errorf("memcached: bad VALUE line %q", line)
		}
		flags, err1 := strconv.ParseUint(f[2], 10, 32)
		n, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil || n < 0 {
			return nil, fmt.Errorf("memcached: bad VALUE line %q", line)
		}
		it := memcached.Item{Key: f[1], Flags: uint32(flags)}
		if len(f) >= 5 {
			cas, err := strconv.ParseUint(f[4], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("memcached: bad VALUE line %q", line)
			}
			it.CAS, rep.Gets = cas, true
		}
		data := make([]byte, n+2)
		if _, err := io.ReadFull(br, data); err != nil {
			return nil, err
		}
		it.Value = string(data[:n])
		rep.Items = append(rep.Items, it)
	}
}

// replied logs item-stored (the trigger event key-set) when the reply says
// the server stored the item: STORED to a storage command, a number to
// incr/decr. NB: real mode sees it a reply's way back later than the
// model's event, and without the model's CAS id and expiry in its text.
func (memcachedCodec) replied(g *gateway, req, rep sim.Message) sim.Message {
	r, p := req.(memcached.Request), rep.(memcached.Reply)
	switch {
	case r.Cmd.IsStorage() && p.Status == memcached.Stored:
		g.env.Log(memcached.KindItemStored, r.Key+" "+strconv.Quote(r.Value))
	case r.Cmd == memcached.CmdIncr || r.Cmd == memcached.CmdDecr:
		if _, err := strconv.ParseUint(p.Status, 10, 64); err == nil {
			g.env.Log(memcached.KindItemStored, r.Key)
		}
	}
	if r.Cmd == memcached.CmdGets {
		p.Gets = true
	}
	p.ID = r.ID
	return p
}
