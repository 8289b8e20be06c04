package libs

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim"
)

// TestDeterminismAtGOMAXPROCS1And2: every timeline gives one trace hash per
// seed at GOMAXPROCS 1 and at 2, with the libraries' own goroutines
// (redsync acquires on all nodes in parallel), 100 seeds each (10 with
// -short).
func TestDeterminismAtGOMAXPROCS1And2(t *testing.T) {
	seeds := uint64(100)
	if testing.Short() {
		seeds = 10
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, tl := range timelines {
		s := scenarioFor(t, tl)
		bind := bindAll(t, s, tl.factory)
		for seed := uint64(1); seed <= seeds; seed++ {
			var hash [3]string
			for i, procs := range []int{1, 2} {
				runtime.GOMAXPROCS(procs)
				r, err := locksim.RunUser(t, s, locksim.UserOptions{Seed: seed, Clients: bind})
				require.NoError(t, err)
				hash[i] = r.TraceHash
			}
			require.Equal(t, hash[0], hash[1], "%s with %s, seed %d: GOMAXPROCS 1 and 2 differ", tl.scenario, tl.library, seed)
		}
	}
}
