package proxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"sync"
	"syscall"
	"time"
)

// MaxHeld bounds the bytes the proxy holds per direction of a connection
// (it also holds at most 1024 reads, which bounds it first when the sender's
// writes arrive in small pieces).
const MaxHeld = 4 << 20

const chunkSize = 32 << 10

// Proxy forwards connections to servers and applies faults to them.
type Proxy struct {
	mu     sync.Mutex
	names  map[string]string // source ip -> process name
	fronts map[string]*front // server name -> front
	more   []*front          // second fronts of servers (ListenAlso)
	cuts   map[int][][2]string
	delays map[int]delayFault
	nextID int
	// off holds the processes whose host is powered off (PowerOff).
	off     map[string]bool
	changed chan struct{} // closed and replaced on every fault change
	conns   map[*conn]struct{}
	closed  bool
	wg      sync.WaitGroup
}

type delayFault struct {
	from, to string
	by       time.Duration
}

type front struct {
	server, target string
	ln             net.Listener
}

// New returns a proxy with no listeners and no faults.
func New() *Proxy {
	return &Proxy{
		names:   map[string]string{},
		fronts:  map[string]*front{},
		cuts:    map[int][][2]string{},
		delays:  map[int]delayFault{},
		off:     map[string]bool{},
		changed: make(chan struct{}),
		conns:   map[*conn]struct{}{},
	}
}

// Register names the process that connects from ip. A connection from an
// address nobody registered is named by the address itself.
func (p *Proxy) Register(ip, name string) error {
	if net.ParseIP(ip) == nil || name == "" {
		return fmt.Errorf("proxy: Register(%q, %q): want an IP address and a name", ip, name)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if old, ok := p.names[ip]; ok && old != name {
		return fmt.Errorf("proxy: address %s is already registered for %s", ip, old)
	}
	p.names[ip] = name
	return nil
}

// Name returns the process name for a source address.
func (p *Proxy) Name(ip string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n, ok := p.names[ip]; ok {
		return n
	}
	return ip
}

// Listen opens the front for server: a listener on listen ("ip:port", port
// 0 for a free one) that forwards every connection to target, the server's
// real address. It returns the front's address, which clients, replicas
// and sentinels use instead of the server's.
func (p *Proxy) Listen(server, listen, target string) (string, error) {
	if server == "" {
		return "", errors.New("proxy: Listen: empty server name")
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return "", fmt.Errorf("proxy: front for %s on %s: %w", server, listen, err)
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		ln.Close()
		return "", errors.New("proxy: closed")
	}
	if _, ok := p.fronts[server]; ok {
		p.mu.Unlock()
		ln.Close()
		return "", fmt.Errorf("proxy: %s already has a front", server)
	}
	f := &front{server: server, target: target, ln: ln}
	p.fronts[server] = f
	p.wg.Add(1)
	p.mu.Unlock()
	go p.accept(f)
	return ln.Addr().String(), nil
}

// ListenAlso opens a second front for server, which already has one: a
// Redis Cluster node's bus port beside its client port. Connections
// through it are the server's like those of its first front (cuts,
// delays and resets act on both).
func (p *Proxy) ListenAlso(server, listen, target string) (string, error) {
	if server == "" {
		return "", errors.New("proxy: ListenAlso: empty server name")
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return "", fmt.Errorf("proxy: second front for %s on %s: %w", server, listen, err)
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		ln.Close()
		return "", errors.New("proxy: closed")
	}
	f := &front{server: server, target: target, ln: ln}
	p.more = append(p.more, f)
	p.wg.Add(1)
	p.mu.Unlock()
	go p.accept(f)
	return ln.Addr().String(), nil
}

// Front returns the front address of server ("" if none).
func (p *Proxy) Front(server string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f, ok := p.fronts[server]; ok {
		return f.ln.Addr().String()
	}
	return ""
}

func (p *Proxy) changedLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// Cut holds the bytes from from to to until Uncut(id) or Heal.
func (p *Proxy) Cut(from, to string) int {
	return p.addCuts([][2]string{{from, to}})
}

// Partition cuts every pair of processes in different groups, both ways;
// processes in no group are not affected. Uncut(id) removes it all.
func (p *Proxy) Partition(groups [][]string) int {
	var pairs [][2]string
	for i, a := range groups {
		for j, b := range groups {
			if i == j {
				continue
			}
			for _, x := range a {
				for _, y := range b {
					pairs = append(pairs, [2]string{x, y})
				}
			}
		}
	}
	return p.addCuts(pairs)
}

func (p *Proxy) addCuts(pairs [][2]string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nextID++
	p.cuts[p.nextID] = pairs
	p.changedLocked()
	return p.nextID
}

// Uncut removes a cut or partition; the held bytes flow in order.
func (p *Proxy) Uncut(id int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.cuts[id]; ok {
		delete(p.cuts, id)
		p.changedLocked()
	}
}

// Heal removes every cut and partition (delays stay until Undelay).
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cuts = map[int][][2]string{}
	p.changedLocked()
}

