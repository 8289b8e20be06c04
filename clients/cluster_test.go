package clients

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/nodes/storage"
	"github.com/locksim/locksim/sim"
)

var clusterNames = []string{"n1", "n2", "n3", "n4", "n5", "n6"}

// cluster adds a 3-master, 3-replica Redis Cluster (n1..n6).
func (w *world) cluster(nt time.Duration) {
	members, err := redis.CreateCluster(clusterNames, 1)
	require.NoError(w.T, err)
	cc := redis.DefaultClusterConfig()
	cc.NodeTimeout, cc.Members = nt, members
	for _, n := range clusterNames {
		cfg := redis.DefaultConfig()
		c := cc
		cfg.Cluster = &c
		w.Add(n, func() sim.Process { return redis.New(cfg) }, sim.ClockSpec{})
	}
}

// Every single-node Redis algorithm works on a cluster through the
// cluster-aware client: the lock node names n1, the key's slot is n2's.
func TestClusterClientEveryAlgorithm(t *testing.T) {
	for _, alg := range Algorithms {
		a := Lookup(alg)
		if a.NodeKind != NodeRedis || a.MultiNode {
			continue
		}
		t.Run(alg, func(t *testing.T) {
			w := newWorld(t)
			w.cluster(15 * time.Second)
			w.storage(storage.FencingNone)
			lc := lockConfig(t, alg, func(c *LockConfig) { c.Node = "n1" })
			cfg := clientConfig("c1", lc, Workload{Start: time.Second, Cycles: 2, Hold: 100 * time.Millisecond, Think: 100 * time.Millisecond})
			cfg.Clusters = []*Cluster{{Nodes: clusterNames}}
			w.client(cfg)
			h := w.run(10 * time.Second)
			require.Len(t, beliefs(h, "c1"), 2, w.dumpTrace())
			// The slot map routes "lock" (slot 8718) to n2 at once.
			assert.False(t, w.TraceHas(KindClient, "c1", "MOVED"), w.dumpTrace())
			var sentTo []string
			for _, e := range w.K.Trace() {
				if e.Kind == sim.KindSend && e.Proc == "c1" && strings.Contains(e.Text, " lock") {
					sentTo = append(sentTo, e.Peer)
				}
			}
			require.NotEmpty(t, sentTo)
			for _, p := range sentTo {
				assert.Equal(t, "n2", p)
			}
		})
	}
}

// After a failover the old master answers MOVED and the client follows it
// to the new master, reloading its slot map.
func TestClusterClientFollowsMoved(t *testing.T) {
	w := newWorld(t)
	w.cluster(5 * time.Second)
	w.storage(storage.FencingNone)
	lc := lockConfig(t, RedisSingle, func(c *LockConfig) { c.Node = "n1" })
	cfg := clientConfig("c1", lc, Workload{Start: time.Second, Cycles: 2, Hold: 100 * time.Millisecond, Think: 3 * time.Second})
	cfg.Clusters = []*Cluster{{Nodes: clusterNames}}
	w.client(cfg)
	w.client(Config{Name: "op", Lock: lockConfig(t, RedisSingle, func(c *LockConfig) { c.Node = "n6" }), Workload: Workload{Start: time.Hour}})
	// n6 takes over n2's slots between the two cycles.
	w.At(2*time.Second, func() {
		w.K.Inject(w.ID("op"), w.ID("n6"), redis.Request{ID: 1, Args: []string{"CLUSTER", "FAILOVER", "TAKEOVER"}})
	})
	h := w.run(10 * time.Second)
	require.Len(t, beliefs(h, "c1"), 2, w.dumpTrace())
	assert.True(t, w.TraceHas(KindClient, "c1", "cluster: MOVED 8718 n6:6379, resending to n6"), w.dumpTrace())
}
