package checker

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

func acq(c int, call, ret int64, ok bool) porcupine.Operation {
	return porcupine.Operation{ClientId: c, Input: LockInput{Op: Acquire, Client: c, Grant: c}, Call: call, Output: LockOutput{OK: ok}, Return: ret}
}

func rel(c int, call, ret int64) porcupine.Operation {
	return porcupine.Operation{ClientId: c, Input: LockInput{Op: Release, Client: c, Grant: c}, Call: call, Output: LockOutput{OK: true}, Return: ret}
}

// TestLockModelReferenceTable runs every history of the Model 1 table in
// reference/porcupine.md through LockModel.
func TestLockModelReferenceTable(t *testing.T) {
	tests := []struct {
		name string
		ops  []porcupine.Operation
		want porcupine.CheckResult
	}{
		{"B waited, granted after A's release",
			[]porcupine.Operation{acq(0, 0, 10, true), rel(0, 20, 25), acq(1, 5, 30, true), rel(1, 40, 45)}, porcupine.Ok},
		{"A believes [10,50], B [30,60]",
			[]porcupine.Operation{acq(0, 0, 10, true), rel(0, 50, 55), acq(1, 20, 30, true), rel(1, 60, 65)}, porcupine.Illegal},
		{"touch at t=30",
			[]porcupine.Operation{acq(0, 0, 10, true), rel(0, 30, 30), acq(1, 20, 30, true), rel(1, 40, 40)}, porcupine.Ok},
		{"A's local validity ended before server expiry",
			[]porcupine.Operation{acq(0, 0, 10, true), rel(0, 40, 40), acq(1, 46, 50, true), rel(1, 60, 60)}, porcupine.Ok},
		{"A paused or drifted past expiry",
			[]porcupine.Operation{acq(0, 0, 10, true), rel(0, 60, 60), acq(1, 46, 50, true), rel(1, 70, 70)}, porcupine.Illegal},
		{"failed acquire and end-of-run holder",
			[]porcupine.Operation{acq(2, 0, 10, true), acq(1, 12, 15, false), rel(2, 40, math.MaxInt64)}, porcupine.Ok},
		{"3 clients, c2 acquires [26,40] while c1 holds [30,50]",
			[]porcupine.Operation{acq(0, 0, 5, true), rel(0, 20, 20), acq(1, 10, 30, true), rel(1, 50, 50), acq(2, 15, 26, true), rel(2, 40, 40)}, porcupine.Illegal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, porcupine.CheckOperationsTimeout(LockModel, tt.ops, 10*time.Second))
		})
	}
}

// TestCheckLock runs hand-written histories through the whole encoding.
func TestCheckLock(t *testing.T) {
	tests := []struct {
		name    string
		end     sim.Time
		beliefs []sim.Belief
		extra   func(h *sim.History)
		want    Verdict
	}{
		{name: "empty history", end: s(10), want: Holds},
		{name: "sequential hand-offs", end: s(100), beliefs: []sim.Belief{
			bel("c1", s(0), s(1), s(10)), bel("c2", s(2), s(11), s(20)), bel("c1", s(12), s(21), s(30)),
		}, want: Holds},
		{name: "B waited and was granted after A's release", end: s(50), beliefs: []sim.Belief{
			bel("c0", s(0), s(10), s(20)), bel("c1", s(5), s(30), s(40)),
		}, want: Holds},
		{name: "overlap", end: s(70), beliefs: []sim.Belief{
			bel("c0", s(0), s(10), s(50)), bel("c1", s(20), s(30), s(60)),
		}, want: Violated},
		{name: "touching at one instant is not an overlap", end: s(50), beliefs: []sim.Belief{
			bel("c0", s(0), s(10), s(30)), bel("c1", s(20), s(30), s(40)),
		}, want: Holds},
		{name: "one nanosecond of overlap", end: s(50), beliefs: []sim.Belief{
			bel("c0", s(0), s(10), s(30)+1), bel("c1", s(20), s(30), s(40)),
		}, want: Violated},
		{name: "validity ended before the next grant", end: s(70), beliefs: []sim.Belief{
			bel("c0", s(0), s(10), s(40)), bel("c1", s(46), s(50), s(60)),
		}, want: Holds},
		{name: "paused past expiry", end: s(70), beliefs: []sim.Belief{
			bel("c0", s(0), s(10), s(60)), bel("c1", s(46), s(50), s(65)),
		}, want: Violated},
		{name: "failed attempts are dropped", end: s(50), beliefs: []sim.Belief{
			bel("c2", s(0), s(10), s(40)),
		}, extra: func(h *sim.History) {
			h.Attempts = []sim.Attempt{
				{Client: "c2", Lock: "L", Start: s(0), End: s(10), OK: true},
				{Client: "c1", Lock: "L", Start: s(12), End: s(15)},
				{Client: "c1", Lock: "L", Start: s(16), End: s(50), Open: true},
			}
		}, want: Holds},
		{name: "open belief alone at run end", end: s(50), beliefs: []sim.Belief{
			bel("c0", s(0), s(10), s(20)), open(bel("c1", s(15), s(25), 0)),
		}, want: Holds},
		{name: "open belief overlapped by a later grant", end: s(50), beliefs: []sim.Belief{
			open(bel("c0", s(0), s(10), 0)), bel("c1", s(30), s(40), s(45)),
		}, want: Violated},
		{name: "open belief touched by a grant at run end", end: s(50), beliefs: []sim.Belief{
			open(bel("c0", s(0), s(10), 0)), open(bel("c1", s(30), s(50), 0)),
		}, want: Holds},
		{name: "zero-length belief inside another", end: s(50), beliefs: []sim.Belief{
			bel("c0", s(0), s(5), s(20)), bel("c1", s(1), s(10), s(10)),
		}, want: Violated},
		{name: "zero-length beliefs at one instant", end: s(50), beliefs: []sim.Belief{
			bel("c0", s(0), s(10), s(10)), bel("c1", s(1), s(10), s(10)),
		}, want: Holds},
		{name: "same client twice at once", end: s(50), beliefs: []sim.Belief{
			bel("c0", s(0), s(10), s(30)), bel("c0", s(1), s(20), s(40)),
		}, want: Violated},
		{name: "two locks are independent", end: s(50), beliefs: []sim.Belief{
			onLock("A", bel("c0", s(0), s(10), s(30))), onLock("B", bel("c1", s(0), s(15), s(35))),
			onLock("A", bel("c1", s(31), s(36), s(40))), onLock("B", bel("c0", s(31), s(36), s(40))),
		}, want: Holds},
		{name: "two locks, one violated", end: s(50), beliefs: []sim.Belief{
			onLock("A", bel("c0", s(0), s(10), s(30))), onLock("B", bel("c1", s(0), s(15), s(35))),
			onLock("B", bel("c0", s(20), s(34), s(40))),
		}, want: Violated},
		{name: "three clients in turn", end: s(90), beliefs: []sim.Belief{
			bel("c0", s(0), s(5), s(20)), bel("c1", s(1), s(20), s(50)), bel("c2", s(2), s(50), s(60)),
		}, want: Holds},
		{name: "three clients, c2 acquires while c1 holds", end: s(90), beliefs: []sim.Belief{
			bel("c0", s(0), s(5), s(20)), bel("c1", s(10), s(30), s(50)), bel("c2", s(15), s(26), s(40)),
		}, want: Violated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := history(tt.end, tt.beliefs, nil)
			if tt.extra != nil {
				tt.extra(h)
			}
			assert.Equal(t, tt.want, CheckLock(h, 0))
			// The direct overlap computation behind the words agrees.
			assert.Equal(t, tt.want == Violated, len(overlaps(h)) > 0)
		})
	}
}

