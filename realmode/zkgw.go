package realmode

import (
	"bufio"
	"net"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/locksim/locksim/nodes/zookeeper"
	"github.com/locksim/locksim/sim"
)

// zkGateway is the kernel process that stands for a real ZooKeeper server
// under the service's process name. It holds one real connection (and so
// one real session) per client process, speaking ZooKeeper's wire protocol
// itself (zkwire.go) so that nothing is sent that the model's client does
// not send: the client's zookeeper.Session (nodes/zookeeper) decides when
// to connect, ping, reconnect and give up, exactly as in a simulation, and
// a paused client stops its pings, so that its real session expires on the
// real server as a paused ZooKeeper client's would. The lock recipe stays
// the client's (clients/zookeeper.go).
//
// The translation:
//
//   - OpConnect opens a new real connection from the client's loopback
//     address (through the proxy) with a ConnectRequest: a new session, or
//     the client's session id and password on a reconnect, followed by
//     SetWatches with the client's watched paths as data watches (where
//     ClientCnxn registers an exists watch on an existing node;
//     DataTree.setWatches fires NodeDeleted at once for a node gone
//     meanwhile). A ConnectResponse with timeOut 0 (the server no longer
//     knows the session: ZooKeeperServer.finishSessionInit with valid
//     false) is answered SESSIONEXPIRED, as the model's server does.
//   - OpPing is a ping (xid -2); OpCreate a create2 (the reply's Stat
//     gives the node's creation zxid, the fencing token); OpGetChildren,
//     OpExists (with its watch) and OpDelete their requests; OpClose
//     closeSession. A create whose parent is missing is answered NONODE by
//     ZooKeeper; the gateway then creates the missing ancestors
//     (persistent) and the node again, as Curator's
//     creatingParentsIfNeeded does (ZKPaths.mkdirs), which the model's
//     server does implicitly.
//   - A NodeDeleted notification becomes a WatchEvent; other notifications
//     (NodeCreated of a watch set on a missing node) are not the model's
//     and are dropped.
//   - Replies are numbered per real connection (Reply.Seq), which is the
//     model's connection numbering.
//   - When the real server closes the connection (it expired the session,
//     or it was killed) the gateway closes the kernel connection with the
//     client, which learns it as the end of its connection
//     (Session.ConnEnded), reconnects, and hears SESSIONEXPIRED when the
//     session is gone. NB: the model's server sends one SessionExpired
//     message instead of that exchange (nodes/zookeeper doc); the client
//     learns the expiry a reconnect later in real mode.
//   - When the client closes its kernel connection (its read timeout of
//     2/3 of the session timeout fired) or crashes, the gateway closes the
//     real socket, as ClientCnxn's cleanup does; the session lives on
//     until the server expires it.
type zkGateway struct {
	rt    *runtime
	name  string
	srv   *server
	env   *sim.Env
	conns map[sim.ProcID]*zkConn
	dead  bool
	// passwd and lastZxid are the server's zkClients: the clients' own
	// state, which outlives a gateway incarnation (a restart of the
	// server).
	passwd   map[int64][]byte
	lastZxid map[string]int64
}

// zkClients is what a ZooKeeper client library keeps across connections
// (ClientCnxn): each session's password from its ConnectResponse (a
// reconnect must present it; the server checks it,
// ZooKeeperServer.checkPasswd) and the highest zxid each client has seen
// (lastZxid, sent as ConnectRequest.lastZxidSeen), by client name.
type zkClients struct {
	passwd   map[int64][]byte
	lastZxid map[string]int64
}

func newZKClients() *zkClients {
	return &zkClients{passwd: map[int64][]byte{}, lastZxid: map[string]int64{}}
}

func newZKGateway(rt *runtime, name string, srv *server) sim.Process {
	return &zkGateway{rt: rt, name: name, srv: srv}
}

func (g *zkGateway) Init(env *sim.Env) {
	g.env = env
	g.conns = map[sim.ProcID]*zkConn{}
	g.passwd, g.lastZxid = g.srv.zk.passwd, g.srv.zk.lastZxid
	g.rt.gateways[g.name] = g
}

