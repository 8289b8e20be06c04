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
// turns: one always holds or waits; three: one always waits), so a piece
// may also end at the very instant a belief begins with no attempt and no
// older belief open (contendedCut): the open beliefs that begin now go
// whole into the next piece, which then starts with the lock's owner
// known; so do the open wants, and the waits in progress (for the locks of
// those beliefs only) are named at the cut with their start (History's
// WaitsOut, the next piece's WaitsIn). Every other record of the piece
// before the cut closed by then. Judging the pieces one after the other is
// then exact (the checker's split.go, stream.go and liveness.go say why
// for each property). The IDs of the records stay those of the whole
// history: a piece is the whole history's records from one ID on, but for
// the wants carried into it (the kernel finds those by ID, carriedWants);
// Faults and Roles (promotion.go) are kept whole (a fault schedule applies
// few, servers change role rarely) and every piece carries all those
// recorded so far.
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
	// was handed over), the carried wants aside.
	wants, attempts, beliefs, sections int
	// carriedWants are the IDs of the wants at the front of k.hist.Wants,
	// carried open across the last cut (contendedCut), in ID order; the
	// wants after them are numbered on from wants.
	carriedWants []int
	// open counts the open wants, attempts and beliefs (openWants and
	// openAttempts those of the first two kinds), and waiting the (client,
	// lock) pairs whose wait runs on (openRecords.waiting).
	open, openWants, openAttempts, waiting int
	// since and waitsIn are the piece in progress's History.Since and
	// WaitsIn: the last cut, and the waits that ran across it.
	since   Time
	waitsIn []OpenWait
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
	if hs.sink == nil || k.hist.records() < hs.minPiece {
		return
	}
	carry := 0
	if hs.open > 0 || hs.waiting > 0 {
		if carry = k.contendedCut(); carry == 0 {
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

// contendedCut reports how many open beliefs a cut now would carry into
// the next piece, 0 if no cut can fall now (issue 28: two clients taking
// turns always have one holding or waiting, three always have one
// waiting, so without this the history is never cut). A cut may fall at
// the instant a belief begins when the only open records are beliefs that
// began at this very instant, the last ones of the piece (beliefs are
// numbered in start order, so the piece stays the whole history's records
// from one ID on), and wants; no attempt is open, and every wait in
// progress is for the lock of one of those beliefs. Judging the pieces one
// after the other stays exact (the checker's split.go and liveness.go):
// every belief of the piece before the cut ended by now, and every belief
// after it, the carried ones included, begins now or later, so the lock's
// owner at the cut is the carried belief's client; and a lock somebody
// waits for is held from now on, so no stretch in which it stood free
// while someone waited spans the cut: each lies in one piece, and a wait
// across the cut is judged in both, from its true start (History.WaitsOut
// and WaitsIn). A piece with a key loss is not cut so (a loss is named
// between two belief starts, which the cut would separate).
func (k *Kernel) contendedCut() int {
	h := &k.hist
	hs := &k.hs
	if len(h.KeyLosses) > 0 || hs.openAttempts > 0 {
		return 0
	}
	n := 0
	for i := len(h.Beliefs) - 1; i >= 0 && n < hs.open; i-- {
		b := &h.Beliefs[i]
		if !b.Open || b.Start != k.now {
			break
		}
		n++
	}
	if n == 0 || n+hs.openWants != hs.open {
		return 0 // no belief begins now, or an older belief is open
	}
	if hs.waiting > 0 {
		locks := h.Beliefs[len(h.Beliefs)-n:]
		held := func(lock string) bool {
			for i := range locks {
				if locks[i].Lock == lock {
					return true
				}
			}
			return false
		}
		seen := 0
		for _, p := range k.procs {
			for _, w := range p.open.waiting {
				if !held(w.Lock) {
					return 0 // a free lock someone waits for
				}
				seen++
			}
			if seen == hs.waiting {
				break
			}
		}
	}
	return n
}

// want returns the want with the given ID in the piece in progress, nil if
// it was handed over with a piece (closed long ago).
func (k *Kernel) want(id int) *Want {
	hs := &k.hs
	if i := id - hs.wants; i >= 0 {
		if i += len(hs.carriedWants); i < len(k.hist.Wants) {
			return &k.hist.Wants[i]
		}
		return nil
	}
	for i, c := range hs.carriedWants {
		if c == id {
			return &k.hist.Wants[i]
		}
	}
	return nil
}

// flush hands the piece in progress to the sink and starts a new one with
// the last carry beliefs and the open wants (see contendedCut) in it. The
// piece gets copies of exactly its records, and the kernel keeps its
// slices for the next piece: a sink that keeps pieces for a while
// (checker.Stream) holds their records, not the slack of slices grown by
// appending, and the kernel's slices stop growing at the largest piece
// (issue 28).
func (k *Kernel) flush(carry int) {
	h := &k.hist
	hs := &k.hs
	nb := len(h.Beliefs) - carry
	p := &History{Attempts: slices.Clone(h.Attempts), Beliefs: slices.Clone(h.Beliefs[:nb]), Sections: slices.Clone(h.Sections),
		KeyLosses: h.KeyLosses, KeyActs: h.KeyActs[:len(h.KeyActs):len(h.KeyActs)], Faults: h.Faults[:len(h.Faults):len(h.Faults)], Roles: h.Roles[:len(h.Roles):len(h.Roles)], Clocks: h.Clocks,
		End: k.now, Since: hs.since, WaitsIn: hs.waitsIn}
	// The wants: the closed ones go with the piece, the open ones stay
	// (in ID order) for the next.
	nextWant := hs.wants + len(h.Wants) - len(hs.carriedWants)
	if hs.openWants == 0 {
		p.Wants = slices.Clone(h.Wants)
		h.Wants = h.Wants[:0]
		hs.carriedWants = hs.carriedWants[:0]
	} else {
		p.Wants = make([]Want, 0, len(h.Wants)-hs.openWants)
		var carried []int
		kept := h.Wants[:0]
		for i := range h.Wants {
			w := h.Wants[i]
			if !w.Open {
				p.Wants = append(p.Wants, w)
				continue
			}
			id := hs.wants + i - len(hs.carriedWants)
			if i < len(hs.carriedWants) {
				id = hs.carriedWants[i]
			}
			carried = append(carried, id)
			kept = append(kept, w)
		}
		h.Wants = kept
		hs.carriedWants = carried
	}
	hs.wants = nextWant
	if hs.waiting > 0 {
		p.WaitsOut = make([]OpenWait, 0, hs.waiting)
		for _, q := range k.procs {
			p.WaitsOut = append(p.WaitsOut, q.open.waiting...)
		}
	}
	hs.since, hs.waitsIn = k.now, p.WaitsOut
	hs.attempts += len(h.Attempts)
	hs.beliefs += nb
	hs.sections += len(h.Sections)
	h.Attempts = h.Attempts[:0]
	h.Beliefs = h.Beliefs[:copy(h.Beliefs, h.Beliefs[nb:])]
	h.Sections = h.Sections[:0]
	h.KeyLosses = nil // rare: most pieces have none; the piece owns them
	hs.pend = hs.pend[:0]
	hs.sink.Piece(p)
}

// heldBySink is the number of records the sink keeps (0 without one).
func (k *Kernel) heldBySink() int {
	if k.hs.sink == nil {
		return 0
	}
	return k.hs.sink.Held()
}
