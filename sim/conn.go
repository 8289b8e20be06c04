package sim

import (
	"strconv"
	"time"
)

// Connections.
//
// Every real component locksim models talks over TCP, so the kernel's
// network carries connections, not datagrams. Two processes that talk do so
// over one implicit connection per (unordered) pair of processes: Env.Send
// opens it when there is none, and it is bound to both ends' incarnations
// and numbered by an epoch. While it lives it is ordered and loses nothing
// (an exactly-once byte stream: servers-and-network.md §1.1, "Ordered,
// exactly-once byte stream per connection").
//
//   - A partition, a one-way cut, a powered-off destination host or a lost
//     segment (network.loss) stalls the direction it affects: the segment is
//     retransmitted with Linux's timer, the first time TCP_RTO_MIN after it
//     was sent, then after an RTO that doubles up to TCP_RTO_MAX
//     (tcp_retransmit_timer, net/ipv4/tcp_timer.c). At the first
//     retransmission that gets through, everything the direction holds is
//     delivered in order.
//   - The kernel gives up when the time since the first transmission of the
//     stalled segment reaches tcp_model_timeout(tcp_retries2 = 15) = 924.6 s
//     (retransmits_timed_out): the connection ends, the sender learns at
//     once (ETIMEDOUT), the peer by a reset that travels like a segment.
//   - An endpoint ends a connection with Env.Close (its own timeout fired):
//     the epoch bumps, what the peer sends on it is discarded, what the
//     closer sent still arrives, and the peer learns by a FIN that follows
//     it like a segment.
//   - A crashed process keeps no connections. When the process dies and
//     its host keeps running (a process crash, a clean shutdown), the host
//     closes its sockets with a FIN, so every peer learns one way later
//     (finOnCrash); a segment that reaches the host afterwards is answered
//     with a reset (tcp_reset, net/ipv4/tcp_input.c), and so is a new
//     connection (ECONNREFUSED). After a power loss the host answers
//     nothing: segments stall until it reboots, and the first
//     retransmission after that is answered by the reset.
//   - A restarted process has no connections: nothing sent to an earlier
//     incarnation reaches it. When it sends to a peer whose connection is
//     still bound to its earlier incarnation, the peer first learns that
//     the old connection was reset (ordered before the new data).
//   - Each end has its own view of the connection, as each host has its own
//     socket. A Send on a connection the sender has not yet learnt has ended
//     is lost and answered with a reset; once the sender knows (its
//     ConnEnded ran, or it called Close), its next Send opens a new
//     connection: the process reconnects. A process's view follows the
//     messages it handles, so a reply always goes on the connection its
//     request came on.
//
// Processes learn that a connection ended through ConnObserver; the kernel
// traces every end as a "conn-end" event.
//
// Simplifications (see docs/design/model.md, "The network"): a retransmission carries every
// queued segment of the direction at once, acknowledgements are not modelled
// (a one-way cut of the reverse direction does not stall the sender), the
// RTO starts at TCP_RTO_MIN for every new stall (a LAN's RTT keeps the
// computed RTO at the floor), a connect to a powered-off host uses the data
// retransmission schedule rather than tcp_syn_retries, and a close never
// sends a reset (Linux does when unread data is left, tcp_close).

// TCP timing constants of Linux v6.1.
const (
	// RTOMin is TCP_RTO_MIN, HZ/5 (include/net/tcp.h:142).
	RTOMin = 200 * time.Millisecond
	// RTOMax is TCP_RTO_MAX (include/net/tcp.h:143).
	RTOMax = 120 * time.Second
	// TCPRetries2 is TCP_RETR2, the default tcp_retries2 (include/net/tcp.h:101).
	TCPRetries2 = 15
)