// Delay delays the bytes from from to to by by, until Undelay(id). When
// several delays apply to one link the largest counts.
func (p *Proxy) Delay(from, to string, by time.Duration) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nextID++
	p.delays[p.nextID] = delayFault{from, to, by}
	p.changedLocked()
	return p.nextID
}

// Undelay removes a delay.
func (p *Proxy) Undelay(id int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.delays[id]; ok {
		delete(p.delays, id)
		p.changedLocked()
	}
}

func (p *Proxy) cutLocked(from, to string) bool {
	for _, pairs := range p.cuts {
		for _, pr := range pairs {
			if pr[0] == from && pr[1] == to {
				return true
			}
		}
	}
	return false
}

func (p *Proxy) delayLocked(from, to string) time.Duration {
	var d time.Duration
	for _, f := range p.delays {
		if f.from == from && f.to == to && f.by > d {
			d = f.by
		}
	}
	return d
}

// Reset resets every connection between the two processes (either one the
// client) and returns how many: both ends get an RST and see ECONNRESET;
// bytes the proxy held for them are discarded.
func (p *Proxy) Reset(a, b string) int {
	p.mu.Lock()
	var victims []*conn
	for c := range p.conns {
		if (c.client == a && c.server == b) || (c.client == b && c.server == a) {
			victims = append(victims, c)
		}
	}
	p.mu.Unlock()
	for _, c := range victims {
		c.reset()
	}
	return len(victims)
}

// PowerOff makes host's machine lose power, as the network sees it: a
// black hole. A powered-off host sends nothing, neither data nor FIN nor
// RST, and answers nothing. So, for every connection between host and
// another process that the proxy has connected:
//
//   - what host sent that the proxy still holds (across a cut) is
//     discarded, and so is everything the proxy reads from host's side
//     afterwards, its end included: the process that real mode kills
//     closes its sockets, which a powered-off machine would never do, and
//     the peer must not hear of it;
//   - what the peer sends to host is held (its kernel would retransmit
//     into the void), up to MaxHeld, after which the peer's writes block
//     as against a zero window;
//   - the peer's socket stays open: it learns of the loss only from its own
//     timeouts, or from PowerOn's reset.
//
// A connection to host accepted while it is off is not dialed until
// PowerOn (a SYN into the void is retransmitted). PowerOff must be called
// before the process is killed, so that its end is never passed on.
func (p *Proxy) PowerOff(host string) {
	p.mu.Lock()
	var lost []*conn
	p.off[host] = true
	for c := range p.conns {
		if c.client != host && c.server != host {
			continue
		}
		c.mu.Lock()
		if c.sv != nil {
			c.deadHost = host
		} else if c.client == host {
			// Host's connect had not been passed on: its peer never saw
			// it and never will.
			lost = append(lost, c)
		}
		c.mu.Unlock()
	}
	p.changedLocked()
	p.mu.Unlock()
	for _, c := range lost {
		c.close()
	}
}

