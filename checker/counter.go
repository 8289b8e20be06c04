package checker

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/locksim/locksim/sim"
)

// Stock counters (issue 13's flash sale): the resource is a counter kept in
// Redis itself, sold from by clients that take no lock. Resource safety
// there means no lost update and no overselling, judged from the history's
// Counter operations alone (CheckCounters takes nothing else from the
// history but its faults, for the explanations), so that it can run per key
// on any piece of a history.
//
// The model (porcupine, shared reference porcupine.md Model 2 turned to a
// decrement): the state is the stock's value. The load of the declared stock
// sets it (before it the key is missing, which reads as 0, as DECR counts
// it: R 7.2.4 src/object.c:879-880). A purchase that observed v is legal iff
// the state is v, and a sale applies its decrement there: get-set and watch
// observe the GET reply and set v-1; DECR observes its reply r, so the state
// was r+1 and becomes r, sold or not (a sold-out DECR takes the stock below
// zero); the stock script's reply r >= 0 is a sale from r+1, and its -1
// (nothing sold) needs a stock of 0 or less. A purchase that wrote nothing, or whose write the server refused,
// changes nothing but must still have seen the state. A read must equal the
// state.
//
// Unknown outcomes (the write was sent and no reply came: a timeout, a
// connection that ended, a client that crashed) need porcupine's
// NondeterministicModel: the operation returns at infinity (porcupine issue
// #8's advice) and leads both to the state with its effect and to the state
// without it. Each such operation doubles the search on an illegal history
// (the reference's timing table: 16 of them cost seconds), so the check uses
// the deterministic model whenever a key has none, and scenarios keep them
// few.
//
// The times are the client's: Call when it sent the operation's first
// command, Return when it had the final reply. A real client knows no more
// (the twin runs record the same), and the interval contains the moment the
// server applied the operation, which is all linearizability needs.
//
// Simplifications: a missing key reads as 0 (the model does not tell a
// deleted stock from an empty one); a watch purchase is judged at its last
// attempt (earlier attempts whose EXEC answered null changed nothing).

// The input of a counter operation is its record, a *sim.CounterOp: boxing
// a pointer allocates nothing, boxing a struct around it would, once per
// operation.

// counterOut is unused by the model (everything is in the record); porcupine
// wants a comparable value.
type counterOut struct{}

// counterSteps returns the states operation op can lead to from state: none
// if it is illegal there. They are kept in next, so that a step allocates
// nothing (the sequential fast path steps every operation).
func counterSteps(state int64, op *sim.CounterOp, next *[2]int64) []int64 {
	unknown := op.Wrote && !op.Known
	switch op.Kind {
	case sim.CounterLoad:
		switch {
		case unknown:
			return append(next[:0], state, op.Observed)
		case op.Known && op.Why == "":
			return append(next[:0], op.Observed)
		}
		return append(next[:0], state) // the server refused the SET
	case sim.CounterRead:
		if op.Observed == state {
			return append(next[:0], state)
		}
		return nil
	}
	if op.Method == "script" {
		// The stock script decrements only a positive stock and answers
		// the new stock, or -1 without writing.
		switch {
		case unknown:
			if state > 0 {
				return append(next[:0], state, state-1)
			}
			return append(next[:0], state)
		case op.HasObserved && op.Sold:
			if state == op.Observed+1 {
				return append(next[:0], op.Observed)
			}
			return nil
		case op.HasObserved:
			if state <= 0 {
				return append(next[:0], state)
			}
			return nil
		}
		return append(next[:0], state) // refused: no effect
	}
	if op.Method == "decr" {
		switch {
		case unknown:
			return append(next[:0], state, state-1)
		case op.HasObserved:
			if state == op.Observed+1 {
				return append(next[:0], op.Observed)
			}
			return nil
		}
		return append(next[:0], state) // refused: no effect
	}
	// get-set, watch (and a future script): the observation is the GET.
	if op.HasObserved && op.Observed != state {
		return nil
	}
	switch {
	case unknown:
		return append(next[:0], state, state-1)
	case op.Sold:
		return append(next[:0], state-1)
	}
	return append(next[:0], state)
}

