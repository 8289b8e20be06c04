package zookeeper

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// TestSessionBoundsFollowTickTime: with min/max session timeouts unset, a
// deployment that only sets tickTime negotiates within [2, 20] ticks
// (ZooKeeperServer.java:1393-1405), as scenarios build it.
func TestSessionBoundsFollowTickTime(t *testing.T) {
	tests := []struct {
		tick      time.Duration
		requested time.Duration
		want      time.Duration
	}{
		{2 * time.Second, time.Second, 4 * time.Second},
		{2 * time.Second, time.Minute, 40 * time.Second},
		{3 * time.Second, time.Second, 6 * time.Second},
		{3 * time.Second, 50 * time.Second, 50 * time.Second},
		{3 * time.Second, 2 * time.Minute, time.Minute},
		{500 * time.Millisecond, 30 * time.Second, 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.tick.String()+"/"+tt.requested.String(), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.TickTime = tt.tick
			require.NoError(t, cfg.Validate())
			assert.Equal(t, tt.want, cfg.Negotiate(tt.requested))
		})
	}
}

// TestSessionLearnsServerCrash: a killed service's host closes its sockets
// (a FIN): the session is disconnected one way after the crash (not after
// the read timeout), and reconnects to its session when the service is
// back: the restarted service recovered it from its disk (persist.go) and
// tracks it anew from the restart.
func TestSessionLearnsServerCrash(t *testing.T) {
	k, zk := newWorld(t, DefaultConfig())
	c, _ := addSess(k, "c", connectAt(0, 30*time.Second, false))
	k.At(sim.At(time.Second), func() { k.Crash(zk, sim.CrashProcess) })
	k.At(sim.At(15*time.Second), func() { k.Restart(zk) })
	require.NoError(t, k.Run(sim.At(30*time.Second)))
	// The FIN of the crash at 1s arrives at 1.001s.
	require.GreaterOrEqual(t, len(c.log), 2)
	assert.Equal(t, []string{"0.002s connected", "1.001s disconnected"}, c.log[:2])
	assert.Contains(t, c.log, "21.003s reconnected")
	assert.NotContains(t, strings.Join(c.log, "\n"), "expired")
}
