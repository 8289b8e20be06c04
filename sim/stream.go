package sim

import "slices"

// Streaming the history (issue 15). A long run's history does not fit in
// memory (a Redlock lock cycle leaves four records, about 400 bytes: a
// 24-hour run 1 GB before the checker starts). With a HistorySink set, the
// kernel hands the history over in pieces as the run goes and forgets them:
// it keeps only the open records and the piece in progress.
//
// A piece ends at a quiet point: a moment at which no record can change any
// more and none that is still to come can reach back before it. That is when
// every want, attempt and belief is closed, no client is still waiting for a
// lock after giving up (a liveness wait runs on across its wants until the
// client gets the lock), and every critical section is settled (see
// settled). Contention never comes to such a point (two clients taking
// turns: one always holds or waits), so a piece may also end at the very
// instant a belief begins with nothing else open (carriedBeliefs): the open
// belief goes whole into the next piece, which then starts with the lock's
// owner known, and every record of the piece before it closed by then. Judging the pieces one after the other is then exact (the
// checker's split.go and stream.go say why for each property), and the IDs
// of the records stay those of the whole history: a piece is the whole
// history's records from one ID on, Faults and Roles (promotion.go) are kept whole (a
// fault schedule applies few, servers change role rarely) and every piece
// carries all those recorded so far.
//
// A new record kind plugs in by saying when it is open (counted in
// histStream.open while it is) and when it settles; the flush waits for
// both. A key loss (keyloss.go) is never open and settled at once: it goes
// with the piece in progress, which holds the beliefs it bears on (a loss
// is named only between two belief starts, and no quiet point falls while
// a belief is open, except one that carries the belief whole into the next
// piece, which is refused while the piece in progress holds a key loss).

// HistorySink receives the history of a run in pieces (Kernel.SetHistorySink).
type HistorySink interface {
	// Piece receives a finished piece: a History whose records are closed
	// and settled, numbered as in the whole history, with every fault
	// recorded so far and End the true time of the quiet point (the end of
	// the run for the last piece). The sink owns it; the kernel never
	// touches it again.
	Piece(p *History)
	// Held is the number of history records the sink keeps, for the
	// memory budget's message.
	Held() int
}

// histStream is the kernel's side of a history stream.
type histStream struct {
	sink     HistorySink
	minPiece int // records a piece holds at least before it is handed over
	// The ID of the first record of each kind in k.hist (0 until a piece
	// was handed over).
	wants, attempts, beliefs, sections int
	// open counts the open wants, attempts and beliefs, and waiting the
	// (client, lock) pairs whose wait runs on after a want that gave up.
	open, waiting int
	// pend lists the sections in k.hist that may still change.
	pend []pendSection
}

// pendSection is a critical section that was not settled when last seen.
type pendSection struct {
	id   int
	proc ProcID
	// moves is its client's openRecords.moves when it began: the client
	// has moved on (begun another want, attempt or section, or crashed)
	// once that count is higher.
	moves uint32
}

// SetHistorySink makes the kernel hand the history to sink in pieces of at
// least minPiece records (wants, attempts, beliefs and sections), cut at
// quiet points, and forget them. Set it before Run. Finish hands over the
// last piece and returns it.
func (k *Kernel) SetHistorySink(sink HistorySink, minPiece int) {
	k.hs.sink, k.hs.minPiece = sink, minPiece
}

// records is the number of records in the piece in progress that make a
// piece large enough to hand over. NB: key losses go with the piece but do
// not count: they are rare, and counting them would move the cut points.
func (h *History) records() int {
	return len(h.Wants) + len(h.Attempts) + len(h.Beliefs) + len(h.Sections)
}

// settled reports whether section s can no longer change: its read was
// served or refused (a read still on its way, or lost by the network, keeps
// it open: the storage node may serve it later); its write, if sent, was
// decided; and its client is done with it: it learned the write's outcome,
// or it ended the belief by releasing (the client releases after the
// write's reply or timeout, and never between its check and its write), or
// began something else, or crashed. NB: a belief that ended because the
// client learned it lost the lock does not settle the section: the loss can
// arrive between the client's check and its write, which then still goes
// out, and the write's reply can come after it.
func (k *Kernel) settled(s *Section, moved bool) bool {
	if !s.Read && !s.ReadRejected {
		return false
	}
	if s.Written && s.Outcome == WriteNone {
		return false
	}
	if moved || s.Written && s.ResultAt != 0 {
		return true
	}
	if i := s.BeliefID - k.hs.beliefs; s.BeliefID >= 0 && i >= 0 && i < len(k.hist.Beliefs) {
		b := &k.hist.Beliefs[i]
		return !b.Open && (b.Reason == EndReleased || b.Reason == EndCrashed || b.Reason == EndRunEnd)
	}
	return false
}