// counterModels returns the deterministic and nondeterministic stock models
// (Init: the missing key, 0).
func counterModels() (porcupine.Model, porcupine.NondeterministicModel) {
	describe := func(input, output interface{}) string {
		op := input.(*sim.CounterOp)
		return fmt.Sprintf("%s %s", op.Client, op.Text())
	}
	state := func(s interface{}) string { return fmt.Sprintf("stock %d", s.(int64)) }
	det := porcupine.Model{
		Init: func() interface{} { return int64(0) },
		Step: func(s, input, _ interface{}) (bool, interface{}) {
			var buf [2]int64
			next := counterSteps(s.(int64), input.(*sim.CounterOp), &buf)
			if len(next) != 1 {
				return false, s
			}
			return true, next[0]
		},
		Hash:              func(s interface{}) uint64 { return uint64(s.(int64)) },
		DescribeOperation: describe,
		DescribeState:     state,
	}
	nd := porcupine.NondeterministicModel{
		Init: func() []interface{} { return []interface{}{int64(0)} },
		Step: func(s, input, _ interface{}) []interface{} {
			var buf [2]int64
			next := counterSteps(s.(int64), input.(*sim.CounterOp), &buf)
			out := make([]interface{}, len(next))
			for i, n := range next {
				out[i] = n
			}
			return out
		},
		Hash:              func(s interface{}) uint64 { return uint64(s.(int64)) },
		DescribeOperation: describe,
		DescribeState:     state,
	}
	return det, nd
}

// judged reports whether op constrains the stock: it observed a value, or
// wrote something that may have taken effect.
func judged(op *sim.CounterOp) bool {
	if op.Kind == sim.CounterLoad {
		return op.Wrote
	}
	return op.HasObserved || (op.Wrote && !op.Known)
}

// counterKeys groups the judged counter operations of h by key (keys
// sorted, operations by call time and id).
func counterKeys(h *sim.History) ([]string, map[string][]*sim.CounterOp) {
	by := map[string][]*sim.CounterOp{}
	var keys []string
	for i := range h.Counter {
		op := &h.Counter[i]
		if !judged(op) {
			continue
		}
		if _, ok := by[op.Key]; !ok {
			keys = append(keys, op.Key)
		}
		by[op.Key] = append(by[op.Key], op)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ops := by[k]
		sort.SliceStable(ops, func(i, j int) bool {
			if ops[i].Call != ops[j].Call {
				return ops[i].Call < ops[j].Call
			}
			return ops[i].ID < ops[j].ID
		})
	}
	return keys, by
}

// CheckCounterOps judges the operations of one stock key with porcupine,
// giving up after timeout (DefaultTimeout if <= 0). It reads nothing but the
// operations, so it can run on any piece of a history that starts at the
// stock's load.
func CheckCounterOps(ops []*sim.CounterOp, timeout time.Duration) Verdict {
	model, pops := counterOperations(ops)
	res, _ := linearize(model, pops, withDefault(timeout), false)
	return verdictOf(res)
}

// counterOperations returns the model that judges ops (the deterministic
// one unless some outcome is unknown) and ops as its operations.
func counterOperations(ops []*sim.CounterOp) (porcupine.Model, []porcupine.Operation) {
	det, nd := counterModels()
	model := det
	var names []string
	for _, op := range ops {
		names = append(names, op.Client)
		if op.Wrote && !op.Known {
			model = nd.ToModel()
		}
	}
	ids := clientIDs(uniqueSorted(names))
	pops := make([]porcupine.Operation, 0, len(ops))
	for _, op := range ops {
		ret := int64(op.Return)
		if (op.Wrote && !op.Known) || op.Open {
			ret = math.MaxInt64 // an unknown outcome returns at infinity
		}
		pops = append(pops, porcupine.Operation{
			ClientId: ids[op.Client],
			Input:    op,
			Call:     int64(op.Call),
			Output:   counterOut{},
			Return:   ret,
		})
	}
	return model, pops
}

