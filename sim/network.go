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
	// Loss is the probability that a message is dropped.
	Loss float64
}

// link is the state of one directed link.
type link struct {
	last       Time // delivery time of the last message: links are FIFO, as TCP
	dropNext   int
	extra      time.Duration
	extraUntil Time
	oneWayCut  int // number of active one-way cuts on this link
}

type partition struct {
	id    int
	group []int32 // group index per process, -1 when unlisted
}

// network is the kernel's message transport. Links are FIFO (a later
// message never overtakes an earlier one on the same directed link, as on
// a TCP connection). NB: a partition drops messages instead of holding them
// for TCP retransmission after the heal; lock clients time out long before
// TCP would give up, so for them the difference is a longer delay versus a
// loss, and the model chooses loss.
type network struct {
	k      *Kernel
	cfg    NetConfig
	n      int
	links  []link // n*n, from*n+to
	parts  []partition
	cuts   []oneWayCut
	nextID int
}

type oneWayCut struct {
	id       int
	from, to []ProcID
}

func (nw *network) init(k *Kernel, cfg NetConfig) {
	nw.k = k
	nw.cfg = cfg
}

// grow resizes the link matrix to n processes (Add calls it for every new
// process), keeping the state of existing links and partitions.
func (nw *network) grow(n int) {
	old, on := nw.links, nw.n
	nw.n = n
	nw.links = make([]link, n*n)
	for a := 0; a < on; a++ {
		copy(nw.links[a*n:a*n+on], old[a*on:(a+1)*on])
	}
	for i := range nw.parts {
		for len(nw.parts[i].group) < n {
			nw.parts[i].group = append(nw.parts[i].group, -1)
		}
	}
}

func (nw *network) link(from, to ProcID) *link { return &nw.links[int(from)*nw.n+int(to)] }

// blocked reports whether a partition or a one-way cut separates from and to.
func (nw *network) blocked(from, to ProcID) bool {
	for i := range nw.parts {
		g := nw.parts[i].group
		if a, b := g[from], g[to]; a >= 0 && b >= 0 && a != b {
			return true
		}
	}
	return nw.link(from, to).oneWayCut > 0
}

func (k *Kernel) send(p *proc, to ProcID, m Message) {
	if to < 0 || int(to) >= len(k.procs) {
		panic(fmt.Sprintf("sim: %s sent to unknown process %d", p.name, to))
	}
	nw := &k.net
	k.msgID++
	id := k.msgID
	t := k.tr
	b := t.begin(k.now, codeSend, KindSend, p.id, to, 0)
	b = appendValue(b, m)
	t.end(b, k.now, KindSend, p.id, to, id, k)
	ln := nw.link(p.id, to)
	switch {
	case nw.blocked(p.id, to):
		k.traceDrop(p.id, to, id, "partition")
		return
	case ln.dropNext > 0:
		ln.dropNext--
		k.traceDrop(p.id, to, id, "link drop")
		return
	case nw.cfg.Loss > 0 && p.netRand.Chance(nw.cfg.Loss):
		k.traceDrop(p.id, to, id, "loss")
		return
	}
	lat := nw.cfg.Latency.Draw(&p.netRand)
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
	var i int32
	if n := len(k.freeMsg); n > 0 {
		i = k.freeMsg[n-1]
		k.freeMsg = k.freeMsg[:n-1]
	} else {
		i = int32(len(k.msgs))
		k.msgs = append(k.msgs, msgSlot{})
	}
	k.msgs[i] = msgSlot{from: p.id, to: to, msg: m, id: id, dstInc: k.procs[to].inc}
	k.push(at, evDeliver, i, 0)
}

func (k *Kernel) traceDrop(from, to ProcID, id uint64, why string) {
	t := k.tr
	b := t.begin(k.now, codeDrop, KindDrop, from, to, id)
	b = append(b, why...)
	t.end(b, k.now, KindDrop, from, to, id, k)
}

