package checker

import (
	"fmt"
	"sort"

	"github.com/locksim/locksim/sim"
)

// NotUsed means there was nothing of the kind to judge: as the token-order
// verdict, no write carried a fencing token, so there was no order to keep;
// as the lock-safety verdict, no client took a lock (a history of stock
// counters only, countersOnly).
const NotUsed Verdict = "not-used"

// TokenOrder is the name of the token-order property.
const TokenOrder = "token_order"

// KindTokenOrder is the kind of a token-order violation.
const KindTokenOrder = "token-order"

// tokenOrder is the fencing order, judged by CheckTokenOrder.
type tokenOrder struct{}

func (tokenOrder) About() About {
	return About{
		Name: TokenOrder, Title: "token order", Kind: KindTokenOrder, Short: "token order",
		Explains: "the resource never accepted a lower fencing token after a higher one, nor one token from two grants (not-used: no write carried a token)",
		Doc: "Fencing order: `violated` when the resource accepted a write whose fencing token is lower than that of a write it accepted before (Kleppmann 2016, \"Making the lock safe with fencing\": the storage \"rejects the request with token 33\" after 34), or accepted the writes of two different critical sections with the same token (an INCR counter that restarted empty hands out token 1 twice); sections of one grant may share its token." +
			"\n\n`not-used` when no accepted write carried a token." +
			"\n\nThe explanation names who got which token, a server's loss of the token counter key `<key>:token` in between (an eviction, an expiry, a restart without persistence), a replica promoted without it or with an older value than a token already issued, and the faults in between: \"A evicted the token counter key `lock:token` at 3.000s (...), and the tokens counted from the start again\"; \"token 1 was issued to c1 and c2 ... the second grant of token 1 began 1.8s after A restarted at 3.200s\". A fenced resource can keep resource safety while the order is broken, and a lost update can happen with tokens in order, so it is a verdict of its own.",
		Expect: []Verdict{Holds, Violated, NotUsed},
		// A campaign targets it when asked (simrun fuzz --check
		// token-order, FuzzUserOptions.Checks): a lower token accepted
		// after a higher one is a finding like any other.
		Fuzz: FuzzOnRequest,
	}
}

func (tokenOrder) Judge(h *sim.History, _ Options) Judgement {
	v, vs := CheckTokenOrder(h)
	return Judgement{Verdict: v, Violations: vs}
}

// Stream carries, per lock, the first accepted write of the highest token
// (tokenRule): a later write is judged by the same rule whatever came
// before.
func (tokenOrder) Stream(Options) PieceJudge { return &tokenPieces{locks: map[string]*tokenRule{}} }

type tokenPieces struct {
	locks map[string]*tokenRule
	used  bool // some accepted write carried a token
}

func (t *tokenPieces) Piece(p *sim.History) (bool, string) {
	ws := tokenWrites(p)
	for i := 0; i < len(ws); {
		j := lockEnd(ws, i)
		rule := t.locks[ws[i].Lock]
		if rule == nil {
			rule = &tokenRule{}
			t.locks[ws[i].Lock] = rule
		}
		for _, w := range ws[i:j] {
			t.used = true
			if !rule.accept(w) {
				return false, "token order violated"
			}
		}
		rule.own()
		i = j
	}
	return true, ""
}

func (t *tokenPieces) Final(*sim.History) Judgement {
	if !t.used {
		return Judgement{Verdict: NotUsed}
	}
	return Judgement{Verdict: Holds}
}

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
	writes := tokenWrites(h)
	if len(writes) == 0 {
		return NotUsed, nil
	}
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
		j := lockEnd(writes, i)
		var rule tokenRule
		byToken := map[int64]*sim.Section{} // the first write of each token
		for _, w := range writes[i:j] {
			if !rule.accept(w) {
				if p, ok := byToken[w.Token]; ok && !sameGrant(*p, *w) {
					vs = append(vs, duplicateToken(h, *p, *w, index()))
				} else {
					vs = append(vs, lowerToken(h, *rule.highest, *w, index()))
				}
			}
			if _, ok := byToken[w.Token]; !ok {
				byToken[w.Token] = w
			}
		}
		i = j
	}
	if len(vs) == 0 {
		return Holds, nil
	}
	sortViolations(vs)
	return Violated, vs
}

