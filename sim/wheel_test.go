package sim

import (
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWheelKeepsTimerOrder: timers due now, within a slot, on slot
// boundaries, across the wheel's horizon and beyond it fire in the order of
// their deadlines, ties in the order they were set, as from the heap alone
// (timers set while others wait make the heap's earliest event and a
// slot's start meet); timers cancelled before they were due (at once, or
// by an earlier timer while their event waited in the wheel or the heap)
// never fire.
func TestWheelKeepsTimerOrder(t *testing.T) {
	const n = 3000
	var x uint64 = 42
	rnd := func(m uint64) uint64 { // a fixed LCG: the test is deterministic
		x = x*6364136223846793005 + 1442695040888963407
		return (x >> 33) % m
	}
	var (
		deadline  []Time // of timer i (its tag), in the order they were set
		ids       []TimerID
		cancelled = map[int]bool{}
		cancels   = map[int]int{} // timer i cancels timer j when it fires
		fired     []int
		w         *world
	)
	set := func(env *Env, d time.Duration) int {
		i := len(deadline)
		deadline = append(deadline, w.k.Now()+Time(d))
		ids = append(ids, env.After(Mono, d, i))
		return i
	}
	w = newWorld(Config{Seed: 1})
	w.add("a", hooks{
		init: func(env *Env) {
			for i := 0; i < n; i++ {
				var d time.Duration
				switch rnd(5) {
				case 0: // within the first slots, often on a slot boundary
					d = time.Duration(rnd(4) * wheelWidth)
				case 1: // beyond the horizon
					d = time.Duration(wheelSlots*wheelWidth + rnd(uint64(3*time.Second)))
				default:
					d = time.Duration(rnd(uint64(12 * time.Second)))
				}
				set(env, d)
			}
			for i := 0; i < n; i++ {
				switch j := int(rnd(n)); {
				case rnd(7) == 0:
					cancelled[i] = env.Cancel(ids[i])
				case deadline[j] > deadline[i] && rnd(3) == 0:
					cancels[i] = j
				}
			}
		},
		fire: func(env *Env, tag any) {
			i := tag.(int)
			require.Equal(t, deadline[i], w.k.Now(), "timer %d", i)
			fired = append(fired, i)
			if j, ok := cancels[i]; ok && !cancelled[j] {
				cancelled[j] = env.Cancel(ids[j])
			}
			if i < n && rnd(2) == 0 {
				// A timer due on a slot boundary near or far, where
				// timers set at init or later may wait too.
				next := (w.k.Now()/wheelWidth + 1 + Time(rnd(3))) * wheelWidth
				set(env, time.Duration(next-w.k.Now()))
			}
		},
	})
	require.NoError(t, w.k.Run(At(30*time.Second)))
	var want []int
	for i := range deadline {
		if !cancelled[i] {
			want = append(want, i)
		}
	}
	sort.SliceStable(want, func(a, b int) bool { return deadline[want[a]] < deadline[want[b]] })
	require.Equal(t, want, fired)
	require.Zero(t, w.k.QueuedEvents(), "every event was drained or dropped")
}
