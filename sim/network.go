package sim

import (
	"fmt"
	"strings"
	"time"
)

// NetConfig is the default behaviour of every link.
type NetConfig struct {
	// Latency is the one-way delay of each message, drawn per message.
	Latency Range
	// Loss is the probability that a transmission of a segment is lost; a
	// lost segment is retransmitted after an RTO (it is delayed, never lost).
	Loss float64
}

// link is the state of one directed link.
type link struct {
	last       Time // delivery time of the last message: links are FIFO, as TCP
	dropNext   int
	extra      time.Duration
	extraUntil Time
	oneWayCut  int // number of active one-way cuts on this link
	// stall holds the segments waiting for retransmission, in order.
	stall    []int32
	rto      time.Duration // the current retransmission timeout
	rtxStart Time          // first transmission of the stalled head (retrans_stamp)
	rtxAt    Time          // when the queued retransmission event fires
	rtxGen   uint32        // version of the queued retransmission event
}

type partition struct {
	id    int
	group []int32 // group index per process, -1 when unlisted
}

// network is the kernel's message transport: connections with TCP's
// meaning (conn.go). Links are FIFO (a later message never overtakes an
// earlier one on the same directed link).
//
// The state of a pair of processes (its two directed links and its
// connection) is allocated the first time the pair is used: a world of
// 2,000 clients and 5 servers uses 10,000 of its 2 million pairs. An index
// matrix maps a pair to its state; its stride grows geometrically as
// processes are added, so building a world of n processes costs O(n^2)
// words of index, not the O(n^3) copying of a dense matrix regrown on every
// Add (issue 15: 45 s for 2,000 clients). Beyond maxDenseStride processes
// the index is a map (a dense one would take 4 n^2 bytes: 400 MB for
// 10,000 processes); lookups are slower but memory follows the pairs used.
type network struct {
	k      *Kernel
	cfg    NetConfig
	n      int              // processes
	stride int              // row length of idx (>= n)
	idx    []int32          // stride*stride, lo*stride+hi for lo <= hi: 1 + pair number, 0 unused
	sparse map[uint64]int32 // the index beyond maxDenseStride (lo<<32 | hi)
	pairs  [][]pair
	npairs int
	parts  []partition
	cuts   []oneWayCut
	nextID int
}

// pair is the state of the processes lo <= hi: links[side(from, to)] is the
// link from -> to (a process's link to itself is links[0]), conn their
// connection.
type pair struct {
	lo, hi ProcID
	links  [2]link
	conns  [MaxConns]conn
}

// pairChunk is how many pairs are allocated at once; chunks never move,
// so pointers to a link or a connection stay valid.
const pairChunk = 64

// maxDenseStride is the largest stride of the dense pair index (16 MiB).
const maxDenseStride = 2048

type oneWayCut struct {
	id       int
	from, to []ProcID
}

func (nw *network) init(k *Kernel, cfg NetConfig) {
	nw.k = k
	nw.cfg = cfg
}

// grow makes room for n processes (Add calls it for every new process),
// keeping the state of existing pairs and partitions.
func (nw *network) grow(n int) {
	nw.n = n
	if n > nw.stride && nw.sparse == nil {
		stride := max(8, 2*nw.stride)
		for stride < n {
			stride *= 2
		}
		if stride > maxDenseStride {
			nw.sparse = make(map[uint64]int32, nw.npairs)
			for i := 0; i < nw.npairs; i++ {
				p := nw.pairAt(i)
				nw.sparse[pairKey(p.lo, p.hi)] = int32(i + 1)
			}
			nw.idx, nw.stride = nil, 0
		} else {
			idx := make([]int32, stride*stride)
			for a := 0; a < nw.stride; a++ {
				copy(idx[a*stride:a*stride+nw.stride], nw.idx[a*nw.stride:(a+1)*nw.stride])
			}
			nw.idx, nw.stride = idx, stride
		}
	}
	for i := range nw.parts {
		for len(nw.parts[i].group) < n {
			nw.parts[i].group = append(nw.parts[i].group, -1)
		}
	}
}

func pairKey(lo, hi ProcID) uint64 { return uint64(lo)<<32 | uint64(uint32(hi)) }

// pairNo returns 1 + the number of the pair lo <= hi, 0 if it is unused.
func (nw *network) pairNo(lo, hi ProcID) int32 {
	if nw.sparse != nil {
		return nw.sparse[pairKey(lo, hi)]
	}
	return nw.idx[int(lo)*nw.stride+int(hi)]
}

