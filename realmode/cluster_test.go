package realmode

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/scenarios"
)

// TestRealCluster runs a Redis Cluster scenario on real redis-server
// processes (cluster-enabled, created as redis-cli --cluster create does,
// bus and client connections through the proxy): the cluster-aware client
// finds the lock's slot from CLUSTER SLOTS (whose addresses the gateway
// turns into process names), the master acknowledges the lock and loses
// power before replicating it, the real cluster elects the replica, and a
// second client takes the lock there: the violation the model predicts.
// Every server is gone afterwards.
func TestRealCluster(t *testing.T) {
	needServers(t)
	src := `
name: real-cluster
duration: 14s
cluster: {masters: 3, replicas: 1, node_timeout: 2s}
clients:
  - name: c1
    lock: {algorithm: redis-single, node: C1, ttl: 30s}
    workload: {start: 1s, cycles: 1, hold: 11s}
  - name: c2
    lock: {algorithm: redis-single, node: C1, ttl: 30s}
    workload: {start: 9s, cycles: 1, hold: 1s}
faults:
  - {at: 1s, kind: partition, groups: [[C2], [C6]], heal_after: 1s}
  - {on: {event: key-set, node: C2}, after: 50ms, kind: crash, node: C2, mode: power}
`
	s, err := scenarios.Parse("real-cluster.yaml", []byte(src))
	require.NoError(t, err)
	require.NoError(t, Check(s))
	var pids []int
	o, err := run(context.Background(), s, 1, Options{Dir: t.TempDir()}, func(rt *runtime) {
		for _, srv := range rt.servers {
			pids = append(pids, srv.pid())
		}
	})
	require.NoError(t, err)
	assert.Equal(t, checker.Violated, o.Verdicts.Of(checker.LockSafety))
	require.Len(t, pids, 6)
	for _, pid := range pids {
		assert.False(t, alive(pid), "server pid %d still runs after Run returned", pid)
	}
}
