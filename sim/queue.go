package sim

// eventKind tells the run loop what an event is.
type eventKind uint8

const (
	evDeliver eventKind = iota + 1 // idx: message slot
	evTimer                        // idx: timer slot, gen: schedule version
	evCall                         // idx: callback slot
	evInbox                        // idx: process; replay the next item of a resumed inbox
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

func (a *event) less(b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

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
	q.h = h[:n]
	h = h[:n]
	if n == 0 {
		return top
	}
	// Sift the last element down from the root through a hole.
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h[r].less(&h[l]) {
			m = r
		}
		if !h[m].less(&last) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = last
	return top
}

func (q *queue) peek() *event { return &q.h[0] }
