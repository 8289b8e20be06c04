package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/nodes/zookeeper"
	"github.com/locksim/locksim/sim"
)

// TestTickTimeMovesSessionBounds: a scenario's tick_time moves the
// negotiated session timeout bounds (2 and 20 ticks, ZooKeeperServer.java
// 1393-1405), which Build used to leave at 4 s and 40 s.
func TestTickTimeMovesSessionBounds(t *testing.T) {
	tests := []struct {
		tick, requested string
		want            string
	}{
		{"", "1s", "timeout 4s requested 1s"},
		{"3s", "1s", "timeout 6s requested 1s"},
		{"3s", "50s", "timeout 50s requested 50s"},
		{"1s", "30s", "timeout 20s requested 30s"},
	}
	for _, tt := range tests {
		t.Run(tt.tick+"/"+tt.requested, func(t *testing.T) {
			zk := "zookeeper: {lock_delay: 0s}"
			if tt.tick != "" {
				zk = "zookeeper: {lock_delay: 0s, tick_time: " + tt.tick + "}"
			}
			src := `name: tick
duration: 5s
` + zk + `
clients:
  - name: c1
    lock: {algorithm: zookeeper, node: zk, session_timeout: ` + tt.requested + `}
    workload: {start: 0s, cycles: 1, hold: 1s}
`
			s, err := Parse("tick.yaml", []byte(src))
			require.NoError(t, err)
			w, err := Build(s, 1, true)
			require.NoError(t, err)
			require.NoError(t, w.Kernel.Run(sim.At(time.Second)))
			var opened []string
			for _, e := range w.Kernel.Trace() {
				if e.Kind == zookeeper.KindSessionOpen {
					opened = append(opened, e.Text)
				}
			}
			require.Len(t, opened, 1)
			assert.True(t, strings.Contains(opened[0], tt.want), opened[0])
		})
	}
}

// TestLivenessBoundUsesNegotiatedSession: the default liveness bound and
// the settling time of a zookeeper client count the session the server
// negotiated, not the one requested. A holder that crashes with a 1s
// request (negotiated up to 4s with tickTime 2s) keeps its ephemeral
// node about 4s, which a bound of 2 × 1s + 1s called a liveness violation.
func TestLivenessBoundUsesNegotiatedSession(t *testing.T) {
	tests := []struct {
		zk, requested string
		wantWait      time.Duration
		wantSettle    time.Duration
	}{
		{"{tick_time: 2s}", "1s", 2*4*time.Second + time.Second, 4 * time.Second},
		{"{tick_time: 2s}", "10s", 2*10*time.Second + time.Second, 10 * time.Second},
		{"{tick_time: 2s}", "60s", 2*40*time.Second + time.Second, 40 * time.Second},
		{"{tick_time: 2s, max_session_timeout: 6s}", "60s", 2*6*time.Second + time.Second, 6 * time.Second},
		{"{tick_time: 2s, min_session_timeout: 8s}", "5s", 2*8*time.Second + time.Second, 8 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.zk+"/"+tt.requested, func(t *testing.T) {
			src := `name: bound
duration: 30s
zookeeper: ` + tt.zk + `
clients:
  - name: c1
    lock: {algorithm: zookeeper, node: zk, session_timeout: ` + tt.requested + `}
    workload: {start: 0s, cycles: 1, hold: 5s}
`
			s, err := Parse("bound.yaml", []byte(src))
			require.NoError(t, err)
			w, err := Build(s, 1, false)
			require.NoError(t, err)
			assert.Equal(t, tt.wantWait, w.MaxWait["c1"])
			assert.Equal(t, tt.wantSettle, w.Settle)
		})
	}
}