// CheckCounters judges the stock counters of h: NotUsed when h has no
// counter operation; otherwise, per key, porcupine's verdict on the model
// above and a count of the acknowledged sales against the declared stock.
// It returns the violations explained in words.
func CheckCounters(h *sim.History, timeout time.Duration) (Verdict, []Violation) {
	h = orEmpty(h)
	if len(h.Counter) == 0 {
		return NotUsed, nil
	}
	keys, by := counterKeys(h)
	verdict := Holds
	var vs []Violation
	for _, k := range keys {
		v := CheckCounterOps(by[k], timeout)
		over := oversold(h, k)
		if over != nil {
			v = Violated
		}
		switch v {
		case Violated:
			verdict = Violated
			vs = append(vs, explainCounter(h, k, by[k])...)
			if over != nil {
				vs = append(vs, *over)
			}
		case Unknown:
			if verdict == Holds {
				verdict = Unknown
			}
		}
	}
	sortViolations(vs)
	return verdict, vs
}

// stockOf returns the stock declared for key: the value of its load.
func stockOf(h *sim.History, key string) (int64, sim.Time, bool) {
	for _, op := range h.Counter {
		if op.Kind == sim.CounterLoad && op.Key == key {
			return op.Observed, op.Call, true
		}
	}
	return 0, 0, false
}

// oversold returns the overselling violation of key, if more sales were
// acknowledged than the declared stock.
func oversold(h *sim.History, key string) *Violation {
	stock, _, ok := stockOf(h, key)
	if !ok {
		return nil
	}
	var sales []sim.CounterOp
	for _, op := range h.Counter {
		if op.Key == key && op.Kind == sim.CounterPurchase && op.Sold {
			sales = append(sales, op)
		}
	}
	if int64(len(sales)) <= stock {
		return nil
	}
	sort.SliceStable(sales, func(i, j int) bool { return sales[i].Return < sales[j].Return })
	// The sale that went past the stock, and the last one.
	first, last := sales[stock], sales[len(sales)-1]
	var names []string
	for _, s := range sales[stock:] {
		names = append(names, s.Client)
	}
	return &Violation{
		Kind:    KindResourceSafety,
		Lock:    key,
		Clients: uniqueInOrder(names),
		Windows: []Window{{Start: first.Call, End: last.Return}},
		Explanation: fmt.Sprintf("%d sales acknowledged of %d items of %q: oversold (sale %d, %s's at %s, was one more than the stock).",
			len(sales), stock, key, stock+1, first.Client, first.Return),
	}
}

// explainCounter explains why no order of key's operations explains what the
// clients saw: two sales that saw the same value (a lost update, or a lost
// decrement), each with the faults that preceded it when the two went to
// different servers (a failover), or, failing that, the first operation that
// no replay of the acknowledged sales explains.
func explainCounter(h *sim.History, key string, ops []*sim.CounterOp) []Violation {
	var vs []Violation
	var sales []*sim.CounterOp
	for _, op := range ops {
		if op.Kind == sim.CounterPurchase && op.Sold && op.HasObserved {
			sales = append(sales, op)
		}
	}
	sort.SliceStable(sales, func(i, j int) bool { return sales[i].Return < sales[j].Return })
	// The sales grouped by the value they left, in order of the first.
	index := map[int64]int{}
	var groups [][]*sim.CounterOp
	for _, s := range sales {
		i, ok := index[after(s)]
		if !ok {
			i = len(groups)
			index[after(s)] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], s)
	}
	// Sales that a later sale on another server repeated are grouped by
	// the two servers: writes the second never had (a failover).
	type pair struct{ from, to string }
	var pairs []pair
	lostOn := map[pair][][2]*sim.CounterOp{}
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		if j := otherNode(g); j > 0 {
			p := pair{g[0].Node, g[j].Node}
			if _, ok := lostOn[p]; !ok {
				pairs = append(pairs, p)
			}
			lostOn[p] = append(lostOn[p], [2]*sim.CounterOp{g[0], g[j]})
			continue
		}
		vs = append(vs, lostSales(key, g))
	}
	for _, p := range pairs {
		vs = append(vs, lostInFailover(h, key, lostOn[p]))
	}
	if len(vs) > 0 {
		return vs
	}
	if v, ok := staleObservation(h, key, ops); ok {
		return []Violation{v}
	}
	return []Violation{{
		Kind:        KindResourceSafety,
		Lock:        key,
		Explanation: fmt.Sprintf("porcupine found no order of the %d operations on %q that explains every value the clients saw, although no two sales left the same value.", len(ops), key),
	}}
}

