package sim

// wheel holds the timer events due at least a slot from now, out of the
// heap, in slots of wheelWidth of true time: a timer's event enters the
// heap (queue) only when the run reaches its slot, and a timer cancelled
// before then is unlinked from its slot and never enters it at all (the
// wheel holds live timers only: its size is theirs, not the rate of
// requests times their timeout).
//
// Why: almost every timer a client sets is a request timeout cancelled by
// the reply a few milliseconds later (a Redlock node timeout is 50 ms, a
// resource timeout 5 s), so the heap used to hold thousands of dead events
// between compactions, and every message's push and pop paid for that
// depth (the queue was 5 to 11% of a Redlock run's CPU). In the wheel an
// event costs an append; the heap holds what is due within a slot or two.
//
// Order: the heap pops events by their (time, sequence) key, and an event
// keeps the key it was given when it was scheduled, wherever it waits.
// Kernel.next drains every slot that begins at or before the heap's
// earliest event before that event pops, so every event still in the
// wheel is later than it: events pop in exactly the order they would from
// the heap alone, and traces and hashes do not change.
type wheel struct {
	// heads holds, for each of the wheelSlots slots (a ring), 1 + the
	// index in nodes of its first event, 0 when it has none; made when
	// first used.
	heads []int32
	// nodes are the events, each slot's doubly linked through next and
	// prev (1 + index, 0 ends), and the free nodes linked from free: a
	// slot costs no slice of its own, a cancelled timer's node is unlinked
	// in O(1), and a run allocates nothing once nodes has grown.
	nodes []wheelNode
	free  int32
	cur   int64 // absolute number of the first slot not yet drained
	n     int   // events in the wheel
}

type wheelNode struct {
	e          event
	next, prev int32
}

const (
	wheelShift = 22              // a slot is 2^22 ns, about 4.2 ms
	wheelSlots = 2048            // slots: a horizon of about 8.6 s
	wheelMask  = wheelSlots - 1  // slot number to ring index
	wheelWidth = 1 << wheelShift // of true time, in ns
)

// slotOf returns the absolute slot number of true time t.
func slotOf(t Time) int64 { return int64(t) >> wheelShift }

// put keeps e in the wheel when it is due after the slot of now and within
// the horizon, and returns 1 + the index of its node (0 when it did not:
// then it goes to the heap).
func (w *wheel) put(e event, now Time) int32 {
	s := slotOf(e.at)
	if w.n == 0 {
		w.cur = slotOf(now) + 1
	}
	if s < w.cur || s >= w.cur+wheelSlots {
		return 0
	}
	if w.heads == nil {
		w.heads = make([]int32, wheelSlots)
	}
	j := w.free
	if j != 0 {
		w.free = w.nodes[j-1].next
	} else {
		w.nodes = append(w.nodes, wheelNode{})
		j = int32(len(w.nodes))
	}
	h := &w.heads[s&wheelMask]
	w.nodes[j-1] = wheelNode{e: e, next: *h}
	if *h != 0 {
		w.nodes[*h-1].prev = j
	}
	*h = j
	w.n++
	return j
}

// remove unlinks node j (1 + index) from its slot and frees it.
func (w *wheel) remove(j int32) {
	nd := &w.nodes[j-1]
	if nd.prev != 0 {
		w.nodes[nd.prev-1].next = nd.next
	} else {
		w.heads[slotOf(nd.e.at)&wheelMask] = nd.next
	}
	if nd.next != 0 {
		w.nodes[nd.next-1].prev = nd.prev
	}
	*nd = wheelNode{next: w.free}
	w.free = j
	w.n--
}

// next returns the earliest event of the kernel's queue (nil when there is
// none), first moving into the heap every timer event of the wheel that is
// not later than it (dropping the stale ones).
func (k *Kernel) next() *event {
	w := &k.wheel
	for w.n > 0 && (k.q.len() == 0 || Time(w.cur<<wheelShift) <= k.q.peek().at) {
		h := &w.heads[w.cur&wheelMask]
		for j := *h; j != 0; {
			nd := &w.nodes[j-1]
			if e := &nd.e; !k.timerStale(e) { // a stale one was unlinked: never
				k.timers[e.idx()].wnode = 0
				k.q.push(*e)
			}
			next := nd.next
			*nd = wheelNode{next: w.free}
			w.free = j
			j = next
			w.n--
		}
		*h = 0
		w.cur++
	}
	if k.q.len() == 0 {
		return nil
	}
	return k.q.peek()
}

// queued returns the number of queued events, the wheel's included (the
// heap's stale timer events too).
func (k *Kernel) queued() int { return k.q.len() + k.wheel.n }

// eachQueued calls f for every queued event, the heap's then the wheel's,
// in no particular order (callers count; they do not order).
func (k *Kernel) eachQueued(f func(e *event)) {
	for i := range k.q.h {
		f(&k.q.h[i])
	}
	if k.wheel.n == 0 {
		return
	}
	w := &k.wheel
	for _, h := range w.heads {
		for j := h; j != 0; j = w.nodes[j-1].next {
			f(&w.nodes[j-1].e)
		}
	}
}
