package checker

import "github.com/anishathalye/porcupine"

// The sequential fast path (issue 15). Most pieces of a fault-free run have
// little or no concurrency, and porcupine's search costs about 13
// allocations per lock cycle on them (linked entries, a bitset per step, a
// cache of them). Two exact shortcuts decide most pieces without it, in
// O(n) and with no allocation of their own:
//
//   - Return order. If the operations, in the order given, return at
//     non-decreasing times (each called no later than it returns), that
//     order is a linearization candidate: put each operation's
//     linearization point at its return. Each point lies in its
//     operation's interval, and an operation that returned before another
//     was called comes first. So if stepping the model in that order is
//     legal, the history is linearizable: Ok, with that order as witness.
//     This holds with any ties, and covers the waiting clients of a
//     contended lock (an acquire is called long before it returns) as long
//     as no two beliefs overlap.
//   - Total order. If moreover each operation returns strictly before the
//     next one is called, in porcupine's own order of entries (porcupine
//     v1.3.1 checker.go:117-124, byTime.Less: by time, and at equal times a
//     call before a return, so an operation called at the instant the
//     previous one returns overlaps it), the history has exactly one
//     linearization: porcupine's search (checker.go checkSingle) can only
//     ever try the first remaining call, lifting it if its step is legal
//     and backtracking to Illegal otherwise, and its cache never hits (each
//     state comes with a new set of linearized operations). So an illegal
//     step there is Illegal.
//
// Anything else (an illegal step in a history that is not totally ordered,
// operations out of return order, a model without Step or Init) goes to
// porcupine, and verbose checks (the visualization of an illegal piece)
// always do: verdicts, violations and explanations are porcupine's. The
// one difference is for the better: porcupine may time out (Unknown) on a
// long piece that a shortcut decides.

// fastVerdict decides ops under model without porcupine's search when a
// shortcut applies (ok), every partition of model on its own (porcupine
// checkParallel: the history is legal iff every partition is).
func fastVerdict(model porcupine.Model, ops []porcupine.Operation) (res porcupine.CheckResult, ok bool) {
	if model.Step == nil || model.Init == nil {
		return "", false
	}
	if model.Partition == nil {
		return fastPartition(model, ops)
	}
	res, ok = porcupine.Ok, true
	for _, part := range model.Partition(ops) {
		switch r, decided := fastPartition(model, part); {
		case decided && r == porcupine.Illegal:
			return porcupine.Illegal, true
		case !decided:
			ok = false
		}
	}
	return res, ok
}

// fastPartition decides one partition: Ok if ops are in return order and
// legal stepped in order, Illegal if they are totally ordered and a step
// is illegal.
func fastPartition(model porcupine.Model, ops []porcupine.Operation) (porcupine.CheckResult, bool) {
	byReturn, total := opsOrder(ops)
	if !byReturn {
		return "", false
	}
	state := model.Init()
	for i := range ops {
		ok, next := model.Step(state, ops[i].Input, ops[i].Output)
		if !ok {
			if total {
				return porcupine.Illegal, true
			}
			return "", false
		}
		state = next
	}
	return porcupine.Ok, true
}

// opsOrder reports whether ops, each called no later than it returns,
// return at non-decreasing times (byReturn), and whether moreover each
// returns strictly before the next is called (total: no two overlap in
// porcupine's order of entries, where a call comes before a return at
// equal times).
func opsOrder(ops []porcupine.Operation) (byReturn, total bool) {
	total = true
	for i := range ops {
		if ops[i].Call > ops[i].Return {
			return false, false
		}
		if i == 0 {
			continue
		}
		if ops[i-1].Return > ops[i].Return {
			return false, false
		}
		if ops[i-1].Return >= ops[i].Call {
			total = false
		}
	}
	return true, total
}