// PowerOn brings host's machine back (its kernel boots before its
// server starts listening). A restarted host knows none of its earlier
// connections, and its kernel answers a segment of an unknown connection
// with RST (RFC 793 section 3.4, "Reset Generation", case 1; Linux
// tcp_v4_rcv's no_tcp_socket path, net/ipv4/tcp_ipv4.c, sends
// tcp_v4_send_reset). So each connection PowerOff left open is reset the
// first time its peer sends: at once for bytes the proxy held (the peer's
// next retransmission, which the proxy does at once as it does at a
// heal), or at the peer's next write; a peer that sends nothing keeps its
// half-open connection until its own timeout or keepalive, as on a real
// network. New connections to host are dialed again (refused, with a
// reset, until its server listens).
func (p *Proxy) PowerOn(host string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.off[host] {
		delete(p.off, host)
		p.changedLocked()
	}
}

// Conns lists the open connections as "client->server", sorted.
func (p *Proxy) Conns() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for c := range p.conns {
		out = append(out, c.client+"->"+c.server)
	}
	sort.Strings(out)
	return out
}

// Held returns the bytes the proxy holds from from to to over all
// connections (read from the sender, not yet written to the receiver).
func (p *Proxy) Held(from, to string) int64 {
	p.mu.Lock()
	var cs []*conn
	for c := range p.conns {
		cs = append(cs, c)
	}
	p.mu.Unlock()
	var n int64
	for _, c := range cs {
		c.mu.Lock()
		up, down := c.up, c.down
		c.mu.Unlock()
		for _, d := range []*direction{up, down} {
			if d != nil && d.from == from && d.to == to {
				n += d.heldBytes()
			}
		}
	}
	return n
}

// Close stops accepting, closes every connection and waits for the
// proxy's goroutines to end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	for _, f := range p.fronts {
		f.ln.Close()
	}
	for _, f := range p.more {
		f.ln.Close()
	}
	var cs []*conn
	for c := range p.conns {
		cs = append(cs, c)
	}
	p.changedLocked()
	p.mu.Unlock()
	for _, c := range cs {
		c.close()
	}
	p.wg.Wait()
	return nil
}

func (p *Proxy) accept(f *front) {
	defer p.wg.Done()
	for {
		nc, err := f.ln.Accept()
		if err != nil {
			return
		}
		src := nc.RemoteAddr().(*net.TCPAddr)
		c := &conn{p: p, client: p.Name(src.IP.String()), server: f.server, down: nil, done: make(chan struct{})}
		c.cl = nc.(*net.TCPConn)
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			nc.Close()
			return
		}
		p.conns[c] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go c.run(f.target, src.IP)
	}
}

// conn is one proxied connection.
type conn struct {
	p              *Proxy
	client, server string
	cl, sv         *net.TCPConn
	up, down       *direction // client->server, server->client
	once           sync.Once
	done           chan struct{} // closed when the connection is torn down
	mu             sync.Mutex
	// deadHost is the end (client or server) whose host lost power while
	// this connection was open (PowerOff); "" while both live.
	deadHost string
}

// dead returns the end of c whose host lost power ("" for none).
func (c *conn) dead() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deadHost
}

