package sim

import (
	"fmt"
	"strconv"
)

// openRecords tracks a process's history records that are still open, so
// that a crash or the end of the run can close them.
type openRecords struct {
	wants    []int
	attempts []int
	beliefs  []int
	counters []int
	// waiting lists the locks the process waits for, with the time each
	// wait began: from its first want until a want gets the lock or the
	// process crashes while a want is open (a liveness wait runs on across
	// wants that gave up), as checker.waits measures it.
	waiting []OpenWait
	// moves counts the times the process moved on from its critical
	// sections (see pendSection).
	moves uint32
}

// startWaiting and stopWaiting keep openRecords.waiting and the kernel's
// count of waits in progress (a piece of a streamed history never ends
// inside a wait).
func (k *Kernel) startWaiting(o *openRecords, client, lock string) {
	for _, w := range o.waiting {
		if w.Lock == lock {
			return
		}
	}
	o.waiting = append(o.waiting, OpenWait{Client: client, Lock: lock, Start: k.now})
	k.hs.waiting++
}

func (k *Kernel) stopWaiting(o *openRecords, lock string) {
	for i, w := range o.waiting {
		if w.Lock == lock {
			o.waiting = append(o.waiting[:i], o.waiting[i+1:]...)
			k.hs.waiting--
			return
		}
	}
}

func removeInt(s []int, v int) []int {
	for i, x := range s {
		if x == v {
			return append(s[:i], s[i+1:]...)
		}
	}
	return s
}

// WantBegin records that the client starts wanting a lock; it returns the
// want's id.
func (e *Env) WantBegin(lock string) int {
	h := &e.k.hist
	id := e.k.hs.wants + len(h.Wants) - len(e.k.hs.carriedWants)
	h.Wants = append(h.Wants, Want{Client: e.p.name, Lock: lock, Start: e.k.now, Open: true})
	e.p.open.wants = append(e.p.open.wants, id)
	e.k.hs.open++
	e.k.hs.openWants++
	e.k.startWaiting(&e.p.open, e.p.name, lock)
	e.k.movedOn(e.p)
	return id
}

// WantEnd records that the want ended: got tells whether with the lock;
// otherwise reason says why ("gave-up").
func (e *Env) WantEnd(id int, got bool, reason string) {
	k := e.k
	w := k.want(id)
	if w == nil || !w.Open {
		return // handed over with a piece: closed long ago
	}
	w.End, w.Got, w.Open, w.Reason = k.now, got, false, reason
	o := k.owner(w.Client)
	if got {
		w.Reason = ""
		k.stopWaiting(&o.open, w.Lock)
	}
	o.open.wants = removeInt(o.open.wants, id)
	k.hs.open--
	k.hs.openWants--
	k.maybeFlush()
}

// AttemptBegin records the start of an acquire attempt (and emits
// acquire-start); it returns the attempt's id.
func (e *Env) AttemptBegin(lock string) int {
	h := &e.k.hist
	id := e.k.hs.attempts + len(h.Attempts)
	h.Attempts = append(h.Attempts, Attempt{Client: e.p.name, Lock: lock, Start: e.k.now, Open: true})
	e.p.open.attempts = append(e.p.open.attempts, id)
	e.k.hs.open++
	e.k.hs.openAttempts++
	e.k.movedOn(e.p)
	e.k.logLockID(KindAcquireStart, e.p.id, lock, " attempt ", "attempt", int64(id))
	return id
}

// AttemptEnd records the outcome of an attempt. A failed attempt emits
// acquire-failed; a successful one is followed by BeliefBegin.
func (e *Env) AttemptEnd(id int, ok bool) {
	k := e.k
	i := id - k.hs.attempts
	if i < 0 || i >= len(k.hist.Attempts) {
		return // handed over with a piece: closed long ago
	}
	a := &k.hist.Attempts[i]
	if !a.Open {
		return
	}
	a.End, a.OK, a.Open = k.now, ok, false
	o := k.owner(a.Client)
	o.open.attempts = removeInt(o.open.attempts, id)
	k.hs.open--
	k.hs.openAttempts--
	if !ok {
		k.logLockID(KindAcquireFailed, e.p.id, a.Lock, " attempt ", "attempt", int64(id))
	}
	k.maybeFlush()
}

// BeliefBegin records that the client now believes it holds lock, as the
// result of the given attempt, with an optional fencing token. It emits
// acquired and returns the belief's id.
func (e *Env) BeliefBegin(lock string, attempt int, token int64, hasToken bool) int {
	h := &e.k.hist
	id := e.k.hs.beliefs + len(h.Beliefs)
	start := e.k.now
	if i := attempt - e.k.hs.attempts; attempt >= 0 && i >= 0 && i < len(h.Attempts) {
		start = h.Attempts[i].Start
	}
	h.Beliefs = append(h.Beliefs, Belief{ID: id, Client: e.p.name, Lock: lock, AttemptStart: start, Start: e.k.now, Open: true, Token: token, HasToken: hasToken})
	e.p.open.beliefs = append(e.p.open.beliefs, id)
	e.k.hs.open++
	if hasToken {
		e.k.logLockID(KindAcquired, e.p.id, lock, " token ", "token", token)
	} else {
		e.LogAttrs(KindAcquired, lock, Str("lock", lock))
	}
	e.k.maybeFlush() // a cut may carry this belief (contendedCut)
	return id
}

