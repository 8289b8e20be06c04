package sim

import "math/bits"

// eventKind tells the run loop what an event is.
type eventKind uint8

const (
	evDeliver eventKind = iota + 1 // idx: message slot
	evTimer                        // idx: timer slot, gen: schedule version
	evCall                         // idx: callback slot
	evInbox                        // idx: process; replay the next item of a resumed inbox
	evRetx                         // idx: link, gen: version; a retransmission timer
)

// event is one entry of the queue. It is a small value: the queue is a slice
// of them, so scheduling does not allocate once the slice has grown.
type event struct {
	at  Time
	seq uint64
	ik  uint32 // slot index << 3 | kind
	gen uint32
}

func (e *event) kind() eventKind { return eventKind(e.ik & 7) }
func (e *event) idx() int32      { return int32(e.ik >> 3) }

// before returns 1 if a is ordered before b, else 0: (at, seq) compared as
// one 128-bit number, without branches (times are never negative, so at
// compares the same as an unsigned number). Branch-free comparisons matter:
// which child of a heap node is smaller is a coin toss the CPU cannot
// predict.
func (a *event) before(b *event) uint64 {
	_, borrow := bits.Sub64(a.seq, b.seq, 0)
	_, borrow = bits.Sub64(uint64(a.at), uint64(b.at), borrow)
	return borrow
}

func (a *event) less(b *event) bool { return a.before(b) != 0 }

// queue is a binary min-heap ordered by (time, sequence number). Equal times
// pop in scheduling order because sequence numbers are unique and increasing.
// (container/heap is avoided: its interface boxes every pushed value.)
type queue struct {
	h []event
}

func (q *queue) len() int { return len(q.h) }

func (q *queue) push(e event) {
	q.h = append(q.h, e)
	h := q.h
	i := len(h) - 1
	// Sift up by moving parents down into the hole, then drop e in place.
	for i > 0 {
		p := (i - 1) / 2
		if !e.less(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

func (q *queue) pop() event {
	h := q.h
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	q.h = h
	if n == 0 {
		return top
	}
	// Move the hole at the root down to a leaf, always through the smaller
	// child (one branch-free comparison per level), then sift the last
	// element up from there: it came from the bottom, so it rarely climbs
	// ("bottom-up" deletion, as in Wegener's bottom-up heapsort).
	i := 0
	for {
		l := 2*i + 1
		if l+1 < n {
			m := l + int(h[l+1].before(&h[l]))
			h[i] = h[m]
			i = m
			continue
		}
		if l < n {
			h[i] = h[l]
			i = l
		}
		break
	}
	for i > 0 {
		p := (i - 1) / 2
		if !last.less(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = last
	return top
}

func (q *queue) peek() *event { return &q.h[0] }

// removeIf drops every event for which stale returns true and restores the
// heap (Floyd's bottom-up construction, O(n)). The order in which the
// remaining events pop does not change: it depends only on their unique
// (time, sequence) keys, not on the heap's layout.
func (q *queue) removeIf(stale func(e *event) bool) int {
	h := q.h[:0]
	for i := range q.h {
		if !stale(&q.h[i]) {
			h = append(h, q.h[i])
		}
	}
	removed := len(q.h) - len(h)
	clear(q.h[len(h):])
	q.h = h
	for i := len(h)/2 - 1; i >= 0; i-- {
		q.siftDown(i)
	}
	return removed
}

// siftDown moves h[i] down to its place below.
func (q *queue) siftDown(i int) {
	h := q.h
	n := len(h)
	e := h[i]
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if l+1 < n && h[l+1].less(&h[l]) {
			m = l + 1
		}
		if !h[m].less(&e) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = e
}