// pairOf returns the state of the pair a, b, allocating it on first use.
func (nw *network) pairOf(a, b ProcID) *pair {
	if a > b {
		a, b = b, a
	}
	if x := nw.pairNo(a, b); x != 0 {
		return nw.pairAt(int(x) - 1)
	}
	if nw.npairs%pairChunk == 0 {
		nw.pairs = append(nw.pairs, make([]pair, pairChunk))
	}
	nw.npairs++
	if nw.sparse != nil {
		nw.sparse[pairKey(a, b)] = int32(nw.npairs)
	} else {
		nw.idx[int(a)*nw.stride+int(b)] = int32(nw.npairs)
	}
	p := nw.pairAt(nw.npairs - 1)
	p.lo, p.hi = a, b
	return p
}

// pairAt returns pair number i.
func (nw *network) pairAt(i int) *pair { return &nw.pairs[i/pairChunk][i%pairChunk] }

// peekPair returns the state of the pair a, b, or nil if it was never used
// (its links and connection are then in their zero state).
func (nw *network) peekPair(a, b ProcID) *pair {
	if a > b {
		a, b = b, a
	}
	if x := nw.pairNo(a, b); x != 0 {
		return nw.pairAt(int(x) - 1)
	}
	return nil
}

func (nw *network) link(from, to ProcID) *link {
	return &nw.pairOf(from, to).links[side(from, to)]
}

// linkIndex numbers the link from -> to (for retransmission events).
func (nw *network) linkIndex(from, to ProcID) int {
	p := nw.pairOf(from, to)
	return 2*(int(nw.pairNo(p.lo, p.hi))-1) + side(from, to)
}

// linkAt returns link number li and its ends.
func (nw *network) linkAt(li int) (ln *link, from, to ProcID) {
	p := nw.pairAt(li / 2)
	if li%2 == 0 {
		return &p.links[0], p.lo, p.hi
	}
	return &p.links[1], p.hi, p.lo
}

// blocked reports whether a partition or a one-way cut separates from and to.
func (nw *network) blocked(from, to ProcID) bool {
	for i := range nw.parts {
		g := nw.parts[i].group
		if a, b := g[from], g[to]; a >= 0 && b >= 0 && a != b {
			return true
		}
	}
	if len(nw.cuts) == 0 {
		return false
	}
	p := nw.peekPair(from, to)
	return p != nil && p.links[side(from, to)].oneWayCut > 0
}

// send sends m from p to to; rec is m when it is a pooled message sent with
// SendPooled (recycled once handled or lost), nil otherwise.
func (k *Kernel) send(p *proc, to ProcID, m Message, rec Recycler) { k.sendOn(p, to, 0, m, rec) }

// sendOn sends m on p's connection number ch with to.
func (k *Kernel) sendOn(p *proc, to ProcID, ch uint8, m Message, rec Recycler) {
	if to < 0 || int(to) >= len(k.procs) {
		panic(fmt.Sprintf("sim: %s sent to unknown process %d", p.name, to))
	}
	k.msgID++
	id := k.msgID
	t := k.tr
	b := t.begin(k.now, codeSend, KindSend, p.id, to, 0)
	b = appendValue(b, m)
	t.end(b, k.now, KindSend, p.id, to, id, k)
	// One look-up of the pair serves the connection and the link (the
	// hot path of every send).
	pr := k.net.pairOf(p.id, to)
	c := &pr.conns[ch]
	var e uint32
	if sd := &c.ends[side(p.id, to)]; sd.view != 0 && sd.vinc == p.inc {
		e = sd.view // the connection it believes it has (the hot path)
	} else {
		e = k.sendEpoch(p, to, ch)
	}
	i := k.newSlot(msgSlot{from: p.id, to: to, msg: m, rec: rec, id: id, epoch: e,
		dstInc: c.ends[side(to, p.id)].inc, srcInc: p.inc, sentAt: k.now, ch: ch})
	k.transmitOn(p.id, to, i, &pr.links[side(p.id, to)])
}

// transmit sends message slot i over the link from -> to: behind what the
// link holds for retransmission, into a stall if the path is down or the
// segment is lost, and otherwise on its way with a drawn latency.
func (k *Kernel) transmit(from, to ProcID, i int32) {
	k.transmitOn(from, to, i, k.net.link(from, to))
}

