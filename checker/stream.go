package checker

import (
	"fmt"

	"github.com/locksim/locksim/sim"
)

// Judging a history handed over in pieces (issue 15: a 24-hour Redlock run
// leaves 10 million records). The kernel cuts the history at quiet points
// (sim/stream.go: every want, attempt and belief closed, no wait running
// on, every critical section settled; or, under contention, the instant a
// belief begins with nothing else open, that belief going whole into the
// next piece) and hands each piece to a Stream.
//
// A Stream keeps the pieces as long as they are few (Retain records): a
// run that stays under it (every catalogue scenario, every fuzz run) is
// judged by Check on the whole history, exactly as before. Past it, the
// Stream judges the pieces it holds one after the other and forgets them,
// carrying across pieces only what the properties need (each property's
// PieceJudge, made by Property.Stream):
//
//   - lock safety: nothing. Two overlapping beliefs are never separated by a
//     quiet point, and the pieces are legal iff the whole is (split.go);
//   - resource safety: each resource's value at the cut, the start of the
//     next piece's counter (split.go);
//   - token order: per lock, the first accepted write of the highest token
//     (tokenRule, the rule CheckTokenOrder applies to a whole history);
//   - liveness: the longest wait so far and the clients that waited. A wait
//     never spans a quiet point, so its free stretches lie in its piece; a
//     wait may span a cut under contention (the instant its lock is granted
//     to another client), which then names it with its true start on both
//     sides (History.WaitsOut, WaitsIn): the lock is held from the cut on,
//     so each free stretch lies in one piece, and each piece measures the
//     wait's stretches from its Since (waits, judgeWaits). Its latency is
//     counted by the piece in which it ends. The fault-free windows come
//     from the faults, which are kept whole.
//     A crash that may still be followed by a restart makes the windows
//     after it provisional: pieces are then kept until the restart comes or
//     the run ends.
//
// What it cannot carry is what explains a violation: an explanation may
// reach back into forgotten pieces (the writes a stale read lost, the first
// grant of a duplicated token, the newer token that fenced a write off). So
// a piece that is anything but clean (a violation of any property, a
// porcupine timeout, a history the checker cannot interpret) stops the
// forgetting: if nothing was forgotten yet, the Stream keeps everything and
// Check judges the whole history at the end; if pieces were forgotten,
// Result returns a *NeedWhole error and the caller runs the simulation
// again, keeping the whole history (the run is deterministic: the same seed
// gives the same history). A long clean run is judged in memory linear in
// its largest piece; a long run with a violation costs a second run and
// the whole history, which the memory budget bounds.
type Stream struct {
	opts   Options
	retain int

	kept  []*sim.History // the pieces held, in order
	keptN int            // their records (faults aside)
	// dropped: pieces were judged and forgotten; suspicious: a piece was
	// not clean (why says how), so the whole history decides.
	dropped, suspicious bool
	why                 string

	faults []sim.FaultRecord // every fault so far (the latest piece's)
	end    sim.Time          // the end of the latest piece

	// Carried across forgotten pieces: each property's judge, in registry
	// order, keeps what it needs.
	judges []pieceJudge
	pieces int // pieces judged and forgotten
	// stats adds up the numbers of the pieces forgotten: a piece is
	// counted when it is judged clean and dropped (judgeKept), not when it
	// comes, because a run that forgets nothing is judged whole by Check,
	// which counts its statistics itself (counting each piece as it came
	// too was about 7% of a fuzz run's CPU, issue 28).
	stats statsAcc
}

// pieceJudge is one property's PieceJudge with the property's name.
type pieceJudge struct {
	name string
	PieceJudge
}

// DefaultRetain is the number of records (wants, attempts, beliefs,
// sections) a Stream keeps before it judges and forgets pieces: 1.3 to 2 MB
// of records (56 to 160 bytes each), more than six times what the largest
// catalogue scenario leaves (redisson-eviction-noeviction, 2,444 records),
// so those and the fuzz runs made from them are judged whole. It bounds a
// long run's memory (issue 28: at 1<<17 the window was 11 to 21 MB of the
// 24-hour contended run's live heap, five times that with simrun's GOGC
// 400); a longer run that then violates a property is run again whole.
const DefaultRetain = 1 << 14

// NewStream returns a Stream that judges with opts and keeps up to retain
// records before it starts forgetting (DefaultRetain if retain < 0; 0
// forgets every piece as soon as it comes, which tests use).
func NewStream(opts Options, retain int) *Stream {
	if retain < 0 {
		retain = DefaultRetain
	}
	st := &Stream{opts: opts, retain: retain}
	for _, p := range registry {
		st.judges = append(st.judges, pieceJudge{p.About().Name, p.Stream(opts)})
	}
	return st
}

// NeedWhole is the error of Stream.Result when pieces were forgotten and a
// later one needs them: run again keeping the whole history.
type NeedWhole struct {
	Why string
}

func (e *NeedWhole) Error() string {
	return "checker: the streamed history needs judging whole: " + e.Why
}

// Held is the number of records the Stream keeps (sim.HistorySink).
func (s *Stream) Held() int { return s.keptN }

