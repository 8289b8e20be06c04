package sim

// Same-instant order (issue 27). Events due at the same true time run in
// the order they were queued (their sequence numbers): two replies that
// arrive at one instant, a reply and the request's timeout, two clients'
// SET NX reaching one server at once. That order is one of several a real
// system could take, and a verdict may depend on it. PreferNow lets a
// fault (faults' kind "order", which explore --orders enumerates) choose
// another: one event due now goes first, the others keep their order.
//
// Why a call at the instant rather than a rule in Kernel.Run's loop: the
// order fault is installed before the run as a callback at its instant
// (Kernel.At), which pops before every event queued during the run at
// that instant (its sequence number is lower), so when it runs, the
// events due at the instant are all queued and none has run yet. Doing the
// work there costs nothing in the run loop when no order fault is given
// (not even a test per event), and keeps the kernel's hot path as it is.

// Prefer names the event that PreferNow moves first: the first event due
// now of process Proc; with From (not NoProc), its first delivery from
// From; with Timer, its first timer.
type Prefer struct {
	Proc  ProcID
	From  ProcID
	Timer bool
}

// PreferNow moves the first event due now that want names ahead of every
// other event due now (deliveries, timers, callbacks, retransmissions),
// the others keeping their order; events queued later at this instant
// still run after them all. It returns how many events the chosen one
// went ahead of, and false when no event due now matches (then nothing
// moves). An event's process is: a delivery's destination, a timer's
// process, an inbox replay's process, a retransmission's receiver; a
// callback has none. A timer cancelled or re-planned is not an event.
func (k *Kernel) PreferNow(want Prefer) (ahead int, ok bool) {
	var due []event
	for {
		// next drains the timer wheel's due slots into the heap first:
		// the heap's top alone may not be the earliest event.
		n := k.next()
		if n == nil || n.at != k.now {
			break
		}
		due = append(due, k.q.pop())
	}
	pick := -1
	for i := range due {
		if k.prefers(&due[i], want) {
			pick = i
			break
		}
	}
	if pick > 0 {
		e := due[pick]
		copy(due[1:pick+1], due[:pick])
		due[0] = e
	}
	// Fresh sequence numbers in the new order: every event queued later
	// gets a larger one, as it would have.
	for _, e := range due {
		k.seq++
		e.seq = k.seq
		k.q.push(e)
	}
	return pick, pick >= 0
}

// prefers reports whether queued event e is one want names.
func (k *Kernel) prefers(e *event, want Prefer) bool {
	idx := e.idx()
	switch e.kind() {
	case evDeliver:
		m := &k.msgs[idx]
		return !want.Timer && m.to == want.Proc && (want.From == NoProc || m.from == want.From)
	case evTimer:
		t := &k.timers[idx]
		return want.From == NoProc && !k.timerStale(e) && t.proc == want.Proc
	case evInbox:
		return want.From == NoProc && !want.Timer && ProcID(idx) == want.Proc
	case evRetx:
		_, _, to := k.net.linkAt(int(idx))
		return want.From == NoProc && !want.Timer && to == want.Proc
	}
	return false
}
