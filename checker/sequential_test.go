package checker

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// seqCase is one random history for a model, with the model to check it.
type seqCase struct {
	model porcupine.Model
	ops   []porcupine.Operation
}

// History shapes for seqTimes.
const (
	inSequence = iota // each call at or after the previous return
	byReturns         // returns in order, calls anywhere before them
	anyOrder          // calls and returns anywhere in a short span
)

// seqTimes returns n (call, return) pairs of a shape. Times are small so
// that ties are frequent: a gap of 0 in sequence is a call at the instant
// of the previous return, which porcupine reads as an overlap.
func seqTimes(rng *rand.Rand, n int, shape int) [][2]int64 {
	ts := make([][2]int64, n)
	var t int64
	for i := range ts {
		switch shape {
		case inSequence:
			t += rng.Int64N(3)
			ret := t + rng.Int64N(3) // 0: an operation of one instant
			ts[i], t = [2]int64{t, ret}, ret
		case byReturns:
			t += rng.Int64N(3)
			ts[i] = [2]int64{max(0, t-rng.Int64N(5)), t}
		default:
			t = max(0, t+rng.Int64N(5)-2)
			ts[i] = [2]int64{t, t + rng.Int64N(3)}
		}
	}
	return ts
}

// randomLockCase is a history of acquires and releases of a few grants,
// for lockModelFast (pointer inputs, one lock) or LockModel (two locks,
// partitioned).
func randomLockCase(rng *rand.Rand, shape int) seqCase {
	n := 1 + rng.IntN(7)
	ts := seqTimes(rng, n, shape)
	partitioned := rng.IntN(2) == 0
	ins := make([]LockInput, n)
	ops := make([]porcupine.Operation, n)
	for i := range ops {
		op := Acquire
		if i%2 == 1 || rng.IntN(4) == 0 {
			op = Release
		}
		grant := i / 2 // mostly well-formed pairs ...
		if rng.IntN(4) == 0 {
			grant = rng.IntN(3) // ... and some that are not
		}
		ins[i] = LockInput{Op: op, Client: grant, Lock: "L", Grant: grant}
		if partitioned && rng.IntN(3) == 0 {
			ins[i].Lock = "M"
		}
		ops[i] = porcupine.Operation{ClientId: grant, Call: ts[i][0], Return: ts[i][1], Output: LockOutput{OK: rng.IntN(8) != 0}}
		if partitioned {
			ops[i].Input = ins[i]
		} else {
			ops[i].Input = &ins[i]
			ops[i].Output = granted
		}
	}
	if partitioned {
		return seqCase{LockModel, ops}
	}
	return seqCase{lockModelFast, ops}
}

// randomResourceCase is a history of critical sections that read a value
// near the one a sequential run would read, for resourceModelFast or the
// partitioned ResourceModel.
func randomResourceCase(rng *rand.Rand, shape int) seqCase {
	n := 1 + rng.IntN(7)
	ts := seqTimes(rng, n, shape)
	init := rng.Int64N(3)
	partitioned := rng.IntN(2) == 0
	outs := make([]ResourceOutput, n)
	ops := make([]porcupine.Operation, n)
	value := init
	if partitioned {
		value = 0
	}
	for i := range ops {
		read := value
		if rng.IntN(5) == 0 {
			read += rng.Int64N(3) - 1
		}
		outs[i] = ResourceOutput{Read: read, Write: Accepted}
		if rng.IntN(4) == 0 {
			outs[i].Write = Rejected
		} else {
			value++
		}
		ops[i] = porcupine.Operation{ClientId: i % 3, Call: ts[i][0], Return: ts[i][1]}
		if partitioned {
			lock := "L"
			if rng.IntN(3) == 0 {
				lock = "M"
			}
			ops[i].Input, ops[i].Output = ResourceInput{Lock: lock}, outs[i]
		} else {
			ops[i].Output = &outs[i]
		}
	}
	if partitioned {
		return seqCase{ResourceModel, ops}
	}
	return seqCase{resourceModelFast(init, n), ops}
}