func (k *Kernel) releaseMsg(i int32) {
	k.msgs[i].msg = nil
	k.freeMsg = append(k.freeMsg, i)
}

func (k *Kernel) dropMsg(i int32, why string) {
	m := &k.msgs[i]
	k.traceDrop(m.from, m.to, m.id, why)
	k.releaseMsg(i)
}

func (k *Kernel) deliver(i int32) {
	m := &k.msgs[i]
	dst := k.procs[m.to]
	switch {
	case dst.state == stCrashed:
		k.dropMsg(i, "crashed")
		return
	case dst.inc != m.dstInc:
		k.dropMsg(i, "connection reset")
		return
	case k.net.blocked(m.from, m.to):
		k.dropMsg(i, "partition")
		return
	case dst.waiting():
		dst.inbox = append(dst.inbox, pendingItem{kind: evDeliver, idx: i})
		return
	}
	k.handle(dst, i)
}

// handle gives message slot i to its (running) destination.
func (k *Kernel) handle(dst *proc, i int32) {
	m := k.msgs[i]
	k.releaseMsg(i)
	t := k.tr
	t.end(t.begin(k.now, codeDeliver, KindDeliver, dst.id, m.from, m.id), k.now, KindDeliver, dst.id, m.from, m.id, k)
	dst.p.Receive(&dst.env, m.from, m.msg)
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
	for gi, grp := range groups {
		names := make([]string, len(grp))
		for j, id := range grp {
			g[id] = int32(gi)
			names[j] = k.Name(id)
		}
		words = append(words, "["+strings.Join(names, " ")+"]")
	}
	nw.parts = append(nw.parts, partition{id: nw.nextID, group: g})
	k.Tracef(KindPartition, NoProc, "#%d %s", nw.nextID, strings.Join(words, " "))
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
	k.Tracef(KindPartition, NoProc, "#%d one-way %s -> %s", nw.nextID, k.names(from), k.names(to))
	return nw.nextID
}

func (k *Kernel) names(ids []ProcID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = k.Name(id)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// Unpartition removes one partition or one-way cut by id (a no-op if a heal
// already removed it).
func (k *Kernel) Unpartition(id int) {
	nw := &k.net
	for i := range nw.parts {
		if nw.parts[i].id == id {
			nw.parts = append(nw.parts[:i], nw.parts[i+1:]...)
			k.Tracef(KindHeal, NoProc, "#%d", id)
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
			k.Tracef(KindHeal, NoProc, "#%d", id)
			return
		}
	}
}

// Heal removes every partition, one-way cut, pending drop and extra delay.
func (k *Kernel) Heal() {
	nw := &k.net
	nw.parts = nw.parts[:0]
	nw.cuts = nw.cuts[:0]
	for i := range nw.links {
		l := &nw.links[i]
		l.dropNext, l.oneWayCut, l.extra, l.extraUntil = 0, 0, 0, 0
	}
	k.Tracef(KindHeal, NoProc, "all")
}

// DropNext drops the next n messages sent from one process to another (n
// <= 0 adds nothing).
func (k *Kernel) DropNext(from, to ProcID, n int) {
	if n < 0 {
		n = 0
	}
	k.net.link(from, to).dropNext += n
	k.Tracef(KindLinkFault, from, "drop next %d to %s", n, k.Name(to))
}

// Delay adds by to the latency of every message sent from one process to
// another during the next d of true time.
func (k *Kernel) Delay(from, to ProcID, by, d time.Duration) {
	l := k.net.link(from, to)
	l.extra, l.extraUntil = by, addSat(k.now, d)
	k.Tracef(KindLinkFault, from, "delay %v to %s for %v", by, k.Name(to), d)
}

// Partitioned reports whether a message from one process to another would be
// blocked now.
func (k *Kernel) Partitioned(from, to ProcID) bool { return k.net.blocked(from, to) }