// movedOn marks the pending sections of p as left behind by their client:
// O(1), a count, not a scan of the pending sections (which, while no quiet
// point comes, are every section of the piece).
func (k *Kernel) movedOn(p *proc) { p.open.moves++ }

// maybeFlush hands the piece in progress to the sink if this is a quiet
// point and the piece is large enough. It is O(1) while a record is open.
func (k *Kernel) maybeFlush() {
	hs := &k.hs
	if hs.sink == nil || hs.waiting > 0 || k.hist.records() < hs.minPiece {
		return
	}
	carry := 0
	if hs.open > 0 {
		if carry = k.carriedBeliefs(); carry == 0 {
			return
		}
	}
	kept := hs.pend[:0]
	for _, ps := range hs.pend {
		moved := k.procs[ps.proc].open.moves > ps.moves
		if !k.settled(&k.hist.Sections[ps.id-hs.sections], moved) {
			kept = append(kept, ps)
		}
	}
	hs.pend = kept
	if len(kept) > 0 {
		return
	}
	k.flush(carry)
}

// carriedBeliefs reports how many open beliefs a cut now would carry into
// the next piece, 0 if none can be carried (issue 28: two clients taking
// turns always have one holding or waiting, so without this the history
// is never cut). A belief is carried whole when the only open records are
// beliefs that began at this very instant, the last ones of the piece
// (beliefs are numbered in start order, so the piece stays the whole
// history's records from one ID on), and no wait runs on (checked by the
// caller). Judging the pieces one after the other stays exact (the
// checker's split.go): every record of the piece before the cut closed by
// now, and every record after it, the carried beliefs included, begins
// now or later; the lock's owner at the cut is the carried belief's
// client, and that belief is judged whole in the next piece. A piece with
// a key loss is not cut so (a loss is named between two belief starts,
// which the cut would separate).
func (k *Kernel) carriedBeliefs() int {
	h := &k.hist
	if len(h.KeyLosses) > 0 {
		return 0
	}
	n := 0
	for i := len(h.Beliefs) - 1; i >= 0 && n < k.hs.open; i-- {
		b := &h.Beliefs[i]
		if !b.Open || b.Start != k.now {
			break
		}
		n++
	}
	if n != k.hs.open {
		return 0 // a want, an attempt or an older belief is open
	}
	return n
}

// flush hands the piece in progress to the sink and starts a new one with
// the last carry beliefs (open ones, see carriedBeliefs) in it. The piece
// gets copies of exactly its records, and the kernel keeps its slices for
// the next piece: a sink that keeps pieces for a while (checker.Stream)
// holds their records, not the slack of slices grown by appending, and the
// kernel's slices stop growing at the largest piece (issue 28).
func (k *Kernel) flush(carry int) {
	h := &k.hist
	nb := len(h.Beliefs) - carry
	p := &History{Wants: slices.Clone(h.Wants), Attempts: slices.Clone(h.Attempts), Beliefs: slices.Clone(h.Beliefs[:nb]), Sections: slices.Clone(h.Sections),
		KeyLosses: h.KeyLosses, Faults: h.Faults[:len(h.Faults):len(h.Faults)], Roles: h.Roles[:len(h.Roles):len(h.Roles)], Clocks: h.Clocks, End: k.now}
	k.hs.wants += len(h.Wants)
	k.hs.attempts += len(h.Attempts)
	k.hs.beliefs += nb
	k.hs.sections += len(h.Sections)
	h.Wants = h.Wants[:0]
	h.Attempts = h.Attempts[:0]
	h.Beliefs = h.Beliefs[:copy(h.Beliefs, h.Beliefs[nb:])]
	h.Sections = h.Sections[:0]
	h.KeyLosses = nil // rare: most pieces have none; the piece owns them
	k.hs.pend = k.hs.pend[:0]
	k.hs.sink.Piece(p)
}

// heldBySink is the number of records the sink keeps (0 without one).
func (k *Kernel) heldBySink() int {
	if k.hs.sink == nil {
		return 0
	}
	return k.hs.sink.Held()
}