// RetransmitGiveUp is the time after which the kernel gives up a stalled
// connection: tcp_model_timeout(tcp_retries2, TCP_RTO_MIN) (net/ipv4/tcp_timer.c)
// = (2^10 - 1) × 200 ms + (15 - 9) × 120 s = 924.6 s, the "hypothetical
// timeout of 924.6 seconds" of Documentation/networking/ip-sysctl.rst.
var RetransmitGiveUp = modelTimeout(TCPRetries2, RTOMin)

// modelTimeout is tcp_model_timeout: the RTO doubles from rtoBase until
// TCP_RTO_MAX (linear_backoff_thresh = ilog2(TCP_RTO_MAX/rtoBase)
// doublings), then adds TCP_RTO_MAX per retry.
func modelTimeout(boundary int, rtoBase time.Duration) time.Duration {
	thresh := 0
	for (rtoBase << (thresh + 1)) <= RTOMax {
		thresh++
	}
	if boundary <= thresh {
		return time.Duration((2<<boundary)-1) * rtoBase
	}
	return time.Duration((2<<thresh)-1)*rtoBase + time.Duration(boundary-thresh)*RTOMax
}

// ConnEnd says why a connection ended.
type ConnEnd uint8

const (
	// ConnReset: the peer's host answered with a reset (its process crashed
	// or restarted) or a middlebox forgot the flow (a drop fault).
	ConnReset ConnEnd = iota + 1
	// ConnClosed: the peer closed the connection (Env.Close, a FIN).
	ConnClosed
	// ConnTimedOut: the kernel gave up retransmitting (tcp_retries2).
	ConnTimedOut
)

func (e ConnEnd) String() string {
	switch e {
	case ConnReset:
		return "reset"
	case ConnClosed:
		return "closed"
	case ConnTimedOut:
		return "timed out"
	}
	return "end" + strconv.Itoa(int(e))
}

// MaxConns is how many connections a pair of processes may have at once:
// connection 0 (Env.Send) and the others a process opens with Env.SendOn,
// as a Redis Cluster node talks to another over its client or replication
// connection and, separately, over the cluster bus.
const MaxConns = 2

// ConnsObserver is implemented by processes that use several connections
// with a peer (Env.SendOn): ConnEndedOn says which one ended. A process that
// implements it is not also called through ConnObserver.
type ConnsObserver interface {
	ConnEndedOn(env *Env, peer ProcID, ch uint8, why ConnEnd)
}

// appendConnNo names connection ch in a trace text (nothing for
// connection 0, so traces of one connection per pair read as before).
func appendConnNo(b []byte, ch uint8) []byte {
	if ch == 0 {
		return b
	}
	b = append(b, " (connection "...)
	b = strconv.AppendUint(b, uint64(ch), 10)
	return append(b, ')')
}

// ConnObserver is implemented by processes that learn when a connection
// with a peer ends (the socket error or EOF a real process would read). A
// process that does not implement it still loses the connection; its next
// Send opens a new one.
type ConnObserver interface {
	ConnEnded(env *Env, peer ProcID, why ConnEnd)
}

// conn is the state of the connection between two processes lo <= hi.
// The kernel keeps one live connection per pair at most, but each end has
// its own view of it, as each host has its own socket: an end that has not
// yet learnt that its connection ended still sends on it, and what it sends
// is lost and answered with a reset.
type conn struct {
	epoch uint32 // of the newest connection; bumped by every open and every end
	open  bool   // the newest connection is alive
	ends  [2]connSide
}

// connSide is one end's state: the incarnation the live connection is bound
// to, and the epoch of the connection the end believes it is on (0: none)
// with the incarnation that believes it.
type connSide struct {
	inc  uint32
	view uint32
	vinc uint32
	fin  uint32 // epoch of the connection this end closed: what it sent on it still arrives
	// closed is the epoch of the connection this end's process closed
	// itself (Env.Close), whether or not the other end had ended it
	// first: what still arrives on it finds no socket and is discarded.
	closed uint32
}

