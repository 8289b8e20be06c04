package scenarios

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const clusterHead = `name: t
duration: 10s
clients:
  - name: c1
    lock: {algorithm: redis-single, node: C1, ttl: 5s}
    workload: {start: 0s, cycles: 1, hold: 1s}
`

// TestParseCluster: a cluster: section lays its nodes out as redis-cli
// --cluster create does, and the nodes are Redis servers that locks and
// faults name.
func TestParseCluster(t *testing.T) {
	s, err := Parse("t.yaml", []byte(clusterHead+"cluster: {masters: 3, replicas: 1, node_timeout: 5s}\nfaults:\n  - {at: 1s, kind: crash, node: C2}\n"))
	require.NoError(t, err)
	cs := s.Cluster()
	require.NotNil(t, cs)
	require.Len(t, cs.Nodes, 6)
	assert.Equal(t, "C2", cs.Nodes[5].ReplicaOf)
	assert.Equal(t, 5461, cs.Nodes[1].Slots[0].From)
	w, err := Build(s, 1, false)
	require.NoError(t, err)
	_, ok := w.Kernel.Lookup("C6")
	assert.True(t, ok)
}

// TestParseClusters: a list of independent clusters, for Redlock over
// clusters; their nodes are named by each cluster's prefix, and a lock over
// nodes of several routes within each.
func TestParseClusters(t *testing.T) {
	y := `name: t
duration: 10s
cluster:
  - {masters: 3}
  - {masters: 3, replicas: 1}
  - {name: X, masters: 3}
clients:
  - name: c1
    lock: {algorithm: redlock, nodes: [C1, D4, X3], ttl: 5s}
    workload: {start: 0s, cycles: 1, hold: 1s}
`
	s, err := Parse("t.yaml", []byte(y))
	require.NoError(t, err)
	require.Len(t, s.Clusters(), 3)
	assert.Equal(t, "cluster[1]", s.Clusters()[1].Path)
	assert.Equal(t, "D4", s.Clusters()[1].Nodes[3].Name)
	assert.Equal(t, "X1", s.Clusters()[2].Nodes[0].Name)
	w, err := Build(s, 1, false)
	require.NoError(t, err)
	_, ok := w.Kernel.Lookup("X3")
	assert.True(t, ok)
	_, err = Parse("t.yaml", []byte(strings.Replace(y, "{name: X, masters: 3}", "{name: C, masters: 3}", 1)))
	require.ErrorContains(t, err, "already used")
	_, err = Parse("t.yaml", []byte(strings.Replace(y, "{masters: 3, replicas: 1}", "{masters: 2}", 1)))
	require.ErrorContains(t, err, "cluster[1].masters: a Redis Cluster needs at least 3 masters")
}

