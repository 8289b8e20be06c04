package usercode

import (
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// simConn is a net.Conn carried by the kernel's connection between a user
// client and a server process. Write parses the RESP commands written and
// queues each as an item (it never blocks: the kernel's connection is an
// unbounded byte stream); the client process sends them as redis.Request
// values in a kernel step. Replies come back through the process's
// Receive, encoded into RESP bytes that Read returns. Read blocks on a
// channel made in the bubble, so a goroutine waiting for a reply is
// durably blocked, and its read deadline is a timer of the bubble, whose
// clock is the kernel's: deadlines fall in virtual time.
//
// Semantics, from the kernel (sim/conn.go): latency and loss of the
// network between the processes; a partition stalls both directions (the
// reply arrives after the heal, or the read deadline passes first); a
// server crash or restart resets the connection (Read returns
// ECONNRESET, and later reads too: go-redis dials again); a pause of either
// end holds what it sends and receives. Several simConns to one server
// share the kernel's one connection per pair of processes; replies find
// their simConn by request id.
//
// A read deadline that passes while the client is paused is looked at
// after the resume, once the replies that reached the client during the
// pause were handed over: a process stopped by a GC pause reads what its
// socket received before its timer runs (Go checks neither while stopped).
//
// Simplifications: a dial succeeds at once, without a handshake (a dial to
// a crashed server fails at the first read, with the reset the first
// command gets); write deadlines are accepted and ignored (writes never
// block); a simConn closed by the client closes the kernel's connection
// only when it was the client's last simConn to that server.
type simConn struct {
	in     *instance
	server sim.ProcID
	host   string
	addr   string // as dialled ("name:port"): RemoteAddr
	ord    uint32 // dial ordinal for (client, server)

	mu     sync.Mutex
	buf    []byte // readable bytes
	err    error  // a reset: every read after the buffered bytes fails
	closed bool
	rdl    time.Time
	wake   chan struct{} // made in the bubble
	wbuf   []byte        // partial command written
	tm     *time.Timer   // Read's deadline timer, reused (the reader's only)
	seq    uint64
}

// errClosed is what Read and Write return on a simConn the client closed.
var errClosed = net.ErrClosed

func (c *simConn) opErr(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: simAddr(c.in.name), Addr: simAddr(c.host), Err: err}
}

func (c *simConn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Read implements net.Conn.
func (c *simConn) Read(p []byte) (int, error) {
	for {
		c.mu.Lock()
		if len(c.buf) > 0 {
			n := copy(p, c.buf)
			c.buf = c.buf[n:]
			c.mu.Unlock()
			return n, nil
		}
		if c.closed {
			c.mu.Unlock()
			return 0, c.opErr("read", errClosed)
		}
		if c.err != nil {
			err := c.err
			c.mu.Unlock()
			return 0, c.opErr("read", err)
		}
		dl := c.rdl
		c.mu.Unlock()
		if dl.IsZero() {
			<-c.wake
			continue
		}
		d := time.Until(dl)
		if d <= 0 {
			if c.in.w.k.Paused(c.in.id) {
				// A paused process does not see its deadline pass
				// before the replies that reached it meanwhile: wait for
				// the resume (resumeTag), then look again.
				<-c.wake
				continue
			}
			return 0, c.opErr("read", os.ErrDeadlineExceeded)
		}
		if c.tm == nil {
			c.tm = time.NewTimer(d)
		} else {
			c.tm.Reset(d)
		}
		select {
		case <-c.wake:
			c.tm.Stop()
		case <-c.tm.C:
		}
	}
}

// Write implements net.Conn: it queues every whole command written.
func (c *simConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, c.opErr("write", errClosed)
	}
	if c.err != nil {
		return 0, c.opErr("write", c.err)
	}
	c.wbuf = append(c.wbuf, p...)
	for {
		args, n, err := parseCommand(c.wbuf)
		if err != nil {
			c.wbuf = nil
			return 0, c.opErr("write", err)
		}
		if n == 0 {
			break
		}
		c.wbuf = c.wbuf[n:]
		c.seq++
		c.in.w.push(item{inst: c.in, stream: int32(c.server), conn: c.ord, seq: c.seq, act: func(in *instance) { in.sendCommand(c, args) }})
	}
	if len(c.wbuf) == 0 {
		c.wbuf = nil
	}
	return len(p), nil
}

// Close implements net.Conn.
func (c *simConn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.seq++
	seq := c.seq
	c.mu.Unlock()
	c.signal()
	c.in.w.push(item{inst: c.in, stream: int32(c.server), conn: c.ord, seq: seq, act: func(in *instance) { in.connClosed(c) }})
	return nil
}

// deliver appends reply bytes (a hand-off, run by the root).
func (c *simConn) deliver(b []byte) {
	c.mu.Lock()
	c.buf = append(c.buf, b...)
	c.mu.Unlock()
	c.signal()
}

// reset ends the connection with err (a hand-off, run by the root).
func (c *simConn) reset(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
	c.signal()
}

func (c *simConn) LocalAddr() net.Addr { return simAddr(c.in.name) }