// side returns the index of end p (other is the other end) in conn.ends.
func side(p, other ProcID) int {
	if p <= other {
		return 0
	}
	return 1
}

// message slot kinds
const (
	slotData   uint8 = iota
	slotNotice       // a FIN or a reset: ends the connection at its destination
	slotLocal        // a notice raised by the destination's own kernel (ETIMEDOUT): no network
)

// conn returns connection ch of a pair of processes.
func (nw *network) conn(a, b ProcID, ch uint8) *conn {
	return &nw.pairOf(a, b).conns[ch]
}

// viewOf returns the epoch of the connection process p believes it has
// with other (0 if none: never connected, told it ended, or restarted).
func (k *Kernel) viewOf(c *conn, p, other ProcID) uint32 {
	s := &c.ends[side(p, other)]
	if s.view == 0 || s.vinc != k.procs[p].inc {
		return 0
	}
	return s.view
}

func (k *Kernel) setView(c *conn, p, other ProcID, epoch uint32) {
	s := &c.ends[side(p, other)]
	s.view, s.vinc = epoch, k.procs[p].inc
}

// sendEpoch returns the epoch on which p sends to peer: the connection it
// believes it has, or a new one. Opening a new connection first tells the
// peer, ordered before the new data, that the connection it believes in
// was reset (the peer's host sees a new connection from a restarted
// process, or from one that gave up on the old connection).
func (k *Kernel) sendEpoch(p *proc, to ProcID, ch uint8) uint32 {
	c := k.net.conn(p.id, to, ch)
	if v := k.viewOf(c, p.id, to); v != 0 {
		return v // alive, or dead without p knowing yet
	}
	if c.open && c.ends[side(p.id, to)].inc == p.inc {
		// The peer opened it to this incarnation and its first segment has
		// not arrived yet (both ends opened at once): one connection.
		k.setView(c, p.id, to, c.epoch)
		return c.epoch
	}
	pv := k.viewOf(c, to, p.id)
	c.epoch++
	c.open = true
	c.ends[side(p.id, to)].inc = p.inc
	c.ends[side(to, p.id)].inc = k.acceptingInc(to)
	k.setView(c, p.id, to, c.epoch)
	if pv != 0 && to != p.id {
		k.sendNotice(p.id, to, ch, ConnReset, pv)
	}
	return c.epoch
}

// acceptingInc is the incarnation of to that a connection opened now is
// bound to: the running one, or, while to is crashed, the one its restart
// will start (Restart bumps the incarnation once), so that a connection
// whose first segment arrives after the restart is accepted by the new
// process, as a SYN reaching a host whose server listens again is, and one
// that arrives while it is still down is refused (reset).
func (k *Kernel) acceptingInc(to ProcID) uint32 {
	if p := k.procs[to]; p.state == stCrashed {
		return p.inc + 1
	}
	return k.procs[to].inc
}

// endConn ends the connection of epoch epoch between a and b if it is the
// live one.
func (k *Kernel) endConn(a, b ProcID, ch uint8, epoch uint32) {
	c := k.net.conn(a, b, ch)
	if c.open && c.epoch == epoch {
		c.epoch++
		c.open = false
	}
}

// resetBack answers a segment of a dead connection from -> to with a reset
// to its sender, unless the sender already knows the connection ended.
func (k *Kernel) resetBack(from, to ProcID, ch uint8, epoch uint32) {
	if k.viewOf(k.net.conn(from, to, ch), from, to) == epoch {
		k.sendNotice(to, from, ch, ConnReset, epoch)
	}
}

// sendNotice sends a connection-end notice (a FIN or a reset segment) about
// the connection of epoch epoch from one host to another, through the link:
// it is ordered after what the link already carries and a FIN stalls like
// data (a reset that cannot get through is lost). It takes effect only if
// the destination still believes in that connection when it arrives.
func (k *Kernel) sendNotice(from, to ProcID, ch uint8, why ConnEnd, epoch uint32) {
	i := k.newSlot(msgSlot{from: from, to: to, kind: slotNotice, why: why, epoch: epoch,
		dstInc: k.procs[to].inc, srcInc: k.procs[from].inc, sentAt: k.now, ch: ch})
	k.transmit(from, to, i)
}