// randomCounterCase is a stock counter history with known outcomes only
// (the deterministic model): a load, then purchases and reads that observe
// values near the stock a sequential run would see.
func randomCounterCase(rng *rand.Rand, shape int) seqCase {
	n := 1 + rng.IntN(7)
	ts := seqTimes(rng, n, shape)
	stock := rng.Int64N(4)
	near := func(v int64) int64 {
		if rng.IntN(5) == 0 {
			return v + rng.Int64N(3) - 1
		}
		return v
	}
	cops := make([]*sim.CounterOp, n)
	for i := range cops {
		op := &sim.CounterOp{ID: i, Client: fmt.Sprintf("c%d", i%3), Key: "stock",
			Call: sim.Time(ts[i][0]), Return: sim.Time(ts[i][1])}
		switch k := rng.IntN(4); {
		case i == 0 || k == 0 && rng.IntN(3) == 0:
			op.Kind, op.Wrote, op.Known, op.Observed = sim.CounterLoad, true, true, near(stock)
		case k == 1:
			op.Kind, op.Observed, op.HasObserved = sim.CounterRead, near(stock), true
		case k == 2:
			op.Kind, op.Method, op.Wrote, op.Known = sim.CounterPurchase, "decr", true, true
			op.Observed, op.HasObserved, op.Sold = near(stock-1), true, stock > 0
			stock--
		default:
			op.Kind, op.Method, op.Observed, op.HasObserved = sim.CounterPurchase, "get-set", near(stock), true
			if stock > 0 {
				op.Wrote, op.Known, op.Sold = true, true, true
				stock--
			}
		}
		cops[i] = op
	}
	model, ops := counterOperations(cops)
	return seqCase{model, ops}
}

// stepAll steps model through ops in order from Init, partition by
// partition: the verdict of the one linearization of an ordered history.
func stepAll(model porcupine.Model, ops []porcupine.Operation) bool {
	parts := [][]porcupine.Operation{ops}
	if model.Partition != nil {
		parts = model.Partition(ops)
	}
	for _, part := range parts {
		state := model.Init()
		for _, op := range part {
			ok, next := model.Step(state, op.Input, op.Output)
			if !ok {
				return false
			}
			state = next
		}
	}
	return true
}

// seqDisagreements checks n random histories of each model against
// porcupine and returns how many disagree with it, when ordered decides
// which histories are totally ordered: the fast path's verdict must be
// porcupine's, and an ordered history must be legal in porcupine's eyes
// iff it is legal stepped in order (one linearization). It also counts the
// kinds of histories seen.
func seqDisagreements(t *testing.T, n int, ordered func([]porcupine.Operation) bool) (bad int, kinds map[string]int) {
	rng := rand.New(rand.NewPCG(15, 7))
	kinds = map[string]int{}
	gens := []struct {
		name string
		gen  func(*rand.Rand, int) seqCase
	}{
		{"lock", randomLockCase}, {"resource", randomResourceCase}, {"counter", randomCounterCase},
	}
	for i := 0; i < n; i++ {
		for _, g := range gens {
			c := g.gen(rng, i%3)
			want := porcupine.CheckOperationsTimeout(c.model, c.ops, time.Minute)
			got, _ := linearize(c.model, c.ops, time.Minute, false)
			legal := stepAll(c.model, c.ops)
			isOrdered, inReturnOrder := true, true
			parts := [][]porcupine.Operation{c.ops}
			if c.model.Partition != nil {
				parts = c.model.Partition(c.ops)
			}
			for _, p := range parts {
				byReturn, _ := opsOrder(p)
				isOrdered = isOrdered && ordered(p)
				inReturnOrder = inReturnOrder && byReturn
			}
			shape := "overlapping"
			switch {
			case isOrdered:
				shape = "ordered"
			case inReturnOrder:
				shape = "by-return"
			}
			kind := fmt.Sprintf("%s %s legal=%v", g.name, shape, want == porcupine.Ok)
			kinds[kind]++
			if got != want || isOrdered && legal != (want == porcupine.Ok) {
				bad++
				if bad <= 3 {
					t.Logf("%s: porcupine %s, fast path %s, in order legal=%v: %+v", g.name, want, got, legal, c.ops)
				}
			}
		}
	}
	return bad, kinds
}

