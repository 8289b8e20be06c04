package checker

import (
	"fmt"
	"strings"

	"github.com/locksim/locksim/sim"
)

// Role changes (sim.RoleChange) are causes the explanations name: a
// replica promoted to master without the lock key lets a second holder in;
// one promoted with an older token counter hands out tokens again; and a
// former master that still accepted writes after the promotion is split
// brain, two masters at once.

// promotionClause names the latest promotion before to, with what the
// promoted node lacked: key (noun names it: "lock key", "token counter
// key"), and for a counter its value: `R was promoted to master at
// 12.300s (REPLICAOF NO ONE from s1), without the lock key "lock", while
// its former master M still accepted writes (the last at 13.100s): two
// masters`. It returns "" when no promotion came before to. The latest
// only: an earlier one was followed by it, and the node the clients use
// now is the latest's. Simplification: the promoted node's keys are taken
// as it held them at the promotion (an expired key a replica had not
// deleted counts as held).
//
// For a token counter (counter), a promoted node whose counter is below a
// token already issued (or that lacks the counter) hands that token out
// again: the token counter went backwards, which the clause says.
func promotionClause(h *sim.History, key, noun string, counter bool, to sim.Time) string {
	i := -1
	for j, r := range h.Roles {
		if r.At >= to {
			break
		}
		if r.Master && !r.RunEnd {
			i = j
		}
	}
	if i < 0 {
		return ""
	}
	r := h.Roles[i]
	s := fmt.Sprintf("%s was promoted to master at %s (%s)", r.Node, fmtAt(r.At, 3), r.Cause)
	held, v, known := r.HeldBefore(key)
	issued, any := int64(0), false
	if counter {
		issued, any = highestToken(h, strings.TrimSuffix(key, ":token"), r.At)
	}
	switch {
	case !known:
	case !held:
		s += fmt.Sprintf(", without the %s %q", noun, key)
		if any && issued > 0 {
			s += fmt.Sprintf(": the token counter went backwards from %d to 0", issued)
		}
	case counter && v.IsInt:
		s += fmt.Sprintf(", with the %s %q at %d", noun, key, v.Int)
		if any && issued > v.Int {
			s += fmt.Sprintf(", below token %d already issued: the token counter went backwards", issued)
		}
	}
	if w, ok := splitBrain(h, r); ok {
		s += fmt.Sprintf(", while its former master %s still accepted writes (the last at %s): two masters", r.Other, fmtAt(w, 3))
	}
	return s
}

// splitBrain reports whether promotion p's former master accepted a write
// after p: its next demotion says when it last did, or the record of the
// run's end (sim.RoleChange.RunEnd) for one never demoted.
func splitBrain(h *sim.History, p sim.RoleChange) (sim.Time, bool) {
	if p.Other == "" {
		return 0, false
	}
	for _, r := range h.Roles {
		if (!r.Master || r.RunEnd) && r.Node == p.Other && r.At >= p.At {
			return r.LastWrite, r.LastWrite > p.At
		}
	}
	return 0, false
}

// joinCauses joins non-empty clauses with "; ".
func joinCauses(cs ...string) string {
	out := ""
	for _, c := range cs {
		if c == "" {
			continue
		}
		if out != "" {
			out += "; "
		}
		out += c
	}
	return out
}

// highestToken returns the highest fencing token the clients of lock had
// been granted before at (from the beliefs: a token is issued with its
// grant), and whether any was.
func highestToken(h *sim.History, lock string, at sim.Time) (int64, bool) {
	var hi int64
	found := false
	for _, b := range h.Beliefs {
		if b.Lock == lock && b.HasToken && b.Start < at && (!found || b.Token > hi) {
			hi, found = b.Token, true
		}
	}
	return hi, found
}