func TestLockOperationsEncoding(t *testing.T) {
	h := history(s(60), []sim.Belief{
		withToken(bel("c2", s(1), s(3), s(9)), 7),
		open(bel("c1", s(10), s(12), 0)),
	}, nil)
	h.Beliefs[1].AttemptStart = s(20) // after Start: malformed, clamped to Start
	ops := LockOperations(h)
	require.Len(t, ops, 4)

	type row struct {
		client     int
		op         LockOp
		call, ret  sim.Time
		name, meta string
	}
	var got []row
	for _, op := range ops {
		in := op.Input.(LockInput)
		assert.Equal(t, op.ClientId, in.Client)
		assert.Equal(t, "L", in.Lock)
		assert.Equal(t, LockOutput{OK: true}, op.Output)
		got = append(got, row{in.Client, in.Op, sim.Time(op.Call), sim.Time(op.Return), in.Name, op.Metadata.(string)})
	}
	assert.Equal(t, []row{
		{1, Acquire, s(1), s(3), "c2", "belief 0 (released), token 7"},
		{1, Release, s(9), s(9), "c2", "belief 0 (released), token 7"},
		{0, Acquire, s(12), s(12), "c1", "belief 1 (run-end)"},
		{0, Release, s(60), s(60), "c1", "belief 1 (run-end)"},
	}, got)
}

// TestLockModelAgreesWithOverlaps checks, on many small random histories
// with many ties, that porcupine and the direct overlap computation agree.
func TestLockModelAgreesWithOverlaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	clients := []string{"c0", "c1", "c2"}
	var violated, held int
	for i := 0; i < 500; i++ {
		var beliefs []sim.Belief
		for _, lock := range []string{"A", "B"} {
			for _, c := range clients {
				at := sim.Time(rng.IntN(5))
				for k := rng.IntN(3); k > 0; k-- {
					attempt := at + sim.Time(rng.IntN(3))
					start := attempt + sim.Time(rng.IntN(4))
					end := start + sim.Time(rng.IntN(6))
					b := onLock(lock, bel(c, attempt, start, end))
					if rng.IntN(8) == 0 {
						b = open(b)
						beliefs = append(beliefs, b)
						break
					}
					beliefs = append(beliefs, b)
					at = end + sim.Time(rng.IntN(3))
				}
			}
		}
		h := history(40, beliefs, nil)
		v := CheckLock(h, 0)
		require.NotEqual(t, Unknown, v)
		if !assert.Equal(t, len(overlaps(h)) > 0, v == Violated, "history %d: %+v", i, fmt.Sprint(h.Beliefs)) {
			return
		}
		if v == Violated {
			violated++
		} else {
			held++
		}
	}
	// Both outcomes are well represented.
	assert.Greater(t, violated, 50)
	assert.Greater(t, held, 50)
}
