package redis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// migrationMembers is a 3-master cluster where n2 has one replica (n5) and
// n3 two (n6, n7): the layout of the catalogue's cluster-replica-migration.
func migrationMembers() []ClusterMember {
	return []ClusterMember{
		{Name: "n1", Slots: []SlotRange{{0, 5460}}, ConfigEpoch: 1},
		{Name: "n2", Slots: []SlotRange{{5461, 10922}}, ConfigEpoch: 2},
		{Name: "n3", Slots: []SlotRange{{10923, 16383}}, ConfigEpoch: 3},
		{Name: "n4", ReplicaOf: "n1", ConfigEpoch: 4},
		{Name: "n5", ReplicaOf: "n2", ConfigEpoch: 5},
		{Name: "n6", ReplicaOf: "n3", ConfigEpoch: 6},
		{Name: "n7", ReplicaOf: "n3", ConfigEpoch: 7},
	}
}

// memberWorld builds the cluster members with node timeout nt; edit
// changes the shared settings.
func memberWorld(t *testing.T, nt time.Duration, members []ClusterMember, edit func(*ClusterConfig)) *world {
	t.Helper()
	cc := DefaultClusterConfig()
	cc.NodeTimeout = nt
	cc.Members = members
	if edit != nil {
		edit(&cc)
	}
	require.NoError(t, cc.Validate())
	var specs []nodeSpec
	for _, m := range members {
		cfg := DefaultConfig()
		c := cc
		cfg.Cluster = &c
		specs = append(specs, nodeSpec{name: m.Name, cfg: cfg})
	}
	return newWorld(t, time.Millisecond, specs...)
}

// migrationCandidate is the replica of n3 with the smaller node id.
func migrationCandidate() (cand, other string) {
	if NodeID("n6") < NodeID("n7") {
		return "n6", "n7"
	}
	return "n7", "n6"
}

// TestClusterReplicaMigration: n2's only replica dies; once the masters
// flag it FAIL, the replica of n3 (which has two) with the smaller node id
// migrates to n2 more than CLUSTER_SLAVE_MIGRATION_DELAY (5 s) after it
// first saw n2 orphaned, resynchronises from it, and is elected when n2
// fails in turn. With cluster-migration-barrier 2 or
// cluster-allow-replica-migration no nothing migrates.
func TestClusterReplicaMigration(t *testing.T) {
	const nt = 2 * time.Second
	cand, other := migrationCandidate()
	for _, tc := range []struct {
		name    string
		edit    func(*ClusterConfig)
		migrate bool
	}{
		{"defaults", nil, true},
		{"barrier 2", func(c *ClusterConfig) { c.MigrationBarrier = 2 }, false},
		{"barrier 0", func(c *ClusterConfig) { c.MigrationBarrier = 0 }, true},
		{"migration off", func(c *ClusterConfig) { c.AllowReplicaMigration = false }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := memberWorld(t, nt, migrationMembers(), tc.edit)
			w.Advance(2 * nt)
			require.True(t, w.do("n2", "SET", "lock", "x").IsOK())
			w.K.Crash(w.ID("n5"), sim.CrashPower)
			w.Advance(5 * nt)
			fail := eventTimes(w, EventClusterFail, cand, "n5 marked FAIL")
			require.NotEmpty(t, fail, "%s learns n5 failed", cand)
			w.Advance(slaveMigrationDelay*time.Millisecond + 2*nt)
			mig := eventTimes(w, EventClusterFailover, cand, "migrating to orphaned master n2")
			assert.Empty(t, eventTimes(w, EventClusterFailover, other, "migrating"), "only the candidate migrates")
			if !tc.migrate {
				assert.Empty(t, mig)
				assert.Equal(t, "n3", w.do(cand, "ROLE").Array[1].Str)
				return
			}
			require.Len(t, mig, 1)
			d := mig[0] - fail[0]
			assert.True(t, d > slaveMigrationDelay*time.Millisecond && d <= slaveMigrationDelay*time.Millisecond+200*time.Millisecond,
				"migration %v after FAIL: CLUSTER_SLAVE_MIGRATION_DELAY after the first check (a cron tick after FAIL)", d)
			role := w.do(cand, "ROLE")
			assert.Equal(t, "slave", role.Array[0].Str)
			assert.Equal(t, "n2", role.Array[1].Str)
			assert.Equal(t, "n3", w.do(other, "ROLE").Array[1].Str)
			// n2 fails: the migrated replica has the key and is elected.
			w.K.Crash(w.ID("n2"), sim.CrashPower)
			w.Advance(4 * nt)
			require.Len(t, eventTimes(w, EventClusterFailover, cand, "took the slots of n2"), 1)
			assert.Equal(t, "x", w.do(cand, "GET", "lock").Str)
		})
	}
}

// MIGRATE_TO follows Redis's rules in every node's view: a master gets it
// with a replica, keeps it while a failed replica stays attached, a
// promoted replica gets it, a master turned replica loses it.
func TestClusterMigrateToFlag(t *testing.T) {
	w := memberWorld(t, 2*time.Second, migrationMembers(), func(c *ClusterConfig) { c.AllowReplicaMigration = false })
	w.Advance(4 * time.Second)
	view := func(of, who string) *cnode {
		cs := w.node(of).cl
		for i := range cs.nodes {
			if cs.nodes[i].name == who {
				return &cs.nodes[i]
			}
		}
		t.Fatalf("%s not in %s's view", who, of)
		return nil
	}
	for _, m := range []string{"n1", "n2", "n3"} {
		assert.True(t, view("n4", m).migrateTo, "%s has replicas", m)
	}
	w.K.Crash(w.ID("n5"), sim.CrashPower)
	w.Advance(6 * time.Second)
	assert.True(t, view("n6", "n5").fail)
	assert.True(t, view("n6", "n2").migrateTo, "a failed replica stays attached")
	o, maxSlaves, this := w.node("n6").cl.orphanScan()
	assert.Equal(t, []int{1, 2, 2}, []int{o, maxSlaves, this})
	w.K.Crash(w.ID("n3"), sim.CrashPower)
	w.Advance(8 * time.Second)
	var promoted string
	for _, r := range []string{"n6", "n7"} {
		if len(eventTimes(w, EventClusterFailover, r, "took the slots of n3")) > 0 {
			promoted = r
		}
	}
	require.NotEmpty(t, promoted)
	assert.True(t, view("n1", promoted).migrateTo, "a replica of a master with replicas promoted")
}