// notifyNow hands a connection-end notice to a process at once (a local
// error: the kernel gave up), through the event queue.
func (k *Kernel) notifyNow(p, peer ProcID, ch uint8, why ConnEnd, epoch uint32) {
	i := k.newSlot(msgSlot{from: peer, to: p, kind: slotLocal, why: why, epoch: epoch,
		dstInc: k.procs[p].inc, srcInc: k.procs[peer].inc, sentAt: k.now, ch: ch})
	k.push(k.now, evDeliver, i, 0)
}

// close ends p's connection ch with peer (Env.Close, Env.CloseOn).
func (k *Kernel) close(p *proc, peer ProcID, ch uint8) {
	if peer < 0 || int(peer) >= len(k.procs) || peer == p.id || ch >= MaxConns {
		return
	}
	c := k.net.conn(p.id, peer, ch)
	v := k.viewOf(c, p.id, peer)
	if v == 0 {
		return // nothing open on this side
	}
	k.setView(c, p.id, peer, 0)
	c.ends[side(p.id, peer)].closed = v
	if ch == 0 {
		k.traceText(KindConnEnd, p.id, peer, "close")
	} else {
		k.traceText(KindConnEnd, p.id, peer, string(appendConnNo([]byte("close"), ch)))
	}
	if c.open && c.epoch == v {
		k.endConn(p.id, peer, ch, v)
		c.ends[side(p.id, peer)].fin = v
		k.sendNotice(p.id, peer, ch, ConnClosed, v)
	}
}

// finOnCrash closes the connections of a process that dies while its host
// keeps running (a process crash or a clean shutdown): the host's kernel
// closes its sockets and sends a FIN (tcp_close, net/ipv4/tcp.c), so every
// peer learns at once, one way later, that the connection ended
// (servers-and-network.md §1.1, "What a peer sees when the other process
// dies"; §1.2 "Must" 1: process death is told apart from host death, which
// sends nothing). What the process had sent still arrives ahead of the
// FIN. NB: Linux sends a reset instead when unread data was left in the
// receive queue; the model always sends the FIN, and a peer that then
// sends gets the reset of a host with no socket.
func (k *Kernel) finOnCrash(p *proc) {
	for q := range k.procs {
		peer := ProcID(q)
		if peer == p.id {
			continue
		}
		pr := k.net.peekPair(p.id, peer)
		if pr == nil {
			continue // never connected
		}
		for ch := range pr.conns {
			c := &pr.conns[ch]
			if !c.open || c.ends[side(p.id, peer)].inc != p.inc {
				continue
			}
			v := c.epoch
			k.endConn(p.id, peer, uint8(ch), v)
			c.ends[side(p.id, peer)].fin = v
			k.sendNotice(p.id, peer, uint8(ch), ConnClosed, v)
		}
	}
}

// Close ends the process's connection with peer, as close() on its socket
// when one of its own timeouts fires: what it sent still arrives (a FIN
// follows the data, servers-and-network.md §1.2 "Must" 4: a request sent
// before a partition may execute after the client gave up), what the peer
// sends is discarded (and answered with a reset), and the peer learns
// (ConnObserver, ConnClosed) when the FIN reaches it. The next Send to peer opens a new connection. Closing
// when no connection is open does nothing.
func (e *Env) Close(peer ProcID) { e.k.close(e.p, peer, 0) }

// CloseOn is Close for the process's connection number ch with peer
// (Env.SendOn).
func (e *Env) CloseOn(ch uint8, peer ProcID) { e.k.close(e.p, peer, ch) }

