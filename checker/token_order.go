package checker

import (
	"fmt"
	"sort"

	"github.com/locksim/locksim/sim"
)

// NotUsed means there was nothing of the kind to judge: as the token-order
// verdict, no write carried a fencing token, so there was no order to keep;
// as the lock-safety verdict, no client took a lock (a history of stock
// counters only, Result.judgeCounters).
const NotUsed Verdict = "not-used"

// KindTokenOrder is the kind of a token-order violation.
const KindTokenOrder = "token-order"

// CheckTokenOrder judges the fencing order of h: per lock, the protected
// resource must never accept a write whose token is lower than the token of
// a write it accepted before (Kleppmann 2016, "Making the lock safe with
// fencing": the storage server "remembers that it has already processed a
// write with a higher token number, and so it rejects the request with
// token 33"), nor accept the writes of two different critical sections with
// the same token: a token names one grant of the lock, so two grants with
// one token (an INCR counter that restarted empty, a zxid reused after a
// failover) are indistinguishable to the resource.
//
// Only accepted writes are judged, in the order the storage node applied
// them (WriteAt, then section ID); rejected writes are fencing doing its
// job. Two sections of the same belief period (one grant) may share a
// token. The verdict is NotUsed when no accepted write carried a token,
// Violated with one violation per offending write, and Holds otherwise.
func CheckTokenOrder(h *sim.History) (Verdict, []Violation) {
	h = orEmpty(h)
	var writes []*sim.Section // pointers into h: a word per write
	for i := range h.Sections {
		if x := &h.Sections[i]; x.Written && x.Outcome == sim.WriteAccepted && x.HasToken {
			writes = append(writes, x)
		}
	}
	if len(writes) == 0 {
		return NotUsed, nil
	}
	sort.SliceStable(writes, func(i, j int) bool {
		a, b := writes[i], writes[j]
		if a.Lock != b.Lock {
			return a.Lock < b.Lock
		}
		if a.WriteAt != b.WriteAt {
			return a.WriteAt < b.WriteAt
		}
		return a.ID < b.ID
	})
	// The beliefs by ID, built only to explain a violation.
	var beliefs map[int]sim.Belief
	index := func() map[int]sim.Belief {
		if beliefs == nil {
			beliefs = make(map[int]sim.Belief, len(h.Beliefs))
			for _, b := range h.Beliefs {
				beliefs[b.ID] = b
			}
		}
		return beliefs
	}
	var vs []Violation
	for i := 0; i < len(writes); {
		j := i
		for j < len(writes) && writes[j].Lock == writes[i].Lock {
			j++
		}
		vs = append(vs, tokenViolations(h, writes[i:j], index)...)
		i = j
	}
	if len(vs) == 0 {
		return Holds, nil
	}
	sortViolations(vs)
	return Violated, vs
}

// tokenViolations judges the accepted writes of one lock, in the order the
// resource applied them.
func tokenViolations(h *sim.History, writes []*sim.Section, beliefs func() map[int]sim.Belief) []Violation {
	var vs []Violation
	var highest *sim.Section            // the accepted write with the highest token so far
	byToken := map[int64]*sim.Section{} // the first write of each token
	for k, w := range writes {
		if p, ok := byToken[w.Token]; ok && !sameGrant(*p, *w) {
			vs = append(vs, duplicateToken(h, *p, *w, beliefs()))
		} else if k > 0 && w.Token < highest.Token {
			vs = append(vs, lowerToken(h, *highest, *w, beliefs()))
		}
		if _, ok := byToken[w.Token]; !ok {
			byToken[w.Token] = w
		}
		if k == 0 || w.Token > highest.Token {
			highest = w
		}
	}
	return vs
}

// sameGrant reports whether two sections ran under the same belief period.
func sameGrant(a, b sim.Section) bool {
	return a.Client == b.Client && a.BeliefID >= 0 && a.BeliefID == b.BeliefID
}

// grantedAt says when the section's token was granted, from its belief.
func grantedAt(x sim.Section, beliefs map[int]sim.Belief) (sim.Time, bool) {
	if x.BeliefID < 0 {
		return 0, false
	}
	b, ok := beliefs[x.BeliefID]
	if !ok || b.Client != x.Client {
		return 0, false
	}
	return b.Start, true
}

// duplicateToken explains two accepted writes of different grants with one
// token.
func duplicateToken(h *sim.History, a, b sim.Section, beliefs map[int]sim.Belief) Violation {
	v := Violation{
		Kind:    KindTokenOrder,
		Lock:    b.Lock,
		Clients: uniqueInOrder([]string{a.Client, b.Client}),
		Windows: []Window{{Start: a.WriteAt, End: b.WriteAt}},
	}
	who := fmt.Sprintf("%s and %s", a.Client, b.Client)
	if a.Client == b.Client {
		who = a.Client + " twice"
	}
	text := fmt.Sprintf("token %d was issued to %s", a.Token, who)
	ga, okA := grantedAt(a, beliefs)
	gb, okB := grantedAt(b, beliefs)
	if okA && okB {
		text += fmt.Sprintf(" (with the locks acquired at %s and %s)", ga, gb)
	}
	text += fmt.Sprintf(" and the resource accepted both writes, at %s and %s", a.WriteAt, b.WriteAt)
	from, to := a.WriteAt, b.WriteAt
	if okA && okB {
		from, to = minTime(ga, gb), maxTime(ga, gb)
	}
	v.Explanation = text + "; " + tokenCause(h, v.Clients, from, to, fmt.Sprintf("the second grant of token %d", a.Token)) + "."
	return v
}

// lowerToken explains an accepted write w whose token is lower than that of
// hi, accepted before it.
func lowerToken(h *sim.History, hi, w sim.Section, beliefs map[int]sim.Belief) Violation {
	v := Violation{
		Kind:    KindTokenOrder,
		Lock:    w.Lock,
		Clients: uniqueInOrder([]string{w.Client, hi.Client}),
		Windows: []Window{{Start: hi.WriteAt, End: w.WriteAt}},
	}
	text := fmt.Sprintf("the resource accepted %s's write with token %d at %s after it had accepted %s's write with token %d at %s",
		w.Client, w.Token, w.WriteAt, hi.Client, hi.Token, hi.WriteAt)
	from := hi.WriteAt
	if g, ok := grantedAt(w, beliefs); ok {
		from = minTime(from, g)
	}
	v.Explanation = text + "; " + tokenCause(h, v.Clients, from, w.WriteAt, "the lower token's acceptance") + "."
	return v
}

// tokenCause names the faults that can explain a broken token order: those
// between from and to first (a counter node that restarted empty, a
// failover), else the latest before.
func tokenCause(h *sim.History, clients []string, from, to sim.Time, what string) string {
	return faultClause(h.Faults, clients, from, to, what)
}