// TestParseClusterErrors: a cluster that cannot form is refused, naming the
// field.
func TestParseClusterErrors(t *testing.T) {
	for _, tt := range []struct {
		name, cluster string
		want          []string
	}{
		{"one master", "cluster: {masters: 1}\n", []string{"t.yaml:7: cluster.masters: a Redis Cluster needs at least 3 masters", "got 1"}},
		{"no layout", "cluster: {replicas: 1}\n", []string{"cluster.masters: missing"}},
		{"both layouts", "cluster:\n  masters: 3\n  nodes: [{name: C1, slots: 0-16383}]\n", []string{"cluster.masters: give either"}},
		{"unassigned slots", "cluster:\n  nodes:\n    - {name: C1, slots: 0-8000}\n    - {name: C2, slots: 8001-16000}\n", []string{"cluster.nodes: slots 16001-16383 are not assigned"}},
		{"replica of a missing master", "cluster:\n  nodes:\n    - {name: C1, slots: 0-8000}\n    - {name: C2, slots: 8001-16383}\n    - {name: C3, replicaof: C9}\n", []string{"cluster.nodes[2].replicaof: \"C9\" is not a node of the cluster"}},
		{"single explicit master", "cluster:\n  nodes:\n    - {name: C1, slots: 0-16383}\n    - {name: C2, replicaof: C1}\n", []string{"cluster.nodes: a Redis Cluster needs at least 2 masters"}},
		{"slot twice", "cluster:\n  nodes:\n    - {name: C1, slots: 0-9000}\n    - {name: C2, slots: 8001-16383}\n", []string{"cluster.nodes[1].slots: slot 8001 is already served by C1"}},
		{"bad slot range", "cluster:\n  nodes:\n    - {name: C1, slots: 9-2}\n    - {name: C2, slots: 0-16383}\n", []string{"cluster.nodes[0].slots: bad slot range \"9-2\""}},
		{"replica of a replica", "cluster:\n  nodes:\n    - {name: C1, slots: 0-8000}\n    - {name: C2, slots: 8001-16383}\n    - {name: C3, replicaof: C1}\n    - {name: C4, replicaof: C3}\n", []string{"cluster.nodes[3].replicaof: \"C3\" is a replica itself"}},
		{"unknown field", "cluster: {masters: 3, colour: red}\n", []string{"cluster.colour: unknown field"}},
		{"negative migration barrier", "cluster: {masters: 3, replicas: 1, migration_barrier: -1}\n", []string{"t.yaml:7: cluster.migration_barrier: must be 0 or more (cluster-migration-barrier), got -1"}},
		{"migration barrier not a number", "cluster: {masters: 3, replicas: 1, migration_barrier: two}\n", []string{"cluster.migration_barrier: must be a whole number"}},
		{"allow replica migration not a bool", "cluster: {masters: 3, replicas: 1, allow_replica_migration: sometimes}\n", []string{"cluster.allow_replica_migration: must be true or false"}},
		{"too many nodes", "cluster:\n  nodes: [" + strings.Repeat("{name: X, replicaof: Y}, ", 31) + "]\n", []string{"cluster.nodes: 31 nodes; at most 30"}},
		{"too many masters", "cluster: {masters: 20, replicas: 1}\n", []string{"cluster.masters: 20 masters with 1 replicas each is 40 nodes; at most 30"}},
		{"promote a cluster replica", "cluster: {masters: 3, replicas: 1}\nfaults:\n  - {at: 1s, kind: promote, node: C4}\n", []string{"t.yaml:9: faults[0].node: \"C4\" is a cluster replica of C3: promote sends REPLICAOF NO ONE, which a cluster node refuses; promote it with kind: manual-failover"}},
		{"promote a cluster master", "cluster: {masters: 3, replicas: 1}\nfaults:\n  - {at: 1s, kind: promote, node: C1}\n", []string{"faults[0].node: \"C1\" is not a replica promote can act on (the scenario has none: promote acts on a replica of the redis: section)"}},
		{"node timeout in microseconds", "cluster: {masters: 3, node_timeout: 1500us}\n", []string{"t.yaml:7: cluster.node_timeout: cluster-node-timeout takes whole milliseconds, got 1.5ms"}},
		{"node timeout zero", "cluster: {masters: 3, node_timeout: 0s}\n", []string{"cluster.node_timeout: must be at least 1ms (cluster-node-timeout), got 0s"}},
		{"reshard to its source", "cluster: {masters: 3}\nfaults:\n  - {at: 1s, kind: reshard, key: lock, from: C2, to: C2}\n", []string{"t.yaml:9: faults[0].to: is C2, the master the slot migrates from: a reshard moves the slot to another master of the cluster"}},
		{"cluster failover of a stranger", "cluster: {masters: 3, replicas: 1}\nfaults:\n  - {at: 1s, kind: manual-failover, node: c1}\n", []string{"t.yaml:9: faults[0].node: \"c1\" is not a node of a Redis Cluster (the clusters' replicas: C4, C5, C6)"}},
		{"cluster failover unknown mode", "cluster: {masters: 3, replicas: 1}\nfaults:\n  - {at: 1s, kind: manual-failover, node: C6, mode: hard}\n", []string{"faults[0].mode:", "hard"}},
		{"reshard from a replica", "cluster: {masters: 3, replicas: 1}\nfaults:\n  - {at: 1s, kind: reshard, key: lock, from: C4, to: C1}\n", []string{"faults[0].from: \"C4\" is not a master of a cluster"}},
		{"reshard to a replica", "cluster: {masters: 3, replicas: 1}\nfaults:\n  - {at: 1s, kind: reshard, key: lock, from: C2, to: C5}\n", []string{"faults[0].to: \"C5\" is not a master of C2's cluster (its masters: C1, C2, C3)"}},
		{"reshard without key", "cluster: {masters: 3}\nfaults:\n  - {at: 1s, kind: reshard, from: C2, to: C1}\n", []string{"faults[0].key: required for kind reshard"}},
		{"reshard to an unknown node", "cluster: {masters: 3}\nfaults:\n  - {at: 1s, kind: reshard, key: lock, from: C2, to: C9}\n", []string{"faults[0].to:", "C9"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(clusterHead+tt.cluster))
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// TestReshardNeedsCluster: a reshard fault in a world without a Redis
// Cluster is refused, naming the field.
func TestReshardNeedsCluster(t *testing.T) {
	y := `name: t
duration: 5s
redis: [{name: A}, {name: B}]
clients:
  - {name: c1, lock: {algorithm: redis-single, node: A, ttl: 2s}}
faults:
  - {at: 1s, kind: reshard, key: lock, from: A, to: B}
`
	_, err := Parse("t.yaml", []byte(y))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "t.yaml:7: faults[0].kind: reshard migrates a slot of a Redis Cluster, and the scenario has no cluster: section")
}

// TestClusterFailoverNeedsCluster: a manual-failover fault in a world
// without a Redis Cluster is refused, naming the field and the fault that
// promotes a replica of the redis: section.
func TestClusterFailoverNeedsCluster(t *testing.T) {
	y := `name: t
duration: 5s
redis: [{name: A}, {name: B, replicaof: A}]
clients:
  - {name: c1, lock: {algorithm: redis-single, node: A, ttl: 2s}}
faults:
  - {at: 1s, kind: manual-failover, node: B}
`
	_, err := Parse("t.yaml", []byte(y))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "t.yaml:7: faults[0].kind: manual-failover sends CLUSTER FAILOVER to a replica of a Redis Cluster, and the scenario has no cluster: section (promote a replica of the redis: section with kind: promote)")
}

// TestClusterCounters: the stock counters run on a cluster node through
// the cluster-aware client; the atomic methods sell exactly the stock, the
// read-then-write one oversells.
func TestClusterCounters(t *testing.T) {
	for _, tc := range []struct{ method, want string }{{"decr", "holds"}, {"watch", "holds"}, {"script", "holds"}, {"get-set", "violated"}} {
		t.Run(tc.method, func(t *testing.T) {
			y := `name: t
duration: 5s
cluster: {masters: 3, replicas: 1}
counters:
  - name: stock
    node: C2
    stock: 12
    clients:
      - {name: c1, method: M, purchases: 5, think: 5ms}
      - {name: c2, method: M, purchases: 5, think: 5ms}
      - {name: c3, method: M, purchases: 5, think: 5ms}
`
			s, err := Parse("t.yaml", []byte(strings.ReplaceAll(y, "M,", tc.method+",")))
			require.NoError(t, err)
			o, err := Run(s, 1, Options{KeepTrace: true})
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(o.Verdicts.Of("resource_safety")))
			sold := 0
			for _, e := range o.Trace {
				if e.Kind == "send" && e.Proc == "c1" && strings.Contains(e.Text, "MOVED") {
					t.Errorf("unexpected redirect %s", e.Text)
				}
				if e.Kind == "send" && e.Proc == "c1" && strings.Contains(e.Text, "stock") && e.Peer == "C1" {
					sold++
				}
			}
			assert.Greater(t, sold, 0, "c1's commands on stock go to C1, the slot's master")
		})
	}
}

