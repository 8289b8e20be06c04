package checker

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locksim/locksim/sim"
)

// genHistory generates, deterministically, a history of n belief periods on
// one lock handed round-robin among k clients that wait for it in FIFO order
// (each client starts its next attempt as soon as it releases, so k-1
// acquires are pending at any time), each with one critical section that
// increments a counter, and one want per acquisition. If illegal, every
// thousandth holder (and the first) is paused past the next grant: the two
// beliefs overlap and the paused holder's write lands between the next
// holder's read and write, a lost update.
func genHistory(n, k int, illegal bool) *sim.History {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(k)))
	h := &sim.History{}
	lastEnd := make([]sim.Time, k)
	var value int64
	var t, forced sim.Time
	for i := 0; i < n; i++ {
		c := i % k
		name := fmt.Sprintf("c%d", c)
		attempt := lastEnd[c] + ms(1)
		start := t + ms(int64(1+rng.IntN(5)))
		if forced > 0 {
			start, forced = forced, 0
		}
		end := start + ms(int64(10+rng.IntN(50)))
		readAt, writeAt := start+ms(1), end-ms(1)
		read := value
		if illegal && i%1000 == 0 && i+1 < n {
			// Paused: the next holder is granted at forced and reads at
			// forced+1ms, before this write lands at forced+3ms; this belief
			// ends at forced+4ms. Both write read+1: one update is lost.
			forced = end + ms(1)
			writeAt, end = forced+ms(3), forced+ms(4)
		} else {
			value++
		}
		h.Beliefs = append(h.Beliefs, sim.Belief{
			ID: i, Client: name, Lock: "L", AttemptStart: attempt, Start: start, End: end,
			Reason: sim.EndReleased, Token: int64(i + 1), HasToken: true,
		})
		h.Sections = append(h.Sections, sim.Section{
			ID: i, Client: name, Lock: "L", BeliefID: i, Token: int64(i + 1), HasToken: true,
			ReadSent: readAt, ReadAt: readAt, Read: true, ReadValue: read,
			WriteSent: writeAt, WriteAt: writeAt, Written: true, WriteValue: read + 1,
			Outcome: sim.WriteAccepted, ResultAt: writeAt,
		})
		h.Wants = append(h.Wants, sim.Want{Client: name, Lock: "L", Start: attempt, End: start, Got: true})
		lastEnd[c] = end
		t = max(t, end)
	}
	h.End = t + sim.Time(time.Second)
	return h
}

func TestGenHistory(t *testing.T) {
	for _, k := range []int{5, 50} {
		legal := Check(genHistory(2000, k, false), Options{DefaultMaxWait: time.Minute})
		assert.Equal(t, []Verdict{Holds, Holds, Holds}, []Verdict{legal.Verdicts.Of(LockSafety), legal.Verdicts.Of(ResourceSafety), legal.Verdicts.Of(Liveness)}, "k=%d", k)
		assert.Empty(t, legal.Violations)

		bad := Check(genHistory(2000, k, true), Options{DefaultMaxWait: time.Minute})
		assert.Equal(t, []Verdict{Violated, Violated, Holds}, []Verdict{bad.Verdicts.Of(LockSafety), bad.Verdicts.Of(ResourceSafety), bad.Verdicts.Of(Liveness)}, "k=%d", k)
		var kinds []string
		for _, v := range bad.Violations {
			kinds = append(kinds, v.Kind)
		}
		assert.Equal(t, []string{KindLockSafety, KindLockSafety, KindResourceSafety, KindResourceSafety}, kinds, "k=%d: two overlaps, two lost updates", k)
	}
}

// BenchmarkCheck10k checks histories of 5,000 belief periods (10,000 lock
// operations) and 5,000 critical sections (5,000 resource operations).
func BenchmarkCheck10k(b *testing.B) {
	for _, bc := range []struct {
		clients int
		illegal bool
	}{{5, false}, {5, true}, {50, false}, {50, true}} {
		name := fmt.Sprintf("clients=%d/legal", bc.clients)
		if bc.illegal {
			name = fmt.Sprintf("clients=%d/illegal", bc.clients)
		}
		h := genHistory(5000, bc.clients, bc.illegal)
		want := Holds
		if bc.illegal {
			want = Violated
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				r := Check(h, Options{DefaultMaxWait: time.Minute})
				if r.Verdicts.Of(LockSafety) != want || r.Verdicts.Of(ResourceSafety) != want {
					b.Fatalf("verdicts %s, %s; want %s", r.Verdicts.Of(LockSafety), r.Verdicts.Of(ResourceSafety), want)
				}
			}
		})
	}
}

// BenchmarkCheck checks histories of 10k, 100k and 1M lock operations (half
// as many belief periods, as many critical sections, 5 clients), legal and
// with a lost update every thousand beliefs, reporting time and bytes
// allocated per check, and the peak growth of the heap during a check
// (peak-heap-MB). Before the split (issue 15) the 100k history needed 1.9 GB
// more heap (2.5 GB in the issue); the 1M one did not fit in memory.
//
//	go test ./checker -run '^$' -bench 'Check$' -benchtime 2x
func BenchmarkCheck(b *testing.B) {
	for _, ops := range []int{10_000, 100_000, 1_000_000} {
		for _, illegal := range []bool{false, true} {
			want := Holds
			name := fmt.Sprintf("ops=%s/legal", countName(ops))
			if illegal {
				want, name = Violated, fmt.Sprintf("ops=%s/illegal", countName(ops))
			}
			b.Run(name, func(b *testing.B) {
				h := genHistory(ops/2, 5, illegal) // only when selected
				b.ReportAllocs()
				var peak uint64
				for b.Loop() {
					var r Result
					peak = max(peak, peakHeapGrowth(func() { r = Check(h, Options{DefaultMaxWait: time.Minute}) }))
					if r.Verdicts.Of(LockSafety) != want || r.Verdicts.Of(ResourceSafety) != want {
						b.Fatalf("verdicts %s, %s; want %s", r.Verdicts.Of(LockSafety), r.Verdicts.Of(ResourceSafety), want)
					}
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			})
		}
	}
}

// peakHeapGrowth runs f and returns how far the heap's objects grew above
// their size before it (after a collection), sampled every millisecond: the
// memory a check needs beyond the history, garbage not yet collected
// included. The sampler only measures; it cannot change what f computes.
func peakHeapGrowth(f func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	peak := base
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	<-done
	return peak - base
}

// countName renders 10000 as 10k and 1000000 as 1M.
func countName(n int) string {
	switch {
	case n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}