// run waits until the link is not cut either way, dials the server from the
// client's address and pumps both directions.
func (c *conn) run(target string, srcIP net.IP) {
	defer c.p.wg.Done()
	defer c.forget()
	for {
		c.p.mu.Lock()
		cut := c.p.cutLocked(c.client, c.server) || c.p.cutLocked(c.server, c.client) || c.p.off[c.server]
		ch, closed := c.p.changed, c.p.closed
		c.p.mu.Unlock()
		if closed {
			c.close()
			return
		}
		if !cut {
			break
		}
		select {
		case <-ch:
		case <-c.done:
			return
		}
	}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: srcIP}, Timeout: 5 * time.Second}
	sv, err := d.Dial("tcp", target)
	if err != nil {
		// Nothing listens (the server is down): the client sees the
		// connection reset, as it would see ECONNREFUSED without the proxy.
		c.abort(c.cl)
		c.close()
		return
	}
	c.mu.Lock()
	c.sv = sv.(*net.TCPConn)
	c.up = newDirection(c, c.client, c.server, c.cl, c.sv)
	c.down = newDirection(c, c.server, c.client, c.sv, c.cl)
	c.mu.Unlock()
	// A power loss while dialing: PowerOff may have looked at c before sv
	// was set; the connection it missed is as dead as the others.
	c.p.mu.Lock()
	if c.p.off[c.server] {
		c.mu.Lock()
		c.deadHost = c.server
		c.mu.Unlock()
	}
	c.p.mu.Unlock()
	select {
	case <-c.done: // reset or closed while dialing
		c.close()
		return
	default:
	}
	var wg sync.WaitGroup
	for _, d := range []*direction{c.up, c.down} {
		wg.Add(2)
		go func(d *direction) { defer wg.Done(); d.read() }(d)
		go func(d *direction) { defer wg.Done(); d.write() }(d)
	}
	wg.Wait()
	c.close()
}

func (c *conn) forget() {
	c.p.mu.Lock()
	delete(c.p.conns, c)
	c.p.mu.Unlock()
}

// abort closes a socket with SO_LINGER 0, which sends RST.
func (c *conn) abort(s *net.TCPConn) {
	if s != nil {
		_ = s.SetLinger(0)
		_ = s.Close()
	}
}

// reset aborts both sockets: both ends see ECONNRESET.
func (c *conn) reset() {
	c.mu.Lock()
	cl, sv := c.cl, c.sv
	c.mu.Unlock()
	c.abort(cl)
	c.abort(sv)
	c.close()
}

// close tears the connection down (sockets already aborted stay aborted).
func (c *conn) close() {
	c.once.Do(func() { close(c.done) })
	c.mu.Lock()
	cl, sv := c.cl, c.sv
	c.mu.Unlock()
	if cl != nil {
		_ = cl.Close()
	}
	if sv != nil {
		_ = sv.Close()
	}
}

// chunk is bytes read at one instant, or the end of the stream.
type chunk struct {
	data  []byte
	at    time.Time
	eof   bool // FIN: half-close the receiver
	reset bool // RST (or a read error): abort the receiver
}

// direction pumps one direction of a connection: read keeps reading the
// sender into a queue; write delivers the queue in order, holding it while
// the link is cut or delayed.
type direction struct {
	c        *conn
	from, to string
	src, dst *net.TCPConn
	q        chan chunk
	mu       sync.Mutex
	held     int64
	space    chan struct{} // signalled when held drops
	// stall is when the first segment held by a cut (or a powered-off
	// host) was sent, and rtx the retransmission that delivers it once
	// the link is open again; zero while the link flows (writer only).
	stall, rtx time.Time
}

// The sender's retransmission timeout: TCP_RTO_MIN and TCP_RTO_MAX (Linux
// v6.1 include/net/tcp.h:142-143), as the model's (sim/conn.go).
const (
	rtoMin = 200 * time.Millisecond
	rtoMax = 120 * time.Second
)

// retransmitAt is the first retransmission at or after now of a segment
// first sent at start into a stalled link: at start+200ms, then after an
// RTO that doubles up to 120s (start + 0.2s, 0.6s, 1.4s, 3.0s, ...). A
// healed cut delivers what it held then, as the model's network does
// (sim/conn.go retransmit), not at the heal: a real sender learns of the
// heal only when it retransmits.
func retransmitAt(start, now time.Time) time.Time {
	t, rto := start.Add(rtoMin), rtoMin
	for t.Before(now) {
		if rto *= 2; rto > rtoMax {
			rto = rtoMax
		}
		t = t.Add(rto)
	}
	return t
}

func newDirection(c *conn, from, to string, src, dst *net.TCPConn) *direction {
	return &direction{c: c, from: from, to: to, src: src, dst: dst, q: make(chan chunk, 1024), space: make(chan struct{}, 1)}
}

func (d *direction) heldBytes() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.held
}