func (g *zkGateway) Fire(env *sim.Env, tag any) {}

// zkConn is one client's real connection; the fields after mu belong to
// the driver goroutine.
type zkConn struct {
	g     *zkGateway
	owner sim.ProcID
	ip    net.IP
	// first is the connect request (and SetWatches) to send once dialled.
	first []byte
	out   chan []byte
	liveConn

	connectID  uint64 // the model's OpConnect this connection answers
	reqSession int64  // the session it asked for (0: a new one)
	session    int64  // the session the server gave (0: not yet)
	seq        uint64
	nextXid    int32
	pending    map[int32]zkCall
	pings      []uint64 // model ids of outstanding pings, in order
}

// zkCall is a request in flight: the model's request, or (internal) a
// parent the gateway creates itself.
type zkCall struct {
	req      zookeeper.Request
	internal bool
	retried  bool
}

// close ends every real connection of this gateway instance (the server
// was killed or shut down).
func (g *zkGateway) close() {
	g.dead = true
	for _, c := range g.conns {
		c.close()
	}
	g.conns = map[sim.ProcID]*zkConn{}
}

func (g *zkGateway) current(c *zkConn) bool {
	return !g.dead && g.rt.gateways[g.name] == g && g.conns[c.owner] == c
}

func (g *zkGateway) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	req, ok := msg.(zookeeper.Request)
	if !ok {
		return
	}
	if req.Op == zookeeper.OpConnect {
		g.connect(from, req)
		return
	}
	c := g.conns[from]
	if c == nil || c.session == 0 || c.session != req.Session {
		// No established connection for this session: the request is lost
		// with the connection the client has not yet learnt is gone (its
		// read timeout or the FIN on the way tells it).
		return
	}
	switch req.Op {
	case zookeeper.OpPing:
		c.pings = append(c.pings, req.ID)
		c.send(zkRequest(zkXidPing, zkOpPing, nil))
	case zookeeper.OpClose:
		c.send(zkRequest(c.xid(zkCall{req: req, internal: true}), zkOpCloseSession, nil))
	default:
		g.call(c, zkCall{req: req})
	}
}

// ConnEnded: the client closed its connection (read timeout) or crashed;
// the real socket is closed, as ClientCnxn's cleanup closes it.
func (g *zkGateway) ConnEnded(env *sim.Env, peer sim.ProcID, why sim.ConnEnd) {
	if c := g.conns[peer]; c != nil {
		delete(g.conns, peer)
		c.close()
	}
}

func (c *zkConn) xid(call zkCall) int32 {
	c.nextXid++
	c.pending[c.nextXid] = call
	return c.nextXid
}

func (c *zkConn) send(pkt []byte) {
	select {
	case c.out <- pkt:
	default:
		c.g.env.Logf(KindReal, "a request to %s dropped: 1024 requests already wait on this connection", c.g.name)
	}
}

// call sends one of the model's requests.
func (g *zkGateway) call(c *zkConn, call zkCall) {
	r := call.req
	switch r.Op {
	case zookeeper.OpCreate:
		flags := int32(0)
		if r.Ephemeral {
			flags |= zkFlagEphemeral
		}
		if r.Sequential {
			flags |= zkFlagSequential
		}
		c.send(zkRequest(c.xid(call), zkOpCreate2, func(w *zkBuf) {
			w.str(r.Path)
			w.buffer(nil)
			zkOpenACL(w)
			w.int(flags)
		}))
	case zookeeper.OpDelete:
		c.send(zkRequest(c.xid(call), zkOpDelete, func(w *zkBuf) { w.str(r.Path); w.int(-1) }))
	case zookeeper.OpGetChildren:
		c.send(zkRequest(c.xid(call), zkOpGetChildren, func(w *zkBuf) { w.str(r.Path); w.bool(false) }))
	case zookeeper.OpExists:
		c.send(zkRequest(c.xid(call), zkOpExists, func(w *zkBuf) { w.str(r.Path); w.bool(r.Watch) }))
	default:
		g.inject(c, zookeeper.Reply{ID: r.ID, Session: c.session, Op: r.Op, Err: zookeeper.ErrUnimplemented})
	}
}

