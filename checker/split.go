package checker

import (
	"fmt"
	"html"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/locksim/locksim/sim"
)

// Porcupine's search remembers, for every state it reaches, a bitset of the
// operations linearized so far (checker.go, cacheEntry{linearized.clone(),
// ...}): on a history of n operations that is n bitsets of n bits, memory
// and time in n^2, 2.5 GB for 100k lock operations (issue 15). The checker
// therefore cuts each lock's history at quiet points and hands porcupine one
// piece at a time, so that porcupine's memory is bounded by the largest
// piece, not by the run.
//
// A quiet point of a lock is a time t at which no belief period is open:
// every belief that started before t ended strictly before t, and every
// later belief starts strictly after. A quiet point of a resource is a time
// at which no checked critical section is in flight: every section read
// before t had its write decided strictly before t. Cutting there is exact,
// not an approximation: a violation cannot span a cut.
//
// Lock safety (LockModel). Write P for the operations of the beliefs before
// the cut and Q for those after; M is the latest end in P, and every belief
// of Q starts after M.
//   - If the whole history is legal, so is each piece from a free lock: a
//     legal sequence of the mutex is a series of pairs (acquire g, release
//     g), because an acquire needs a free lock and a release needs its own
//     grant to hold it; keeping the pairs of some grants leaves such a
//     series, and real-time order among the kept operations is unchanged.
//   - If P and Q are each legal from a free lock, so is P's linearization
//     followed by Q's: P's sequence ends with the lock free (every grant it
//     acquires it releases), and no real-time order puts an operation of Q
//     before one of P, since every operation of P is called by M (an
//     acquire is called at the attempt's start, before its belief starts;
//     a release at its belief's end) and every operation of Q returns after
//     M (an acquire returns when its belief starts, a release when it ends).
//     NB: an attempt may start before the cut (a client waiting for the
//     lock while another holds it): its acquire is still in Q, whose
//     linearization may place it after the cut, as the whole one can.
//   - The kernel also cuts at the instant t a belief begins when no
//     attempt and no older belief is open (sim/stream.go, contendedCut:
//     contention never comes to a quiet point; open wants and waits are
//     carried too, which lock safety does not read); that belief goes
//     whole into Q, and every other belief of Q comes of an attempt that
//     started at t or later. Every belief of P
//     ended by t and every belief of Q starts at t or later, so the same
//     holds with M <= t: P's lock ends free and Q starts from a free lock
//     whose first grant is the carried belief (a release of P at t and the
//     carried acquire returning at t are concurrent: neither returns
//     before the other is called, so no real-time order is lost).
//
// So the history is legal iff every piece is: the first illegal piece makes
// the verdict Violated, and a piece that times out makes it Unknown (unless
// another piece is illegal, which decides). Only overlaps can make a lock
// history illegal, and two overlapping beliefs are never separated by a
// quiet point.
//
// Resource safety (ResourceModel). Every operation of P returns (its write
// is decided) before every operation of Q is called (its read is served), so
// every linearization of the whole history is one of P followed by one of
// Q, and the counter's value at the cut is the same in all of them: the
// value at the start of P plus the number of P's accepted writes, whatever
// their order. Q is checked from that value (the model's Init), and the
// history is legal iff P is legal from its start value and Q from the
// carried one.
//
// Pieces smaller than pieceMinOps operations are merged with the next (the
// union of adjacent pieces is itself cut at quiet points), which amortizes
// porcupine's set-up cost per call.
var pieceMinOps = 256

// pieceCheck is the outcome of a check piece by piece, with what a
// visualization of the first illegal piece needs.
type pieceCheck struct {
	verdict Verdict
	// Set when verdict is Violated and the check was verbose: porcupine's
	// information on the illegal piece and the model it was checked with.
	info  porcupine.LinearizationInfo
	model porcupine.Model
	// The illegal piece: its number (from 1) among count pieces and the
	// true-time span of its operations.
	index, count int
	from, to     sim.Time
}

