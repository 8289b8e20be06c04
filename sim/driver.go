package sim

// Drivers: work outside the kernel that acts at virtual instants.
//
// Real Go code (a team's own lock, a lock library on go-redis) cannot be
// written as a state machine the kernel calls: it blocks, sleeps and starts
// goroutines. Package usercode runs such code in goroutines of a
// testing/synctest bubble whose clock is the kernel's true time, and hands
// the kernel a Driver: before each event the kernel asks the driver to let
// the outside code run up to the event's instant; when that code did
// something the simulation must see (wrote on a simulated connection,
// finished a lock call), the driver reports the instant and the kernel lets
// it act there (Flush), through the processes' Envs and Wake, so that the
// outside work becomes ordinary kernel events, traced and hashed like any
// other. The kernel stays single-threaded: the outside code runs only while
// the kernel waits in Advance.

// Driver lets work outside the kernel act at virtual instants (see above).
type Driver interface {
	// Advance is called before the kernel runs its next event, due at next
	// (Run's until when no event is due earlier), with the kernel's time
	// now <= next. It lets the outside work run up to next and returns the
	// first instant t (now <= t <= next) at which some of it is ready to
	// act, with ready true; or ready false when none became ready up to
	// next. next is Never when nothing bounds the run.
	Advance(now, next Time) (t Time, ready bool)
	// Flush lets the work that was ready act, at the kernel's current time
	// (the t Advance returned). It may send through processes' Envs, set
	// their timers and Wake them.
	Flush()
}

// SetDriver installs the driver of outside work (nil removes it). Run
// consults it before every event; each Flush counts against the event
// budget, so outside code that keeps acting without end stops with
// *ErrBudget instead of hanging.
func (k *Kernel) SetDriver(d Driver) { k.drv = d }

// Wake schedules process id's Fire(tag) at the current time, as a timer
// due now on its monotonic clock: a paused process handles it after its
// resume, in order with what waits in its inbox; a crashed process or one
// not yet started never does. It is how a driver hands outside work to the
// process it belongs to.
func (k *Kernel) Wake(id ProcID, tag any) {
	p := k.procs[id]
	if p.state == stCrashed || p.state == stNew {
		return
	}
	k.setTimer(p, Mono, p.clock.Read(Mono, k.now), tag)
}

// Waiting reports whether process id would not handle an event now: it is
// paused, or messages and timers that waited during a pause are still
// being handed to it, or it is not running. A driver acts for a process
// directly only when it is not waiting, and wakes it (Wake) otherwise, so
// that what it does queues behind what waits.
func (k *Kernel) Waiting(id ProcID) bool {
	p := k.procs[id]
	return p.state != stRunning || p.waiting()
}

// Incarnation returns process id's incarnation number, which changes at
// every crash and every restart, so that outside work can tell the
// instance it belongs to from a later one.
func (k *Kernel) Incarnation(id ProcID) uint32 { return k.procs[id].inc }

// ReadClockAt returns process id's reading of clock c at true time t (for
// outside work reading its process's clock between events).
func (k *Kernel) ReadClockAt(id ProcID, c Clock, t Time) int64 {
	return k.procs[id].clock.Read(c, t)
}

// advance runs the driver before the next event: it returns true when
// outside work acted (the queue may have changed and the caller looks at it
// again).
func (k *Kernel) advance(until Time) bool {
	next := until
	if e := k.next(); e != nil && e.at < next {
		next = e.at
	}
	if next < k.now {
		next = k.now
	}
	t, ready := k.drv.Advance(k.now, next)
	if !ready {
		return false
	}
	if t > k.now {
		k.now = t
	}
	k.events++
	k.drv.Flush()
	return true
}