// Connected reports whether the process has an open connection with peer
// (one that it has not been told has ended may still be dead: a crashed
// peer is learnt about only on the next send).
func (e *Env) Connected(peer ProcID) bool {
	if peer < 0 || int(peer) >= len(e.k.procs) {
		return false
	}
	c := e.k.net.conn(e.p.id, peer, 0)
	v := e.k.viewOf(c, e.p.id, peer)
	return v != 0 && c.open && c.epoch == v
}

// ---- retransmission ----

// stallMsg puts message slot i in the retransmission queue of the link
// from -> to. The first segment of a stall is retransmitted TCP_RTO_MIN
// after it was first sent.
func (k *Kernel) stallMsg(from, to ProcID, i int32, why string) {
	nw := &k.net
	li := nw.linkIndex(from, to)
	ln, _, _ := nw.linkAt(li)
	m := &k.msgs[i]
	if m.kind == slotNotice && m.why == ConnReset && len(ln.stall) == 0 {
		// A reset is not retransmitted: the peer learns when it next sends.
		k.dropMsg(i, "reset lost: "+why)
		return
	}
	b := k.tr.begin(k.now, codeRetransmit, KindRetransmit, from, to, m.id)
	b = append(b, "stall: "...)
	b = append(b, why...)
	k.tr.end(b, k.now, KindRetransmit, from, to, m.id, k)
	ln.stall = append(ln.stall, i)
	if len(ln.stall) > 1 {
		return
	}
	ln.rto = RTOMin
	ln.rtxStart = m.sentAt
	k.armRetx(li, ln, m.sentAt+Time(RTOMin))
}

func (k *Kernel) armRetx(li int, ln *link, at Time) {
	if at < k.now {
		at = k.now
	}
	ln.rtxAt = at
	ln.rtxGen++
	k.push(at, evRetx, int32(li), ln.rtxGen)
}

// pathDown reports why a segment from -> to cannot get through now ("" if
// it can): a partition or cut, or the destination host is powered off.
func (k *Kernel) pathDown(from, to ProcID) string {
	if k.net.blocked(from, to) {
		return "partition"
	}
	if d := k.procs[to]; d.state == stCrashed && d.hostDown {
		return "host down"
	}
	return ""
}

// behindStall queues slot i behind the segments the link holds for
// retransmission and reports whether it did (false: nothing is stalled).
// Data of an older connection than a new data slot's is dropped first: the
// sender abandoned that connection, and the new one has its own timer.
func (k *Kernel) behindStall(from, to ProcID, ln *link, i int32) bool {
	if len(ln.stall) == 0 {
		return false
	}
	if m := &k.msgs[i]; m.kind == slotData {
		head := ln.stall[0]
		kept := ln.stall[:0]
		fin := k.net.conn(from, to, m.ch).ends[side(from, to)].fin
		for _, j := range ln.stall {
			if o := &k.msgs[j]; o.kind == slotData && o.ch == m.ch && o.epoch < m.epoch && o.epoch != fin {
				k.dropMsg(j, "connection abandoned")
				continue
			}
			kept = append(kept, j)
		}
		ln.stall = kept
		if len(kept) == 0 {
			return false
		}
		li := k.net.linkIndex(from, to)
		switch {
		case kept[0] != head:
			ln.rto = RTOMin
			ln.rtxStart = k.msgs[kept[0]].sentAt
			k.armRetx(li, ln, ln.rtxStart+Time(RTOMin))
		case k.msgs[kept[len(kept)-1]].epoch != m.epoch && k.msgs[kept[0]].epoch != m.epoch && k.now+Time(RTOMin) < ln.rtxAt:
			// The first segment of a new connection behind a closing
			// one: its own timer (simplification: the closing one's data
			// rides along).
			ln.rto = RTOMin
			k.armRetx(li, ln, k.now+Time(RTOMin))
		}
	}
	ln.stall = append(ln.stall, i)
	return true
}