// connect starts a new real connection for an OpConnect; the client's
// earlier one, if any, is closed (the model's Session sends OpConnect only
// when it starts over).
func (g *zkGateway) connect(from sim.ProcID, req zookeeper.Request) {
	if old := g.conns[from]; old != nil {
		old.close()
	}
	passwd := g.passwd[req.Session]
	first := zkConnectRequest(g.lastZxid[g.env.NameOf(from)], int32(req.Timeout.Milliseconds()), req.Session, passwd)
	if req.Session != 0 && len(req.Watches) > 0 {
		first = append(first, zkRequest(zkXidSetWatches, zkOpSetWatches, func(w *zkBuf) {
			w.long(g.lastZxid[g.env.NameOf(from)])
			w.strs(req.Watches) // data watches: exists on an existing node
			w.strs(nil)         // exist watches (on missing nodes)
			w.strs(nil)         // child watches
		})...)
	}
	c := &zkConn{g: g, owner: from, ip: net.ParseIP(g.rt.clientIP[g.env.NameOf(from)]), first: first,
		out: make(chan []byte, 1024), liveConn: newLiveConn(), connectID: req.ID, reqSession: req.Session,
		pending: map[int32]zkCall{}}
	g.conns[from] = c
	g.rt.wg.Add(1)
	go c.write()
}

// write dials, sends the connect request and then every request in order.
// A dial that fails leaves the client's OpConnect unanswered (it tries
// again at its next heartbeat), as the model's server does when it is down.
func (c *zkConn) write() {
	defer c.g.rt.wg.Done()
	nc, ok := c.dial(c.g.srv.addr, c.ip, nil)
	if !ok {
		return
	}
	if _, err := nc.Write(c.first); err != nil {
		nc.Close()
		return
	}
	c.g.rt.wg.Add(1)
	go c.read(nc)
	for {
		select {
		case <-c.quit:
			return
		case pkt := <-c.out:
			if _, err := nc.Write(pkt); err != nil {
				nc.Close()
				return
			}
		}
	}
}

// read reads the ConnectResponse, then replies and notifications, and
// hands each to the driver; the connection's end goes to the driver too.
func (c *zkConn) read(nc net.Conn) {
	defer c.g.rt.wg.Done()
	r := &zkReader{br: bufio.NewReader(nc)}
	g := c.g
	rec, err := r.next()
	if err != nil {
		g.rt.inject(func() { g.broken(c) })
		return
	}
	// ConnectResponse: protocolVersion, timeOut, sessionId, passwd
	// (readOnly may follow).
	rec.int()
	timeout, session, passwd := rec.int(), rec.long(), rec.buffer()
	if rec.err != nil {
		g.rt.inject(func() { g.broken(c) })
		return
	}
	g.rt.inject(func() { g.connected(c, timeout, session, passwd) })
	for {
		rec, err := r.next()
		if err != nil {
			g.rt.inject(func() { g.broken(c) })
			return
		}
		xid, zxid, code := rec.int(), rec.long(), rec.int()
		if rec.err != nil {
			g.rt.inject(func() { g.broken(c) })
			return
		}
		body := &zkRec{b: append([]byte(nil), rec.b...)}
		g.rt.inject(func() { g.replied(c, xid, zxid, code, body) })
	}
}

// connected answers the client's OpConnect.
func (g *zkGateway) connected(c *zkConn, timeoutMS int32, session int64, passwd []byte) {
	if !g.current(c) {
		return
	}
	if timeoutMS <= 0 {
		// The server no longer knows the session and closes the
		// connection after this answer.
		delete(g.conns, c.owner)
		c.close()
		g.rt.k.Inject(g.env.ID(), c.owner, zookeeper.Reply{ID: c.connectID, Session: c.reqSession, Op: zookeeper.OpConnect,
			Err: zookeeper.ErrSessionExpired, Zxid: g.lastZxid[g.env.NameOf(c.owner)]})
		return
	}
	c.session = session
	g.passwd[session] = passwd
	timeout := time.Duration(timeoutMS) * time.Millisecond
	if c.reqSession == 0 {
		g.env.LogfAttrs(zookeeper.KindSessionOpen, []sim.Attr{sim.Int64("session", session), sim.Dur("timeout", timeout)},
			"s0x%x timeout %v (real server)", session, timeout)
	}
	g.inject(c, zookeeper.Reply{ID: c.connectID, Session: session, Op: zookeeper.OpConnect, Timeout: timeout, Zxid: g.lastZxid[g.env.NameOf(c.owner)]})
}