// transmitOn is transmit on the link ln from -> to, already looked up.
func (k *Kernel) transmitOn(from, to ProcID, i int32, ln *link) {
	nw := &k.net
	if len(ln.stall) == 0 && len(nw.parts) == 0 && ln.oneWayCut == 0 && ln.dropNext == 0 && nw.cfg.Loss == 0 && k.hostsDown == 0 {
		k.schedule(from, to, ln, i) // the hot path: nothing in the way
		return
	}
	if k.behindStall(from, to, ln, i) {
		return
	}
	if why := k.pathDown(from, to); why != "" {
		k.stallMsg(from, to, i, why)
		return
	}
	if m := &k.msgs[i]; ln.dropNext > 0 && m.kind == slotData {
		// A middlebox that forgets the flow: the segment is lost and both
		// ends are reset.
		ln.dropNext--
		epoch, ch := m.epoch, m.ch
		k.dropMsg(i, "link drop")
		k.endConn(from, to, ch, epoch)
		k.sendNotice(to, from, ch, ConnReset, epoch)
		k.sendNotice(from, to, ch, ConnReset, epoch)
		return
	}
	if nw.cfg.Loss > 0 && k.procs[from].netRand.Chance(nw.cfg.Loss) {
		k.stallMsg(from, to, i, "loss")
		return
	}
	k.schedule(from, to, ln, i)
}

// schedule queues the delivery of slot i after a drawn latency, never
// before what the link delivers earlier (links are FIFO).
func (k *Kernel) schedule(from, to ProcID, ln *link, i int32) {
	lat := k.net.cfg.Latency.Draw(&k.procs[from].netRand)
	if k.now < ln.extraUntil {
		lat += ln.extra
	}
	if lat < 0 {
		lat = 0 // a message never arrives before it is sent
	}
	at := k.now + Time(lat)
	if at < ln.last {
		at = ln.last
	}
	ln.last = at
	k.push(at, evDeliver, i, 0)
}

func (k *Kernel) traceDrop(from, to ProcID, id uint64, why string) {
	t := k.tr
	b := t.begin(k.now, codeDrop, KindDrop, from, to, id)
	b = append(b, why...)
	t.end(b, k.now, KindDrop, from, to, id, k)
}

// releaseMsg frees slot i of a message that will not be handled: a pooled
// message goes back to its pool.
func (k *Kernel) releaseMsg(i int32) {
	rec := k.msgs[i].rec
	k.freeSlot(i)
	if rec != nil {
		rec.Recycle()
	}
}

// freeSlot frees slot i (its message, if pooled, is the caller's to recycle).
func (k *Kernel) freeSlot(i int32) {
	k.msgs[i].msg, k.msgs[i].rec = nil, nil
	k.freeMsg = append(k.freeMsg, i)
}

func (k *Kernel) dropMsg(i int32, why string) {
	m := &k.msgs[i]
	k.traceDrop(m.from, m.to, m.id, why)
	k.releaseMsg(i)
}