// TestClusterFailoverFault: the operator's CLUSTER FAILOVER in each mode
// promotes the replica (default: after the master paused and the replica
// caught up; force: an election without the master; takeover: no
// election), the reply is traced, and a master answers Redis's error.
func TestClusterFailoverFault(t *testing.T) {
	for _, tc := range []struct {
		name, node, mode, reply string
		promoted                bool
	}{
		{"default", "C6", "", "C6 CLUSTER FAILOVER: OK", true},
		{"force", "C6", "force", "C6 CLUSTER FAILOVER FORCE: OK", true},
		{"takeover", "C6", "takeover", "C6 CLUSTER FAILOVER TAKEOVER: OK", true},
		{"to a master", "C2", "force", "C2 CLUSTER FAILOVER FORCE: -ERR You should send CLUSTER FAILOVER to a replica", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mode := ""
			if tc.mode != "" {
				mode = ", mode: " + tc.mode
			}
			y := `name: t
duration: 10s
cluster: {masters: 3, replicas: 1, node_timeout: 2s}
clients:
  - name: c1
    lock: {algorithm: redis-single, node: C1, ttl: 20s}
    workload: {start: 500ms, cycles: 1, hold: 8s}
  - name: c2
    lock: {algorithm: redis-single, node: C1, ttl: 20s, tries: 10, retry_delay: 200ms}
    workload: {start: 5s, cycles: 1, hold: 1s}
faults:
  - {at: 2s, kind: manual-failover, node: ` + tc.node + mode + `}
`
			s, err := Parse("t.yaml", []byte(y))
			require.NoError(t, err)
			o, err := Run(s, 1, Options{KeepTrace: true})
			require.NoError(t, err)
			var steps []string
			promoted := false
			for _, e := range o.Trace {
				if e.Kind == KindOperatorStep {
					steps = append(steps, e.Text)
				}
				if e.Kind == "promoted" && e.Proc == "C6" {
					promoted = true
				}
			}
			assert.Equal(t, []string{tc.reply}, steps)
			assert.Equal(t, tc.promoted, promoted, "C6 promoted")
			// The key was replicated before the failover: the lock holds
			// whichever node serves the slot.
			assert.Equal(t, "holds", string(o.Verdicts.Of("lock_safety")))
		})
	}
}

