package usercode

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
)

// TestDeterminismAtAnyGOMAXPROCS: a Redlock of the team's own, acquiring on
// five nodes from parallel goroutines, gives one trace hash per seed at
// GOMAXPROCS 1 and 2, and finds Kleppmann's clock-jump violation.
func TestDeterminismAtAnyGOMAXPROCS(t *testing.T) {
	s := builtin(t, "redlock-clock-jump")
	bind := map[string]func(*Proc) Lock{"c1": newQuorumLock, "c2": newQuorumLock}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	seeds := 20
	if testing.Short() {
		seeds = 5
	}
	violated := 0
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		hashes := map[int]string{}
		for _, procs := range []int{1, 2, 1, 2} {
			runtime.GOMAXPROCS(procs)
			o, err := Run(t, s, Options{Seed: seed, Clients: bind})
			require.NoError(t, err)
			if h, ok := hashes[procs]; ok {
				require.Equal(t, h, o.TraceHash, "seed %d GOMAXPROCS %d", seed, procs)
			}
			hashes[procs] = o.TraceHash
			if procs == 1 && o.Verdicts.Of(checker.LockSafety) == checker.Violated {
				violated++
			}
		}
		require.Equal(t, hashes[1], hashes[2], "seed %d", seed)
	}
	require.Positive(t, violated)
}