// deliver is the arrival of slot i at its destination host.
func (k *Kernel) deliver(i int32) {
	m := &k.msgs[i]
	from, to := m.from, m.to
	nw := &k.net
	pr := nw.pairOf(from, to)
	ln := &pr.links[side(from, to)]
	if len(ln.stall) == 0 && len(nw.parts) == 0 && ln.oneWayCut == 0 && m.kind == slotData {
		// The hot path: a segment of the live connection to the live
		// incarnation, nothing in the way.
		c, dst := &pr.conns[m.ch], k.procs[to]
		if c.open && c.epoch == m.epoch && dst.state != stCrashed && dst.inc == m.dstInc {
			if dst.waiting() {
				dst.inbox = append(dst.inbox, pendingItem{kind: evDeliver, idx: i})
				return
			}
			k.handle(dst, i)
			return
		}
	}
	if m.kind == slotLocal {
		if dst := k.procs[to]; dst.state != stCrashed && dst.inc == m.dstInc {
			if dst.waiting() {
				dst.inbox = append(dst.inbox, pendingItem{kind: evDeliver, idx: i})
				return
			}
			k.handle(dst, i)
			return
		}
		k.releaseMsg(i)
		return
	}
	if k.behindStall(from, to, ln, i) {
		return // an earlier segment is stalled: stay behind it
	}
	if why := k.pathDown(from, to); why != "" {
		k.stallMsg(from, to, i, why) // lost in flight: retransmitted
		return
	}
	c := nw.conn(from, to, m.ch)
	dst := k.procs[to]
	if m.kind == slotNotice {
		// It takes effect if the destination still believes in the
		// connection it is about.
		if dst.state == stCrashed || dst.inc != m.dstInc {
			k.releaseMsg(i)
			return
		}
	} else {
		epoch := m.epoch
		closing := epoch == c.ends[side(from, to)].fin // sent before the sender closed
		switch {
		case closing && c.ends[side(to, from)].closed == epoch && c.ends[side(to, from)].vinc == m.dstInc:
			// Both ends closed it (each on its own timeout): the
			// destination's socket is gone, so its host discards the
			// segment (a reset to a sender that closed too changes
			// nothing). Delivering it would revive, in the destination,
			// a connection its process gave up, and the FIN behind it
			// would then end the connection it opened since.
			k.dropMsg(i, "connection closed")
			return
		case closing && dst.state != stCrashed && dst.inc == m.dstInc:
			// delivered, ahead of the FIN
		case !c.open || c.epoch != epoch:
			// The connection ended: the host answers with a reset.
			k.dropMsg(i, "connection ended")
			k.resetBack(from, to, m.ch, epoch)
			return
		case dst.state == stCrashed || dst.inc != m.dstInc:
			// No socket for it on the destination host (the process
			// crashed or restarted): the host answers with a reset, or
			// refuses a new connection (ECONNREFUSED), which the model
			// does not tell apart.
			ch := m.ch
			k.dropMsg(i, "connection reset")
			k.endConn(from, to, ch, epoch)
			k.resetBack(from, to, ch, epoch)
			return
		}
	}
	if dst.waiting() {
		dst.inbox = append(dst.inbox, pendingItem{kind: evDeliver, idx: i})
		return
	}
	k.handle(dst, i)
}

// handle gives message slot i to its (running) destination.
func (k *Kernel) handle(dst *proc, i int32) {
	sl := &k.msgs[i]
	from, id, msg, rec, epoch, ch := sl.from, sl.id, sl.msg, sl.rec, sl.epoch, sl.ch
	notice, why := sl.kind != slotData, sl.why
	k.freeSlot(i)
	t := k.tr
	// The process's view of the connection follows what it handles, in
	// order: a reply it sends now goes on the connection of the message it
	// handles (a paused process may hold messages of several connections).
	sd := &k.net.conn(from, dst.id, ch).ends[side(dst.id, from)]
	if notice {
		if sd.view != epoch || sd.vinc != dst.inc {
			return // already known, or about a connection it never had: nothing to learn
		}
		sd.view = 0
		b := t.begin(k.now, codeConnEnd, KindConnEnd, dst.id, from, id)
		b = append(b, why.String()...)
		b = appendConnNo(b, ch)
		t.end(b, k.now, KindConnEnd, dst.id, from, id, k)
		if o, ok := dst.p.(ConnsObserver); ok {
			o.ConnEndedOn(&dst.env, from, ch, why)
		} else if o, ok := dst.p.(ConnObserver); ok && ch == 0 {
			o.ConnEnded(&dst.env, from, why)
		}
		return
	}
	// Accepted (maybe already closed by the sender: its FIN follows).
	sd.view, sd.vinc = epoch, dst.inc
	t.end(t.begin(k.now, codeDeliver, KindDeliver, dst.id, from, id), k.now, KindDeliver, dst.id, from, id, k)
	dst.p.Receive(&dst.env, from, msg)
	if rec != nil {
		rec.Recycle()
	}
}

// ---- network faults ----

// Partition splits processes into groups: a message between two listed
// processes passes only if they are in the same group; unlisted processes
// keep all their links, to listed processes too (SCENARIO_FORMAT.md,
// "partition"), so a single group cuts nothing. It returns an id for
// Unpartition. Partitions stack: a message passes only if
// no active partition separates its ends.
func (k *Kernel) Partition(groups [][]ProcID) int {
	nw := &k.net
	nw.nextID++
	g := make([]int32, len(k.procs))
	for i := range g {
		g[i] = -1
	}
	var words []string
	named := make([][]string, len(groups))
	for gi, grp := range groups {
		names := make([]string, len(grp))
		for j, id := range grp {
			g[id] = int32(gi)
			names[j] = k.Name(id)
		}
		named[gi] = names
		words = append(words, "["+strings.Join(names, " ")+"]")
	}
	nw.parts = append(nw.parts, partition{id: nw.nextID, group: g})
	k.tracefAttrs(KindPartition, NoProc, []Attr{Int64("partition", int64(nw.nextID)), Groups("groups", named)}, "#%d %s", nw.nextID, strings.Join(words, " "))
	return nw.nextID
}