// TestSequentialAgreesWithPorcupine is the fast path's property test: on
// thousands of small random histories (in sequence, in return order and
// overlapping, with ties at equal times, legal and illegal, for the lock,
// resource and stock counter models), the fast path's verdict is
// porcupine's, and porcupine finds a totally ordered history legal iff it
// is legal stepped in order.
func TestSequentialAgreesWithPorcupine(t *testing.T) {
	total := func(ops []porcupine.Operation) bool { _, total := opsOrder(ops); return total }
	bad, kinds := seqDisagreements(t, 3000, total)
	assert.Zero(t, bad, "histories where the fast path and porcupine disagree")
	for _, m := range []string{"lock", "resource", "counter"} {
		for _, k := range []string{"ordered", "by-return", "overlapping"} {
			for _, legal := range []string{"true", "false"} {
				kind := m + " " + k + " legal=" + legal
				assert.Greater(t, kinds[kind], 20, "the generator makes enough %s histories: %v", kind, kinds)
			}
		}
	}
}

// TestSequentialTieRuleMatters shows that the property test can fail: with
// the tie rule broken (an operation that returns at the instant the next
// is called counted as before it, which porcupine does not do), some
// ordered histories that are illegal in order are legal to porcupine.
func TestSequentialTieRuleMatters(t *testing.T) {
	broken := func(ops []porcupine.Operation) bool {
		for i := range ops {
			if ops[i].Call > ops[i].Return || i > 0 && ops[i-1].Return > ops[i].Call {
				return false
			}
		}
		return true
	}
	bad, _ := seqDisagreements(t, 1000, broken)
	assert.Greater(t, bad, 0, "a broken tie rule is caught")
}

// TestOpsOrder pins the order rules, the tie rule in particular, on
// hand-made cases.
func TestOpsOrder(t *testing.T) {
	op := func(call, ret int64) porcupine.Operation { return porcupine.Operation{Call: call, Return: ret} }
	tests := []struct {
		name            string
		ops             []porcupine.Operation
		byReturn, total bool
	}{
		{"empty", nil, true, true},
		{"one instant", []porcupine.Operation{op(3, 3)}, true, true},
		{"strictly after", []porcupine.Operation{op(1, 2), op(3, 3), op(4, 6)}, true, true},
		{"called at the previous return: overlap", []porcupine.Operation{op(1, 2), op(2, 3)}, true, false},
		{"two at one instant: overlap", []porcupine.Operation{op(2, 2), op(2, 2)}, true, false},
		{"called before the previous return", []porcupine.Operation{op(1, 5), op(0, 6)}, true, false},
		{"returns out of order", []porcupine.Operation{op(1, 5), op(2, 4)}, false, false},
		{"out of order", []porcupine.Operation{op(4, 5), op(1, 2)}, false, false},
		{"returns before it is called", []porcupine.Operation{op(3, 2)}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			byReturn, total := opsOrder(tt.ops)
			assert.Equal(t, tt.byReturn, byReturn, "byReturn")
			assert.Equal(t, tt.total, total, "total")
		})
	}
}

// TestFastVerdictNeedsAStep: a model without Step or Init goes to
// porcupine.
func TestFastVerdictNeedsAStep(t *testing.T) {
	ops := []porcupine.Operation{{Call: 1, Return: 2}}
	m := lockModelFast
	m.Step = nil
	_, ok := fastVerdict(m, ops)
	require.False(t, ok)
	m = lockModelFast
	m.Init = nil
	_, ok = fastVerdict(m, ops)
	require.False(t, ok)
}
