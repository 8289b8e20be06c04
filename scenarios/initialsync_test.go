package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInitialSyncWarning: a fault before the model's replicas can have
// synced (they start syncing at 0s over the network) makes a world real
// mode cannot start (it waits for every replica's link), so the scenario
// says so where it matters: a cluster replica that never synced never
// stands for election (outsider3's twin disagreement), a master with
// min_replicas_to_write counts no such replica. Sentinel stories that cut
// the link at 0s (single-failover) are not warned: Sentinel promotes a
// never-synced replica alike.
func TestInitialSyncWarning(t *testing.T) {
	cluster := `name: t
duration: 20s
cluster: {masters: 3, replicas: 1, node_timeout: 2s}
clients:
  - name: c1
    lock: {algorithm: redis-single, node: C2, ttl: 30s}
    workload: {start: 200ms, cycles: 1, hold: 5s}
faults:
  - at: AT
    kind: KIND
`
	plain := `name: t
duration: 20s
redis:
  - {name: M, min_replicas_to_write: MIN}
  - {name: R, replicaof: M}
clients:
  - name: c1
    lock: {algorithm: redis-single, node: M, ttl: 30s}
    workload: {start: 200ms, cycles: 1, hold: 5s}
faults:
  - at: AT
    kind: KIND
`
	tests := []struct {
		name, yaml, at, min, kind string
		warn                      string // "" for none
	}{
		{"cluster cut at 0s", cluster, "0s", "", "partition\n    groups: [[C2], [C6]]", "t.yaml:9: faults[0].at: the partition at 0s acts on C6's link to its master C2 before the model's initial sync can have completed (up to 6ms"},
		{"cluster cut after the sync", cluster, "6ms", "", "partition\n    groups: [[C2], [C6]]", ""},
		{"cluster cut elsewhere", cluster, "0s", "", "partition\n    groups: [[C1], [C6]]", ""},
		{"cluster master paused at 0s", cluster, "0s", "", "pause\n    node: C2\n    for: 1s", "the pause at 0s acts on C6's link to its master C2"},
		{"cluster drop at 1ms", cluster, "1ms", "", "drop\n    from: C2\n    to: C6\n    count: 1", "does not stand for election"},
		{"min replicas cut at 0s", plain, "0s", "1", "partition\n    groups: [[M], [R]]", "M's min_replicas_to_write does not count a replica that never synced"},
		{"sentinel-style cut at 0s", plain, "0s", "0", "partition\n    groups: [[M], [R]]", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y := strings.NewReplacer("AT", tt.at, "MIN", tt.min, "KIND", tt.kind).Replace(tt.yaml)
			s, err := Parse("t.yaml", []byte(y))
			require.NoError(t, err)
			if tt.warn == "" {
				assert.Empty(t, s.Warnings)
				return
			}
			require.Len(t, s.Warnings, 1)
			assert.Contains(t, s.Warnings[0], tt.warn)
		})
	}
	for _, name := range []string{"single-failover", "single-failover-wait", "fencing-counter-failover"} {
		s, err := Builtin(name)
		require.NoError(t, err)
		assert.Empty(t, s.Warnings, name)
	}
}
