package checker

import (
	"fmt"
	"testing"
	"time"

	"github.com/locksim/locksim/sim"
)

// chained is a legal history of n beliefs of 3 clients on one lock, each
// starting the instant the one before ends (a hand-off with no gap), with
// one critical section each whose read is served the instant the one
// before was decided: no quiet point anywhere, so each check is one piece
// of 2n lock operations and one of n resource operations.
func chained(n int) *sim.History {
	h := &sim.History{End: sim.Time(n+1) * sim.Time(time.Millisecond)}
	for i := 0; i < n; i++ {
		t0, t1 := sim.Time(i)*sim.Time(time.Millisecond), sim.Time(i+1)*sim.Time(time.Millisecond)
		c := fmt.Sprintf("c%d", i%3+1)
		h.Beliefs = append(h.Beliefs, sim.Belief{ID: i, Client: c, Lock: "L", AttemptStart: t0, Start: t0, End: t1, Reason: sim.EndReleased})
		h.Sections = append(h.Sections, sim.Section{ID: i, Client: c, Lock: "L", BeliefID: i,
			ReadSent: t0, ReadAt: t0, Read: true, ReadValue: int64(i),
			WriteSent: t1, WriteAt: t1, Written: true, WriteValue: int64(i) + 1, Outcome: sim.WriteAccepted, ResultAt: t1})
	}
	return h
}

// BenchmarkCheckOnePiece measures the checker on a history that is one
// piece (chained): time, allocations and the peak growth of the heap, for
// pieces of 2k to 40k lock operations (and half as many resource
// operations). Porcupine's search keeps a clone of
// the bitset of linearized operations per state it caches (checker.go,
// cacheEntry), so its memory grows with the square of the piece: this is
// the bound on a piece the quiet points keep small.
//
//	go test ./checker -run '^$' -bench CheckOnePiece -benchtime 2x
func BenchmarkCheckOnePiece(b *testing.B) {
	for _, n := range []int{1_000, 5_000, 20_000} {
		h := chained(n)
		b.Run(fmt.Sprintf("ops=%d", 2*n), func(b *testing.B) {
			b.ReportAllocs()
			var peak uint64
			for b.Loop() {
				var r Result
				peak = max(peak, peakHeapGrowth(func() { r = Check(h, Options{}) }))
				if r.Verdicts.Of(LockSafety) != Holds || r.Verdicts.Of(ResourceSafety) != Holds {
					b.Fatalf("verdicts %s, %s", r.Verdicts.Of(LockSafety), r.Verdicts.Of(ResourceSafety))
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}

// TestChainedIsOnePiece: chained histories have no quiet point.
func TestChainedIsOnePiece(t *testing.T) {
	h := chained(600)
	if c := lockCuts(sortedBeliefs(h), h.End, pieceMinOps); len(c) != 1 {
		t.Fatalf("lock cuts %v, want one piece", c)
	}
	if c := resourceCuts(checkedSections(h), pieceMinOps); len(c) != 1 {
		t.Fatalf("resource cuts %v, want one piece", c)
	}
}