// retransmit is the retransmission timer of link li.
func (k *Kernel) retransmit(li int32, gen uint32) {
	nw := &k.net
	ln, from, to := nw.linkAt(int(li))
	if gen != ln.rtxGen || len(ln.stall) == 0 {
		return
	}
	// Segments of a sender whose host lost power are not retransmitted: the
	// host's socket buffers died with it. A process that died on a running
	// host leaves its socket to the host's kernel, which keeps
	// retransmitting what it had sent, then its FIN (tcp_close: the
	// connection goes to FIN_WAIT1 with its send queue intact), so those
	// segments still arrive after a heal. Notices come from the host and
	// are always retransmitted. (Every such segment of the queue, not only
	// those ahead of the first notice: with two connections per pair, a
	// notice of one may stand ahead of the other's data.)
	kept := ln.stall[:0]
	for _, j := range ln.stall {
		if m := &k.msgs[j]; m.kind == slotData && m.srcInc < k.procs[from].powerFloor {
			k.dropMsg(j, "sender gone")
			continue
		}
		kept = append(kept, j)
	}
	ln.stall = kept
	if len(ln.stall) == 0 {
		ln.stall = ln.stall[:0]
		return
	}
	why := k.pathDown(from, to)
	if why == "" && nw.cfg.Loss > 0 && k.procs[from].netRand.Chance(nw.cfg.Loss) {
		why = "loss"
	}
	head := ln.stall[0]
	if why != "" && k.msgs[head].kind == slotNotice && k.msgs[head].why == ConnReset {
		// A reset is not retransmitted: the peer learns when it next sends.
		k.dropMsg(head, "reset lost: "+why)
		ln.stall = ln.stall[1:]
		if len(ln.stall) > 0 {
			k.armRetx(int(li), ln, k.now)
		}
		return
	}
	if why == "" {
		k.traceRetx(from, to, k.msgs[head].id, "delivered")
		q := ln.stall
		ln.stall = ln.stall[:0]
		for _, i := range q {
			k.schedule(from, to, ln, i)
		}
		return
	}
	if Time(k.now-ln.rtxStart) >= Time(RetransmitGiveUp) {
		// tcp_write_err: the sender gets ETIMEDOUT, its queue is gone.
		m := k.msgs[head]
		k.traceRetx(from, to, m.id, "give up: "+why)
		q := ln.stall
		ln.stall = ln.stall[:0]
		for _, i := range q {
			if k.msgs[i].kind == slotData {
				k.dropMsg(i, "connection timed out")
			} else {
				k.dropMsg(i, "notice timed out")
			}
		}
		if m.kind == slotData {
			k.endConn(from, to, m.ch, m.epoch)
			if k.viewOf(k.net.conn(from, to, m.ch), from, to) == m.epoch {
				k.notifyNow(from, to, m.ch, ConnTimedOut, m.epoch)
			}
			k.sendNotice(from, to, m.ch, ConnReset, m.epoch)
		}
		return
	}
	k.traceRetx(from, to, k.msgs[head].id, why)
	ln.rto *= 2
	if ln.rto > RTOMax {
		ln.rto = RTOMax
	}
	k.armRetx(int(li), ln, k.now+Time(ln.rto))
}

func (k *Kernel) traceRetx(from, to ProcID, id uint64, text string) {
	b := k.tr.begin(k.now, codeRetransmit, KindRetransmit, from, to, id)
	b = append(b, text...)
	k.tr.end(b, k.now, KindRetransmit, from, to, id, k)
}

// newSlot stores a message slot and returns its index.
func (k *Kernel) newSlot(s msgSlot) int32 {
	var i int32
	if n := len(k.freeMsg); n > 0 {
		i = k.freeMsg[n-1]
		k.freeMsg = k.freeMsg[:n-1]
	} else {
		i = int32(len(k.msgs))
		k.msgs = append(k.msgs, msgSlot{})
	}
	k.msgs[i] = s
	return i
}