// broken: the real connection ended. When it was the client's current
// one, the kernel connection ends too, and the client learns it.
func (g *zkGateway) broken(c *zkConn) {
	if !g.current(c) {
		return
	}
	delete(g.conns, c.owner)
	c.close()
	g.rt.k.InjectClose(g.env.ID(), c.owner)
}

// replied maps one reply or notification to the model's message.
func (g *zkGateway) replied(c *zkConn, xid int32, zxid int64, code int32, body *zkRec) {
	if !g.current(c) {
		return
	}
	if zxid > g.lastZxid[g.env.NameOf(c.owner)] {
		g.lastZxid[g.env.NameOf(c.owner)] = zxid
	}
	switch xid {
	case zkXidNotification:
		// WatcherEvent: type, state, path.
		typ, _, p := body.int(), body.int(), body.str()
		if body.err == nil && typ == zkEventNodeDeleted {
			c.seq++
			g.rt.k.Inject(g.env.ID(), c.owner, zookeeper.WatchEvent{Session: c.session, Path: p, Seq: c.seq})
		}
		return
	case zkXidPing:
		if len(c.pings) == 0 {
			return
		}
		id := c.pings[0]
		c.pings = c.pings[1:]
		g.inject(c, zookeeper.Reply{ID: id, Session: c.session, Op: zookeeper.OpPing, Zxid: zxid})
		return
	case zkXidSetWatches:
		return
	}
	call, ok := c.pending[xid]
	if !ok {
		return
	}
	delete(c.pending, xid)
	if call.internal {
		if call.req.Op == zookeeper.OpClose {
			delete(g.conns, c.owner)
			c.close()
		}
		return // a parent created for a create (NODEEXISTS is fine)
	}
	r := call.req
	rep := zookeeper.Reply{ID: r.ID, Session: c.session, Op: r.Op, Zxid: zxid}
	if code != 0 {
		rep.Err = zkErrName(code)
	}
	switch r.Op {
	case zookeeper.OpCreate:
		if rep.Err == zookeeper.ErrNoNode && !call.retried {
			// creatingParentsIfNeeded: the ancestors, then the node again.
			for _, a := range ancestors(path.Dir(r.Path)) {
				c.send(zkRequest(c.xid(zkCall{req: zookeeper.Request{Op: zookeeper.OpCreate, Path: a}, internal: true}), zkOpCreate2, func(w *zkBuf) {
					w.str(a)
					w.buffer(nil)
					zkOpenACL(w)
					w.int(0)
				}))
			}
			call.retried = true
			g.call(c, call)
			return
		}
		if rep.Err == "" {
			rep.Path = body.str()
			rep.Zxid = body.stat()
		}
	case zookeeper.OpGetChildren:
		if rep.Err == "" {
			rep.Exists = true
			rep.Children = body.strs()
			sort.Strings(rep.Children)
		}
	case zookeeper.OpExists:
		switch rep.Err {
		case "":
			rep.Exists = true
		case zookeeper.ErrNoNode:
			rep.Err = "" // the model's exists answers a missing node with Exists false
		}
	}
	g.inject(c, rep)
}

// inject sends a reply of c's connection to its client, numbered.
func (g *zkGateway) inject(c *zkConn, r zookeeper.Reply) {
	c.seq++
	r.Seq = c.seq
	g.rt.k.Inject(g.env.ID(), c.owner, r)
}

// ancestors returns "/a", "/a/b", ... for "/a/b" (none for "/").
func ancestors(p string) []string {
	var out []string
	for i := 1; i < len(p); i++ {
		if p[i] == '/' {
			out = append(out, p[:i])
		}
	}
	if p != "/" && strings.HasPrefix(p, "/") {
		out = append(out, p)
	}
	return out
}
