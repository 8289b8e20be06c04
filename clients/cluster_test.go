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

// During a slot migration the source answers -ASK for the lock key it does
// not have, and the client sends ASKING and then the command to the node
// named (GR osscluster.go:1528-1533), without taking the ASK into its slot
// map: every command of the lock goes to the source first, and is asked
// over each time. Once the slot is closed the source answers -MOVED.
func TestClusterClientFollowsAsk(t *testing.T) {
	w := newWorld(t)
	w.cluster(5 * time.Second)
	w.storage(storage.FencingNone)
	lc := lockConfig(t, RedisSingle, func(c *LockConfig) { c.Node = "n1" })
	cfg := clientConfig("c1", lc, Workload{Start: time.Second, Cycles: 3, Hold: 100 * time.Millisecond, Think: 700 * time.Millisecond})
	cfg.Clusters = []*Cluster{{Nodes: clusterNames}}
	w.client(cfg)
	w.client(Config{Name: "op", Lock: lockConfig(t, RedisSingle, func(c *LockConfig) { c.Node = "n1" }), Workload: Workload{Start: time.Hour}})
	op := func(at time.Duration, node string, args ...string) {
		w.At(at, func() { w.K.Inject(w.ID("op"), w.ID(node), redis.Request{ID: uint64(at), Args: args}) })
	}
	// Slot 8718 ("lock") opens for a move from n2 to n1 before the first
	// cycle and closes after the second.
	op(500*time.Millisecond, "n1", "CLUSTER", "SETSLOT", "8718", "IMPORTING", redis.NodeID("n2"))
	op(600*time.Millisecond, "n2", "CLUSTER", "SETSLOT", "8718", "MIGRATING", redis.NodeID("n1"))
	op(2500*time.Millisecond, "n1", "CLUSTER", "SETSLOT", "8718", "NODE", redis.NodeID("n1"))
	op(2600*time.Millisecond, "n2", "CLUSTER", "SETSLOT", "8718", "NODE", redis.NodeID("n1"))
	h := w.run(5 * time.Second)
	require.Len(t, beliefs(h, "c1"), 3, w.dumpTrace())
	asks := 0
	var sends []sim.Event
	for _, e := range w.K.Trace() {
		if e.Kind == sim.KindSend && e.Proc == "c1" && (e.Peer == "n1" || e.Peer == "n2") && !strings.Contains(e.Text, "CLUSTER SLOTS") {
			sends = append(sends, e)
		}
		if e.Kind == KindClient && e.Proc == "c1" && strings.Contains(e.Text, "cluster: ASK 8718 n1:6379, resending to n1") {
			asks++
		}
	}
	// Two cycles of SET and release during the migration, and the first
	// release's EVAL after n1 answered its EVALSHA with NOSCRIPT (go-redis
	// Script.Run): five ASKs.
	assert.Equal(t, 5, asks, w.dumpTrace())
	for i, e := range sends {
		if strings.HasSuffix(e.Text, " ASKING") {
			require.Less(t, i+1, len(sends))
			assert.Equal(t, "n1", e.Peer)
			assert.Equal(t, "n1", sends[i+1].Peer, "the command follows its ASKING on the same node")
			assert.Equal(t, "n2", sends[i-1].Peer, "each command went to the source first: the ASK did not change the slot map")
		}
	}
	assert.True(t, w.TraceHas(KindClient, "c1", "cluster: MOVED 8718 n1:6379, resending to n1"), w.dumpTrace())
}

// A Redisson client in a cluster asks WAIT for as many replicas as the
// slot map lists for its key's master (Redisson's MasterSlaveEntry comes
// from the topology scan, which leaves failed replicas out), not for
// INFO replication's connected_slaves, which still counts a dead replica
// until repl-timeout: with n6, n2's only replica, dead and flagged FAIL,
// the lock is taken at once, without a WAIT.
func TestClusterRedissonWaitCountFromSlotMap(t *testing.T) {
	w := newWorld(t)
	w.cluster(2 * time.Second)
	w.storage(storage.FencingNone)
	lc := lockConfig(t, Redisson, func(c *LockConfig) { c.Node = "n1" })
	cfg := clientConfig("c1", lc, Workload{Start: 10 * time.Second, Cycles: 1, Hold: 100 * time.Millisecond})
	cfg.Clusters = []*Cluster{{Nodes: clusterNames}}
	w.client(cfg)
	w.At(500*time.Millisecond, func() { w.K.Crash(w.ID("n6"), sim.CrashPower) })
	h := w.run(14 * time.Second)
	b := beliefs(h, "c1")
	require.Len(t, b, 1, w.dumpTrace())
	assert.Less(t, time.Duration(b[0].Start), 10*time.Second+200*time.Millisecond, "the lock waited for a dead replica\n%s", w.dumpTrace())
	for _, e := range w.K.Trace() {
		if e.Kind == sim.KindSend && e.Proc == "c1" {
			assert.NotContains(t, e.Text, " WAIT ", "WAIT for a replica the slot map does not list")
		}
	}
}