// CutOneWay blocks every message from any of from to any of to, but not the
// reverse direction. It returns an id for Unpartition.
func (k *Kernel) CutOneWay(from, to []ProcID) int {
	nw := &k.net
	nw.nextID++
	for _, a := range from {
		for _, b := range to {
			nw.link(a, b).oneWayCut++
		}
	}
	// Copy the lists: Unpartition must undo exactly what was done even if
	// the caller reuses its slices.
	from, to = append([]ProcID(nil), from...), append([]ProcID(nil), to...)
	nw.cuts = append(nw.cuts, oneWayCut{id: nw.nextID, from: from, to: to})
	k.tracefAttrs(KindPartition, NoProc, []Attr{Int64("partition", int64(nw.nextID)), Groups("groups", [][]string{k.nameList(from), k.nameList(to)}), Int64("one_way", 1)},
		"#%d one-way %s -> %s", nw.nextID, k.names(from), k.names(to))
	return nw.nextID
}

func (k *Kernel) names(ids []ProcID) string {
	return "[" + strings.Join(k.nameList(ids), " ") + "]"
}

func (k *Kernel) nameList(ids []ProcID) []string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = k.Name(id)
	}
	return s
}

// Unpartition removes one partition or one-way cut by id (a no-op if a heal
// already removed it).
func (k *Kernel) Unpartition(id int) {
	nw := &k.net
	for i := range nw.parts {
		if nw.parts[i].id == id {
			nw.parts = append(nw.parts[:i], nw.parts[i+1:]...)
			k.tracefAttrs(KindHeal, NoProc, []Attr{Int64("partition", int64(id))}, "#%d", id)
			return
		}
	}
	for i := range nw.cuts {
		if c := nw.cuts[i]; c.id == id {
			for _, a := range c.from {
				for _, b := range c.to {
					nw.link(a, b).oneWayCut--
				}
			}
			nw.cuts = append(nw.cuts[:i], nw.cuts[i+1:]...)
			k.tracefAttrs(KindHeal, NoProc, []Attr{Int64("partition", int64(id))}, "#%d", id)
			return
		}
	}
}

// Heal removes every partition, one-way cut, pending drop and extra delay.
// Stalled connections deliver what they hold at their next retransmission.
func (k *Kernel) Heal() {
	nw := &k.net
	nw.parts = nw.parts[:0]
	nw.cuts = nw.cuts[:0]
	for i := 0; i < 2*nw.npairs; i++ {
		l, _, _ := nw.linkAt(i)
		l.dropNext, l.oneWayCut, l.extra, l.extraUntil = 0, 0, 0, 0
	}
	k.tracefAttrs(KindHeal, NoProc, []Attr{Int64("all", 1)}, "all")
}

// DropNext drops the next n messages sent from one process to another (n
// <= 0 adds nothing), as a middlebox that forgets the flow: each dropped
// message resets its connection, both ends are told, and what the sender
// sent on it before it learnt of the reset is lost with it.
func (k *Kernel) DropNext(from, to ProcID, n int) {
	if n < 0 {
		n = 0
	}
	k.net.link(from, to).dropNext += n
	k.tracefAttrs(KindLinkFault, from, []Attr{Str("op", "drop"), Str("to", k.Name(to)), Int64("count", int64(n))}, "drop next %d to %s", n, k.Name(to))
}

// Delay adds by to the latency of every message sent from one process to
// another during the next d of true time.
func (k *Kernel) Delay(from, to ProcID, by, d time.Duration) {
	l := k.net.link(from, to)
	l.extra, l.extraUntil = by, addSat(k.now, d)
	k.tracefAttrs(KindLinkFault, from, []Attr{Str("op", "delay"), Str("to", k.Name(to)), Dur("by", by), Dur("for", d)}, "delay %v to %s for %v", by, k.Name(to), d)
}

// Partitioned reports whether a message from one process to another would be
// blocked now.
func (k *Kernel) Partitioned(from, to ProcID) bool { return k.net.blocked(from, to) }