// after is the stock's value after sale s, as its client saw it.
func after(s *sim.CounterOp) int64 {
	if repliesNewStock(s) {
		return s.Observed
	}
	return s.Observed - 1
}

// repliesNewStock reports whether a purchase's observation is the stock
// after its sale (DECR and the stock script answer it) rather than before
// (the GET of get-set and watch).
func repliesNewStock(op *sim.CounterOp) bool { return op.Method == "decr" || op.Method == "script" }

// lostSales explains sales g (in return order) that left the stock at the
// same value: all but one were lost.
func lostSales(key string, g []*sim.CounterOp) Violation {
	first := g[0]
	// Milliseconds: the sales are told apart by their clients, not by
	// their instants.
	at := func(t sim.Time) string { return fmtAt(t, milliDigits) }
	byCall := append([]*sim.CounterOp(nil), g...)
	sort.SliceStable(byCall, func(i, j int) bool { return byCall[i].Call < byCall[j].Call })
	v := Violation{Kind: KindResourceSafety, Lock: key}
	var names, items []string
	start, end := first.Call, first.Return
	for i, s := range byCall {
		names = append(names, s.Client)
		start, end = minTime(start, s.Call), maxTime(end, s.Return)
		if i < maxListed || len(g) == maxListed+1 {
			t := s.Call
			if repliesNewStock(s) {
				t = s.Return
			}
			items = append(items, fmt.Sprintf("%s at %s", s.Client, at(t)))
		} else if i == maxListed {
			items = append(items, fmt.Sprintf("%d more", len(g)-maxListed))
		}
	}
	v.Clients = uniqueInOrder(names)
	v.Windows = []Window{{Start: start, End: end}}
	lost := "one sale was lost"
	if n := len(g) - 1; n > 1 {
		lost = fmt.Sprintf("%d of these %d sales were lost", n, len(g))
	}
	var text string
	if mixedMethods(g) {
		// Each sale in its own terms: a DECR's or a script's answer is the
		// stock after it, a get-set's or a watch's read the stock before.
		all := "all"
		if len(g) == 2 {
			all = "both"
		}
		var sales []string
		for i, s := range byCall {
			if i < maxListed || len(g) == maxListed+1 {
				sales = append(sales, saleTerms(s, at))
			} else if i == maxListed {
				sales = append(sales, fmt.Sprintf("%d more", len(g)-maxListed))
			}
		}
		text = fmt.Sprintf("%d acknowledged sales of %q %s left it at %d (%s): %s (lost update)", len(g), key, all, after(first), strings.Join(sales, "; "), lost)
	} else if repliesNewStock(first) {
		all := "all"
		if len(g) == 2 {
			all = "both"
		}
		what := "DECRs"
		if first.Method == "script" {
			what = "stock scripts"
		}
		text = fmt.Sprintf("%d acknowledged %s of %q %s answered %d (%s): they left the same stock, so %s (lost decrement)", len(g), what, key, all, first.Observed, joinAnd(items), lost)
	} else {
		text = fmt.Sprintf("%s all read %d of %q (%s) and all wrote %d: %s (lost update)", joinAnd(v.Clients), first.Observed, key, joinAnd(items), first.Observed-1, lost)
		if len(v.Clients) == 2 {
			text = strings.Replace(text, " all ", " both ", 2)
		}
	}
	v.Explanation = text + "."
	return v
}