// discard forgets a chunk the proxy read but will never deliver.
func (d *direction) discard(ch chunk) {
	d.mu.Lock()
	d.held -= int64(len(ch.data))
	d.mu.Unlock()
	select {
	case d.space <- struct{}{}:
	default:
	}
}

func (d *direction) read() {
	for {
		// Backpressure: stop reading while MaxHeld bytes are held.
		for d.heldBytes() >= MaxHeld {
			select {
			case <-d.space:
			case <-d.c.done:
				return
			}
		}
		buf := make([]byte, chunkSize)
		n, err := d.src.Read(buf)
		if n > 0 {
			d.mu.Lock()
			d.held += int64(n)
			d.mu.Unlock()
			select {
			case d.q <- chunk{data: buf[:n], at: time.Now()}:
			case <-d.c.done:
				return
			}
		}
		if err != nil {
			ch := chunk{at: time.Now(), eof: errors.Is(err, io.EOF)}
			ch.reset = !ch.eof
			select {
			case d.q <- ch:
			case <-d.c.done:
			}
			return
		}
	}
}

func (d *direction) write() {
	p := d.c.p
	for {
		var ch chunk
		select {
		case ch = <-d.q:
		case <-d.c.done:
			return
		}
		// Hold the chunk while the link is cut (or its host powered off),
		// then until the sender's next retransmission, and while its delay
		// has not passed.
		var toDead, toRebooted bool
		for {
			dead := d.c.dead()
			if dead != "" && dead == d.from {
				break // discarded below
			}
			p.mu.Lock()
			cut := p.cutLocked(d.from, d.to)
			delay := p.delayLocked(d.from, d.to)
			changed := p.changed
			toDead = dead != "" && dead == d.to
			toRebooted = toDead && !p.off[d.to]
			blocked := cut || (toDead && !toRebooted)
			p.mu.Unlock()
			if toDead && (ch.eof || ch.reset) {
				break // the peer gave up on a connection to a dead host
			}
			if blocked {
				if d.stall.IsZero() {
					d.stall = ch.at
				}
				d.rtx = time.Time{} // a heal computes the next retransmission
			}
			var timer *time.Timer
			var wait <-chan time.Time
			if !blocked {
				due := ch.at.Add(delay)
				now := time.Now()
				if !d.stall.IsZero() {
					if d.rtx.IsZero() {
						d.rtx = retransmitAt(d.stall, now)
					}
					if d.rtx.After(due) {
						due = d.rtx
					}
				}
				if !now.Before(due) {
					// The retransmission carries everything queued.
					d.stall, d.rtx = time.Time{}, time.Time{}
					break
				}
				timer = time.NewTimer(due.Sub(now))
				wait = timer.C
			}
			stop := false
			select {
			case <-wait:
			case <-changed:
			case <-d.c.done:
				stop = true
			}
			if timer != nil {
				timer.Stop()
			}
			if stop {
				return
			}
		}
		switch dead := d.c.dead(); {
		case dead != "" && dead == d.from:
			// A powered-off host sent it (or it is the end of the killed
			// process): nothing leaves a machine without power.
			d.discard(ch)
			continue
		case toDead && (ch.eof || ch.reset):
			// The peer closed or aborted its side: its FIN or RST goes
			// nowhere; the proxy forgets the connection quietly.
			d.c.close()
			return
		case toRebooted:
			// The peer's segment reaches a host that no longer knows the
			// connection: RST.
			d.c.abort(d.src)
			d.c.close()
			return
		case ch.reset:
			d.c.abort(d.dst)
			d.c.close()
			return
		case ch.eof:
			_ = d.dst.CloseWrite()
			return
		}
		_, err := d.dst.Write(ch.data)
		d.mu.Lock()
		d.held -= int64(len(ch.data))
		d.mu.Unlock()
		select {
		case d.space <- struct{}{}:
		default:
		}
		if err != nil {
			// The receiver is gone: the sender sees its connection reset,
			// as a write to a dead peer would get RST.
			if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
				d.c.abort(d.src)
			}
			d.c.close()
			return
		}
	}
}
