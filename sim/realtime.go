package sim

// Methods for a real-time driver (package realmode). They add nothing to
// the simulation loop: a driver in real time calls Run with the elapsed real
// time as the deadline, asks for the time of the next event to know how
// long it may sleep, and injects what real servers answered as messages
// sent at the current time. The kernel itself stays single-threaded: the
// driver calls these from the one goroutine that runs the kernel.

// NextAt returns the true time of the earliest queued event, and false when
// the queue is empty. NB: the event may be stale (a cancelled or re-planned
// timer); running the kernel up to that time then does nothing, which costs
// a driver one early wake-up, never a missed event.
func (k *Kernel) NextAt() (Time, bool) {
	e := k.next()
	if e == nil {
		return 0, false
	}
	return e.at, true
}

// Inject sends m from process from to process to at the current time, as if
// from had sent it in a step of its own: the send is traced, and the
// message is delivered under the network's rules (latency, faults, a
// crashed or restarted destination). A real-time driver injects a real
// server's reply through the gateway process that stands for that server.
func (k *Kernel) Inject(from, to ProcID, m Message) {
	k.send(k.procs[from], to, m, nil)
}