// mixedMethods reports whether the sales of g were not all made the same
// way: some answered the stock after the sale and others read it before, or
// DECRs and stock scripts both answered.
func mixedMethods(g []*sim.CounterOp) bool {
	for _, s := range g[1:] {
		if repliesNewStock(s) != repliesNewStock(g[0]) || (repliesNewStock(s) && s.Method != g[0].Method) {
			return true
		}
	}
	return false
}

// saleTerms names one sale by its method: "c1's DECR, answered 6 at
// 0.021s", "c2's GET and SET, read 7 at 0.010s".
func saleTerms(s *sim.CounterOp, at func(sim.Time) string) string {
	switch s.Method {
	case "decr":
		return fmt.Sprintf("%s's DECR, answered %d at %s", s.Client, s.Observed, at(s.Return))
	case "script":
		return fmt.Sprintf("%s's stock script, answered %d at %s", s.Client, s.Observed, at(s.Return))
	case "watch":
		return fmt.Sprintf("%s's WATCH transaction, read %d at %s", s.Client, s.Observed, at(s.Call))
	}
	return fmt.Sprintf("%s's GET and SET, read %d at %s", s.Client, s.Observed, at(s.Call))
}

// otherNode returns the index of the first sale of g answered by another
// server than g[0]'s, or 0.
func otherNode(g []*sim.CounterOp) int {
	for j, s := range g {
		if s.Node != g[0].Node {
			return j
		}
	}
	return 0
}

// lostInFailover explains sales acknowledged by one server that another
// server, later answering for the same stock, never had: each pair is a
// sale on the first and a later sale on the second that left the same
// value.
func lostInFailover(h *sim.History, key string, ps [][2]*sim.CounterOp) Violation {
	at := func(t sim.Time) string { return fmtAt(t, milliDigits) }
	from, to := ps[0][0].Node, ps[0][1].Node
	var lostNames, againNames []string
	var values []string
	start, end := ps[0][0].Call, ps[0][1].Return
	firstAck, lastAck, firstAgain := ps[0][0].Return, ps[0][0].Return, ps[0][1].Call
	for _, p := range ps {
		lostNames = append(lostNames, p[0].Client)
		againNames = append(againNames, p[1].Client)
		values = append(values, fmt.Sprint(after(p[0])))
		start, end = minTime(start, p[0].Call), maxTime(end, p[1].Return)
		firstAck, lastAck = minTime(firstAck, p[0].Return), maxTime(lastAck, p[0].Return)
		firstAgain = minTime(firstAgain, p[1].Call)
	}
	what := "sale"
	if len(ps) > 1 {
		what = "sales"
	}
	text := fmt.Sprintf("%d acknowledged %s of %q on %s (by %s, from %s to %s, leaving %s) were never on %s: from %s, %s answered for the stock and sold the same items again to %s",
		len(ps), what, key, from, joinAnd(uniqueInOrder(lostNames)), at(firstAck), at(lastAck), joinAnd(values), to, at(firstAgain), to, joinAnd(uniqueInOrder(againNames)))
	if len(ps) == 1 {
		text = strings.Replace(text, " were never ", " was never ", 1)
	}
	text += "; " + faultClause(faultsBetween(h.Faults, firstAck, firstAgain), []string{from, to}, lastAck, firstAgain, "the first repeated sale")
	clients := uniqueInOrder(append(lostNames, againNames...))
	return Violation{Kind: KindResourceSafety, Lock: key, Clients: clients, Windows: []Window{{Start: start, End: end}}, Explanation: text + " (lost in the failover)."}
}

// faultsBetween keeps the faults applied from..to.
func faultsBetween(fs []sim.FaultRecord, from, to sim.Time) []sim.FaultRecord {
	var out []sim.FaultRecord
	for _, f := range fs {
		if f.At <= to && effectEnd(f) >= from {
			out = append(out, f)
		}
	}
	return out
}