// pieceNote is the annotation that says which piece a visualization shows.
func (p pieceCheck) pieceNote() porcupine.Annotation {
	return porcupine.Annotation{
		Tag:         "piece",
		Start:       int64(p.from),
		End:         int64(p.to),
		Description: fmt.Sprintf("piece %d of %d", p.index, p.count),
		Details: html.EscapeString(fmt.Sprintf("The history was checked in %d pieces cut at quiet points (no belief open, no critical section in flight); this is piece %d, from %s to %s, which contains the violation. The other pieces are not shown.",
			p.count, p.index, p.from, p.to)),
		BackgroundColor: "#d0e0ff",
	}
}

// checkPieces checks pieces [cuts[i], cuts[i+1]) of a sorted list of n
// items one by one with porcupine. ops builds the operations of a piece:
// plain, for the fast model, or with metadata and value inputs and outputs
// for the full model a visualization describes. model returns the two
// models to check a piece with; it is called once per piece, in piece
// order, so it may carry state from one piece to the next.
func checkPieces(n int, cuts []int, timeout time.Duration, verbose bool,
	ops func(from, to int, meta bool) []porcupine.Operation,
	model func(from, to int) (fast, full porcupine.Model)) pieceCheck {
	out := pieceCheck{verdict: Holds, count: len(cuts)}
	for i, from := range cuts {
		to := n
		if i+1 < len(cuts) {
			to = cuts[i+1]
		}
		fast, full := model(from, to)
		res, _ := linearize(fast, ops(from, to, false), timeout, false)
		switch verdictOf(res) {
		case Violated:
			out.verdict, out.index = Violated, i+1
			if verbose {
				// Again, with the metadata and the partial
				// linearizations a visualization shows: only this piece.
				ops := ops(from, to, true)
				out.from, out.to = spanOf(ops)
				res, info := linearize(full, ops, timeout, true)
				if verdictOf(res) == Violated {
					out.info, out.model = info, full
				} else {
					out.index = 0 // no visualization rather than a wrong one
				}
			}
			return out
		case Unknown:
			out.verdict = Unknown
		}
	}
	return out
}

// spanOf returns the earliest call and latest return of ops.
func spanOf(ops []porcupine.Operation) (sim.Time, sim.Time) {
	if len(ops) == 0 {
		return 0, 0
	}
	from, to := ops[0].Call, ops[0].Return
	for _, op := range ops {
		from, to = min(from, op.Call), max(to, op.Return)
	}
	return sim.Time(from), sim.Time(to)
}

// lockCuts returns the start indices of the pieces of bs, sorted as by
// sortedBeliefs: a new piece begins at every new lock and at a quiet point
// (the belief starts strictly after every earlier belief of its lock ended)
// once the current piece holds at least minOps operations (two per belief).
func lockCuts(bs []*sim.Belief, runEnd sim.Time, minOps int) []int {
	var cuts []int
	var maxEnd sim.Time
	for i, b := range bs {
		switch {
		case i == 0 || b.Lock != bs[i-1].Lock:
			cuts = append(cuts, i)
			maxEnd = b.Start
		case b.Start > maxEnd && 2*(i-cuts[len(cuts)-1]) >= minOps:
			cuts = append(cuts, i)
		}
		maxEnd = max(maxEnd, beliefEnd(*b, runEnd))
	}
	return cuts
}

// resourceCuts returns the start indices of the pieces of secs, sorted as by
// checkedSections: a new piece begins at every new lock and at a quiet point
// (the section's read is served strictly after every earlier section of its
// resource had its write decided) once the piece holds at least minOps
// operations.
func resourceCuts(secs []*sim.Section, minOps int) []int {
	var cuts []int
	var maxEnd sim.Time
	for i, s := range secs {
		switch {
		case i == 0 || s.Lock != secs[i-1].Lock:
			cuts = append(cuts, i)
			maxEnd = s.ReadAt
		case s.ReadAt > maxEnd && i-cuts[len(cuts)-1] >= minOps:
			cuts = append(cuts, i)
		}
		maxEnd = max(maxEnd, s.ReadAt, s.WriteAt)
	}
	return cuts
}