// Piece receives the next piece of the history (sim.HistorySink).
func (s *Stream) Piece(p *sim.History) {
	s.faults, s.end = p.Faults, p.End
	if s.dropped && s.suspicious {
		return // the run will be judged again, whole
	}
	s.kept = append(s.kept, p)
	s.keptN += records(p)
	// Once pieces were forgotten, the whole history is gone: keeping more
	// would only hold memory (a later violation means running again), so
	// every piece is judged as it comes.
	if (s.keptN > s.retain || s.dropped) && !s.suspicious && !s.crashPending() {
		s.judgeKept()
	}
}

// records counts the records of h that pieces split: faults aside.
func records(h *sim.History) int {
	return len(h.Wants) + len(h.Attempts) + len(h.Beliefs) + len(h.Sections) + len(h.KeyLosses)
}

// judgeKept judges the pieces held, in order, and forgets them if they are
// clean.
func (s *Stream) judgeKept() {
	for _, p := range s.kept {
		if !s.clean(p) {
			s.suspicious = true
			if s.dropped {
				s.kept, s.keptN = nil, 0
			}
			return
		}
	}
	for _, p := range s.kept {
		s.stats.add(p)
	}
	s.pieces += len(s.kept)
	s.kept, s.keptN, s.dropped = nil, 0, true
}

// crashPending reports whether a crash recorded so far may still be
// followed by the restart that would end its span (activeSpans): until
// then the fault-free windows after it are not known.
func (s *Stream) crashPending() bool {
	var later *laterFaults
	for i, f := range s.faults {
		if f.Liveness == sim.LiveCrash && f.Until == 0 {
			if later == nil {
				later = newLaterFaults(s.faults)
			}
			if _, ok := later.restart(i, f); !ok {
				return true
			}
		}
	}
	return false
}

// clean judges piece p with what was carried from the pieces before it,
// updates what is carried, and reports whether every property holds on it
// without a word of explanation needed.
func (s *Stream) clean(p *sim.History) bool {
	// The faults known now: later ones only end earlier spans, never
	// inside p (see Stream).
	h := *p
	h.Faults = s.faults
	fail := func(format string, args ...any) bool {
		s.why = fmt.Sprintf("piece ending at %s: ", p.End) + fmt.Sprintf(format, args...)
		return false
	}
	if err := ValidateHistory(&h); err != nil {
		return fail("%v", err)
	}
	for _, j := range s.judges {
		if ok, why := j.Piece(&h); !ok {
			return fail("%s", why)
		}
	}
	return true
}

// Result judges what is left and returns the verdicts, with the whole
// history when nothing was forgotten (nil otherwise). Call it once, after
// the last piece (sim.Kernel.Finish hands it over). A *NeedWhole error
// means the run must be judged again, whole.
func (s *Stream) Result() (Result, *sim.History, error) {
	if !s.dropped {
		whole := concat(s.kept, s.faults, s.end)
		return Check(whole, s.opts), whole, nil
	}
	if !s.suspicious {
		s.judgeKept()
	}
	if s.suspicious {
		return Result{}, nil, &NeedWhole{Why: s.why}
	}
	h := &sim.History{Faults: s.faults, End: s.end}
	var r Result
	for _, j := range s.judges {
		r.add(j.name, j.Final(h))
	}
	r.Stats = s.stats.stats()
	r.Vacuous = Vacuity(r.Verdicts, r.Stats)
	return r, nil, nil
}

// Pieces is the number of pieces judged and forgotten.
func (s *Stream) Pieces() int { return s.pieces }

// concat joins consecutive pieces into the history they were cut from.
func concat(ps []*sim.History, faults []sim.FaultRecord, end sim.Time) *sim.History {
	switch len(ps) {
	case 0:
		return &sim.History{Faults: faults, End: end}
	case 1:
		return ps[0]
	}
	// From the last piece, so that a record kind the kernel does not
	// split (it keeps those until the end of the run) comes along whole.
	last := *ps[len(ps)-1]
	h := &last
	h.Faults, h.End = faults, end
	h.Since, h.WaitsIn = ps[0].Since, ps[0].WaitsIn
	var nw, na, nb, ns, nk int
	for _, p := range ps {
		nw, na, nb, ns = nw+len(p.Wants), na+len(p.Attempts), nb+len(p.Beliefs), ns+len(p.Sections)
		nk += len(p.KeyLosses)
	}
	h.Wants = make([]sim.Want, 0, nw)
	h.Attempts = make([]sim.Attempt, 0, na)
	h.Beliefs = make([]sim.Belief, 0, nb)
	h.Sections = make([]sim.Section, 0, ns)
	h.KeyLosses = make([]sim.KeyLoss, 0, nk)
	for _, p := range ps {
		h.Wants = append(h.Wants, p.Wants...)
		h.Attempts = append(h.Attempts, p.Attempts...)
		h.Beliefs = append(h.Beliefs, p.Beliefs...)
		h.Sections = append(h.Sections, p.Sections...)
		h.KeyLosses = append(h.KeyLosses, p.KeyLosses...)
	}
	return h
}
