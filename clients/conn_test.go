package clients

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/nodes/storage"
	"github.com/locksim/locksim/sim"
)

// firstEvent returns the first trace event of kind at proc whose text
// contains text.
func (w *world) firstEvent(kind sim.Kind, proc, text string) (sim.Event, bool) {
	for _, e := range w.K.Trace() {
		if e.Kind == kind && e.Proc == proc && strings.Contains(e.Text, text) {
			return e, true
		}
	}
	return sim.Event{}, false
}

// TestRequestFailsOnReset: a request to a crashed server fails one round
// trip after it was sent (the host answers with a reset), not after the
// client's timeout.
func TestRequestFailsOnReset(t *testing.T) {
	w := newWorld(t)
	lc := lockConfig(t, RedisSingle, nil)
	servers(w, &lc)
	w.storage(storage.FencingNone)
	w.client(clientConfig("c1", lc, Workload{Start: 100 * time.Millisecond, Cycles: 1, Hold: 100 * time.Millisecond}))
	w.At(50*time.Millisecond, func() { w.K.Crash(w.ID("A"), sim.CrashProcess) })
	w.run(2 * time.Second)
	e, ok := w.firstEvent(KindClient, "c1", "connection with A reset")
	require.True(t, ok, w.dumpTrace())
	assert.Less(t, e.At, sim.At(120*time.Millisecond), "one round trip, not a timeout")
	_, ok = w.firstEvent(sim.KindConnEnd, "c1", "reset")
	assert.True(t, ok)
}

// TestTimeoutClosesConnection: go-redis closes a connection whose read
// timed out, so the server's late reply never reaches the client (it is
// discarded with the connection), and the next command dials anew.
func TestTimeoutClosesConnection(t *testing.T) {
	for _, tt := range []struct {
		alg    string
		closes bool
	}{
		{RedisSingle, true},
		{Redisson, false}, // Netty keeps the connection after a timeout
	} {
		t.Run(tt.alg, func(t *testing.T) {
			w := newWorld(t)
			lc := lockConfig(t, tt.alg, nil)
			servers(w, &lc)
			w.storage(storage.FencingNone)
			w.client(clientConfig("c1", lc, Workload{Start: 100 * time.Millisecond, Cycles: 1, Hold: 100 * time.Millisecond}))
			w.At(90*time.Millisecond, func() { w.K.Pause(w.ID("A"), 10*time.Second) })
			w.run(60 * time.Second)
			_, closed := w.firstEvent(sim.KindConnEnd, "c1", "close")
			assert.Equal(t, tt.closes, closed)
			_, late := w.firstEvent(KindClient, "c1", "ignored late reply")
			assert.Equal(t, !tt.closes, late, "a late reply reaches the client only on a kept connection")
			// The SETs sent into the pause executed when A resumed (a request
			// outlives the client's timeout): the client gets the lock once
			// the stale key expired, on a new connection.
			ws := wants(w.K.History(), "c1")
			require.NotEmpty(t, ws)
			assert.True(t, ws[len(ws)-1].Got)
		})
	}
}