// staleObservation replays the acknowledged sales in return order and finds
// the first operation that saw a value the stock could not hold then (a read
// of a value that never existed, for instance).
func staleObservation(h *sim.History, key string, ops []*sim.CounterOp) (Violation, bool) {
	stock, _, ok := stockOf(h, key)
	if !ok {
		return Violation{}, false
	}
	for _, op := range ops {
		if op.Kind == sim.CounterLoad || !op.HasObserved || (op.Wrote && !op.Known) || (op.Method == "script" && !op.Sold) {
			continue
		}
		// The sales acknowledged before op was called, and those in flight.
		lo, hi := stock, stock
		for _, s := range ops {
			if s == op || s.Kind != sim.CounterPurchase || (s.Call > op.Return && !op.Open) {
				continue
			}
			effect := s.Sold || (s.Method == "decr" && s.Wrote && s.Known && s.HasObserved)
			maybe := s.Wrote && !s.Known
			switch {
			case effect && s.Return < op.Call:
				lo-- // applied before op began
				hi--
			case effect || maybe:
				lo-- // in flight, or unknown: may have applied
			}
		}
		seen := op.Observed
		if op.Kind == sim.CounterPurchase && repliesNewStock(op) {
			seen++
		}
		if seen < lo || seen > hi {
			what := "read"
			if op.Kind == sim.CounterPurchase {
				what = op.Method + " purchase saw"
			}
			return Violation{
				Kind: KindResourceSafety, Lock: key, Clients: []string{op.Client},
				Windows: []Window{{Start: op.Call, End: op.Return}},
				Explanation: fmt.Sprintf("%s's %s %d of %q %s, but after the sales acknowledged by then the stock could only be between %d and %d; %s.",
					op.Client, what, op.Observed, key, opSpan(op), lo, hi, faultClause(h.Faults, []string{op.Node, op.Client}, 0, op.Return, "the wrong value")),
			}, true
		}
	}
	return Violation{}, false
}

// counterProblems are the invariants of the counter records that the
// verdicts rely on (ValidateHistory).
func counterProblems(h *sim.History) []string {
	var out []string
	add := func(op sim.CounterOp, format string, args ...any) {
		out = append(out, fmt.Sprintf("counter operation %d of %s on %q: ", op.ID, op.Client, op.Key)+fmt.Sprintf(format, args...))
	}
	loaded := map[string]bool{}
	for _, op := range h.Counter {
		if op.Kind == sim.CounterLoad {
			loaded[op.Key] = true
		}
	}
	for _, op := range h.Counter {
		switch op.Kind {
		case sim.CounterLoad:
			if !op.HasObserved || op.Observed < 0 {
				add(op, "a load without a stock of 0 or more")
			}
		case sim.CounterPurchase:
			switch op.Method {
			case "get-set", "watch":
				if op.Sold && (!op.HasObserved || op.Observed <= 0) {
					add(op, "a %s sale that did not read a positive stock", op.Method)
				}
			case "decr", "script":
				if op.Sold && (!op.HasObserved || op.Observed < 0) {
					add(op, "a %s sale without a reply of 0 or more", op.Method)
				}
			default:
				add(op, "unknown counter method %q", op.Method)
			}
			if op.Sold && !(op.Wrote && op.Known) {
				add(op, "sold without a write whose reply came")
			}
		case sim.CounterRead:
			if op.Wrote {
				add(op, "a read that wrote")
			}
		default:
			add(op, "unknown kind %d", op.Kind)
		}
		if op.Kind != sim.CounterLoad && !loaded[op.Key] {
			add(op, "no stock was declared (loaded) for this key")
		}
		if !op.Open && op.Return < op.Call {
			add(op, "returns at %s, before its call at %s", op.Return, op.Call)
		}
	}
	return out
}

// opSpan renders when an operation ran: "at 1.200s", or "between 0.155s and
// 3.215s" when it lasted longer than a millisecond (a retried WATCH sees its
// value at its last attempt).
func opSpan(op *sim.CounterOp) string {
	if op.Return-op.Call < sim.Time(time.Millisecond) {
		return "at " + op.Call.String()
	}
	return fmt.Sprintf("between %s and %s", op.Call, op.Return)
}