// TestClusterReplicationKnobs: repl_timeout and repl_ping_replica_period
// reach every node (a stalled replication link is dropped repl-timeout
// after the master's last byte: the master pings every
// repl_ping_replica_period), and are whole seconds.
func TestClusterReplicationKnobs(t *testing.T) {
	run := func(knobs string) []string {
		y := `name: t
duration: 14s
cluster: {masters: 3, replicas: 1, node_timeout: 2s` + knobs + `}
clients:
  - name: c1
    lock: {algorithm: redis-single, node: C1, ttl: 5s}
    workload: {start: 0s, cycles: 1, hold: 1s}
faults:
  - {at: 1s, kind: partition, groups: [[C2], [C6]], heal_after: 12s}
`
		s, err := Parse("t.yaml", []byte(y))
		require.NoError(t, err)
		o, err := Run(s, 1, Options{KeepTrace: true})
		require.NoError(t, err)
		var lost []string
		for _, e := range o.Trace {
			// The replica closes its replication connection ("MASTER
			// timeout", replicationCron).
			if e.Kind == "conn-end" && e.Proc == "C6" && e.Peer == "C2" && e.Text == "close" {
				lost = append(lost, fmt.Sprintf("%.0fs", time.Duration(e.At).Seconds()))
			}
		}
		return lost
	}
	assert.Empty(t, run(""), "repl-timeout 60s: the link stalls and lives until the heal")
	// The master's last PING (every second) reached C6 at most 1s before
	// the cut; replicationCron (once a second, on the tenths) drops the
	// link when more than 4 whole seconds passed: at 5.1s or 6.1s.
	lost := run(", repl_timeout: 4s, repl_ping_replica_period: 1s")
	require.NotEmpty(t, lost, "repl-timeout 4s drops the stalled link")
	assert.Contains(t, []string{"5s", "6s"}, lost[0])

	for _, tt := range []struct{ knobs, want string }{
		{"repl_timeout: 1500ms", "cluster.repl_timeout: repl-timeout takes whole seconds, got 1.5s"},
		{"repl_timeout: 0s", "cluster.repl_timeout: must be at least 1s (repl-timeout), got 0s"},
		{"repl_ping_replica_period: 500ms", "cluster.repl_ping_replica_period: repl-ping-replica-period takes whole seconds, got 500ms"},
	} {
		_, err := Parse("t.yaml", []byte(clusterHead+"cluster: {masters: 3, "+tt.knobs+"}\n"))
		require.Error(t, err, tt.knobs)
		assert.Contains(t, err.Error(), "t.yaml:7: "+tt.want)
	}
}

// TestClusterReplicaNoFailover: a replica with cluster-replica-no-failover
// never replaces its failed master on its own (the slots stay down), but
// an operator's CLUSTER FAILOVER FORCE still promotes it
// (clusterHandleSlaveFailover, cluster.c:3604-3608).
func TestClusterReplicaNoFailover(t *testing.T) {
	for _, tc := range []struct {
		name, layout, faults string
		promoted             bool
	}{
		{"automatic failover", "{masters: 3, replicas: 1, node_timeout: 2s}", "", true},
		{"no failover", "{masters: 3, replicas: 1, node_timeout: 2s, replica_no_failover: true}", "", false},
		{"no failover, manual", "{masters: 3, replicas: 1, node_timeout: 2s, replica_no_failover: true}", "  - {at: 8s, kind: manual-failover, node: C6, mode: force}\n", true},
		{"explicit node", "\n  node_timeout: 2s\n  nodes:\n    - {name: C1, slots: 0-5460}\n    - {name: C2, slots: 5461-10922}\n    - {name: C3, slots: 10923-16383}\n    - {name: C6, replicaof: C2, no_failover: true}\n", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := `name: t
duration: 12s
cluster: ` + tc.layout + `
clients:
  - name: c1
    lock: {algorithm: redis-single, node: C1, ttl: 5s}
    workload: {start: 0s, cycles: 1, hold: 1s}
faults:
  - {at: 2s, kind: crash, node: C2}
` + tc.faults
			s, err := Parse("t.yaml", []byte(y))
			require.NoError(t, err)
			o, err := Run(s, 1, Options{KeepTrace: true})
			require.NoError(t, err)
			promoted := ""
			for _, e := range o.Trace {
				if e.Kind == "promoted" && e.Proc == "C6" {
					promoted = fmt.Sprintf("%.1fs", time.Duration(e.At).Seconds())
				}
			}
			assert.Equal(t, tc.promoted, promoted != "", "C6 promoted (%s)", promoted)
		})
	}
}

