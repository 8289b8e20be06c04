package clients

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/nodes/storage"
)

// TestPendingTimersStayBounded runs every algorithm's lock cycle back to
// back for 15 s of simulated time (a thousand or more of cycles, each setting
// and cancelling a dozen request timeouts) and samples, every second, the
// client's active timers and the kernel's queue. Neither may grow with the
// number of cycles: issue 15 found 4,374 queued timer events for one
// Redlock client after 3,067 s, the cancelled request timeouts of the last
// 5 s waiting in the queue for their due time.
func TestPendingTimersStayBounded(t *testing.T) {
	for _, alg := range Algorithms {
		t.Run(alg, func(t *testing.T) {
			w := newWorld(t)
			lc := lockConfig(t, alg, nil)
			servers(w, &lc)
			w.storage(storage.FencingNone)
			c1 := w.client(clientConfig("c1", lc, Workload{}))
			maxTimers, maxQueued := 0, 0
			for s := 1; s <= 15; s++ {
				w.At(time.Duration(s)*time.Second, func() {
					maxTimers = max(maxTimers, w.K.ActiveTimers(c1))
					maxQueued = max(maxQueued, w.K.QueuedEvents())
				})
			}
			h := w.run(15 * time.Second)
			cycles := len(beliefs(h, "c1"))
			t.Logf("%d cycles, at most %d active timers in c1, %d queued events", cycles, maxTimers, maxQueued)
			require.Greater(t, cycles, 500, "too few cycles to show a leak")
			assert.LessOrEqual(t, maxTimers, 8, "c1's active timers")
			assert.LessOrEqual(t, maxQueued, 600, "the kernel's queued events")
		})
	}
}
