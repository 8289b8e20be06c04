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