// BeliefValidity records the validity the client's algorithm computed for
// belief id (at the grant, or again at an extension); the belief must still
// be open. v.At is set to the current true time.
func (e *Env) BeliefValidity(id int, v Validity) {
	i := id - e.k.hs.beliefs
	if id < 0 || i < 0 || i >= len(e.k.hist.Beliefs) || !e.k.hist.Beliefs[i].Open {
		return
	}
	v.At = e.k.now
	e.k.hist.Beliefs[i].Validity = v
}

// BeliefEnd records that the client stopped believing it holds the lock.
// Reason EndReleased emits released; EndLost and EndExpired emit lock-lost
// (the client learned it lost the lock). The kernel itself ends beliefs
// with EndCrashed (Crash) and EndRunEnd (Finish) and emits no event for
// them: the client learned nothing.
func (e *Env) BeliefEnd(id int, reason BeliefEnd) {
	e.k.endBelief(id, reason)
}

// owner returns the process that recorded a history record.
func (k *Kernel) owner(client string) *proc { return k.procs[k.byName[client]] }

func (k *Kernel) endBelief(id int, reason BeliefEnd) {
	i := id - k.hs.beliefs
	if i < 0 || i >= len(k.hist.Beliefs) {
		return // handed over with a piece: closed long ago
	}
	b := &k.hist.Beliefs[i]
	if !b.Open {
		return
	}
	b.End, b.Open, b.Reason = k.now, false, reason
	p := k.owner(b.Client)
	p.open.beliefs = removeInt(p.open.beliefs, id)
	k.hs.open--
	defer k.maybeFlush()
	var kind Kind
	switch reason {
	case EndReleased:
		kind = KindReleased
	case EndLost, EndExpired:
		kind = KindLockLost
	default:
		return
	}
	// "LOCK (REASON)", as fmt's "%s (%s)" rendered it.
	t := k.logBegin(kind, p.id)
	t = append(append(append(append(t, b.Lock...), " ("...), reason...), ')')
	k.logEnd(t, kind, p.id, Str("lock", b.Lock), Str("reason", string(reason)))
}

// Believes reports whether belief id is still open.
func (e *Env) Believes(id int) bool {
	i := id - e.k.hs.beliefs
	return id >= 0 && i >= 0 && i < len(e.k.hist.Beliefs) && e.k.hist.Beliefs[i].Open
}

// SectionBegin records that the client sends the read of a critical section
// under belief (or -1). It emits resource-read and returns the section id,
// which travels with the read and write messages so that the storage node
// can record its ground truth.
func (e *Env) SectionBegin(lock string, belief int, token int64, hasToken bool) int {
	h := &e.k.hist
	id := e.k.hs.sections + len(h.Sections)
	e.k.movedOn(e.p)
	h.Sections = append(h.Sections, Section{ID: id, Client: e.p.name, Lock: lock, BeliefID: belief, Token: token, HasToken: hasToken, ReadSent: e.k.now})
	if e.k.hs.sink != nil {
		e.k.hs.pend = append(e.k.hs.pend, pendSection{id: id, proc: e.p.id, moves: e.p.open.moves})
	}
	e.k.logLockID(KindResourceRead, e.p.id, lock, " section ", "section", int64(id))
	return id
}

// SectionRead records, at the storage node, that it served the read of
// section id with value (or rejected it).
func (e *Env) SectionRead(id int, value int64, rejected bool) {
	if s := e.k.section(id); s != nil {
		s.ReadAt, s.Read, s.ReadValue, s.ReadRejected = e.k.now, !rejected, value, rejected
		e.k.maybeFlush()
	}
}

// SectionWriteSent records that the client sends the write of value.
func (e *Env) SectionWriteSent(id int, value int64) {
	if s := e.k.section(id); s != nil {
		s.WriteSent, s.Written, s.WriteValue = e.k.now, true, value
		b := e.k.logBegin(KindResourceWrite, e.p.id)
		b = append(append(b, s.Lock...), " section "...)
		b = strconv.AppendInt(append(strconv.AppendInt(b, int64(id), 10), " value "...), value, 10)
		e.k.logEnd(b, KindResourceWrite, e.p.id, Str("lock", s.Lock), Int64("section", int64(id)), Int64("value", value))
	}
}

// SectionWriteDecided records, at the storage node, the fate of the write.
func (e *Env) SectionWriteDecided(id int, outcome WriteOutcome) {
	if s := e.k.section(id); s != nil {
		s.WriteAt, s.Outcome = e.k.now, outcome
		e.k.maybeFlush()
	}
}

// SectionResult records that the client learned the outcome of its write.
func (e *Env) SectionResult(id int) {
	if s := e.k.section(id); s != nil {
		s.ResultAt = e.k.now
		e.k.maybeFlush()
	}
}