// RemoteAddr is the address dialled, "name:port" as go-redis dials it: a
// real socket's is the "ip:port" it connected to, which go-redis compares
// with the address a sentinel names (onFailover's pool Filter,
// sentinel.go:660-676 of v9.23.0, keeps the connections to the new master).
func (c *simConn) RemoteAddr() net.Addr { return simAddr(c.addr) }
func (c *simConn) SetDeadline(t time.Time) error {
	return c.SetReadDeadline(t)
}
func (c *simConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.rdl = t
	c.mu.Unlock()
	c.signal() // a blocked Read looks at the new deadline
	return nil
}
func (c *simConn) SetWriteDeadline(time.Time) error { return nil }

// simAddr is the address of a simulated process: its name.
type simAddr string

func (a simAddr) Network() string { return "locksim" }
func (a simAddr) String() string  { return string(a) }

// errors a simConn reports, as the socket errors a real client reads
var (
	errReset    = errors.New("connection reset by peer")
	errEOF      = errors.New("EOF: the server closed the connection")
	errTimedOut = errors.New("connection timed out")
)

func endErr(why sim.ConnEnd) error {
	switch why {
	case sim.ConnClosed:
		return errEOF
	case sim.ConnTimedOut:
		return errTimedOut
	}
	return errReset
}

// sendCommand sends one command of c to its server (in a kernel step of
// the client process).
func (in *instance) sendCommand(c *simConn, args []string) {
	c.mu.Lock()
	dead := c.err != nil
	c.mu.Unlock()
	if dead {
		return // the connection was reset before the command left
	}
	in.nextReq++
	id := in.nextReq
	in.reqs[id] = pending{c: c, args: args}
	if len(args) > 0 && strings.EqualFold(args[0], "SUBSCRIBE") {
		in.subs[id] = c
	}
	in.env.Send(c.server, redis.Request{ID: id, Args: args})
}

// connClosed forgets a simConn the client closed and, when it was the
// client's last one to the server, closes the kernel's connection.
func (in *instance) connClosed(c *simConn) {
	for id, rc := range in.reqs {
		if rc.c == c {
			delete(in.reqs, id) // replies still on the way are discarded
		}
	}
	for id, sc := range in.subs {
		if sc == c {
			delete(in.subs, id)
		}
	}
	live := in.conns[:0]
	others := false
	for _, o := range in.conns {
		if o == c {
			continue
		}
		live = append(live, o)
		if o.server == c.server {
			others = true
		}
	}
	in.conns = live
	if !others {
		in.env.Close(c.server)
	}
}

// receive routes a reply to its simConn.
func (in *instance) receive(msg sim.Message) bool {
	var id uint64
	var v redis.Value
	switch m := msg.(type) {
	case *redis.Reply:
		id, v = m.ID, m.Value
	case redis.Reply:
		id, v = m.ID, m.Value
	case redis.Push:
		// A message on a subscription (a sentinel's +switch-master): to
		// the simConn that subscribed, if it is still open.
		if c, ok := in.subs[m.Sub]; ok {
			b := appendValue(nil, m.Value)
			in.w.handoff = append(in.w.handoff, func() { c.deliver(b) })
		}
		return true
	default:
		return false
	}
	pr, ok := in.reqs[id]
	if !ok {
		return true // its connection was closed or reset: discarded
	}
	delete(in.reqs, id)
	c := pr.c
	if why := limitReply(v); why != "" {
		in.w.unsupported(in, pr.args, why)
	}
	b := appendValue(nil, v) // copies: a pooled reply is recycled on return
	in.w.handoff = append(in.w.handoff, func() { c.deliver(b) })
	return true
}

// connEnded resets the simConns to peer.
func (in *instance) connEnded(peer sim.ProcID, why sim.ConnEnd) {
	err := endErr(why)
	for id, pr := range in.reqs {
		if pr.c.server == peer {
			delete(in.reqs, id)
		}
	}
	for id, c := range in.subs {
		if c.server == peer {
			delete(in.subs, id)
		}
	}
	live := in.conns[:0]
	for _, c := range in.conns {
		if c.server == peer {
			in.w.handoff = append(in.w.handoff, func() { c.reset(err) })
			continue
		}
		live = append(live, c)
	}
	in.conns = live
}

// dial opens a simConn to the server named by addr's host (user goroutine).
func (in *instance) dial(addr string) (*simConn, error) {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	id, ok := in.w.k.Lookup(host)
	if !ok {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: simAddr(addr), Err: errors.New("no process named " + strconv.Quote(host) + " in the scenario")}
	}
	if in.dead.Load() {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: simAddr(addr), Err: errors.New("the client process is no longer running")}
	}
	in.mu.Lock()
	in.dials[id]++
	ord := in.dials[id]
	in.mu.Unlock()
	c := &simConn{in: in, server: id, host: host, addr: addr, ord: ord, wake: make(chan struct{}, 1)}
	// The kernel side learns of the simConn with its first item.
	in.w.push(item{inst: in, stream: int32(id), conn: ord, seq: 0, act: func(in *instance) { in.conns = append(in.conns, c) }})
	return c, nil
}