// tokenWrites returns the accepted writes of h that carried a token, in
// the order the storage node applied them per lock: pointers into h.
func tokenWrites(h *sim.History) []*sim.Section {
	var writes []*sim.Section
	for i := range h.Sections {
		if x := &h.Sections[i]; x.Written && x.Outcome == sim.WriteAccepted && x.HasToken {
			writes = append(writes, x)
		}
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
	return writes
}

// lockEnd returns the end of the run of writes of ws[i]'s lock (ws is
// sorted by lock).
func lockEnd(ws []*sim.Section, i int) int {
	j := i
	for j < len(ws) && ws[j].Lock == ws[i].Lock {
		j++
	}
	return j
}

// tokenRule is the token-order rule for one lock, written once for the
// whole history (CheckTokenOrder) and for pieces (Stream). It keeps the
// first accepted write of the highest token so far: a later write is in
// order iff
// its token is higher, or equal and of the same grant; any other is a
// violation, whatever came before (a lower token is below the highest, and
// an equal one of another grant duplicates it).
type tokenRule struct {
	highest *sim.Section // nil before the first write
}

// accept judges the next accepted write w of the lock and reports whether
// it keeps the order.
func (r *tokenRule) accept(w *sim.Section) bool {
	switch {
	case r.highest == nil || w.Token > r.highest.Token:
		r.highest = w
		return true
	case w.Token == r.highest.Token && sameGrant(*r.highest, *w):
		return true
	}
	return false
}

// own makes the rule keep a copy of the highest write, not a pointer into
// the piece it came from, so that the piece can be forgotten.
func (r *tokenRule) own() {
	if r.highest != nil {
		cp := *r.highest
		r.highest = &cp
	}
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
		d := digitsFor([2]sim.Time{ga, gb})
		text += fmt.Sprintf(" (with the locks acquired at %s and %s)", fmtAt(ga, d), fmtAt(gb, d))
	}
	d := digitsFor([2]sim.Time{a.WriteAt, b.WriteAt})
	text += fmt.Sprintf(" and the resource accepted both writes, at %s and %s", fmtAt(a.WriteAt, d), fmtAt(b.WriteAt, d))
	from, to := a.WriteAt, b.WriteAt
	if okA && okB {
		from, to = minTime(ga, gb), maxTime(ga, gb)
	}
	// The counter lost between the two grants handed the token out again.
	v.Explanation = text + "; " + tokenCause(h, b.Lock, v.Clients, from, to, from, to, fmt.Sprintf("the second grant of token %d", a.Token)) + "."
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
	// The counter lost after the higher token's grant and before the lower
	// one's handed out the lower token (without beliefs to date the
	// grants: any loss before the lower token's write).
	lossFrom, lossTo := sim.Time(0), w.WriteAt
	if g, ok := grantedAt(w, beliefs); ok {
		from = minTime(from, g)
		lossTo = g
	}
	if g, ok := grantedAt(hi, beliefs); ok {
		lossFrom = g
	}
	v.Explanation = text + "; " + tokenCause(h, w.Lock, v.Clients, from, w.WriteAt, lossFrom, lossTo, "the lower token's acceptance") + "."
	return v
}

// tokenCause names what can explain a broken token order: a server's loss
// of the lock's token counter key between lossFrom and lossTo (an
// eviction, an expiry: the counter counted from the start again), then the
// faults between from and to (a counter node that restarted empty, a
// failover), else the latest before.
func tokenCause(h *sim.History, lock string, clients []string, from, to, lossFrom, lossTo sim.Time, what string) string {
	promo := promotionClause(h, tokenCounterKey(lock), "token counter key", true, lossTo)
	return causes(what, joinCauses(counterLossClause(h, lock, lossFrom, lossTo), promo), faultClause(h.Faults, clients, from, to, what), "")
}