func (k *Kernel) section(id int) *Section {
	i := id - k.hs.sections
	if id < 0 || i >= len(k.hist.Sections) {
		panic(fmt.Sprintf("sim: unknown section id %d", id))
	}
	if i < 0 {
		// Handed over with a piece, so settled: nothing can change it
		// (settled), and a late call has nothing to record.
		return nil
	}
	return &k.hist.Sections[i]
}

// RecordFault adds a fault to the history (fault schedules call it when
// they apply a fault) and to the trace.
func (k *Kernel) RecordFault(f FaultRecord) {
	f.At = k.now
	k.hist.Faults = append(k.hist.Faults, f)
	k.tracefAttrs(KindFault, NoProc, f.Fields, "%s: %s", f.Kind, f.Text)
}

// closeOpen ends every open record of a process (reason EndCrashed for a
// crash, EndRunEnd at the end of the run). Beliefs end with the reason.
// Attempts get End = now and stay Open (they never finished). Wants end
// with reason "crashed" on a crash; at the end of the run they get End =
// now and reason "run-end" and stay Open.
func (k *Kernel) closeOpen(p *proc, reason BeliefEnd) {
	// The records close together: no piece is handed over halfway.
	sink := k.hs.sink
	k.hs.sink = nil
	defer func() {
		k.hs.sink = sink
		if reason == EndCrashed {
			k.maybeFlush()
		}
	}()
	k.closeCounters(p, reason)
	for len(p.open.beliefs) > 0 {
		id := p.open.beliefs[0]
		k.endBelief(id, reason)
		p.open.beliefs = removeInt(p.open.beliefs, id) // in case it was not open
	}
	for _, id := range p.open.attempts {
		// An attempt that never finished stays Open (with End = now), but
		// it can change no more.
		if a := &k.hist.Attempts[id-k.hs.attempts]; a.Open {
			a.End = k.now
			k.hs.open--
			k.hs.openAttempts--
		}
	}
	p.open.attempts = p.open.attempts[:0]
	for _, id := range p.open.wants {
		w := k.want(id)
		if w == nil || !w.Open {
			continue
		}
		w.End = k.now
		k.hs.open--
		k.hs.openWants--
		if reason == EndCrashed {
			w.Open, w.Reason = false, "crashed"
			k.stopWaiting(&p.open, w.Lock)
		} else {
			w.Reason = "run-end"
		}
	}
	p.open.wants = p.open.wants[:0]
	if reason == EndCrashed {
		// A crash ends the client's waits that had a want open (the
		// liveness check ends a wait at a crashed want, above) and its
		// sections: the next incarnation starts afresh. A wait between
		// two wants (the last one gave up, the next is not yet sent) runs
		// on: no crashed want ends it, so the liveness check joins it to
		// the next want of the lock, after the restart (checker.waits),
		// and no cut may fall inside it.
		k.movedOn(p)
	}
}

// Finish ends the run at the current time: beliefs still open end with
// reason run-end (and stay marked as such), open attempts and wants keep
// Open set with End = now, and writes that were sent but never reached the
// storage node are marked lost. It returns the history. Call it once, after
// the last Run.
func (k *Kernel) Finish() *History {
	if !k.finished {
		k.finished = true
		for _, p := range k.procs {
			k.closeOpen(p, EndRunEnd)
		}
		k.endRoles()
		for i := range k.hist.Sections {
			s := &k.hist.Sections[i]
			if s.Written && s.Outcome == WriteNone {
				s.Outcome = WriteLost
			}
		}
		k.hist.End = k.now
		if k.hs.sink != nil {
			// The last piece: everything left, settled or not (the run is
			// over, nothing can change).
			last := k.hist
			last.Since, last.WaitsIn = k.hs.since, k.hs.waitsIn
			last.Faults = last.Faults[:len(last.Faults):len(last.Faults)]
			last.Roles = last.Roles[:len(last.Roles):len(last.Roles)]
			k.hs.sink.Piece(&last)
		}
	}
	return &k.hist
}

// History returns the history recorded so far (complete after Finish).
func (k *Kernel) History() *History { return &k.hist }

// The history's own trace events are on the hot path of every lock cycle:
// they are rendered with appends, not fmt, producing the same bytes as the
// format strings they replace ("%s attempt %d" and the like).

// logBegin starts a model event of proc (as Tracef would record it) and
// returns the buffer to append its text to; logEnd records it.
func (k *Kernel) logBegin(kind Kind, proc ProcID) []byte {
	return k.tr.begin(k.now, kindCode(kind), kind, proc, NoProc, 0)
}

// logEnd finishes an event begun with logBegin, with its typed fields.
func (k *Kernel) logEnd(b []byte, kind Kind, proc ProcID, attrs ...Attr) {
	k.tr.end(b, k.now, kind, proc, NoProc, 0, k, attrs...)
}

// logLockID records "LOCK WORDn" (fmt's "%s WORD%d"), with the fields lock
// and field (n).
func (k *Kernel) logLockID(kind Kind, proc ProcID, lock, word, field string, n int64) {
	b := k.logBegin(kind, proc)
	b = strconv.AppendInt(append(append(b, lock...), word...), n, 10)
	k.logEnd(b, kind, proc, Str("lock", lock), Int64(field, n))
}
