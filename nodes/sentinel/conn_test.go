package sentinel

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// connEnds returns the conn-end events of a sentinel with peer.
func (w *world) connEnds(proc, peer string) []sim.Event {
	var out []sim.Event
	for _, e := range w.K.Trace() {
		if e.Kind == sim.KindConnEnd && e.Proc == proc && e.Peer == peer {
			out = append(out, e)
		}
	}
	return out
}

// TestLinkLearnsReset: a killed master's host closes its sockets (a FIN),
// so each sentinel's link is disconnected one way after the crash; its
// reconnections are refused (and SDOWN still waits for down_after).
func TestLinkLearnsReset(t *testing.T) {
	w := newRedisWorld(t, 1, fastConfig(), standardRedis(), 3)
	w.At(10*time.Second, func() { w.K.Crash(w.ID("A"), sim.CrashProcess) })
	w.RunTo(sim.At(20 * time.Second))
	for _, s := range w.sentinels {
		ends := w.connEnds(s, "A")
		require.NotEmpty(t, ends, s)
		assert.Equal(t, "closed", ends[0].Text)
		assert.Less(t, ends[0].At, sim.At(10100*time.Millisecond), s)
		require.Greater(t, len(ends), 1, "%s reconnects and is refused", s)
		assert.Equal(t, "reset", ends[1].Text)
		sd := w.first(KindSDown, s)
		assert.GreaterOrEqual(t, sd, sim.At(15*time.Second), "%s: SDOWN after down_after, not at the reset", s)
	}
}

// TestLinkTimeoutClosesConnection: a link whose PING stays unanswered for
// more than down_after/2, once 15 s old, is closed by the sentinel
// (sentinel.c:4549-4560), closing the connection.
func TestLinkTimeoutClosesConnection(t *testing.T) {
	w := newRedisWorld(t, 1, fastConfig(), standardRedis(), 3)
	w.At(20*time.Second, func() {
		w.K.Partition([][]sim.ProcID{{w.ID("S1")}, {w.ID("A"), w.ID("B"), w.ID("C")}})
	})
	w.RunTo(sim.At(30 * time.Second))
	ends := w.connEnds("S1", "A")
	require.NotEmpty(t, ends)
	assert.Equal(t, "close", ends[0].Text)
	assert.Greater(t, ends[0].At, sim.At(22500*time.Millisecond))
	assert.Less(t, ends[0].At, sim.At(24*time.Second))
}
