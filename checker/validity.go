package checker

import (
	"fmt"

	"github.com/locksim/locksim/sim"
)

// validityClause names the holders of the overlaps g that went on
// believing past the validity their algorithm computed (sim.Validity:
// Redlock's ttl − elapsed − drift): the lock safety check counts a holder
// until its belief ends, at its next check, and that may be well after its
// validity ran out with no fault at all (a hold as long as the TTL). It
// returns "" when no holder of g was past its validity during its overlap:
//
//	c1's validity ended at 5.061s (ttl 5s − 8ms elapsed − 52ms drift, the
//	drift factor 0.01 × ttl + 2ms, as redlock-rb computes it) but it kept
//	believing until 5.120s without re-checking, when its next check found
//	it passed
func validityClause(g []overlap, digits int) string {
	var items []string
	seen := map[int]bool{}
	add := func(b sim.Belief, bEnd, overlapEnd sim.Time) {
		v := b.Validity
		if seen[b.ID] || !v.Computed() || v.Until() >= overlapEnd {
			return
		}
		seen[b.ID] = true
		if len(items) == maxListed {
			items = append(items, "more holders past their validity")
			return
		}
		items = append(items, validityText(b, bEnd, digits))
	}
	for _, o := range g {
		add(o.a, o.aEnd, o.end)
		add(o.b, o.bEnd, o.end)
	}
	return joinAnd(items)
}

// validityText tells how one holder outlived its validity.
func validityText(b sim.Belief, end sim.Time, digits int) string {
	v := b.Validity
	d := digits
	if x := digitsFor([2]sim.Time{v.Until(), end}); x > d {
		d = x
	}
	whose := b.Client + "'s validity"
	if v.Extended {
		whose += fmt.Sprintf(", as its extension at %s recomputed it,", fmtAt(v.At, d))
	}
	terms := fmt.Sprintf("ttl %s − %s elapsed − %s drift", fmtDuration(v.TTL), fmtDuration(v.Elapsed), fmtDuration(v.Drift))
	var s string
	if v.Left() <= 0 {
		// Computed and ignored (validity_check: false): it was over
		// before the client concluded anything.
		s = fmt.Sprintf("%s was already over when it computed it at %s (%s = %s, %s) but it kept believing until %s",
			whose, fmtAt(v.At, d), terms, "−"+fmtDuration(-v.Left()), v.Rule, fmtAt(end, d))
	} else {
		s = fmt.Sprintf("%s ended at %s (%s, %s) but it kept believing until %s",
			whose, fmtAt(v.Until(), d), terms, v.Rule, fmtAt(end, d))
	}
	switch {
	case !v.Checked:
		return s + ": its algorithm does not check the validity (validity_check: false)"
	case b.Reason == sim.EndExpired:
		return s + " without re-checking, when its next check found it passed"
	}
	return s + " without finding it passed"
}
