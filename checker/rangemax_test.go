package checker

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// TestFreeStretchesAgreesWithAScan compares the segment tree with a plain
// scan of the clipped stretches on random windows and waits.
func TestFreeStretchesAgreesWithAScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 2))
	for run := 0; run < 2000; run++ {
		var ws []Window
		var at sim.Time
		for n := rng.IntN(12); n > 0; n-- {
			at += sim.Time(1 + rng.IntN(4))
			end := at + sim.Time(1+rng.IntN(6))
			ws = append(ws, Window{Start: at, End: end})
			at = end
		}
		f := newFreeStretches(ws)
		for q := 0; q < 20; q++ {
			from := sim.Time(rng.IntN(int(at) + 3))
			to := from + sim.Time(rng.IntN(20))
			bound := time.Duration(rng.IntN(6))
			// The scan.
			var longest time.Duration
			var any, over bool
			var first Window
			for _, w := range ws {
				c := Window{Start: maxTime(w.Start, from), End: minTime(w.End, to)}
				if c.End <= c.Start {
					continue
				}
				d := c.End.Sub(c.Start)
				longest, any = max(longest, d), true
				if d > bound && !over {
					first, over = c, true
				}
			}
			d, ok := f.longest(from, to)
			require.Equal(t, any, ok, "run %d: %v in [%d, %d]", run, ws, from, to)
			require.Equal(t, longest, d, "run %d: %v in [%d, %d]", run, ws, from, to)
			w, ok := f.firstOver(from, to, bound)
			require.Equal(t, over, ok, "run %d: %v in [%d, %d] over %d", run, ws, from, to, bound)
			require.Equal(t, first, w, "run %d: %v in [%d, %d] over %d", run, ws, from, to, bound)
		}
	}
}

// TestLaterFaultsAgreesWithAScan compares the indexed look-up of the heal
// and restart that end a fault with a scan of every later record, on
// random fault lists, in time order and not.
func TestLaterFaultsAgreesWithAScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 3))
	procs := []string{"A", "B", "C"}
	kinds := []string{"heal", "restart", "crash", "partition"}
	for run := 0; run < 1000; run++ {
		var fs []sim.FaultRecord
		var at sim.Time
		for n := rng.IntN(15); n > 0; n-- {
			if run%2 == 0 {
				at += sim.Time(rng.IntN(3)) // in time order
			} else {
				at = sim.Time(rng.IntN(20))
			}
			var ts []string
			for _, p := range procs {
				if rng.IntN(2) == 0 {
					ts = append(ts, p)
				}
			}
			fs = append(fs, fault(at, 0, kinds[rng.IntN(len(kinds))], "f", ts...))
		}
		l := newLaterFaults(fs)
		for i, f := range fs {
			var wantHeal, wantRestart sim.Time
			var okHeal, okRestart bool
			for _, g := range fs[i+1:] {
				if !okHeal && g.Liveness == sim.LiveHeal && g.At >= f.At {
					wantHeal, okHeal = g.At, true
				}
				if !okRestart && g.Liveness == sim.LiveRestart && g.At >= f.At && targets(g, f.Targets) {
					wantRestart, okRestart = g.At, true
				}
			}
			got, ok := l.heal(i, f.At)
			require.Equal(t, okHeal, ok, "run %d, fault %d: %v", run, i, fs)
			require.Equal(t, wantHeal, got, "run %d, fault %d: %v", run, i, fs)
			got, ok = l.restart(i, f)
			require.Equal(t, okRestart, ok, "run %d, fault %d: %v", run, i, fs)
			require.Equal(t, wantRestart, got, "run %d, fault %d: %v", run, i, fs)
		}
	}
}
