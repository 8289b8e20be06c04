package checker

import "github.com/anishathalye/porcupine"

// The sequential fast path (issue 15). Most histories of a fault-free run
// have no concurrency at all: each operation of a piece returns before the
// next one is called. Such a history has exactly one linearization, its
// real-time order, so it is linearizable iff stepping the model through the
// operations in that order is legal: O(n), with no allocation of its own.
// Porcupine on the same piece builds linked entries, a bitset per step and
// a cache of them (about 13 allocations per lock cycle, issue 15).
//
// Real-time order is porcupine's own (porcupine v1.3.1 checker.go:117-124,
// byTime.Less): entries sorted by time, and at equal times a call before a
// return. So an operation that returns at the very instant the next one is
// called overlaps it (porcupine may linearize the later one first), and a
// history is totally ordered only if each operation returns strictly before
// the next is called. In that case porcupine's search (checker.go
// checkSingle) can only ever try the first remaining call: it lifts it if the
// step is legal and backtracks to Illegal otherwise, and its cache never
// hits (each state comes with a new set of linearized operations), which is
// exactly the sequential stepping here.
//
// The fast path only ever concludes Ok. An illegal step, overlapping
// operations, or a model it cannot step (no Step or Init) send the piece to
// porcupine, which decides (and, verbose, builds the visualization), so
// verdicts, violations and explanations are porcupine's. The one difference
// is for the better: porcupine may time out (Unknown) on a long piece that
// the fast path decides.

// sequentialOK reports whether ops, in the order given, are totally ordered
// in real time as porcupine orders them and stepping model through them
// from its initial state is legal, in every partition of model. When it
// reports false, the history may still be linearizable: ask porcupine.
func sequentialOK(model porcupine.Model, ops []porcupine.Operation) bool {
	if model.Step == nil || model.Init == nil {
		return false
	}
	if model.Partition == nil {
		return sequentialLegal(model, ops)
	}
	// Partitions are checked independently (porcupine checkParallel): each
	// must be ordered and legal on its own.
	for _, part := range model.Partition(ops) {
		if !sequentialLegal(model, part) {
			return false
		}
	}
	return true
}

// sequentialLegal reports whether ops are totally ordered and legal stepped
// in order through model (no partition).
func sequentialLegal(model porcupine.Model, ops []porcupine.Operation) bool {
	if !totallyOrdered(ops) {
		return false
	}
	state := model.Init()
	for i := range ops {
		ok, next := model.Step(state, ops[i].Input, ops[i].Output)
		if !ok {
			return false
		}
		state = next
	}
	return true
}

// totallyOrdered reports whether each operation of ops is called no later
// than it returns and returns strictly before the next one is called: in
// porcupine's order of entries (a call before a return at equal times), no
// two of them overlap.
func totallyOrdered(ops []porcupine.Operation) bool {
	for i := range ops {
		if ops[i].Call > ops[i].Return {
			return false
		}
		if i > 0 && ops[i-1].Return >= ops[i].Call {
			return false
		}
	}
	return true
}