// TestClusterMasterWithoutSlots: an explicit layout may have a master
// without slots (a node added to receive a reshard). It is no part of the
// cluster's size and does not vote (clusterSendFailoverAuthIfNeeded,
// cluster.c:3343-3347); once a reshard gave it a slot, it votes.
func TestClusterMasterWithoutSlots(t *testing.T) {
	for _, tc := range []struct {
		name, reshard string
		voters        []string
	}{
		{"no slots, no vote", "", []string{"C1", "C3"}},
		{"resharded to it, it votes", "  - {at: 1s, kind: reshard, key: lock, from: C2, to: C4}\n", []string{"C1", "C3", "C4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := `name: t
duration: 10s
cluster:
  node_timeout: 2s
  nodes:
    - {name: C1, slots: 0-5460}
    - {name: C2, slots: 5461-10922}
    - {name: C3, slots: 10923-16383}
    - {name: C4}
    - {name: C5, replicaof: C2}
clients:
  - name: c1
    lock: {algorithm: redis-single, node: C1, ttl: 5s}
    workload: {start: 2s, cycles: 1, hold: 1s}
faults:
` + tc.reshard + `  - {at: 4s, kind: crash, node: C2}
`
			s, err := Parse("t.yaml", []byte(y))
			require.NoError(t, err)
			o, err := Run(s, 1, Options{KeepTrace: true})
			require.NoError(t, err)
			var voters []string
			promoted, lockOn := false, ""
			for _, e := range o.Trace {
				switch {
				case e.Kind == "cluster-election" && strings.HasPrefix(e.Text, "failover auth granted to C5"):
					voters = append(voters, e.Proc)
				case e.Kind == "promoted" && e.Proc == "C5":
					promoted = true
				case e.Kind == "key-set" && strings.HasPrefix(e.Text, `"lock"`) && lockOn == "":
					lockOn = e.Proc
				}
			}
			sort.Strings(voters)
			assert.Equal(t, tc.voters, voters)
			assert.True(t, promoted, "C5 elected")
			if tc.reshard != "" {
				assert.Equal(t, "C4", lockOn, "the lock's slot moved to C4 before c1 asked")
			}
		})
	}
	// configEpoch staging: two masters created with the same configEpoch
	// collide; the one with the smaller node id takes a new one
	// (clusterHandleConfigEpochCollision, cluster.c:1389-1410).
	y := `name: t
duration: 3s
cluster:
  nodes:
    - {name: C1, slots: 0-5460, config_epoch: 1}
    - {name: C2, slots: 5461-10922, config_epoch: 1}
    - {name: C3, slots: 10923-16383, config_epoch: 3}
clients:
  - name: c1
    lock: {algorithm: redis-single, node: C1, ttl: 5s}
    workload: {start: 0s, cycles: 1, hold: 1s}
`
	s, err := Parse("t.yaml", []byte(y))
	require.NoError(t, err)
	o, err := Run(s, 1, Options{KeepTrace: true})
	require.NoError(t, err)
	var bumped []string
	for _, e := range o.Trace {
		if e.Kind == "cluster-failover" && strings.HasPrefix(e.Text, "configEpoch collision") {
			bumped = append(bumped, e.Proc+": "+e.Text)
		}
	}
	// C1's id (SHA-1 of the name) is 28c2..., C2's cb7d...: C1 yields.
	assert.Equal(t, []string{"C1: configEpoch collision with node C2: configEpoch set to 4"}, bumped)
	_, err = Parse("t.yaml", []byte(strings.Replace(y, "config_epoch: 3", "config_epoch: 0", 1)))
	require.ErrorContains(t, err, "t.yaml:7: cluster.nodes[2].config_epoch: must be 1 or more (CLUSTER SET-CONFIG-EPOCH), got 0")
}
