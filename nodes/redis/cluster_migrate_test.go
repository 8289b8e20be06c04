package redis

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// openSlot opens slot 8718 ("lock") for a migration from n2 to n1.
func openSlot(t *testing.T, w *world) {
	t.Helper()
	require.True(t, w.do("n1", "CLUSTER", "SETSLOT", "8718", "IMPORTING", NodeID("n2")).IsOK())
	require.True(t, w.do("n2", "CLUSTER", "SETSLOT", "8718", "MIGRATING", NodeID("n1")).IsOK())
}

// The configEpoch the target takes when it closes the slot spreads the
// new owner over the bus: a node that got no SETSLOT learns it from the
// target's pong (clusterBumpConfigEpochWithoutConsensus, then
// clusterUpdateSlotsConfigWith on the others).
func TestMigrationPropagatesByConfigEpoch(t *testing.T) {
	w, _ := clusterWorld(t, 2*time.Second, 0, "n1", "n2", "n3")
	w.Advance(time.Second)
	openSlot(t, w)
	require.True(t, w.do("n1", "CLUSTER", "SETSLOT", "8718", "NODE", NodeID("n1")).IsOK())
	assert.Equal(t, uint64(4), w.node("n1").cl.nodes[0].configEpoch, "n1 bumped past the greatest epoch, 3")
	// n2 still serves the slot (it kept its keys: none here) until told.
	w.Advance(100 * time.Millisecond)
	assert.Equal(t, "MOVED 8718 n1:6379", w.do("n3", "GET", "lock").Str, "n1's pong with epoch 4 moved the slot")
	assert.Equal(t, "MOVED 8718 n1:6379", w.do("n2", "GET", "lock").Str, "the source too")
	assert.Equal(t, "MOVED 8579 n2:6379", w.do("n3", "GET", "k0").Str, "n2 keeps its other slots")
	// The slot's bit left n2's view of itself: its pings claim the rest.
	assert.Equal(t, 5461, w.node("n2").cl.nodes[1].numSlots)
}

// MIGRATE keeps the time left: the key on the target expires when it
// would have on the source (a relative ttl in RESTORE-ASKING, made
// absolute on the target's clock and propagated with ABSTTL).
func TestMigrateKeepsTTL(t *testing.T) {
	w, _ := clusterWorld(t, 2*time.Second, 0, "n1", "n2", "n3")
	w.Advance(time.Second)
	require.True(t, w.do("n2", "SET", "lock", "v", "PX", "3000").IsOK())
	w.Advance(time.Second)
	openSlot(t, w)
	require.True(t, w.do("n2", "MIGRATE", "n1", strconv.Itoa(ListenPort), "", "0", "1000", "KEYS", "lock").IsOK())
	require.True(t, w.do("n1", "ASKING").IsOK())
	ttl := w.do("n1", "PTTL", "lock")
	assert.True(t, ttl.Int > 1900 && ttl.Int <= 2000, "time left on the target %d, want about 2000 ms", ttl.Int)
	w.Advance(2100 * time.Millisecond)
	require.True(t, w.do("n1", "ASKING").IsOK())
	assert.True(t, w.do("n1", "GET", "lock").IsNil(), "expired on the target as on the source")
}

// While MIGRATE waits for the target, the node runs no other client's
// command (Redis blocks in connSyncReadLine): a release of the key sent
// meanwhile runs after the key left, and gets -ASK.
func TestMigrateBlocksOtherCommands(t *testing.T) {
	w, _ := clusterWorld(t, 2*time.Second, 0, "n1", "n2", "n3")
	w.Advance(time.Second)
	require.True(t, w.do("n2", "SET", "lock", "v", "PX", "30000").IsOK())
	openSlot(t, w)
	w.K.Delay(w.ID("n2"), w.ID("n1"), 50*time.Millisecond, time.Hour)
	mig := w.send("n2", "MIGRATE", "n1", strconv.Itoa(ListenPort), "", "0", "1000", "KEYS", "lock")
	w.Advance(10 * time.Millisecond)
	del := w.send("n2", "DEL", "lock")
	v, ok := w.wait(del, time.Second)
	require.True(t, ok)
	assert.Equal(t, "ASK 8718 n1:6379", v.Str, "the DEL waited for MIGRATE, then found the key gone")
	v, ok = w.wait(mig, time.Second)
	require.True(t, ok)
	assert.True(t, v.IsOK(), "%v", v)
}

// A MIGRATE whose target does not answer within the timeout fails with
// -IOERR and keeps the key.
func TestMigrateTimeout(t *testing.T) {
	w, _ := clusterWorld(t, 2*time.Second, 0, "n1", "n2", "n3")
	w.Advance(time.Second)
	require.True(t, w.do("n2", "SET", "lock", "v").IsOK())
	openSlot(t, w)
	w.K.Delay(w.ID("n2"), w.ID("n1"), 2*time.Second, time.Hour)
	v := w.do("n2", "MIGRATE", "n1", strconv.Itoa(ListenPort), "", "0", "500", "KEYS", "lock")
	assert.Equal(t, "IOERR error or timeout reading to target instance", v.Str)
	assert.Equal(t, "v", w.do("n2", "GET", "lock").Str)
}

// A master that loses a slot it still has keys of to a greater
// configEpoch deletes them (dirty slots, clusterUpdateSlotsConfigWith's
// delKeysInSlot) and keeps serving its other slots.
func TestDirtySlotKeysDeleted(t *testing.T) {
	w, _ := clusterWorld(t, 2*time.Second, 0, "n1", "n2", "n3")
	w.Advance(time.Second)
	require.True(t, w.do("n2", "SET", "lock", "v").IsOK())
	require.True(t, w.do("n2", "SET", "k0", "w").IsOK()) // slot 8579, n2's
	// n1 takes the slot by hand, without the keys (no MIGRATE), and
	// bumps its epoch as after an import.
	openSlot(t, w)
	require.True(t, w.do("n1", "CLUSTER", "SETSLOT", "8718", "NODE", NodeID("n1")).IsOK())
	w.Advance(100 * time.Millisecond)
	assert.Equal(t, int64(0), w.do("n2", "CLUSTER", "COUNTKEYSINSLOT", "8718").Int, "n2 deleted the keys of the slot it lost")
	assert.Equal(t, "w", w.do("n2", "GET", "k0").Str)
	assert.True(t, w.TraceHas(EventClusterSlot, "n2", `deleted "lock": slot 8718 now served by n1`), "%q", w.Texts(EventClusterSlot, ""))
}

// The bus has its own connection: a partition between a master and its
// replica longer than half the node timeout frees their bus link (and the
// bus reconnects), but the replication connection lives on, as in Redis
// (repl-timeout 60s): no link loss, no new synchronisation after the heal.
func TestBusLinkFreeLeavesReplication(t *testing.T) {
	w, _ := clusterWorld(t, 2*time.Second, 1, "n1", "n2", "n3", "n4", "n5", "n6")
	w.Advance(2 * time.Second)
	syncs := len(w.Events(EventReplicaSync, "n6"))
	cut := w.K.Partition([][]sim.ProcID{{w.ID("n2")}, {w.ID("n6")}})
	w.Advance(5 * time.Second)
	w.K.Unpartition(cut)
	w.Advance(3 * time.Second)
	freed := 0
	for _, e := range w.Events(sim.KindConnEnd, "n6") {
		if strings.Contains(e.Text, "close (connection 1)") {
			freed++
		}
	}
	assert.Positive(t, freed, "n6 freed its bus link with n2 during the cut")
	assert.Empty(t, w.Events(EventReplicaLink, "n6"), "the replication link never ended")
	assert.Len(t, w.Events(EventReplicaSync, "n6"), syncs, "no new synchronisation")
	require.True(t, w.do("n2", "SET", "lock", "v").IsOK())
	w.Advance(100 * time.Millisecond)
	require.True(t, w.do("n6", "READONLY").IsOK())
	assert.Equal(t, "v", w.do("n6", "GET", "lock").Str, "replication flows on the old connection")
}

// A migration source that becomes a replica forgets its open slots
// (clusterSetMaster -> clusterCloseAllSlots, C 7.0.15 cluster.c:4606-4609):
// n2, killed while slot 8718 migrates to n1, restarts from a nodes.conf
// that still has [8718->-n1], becomes the replica of n5, which was elected
// meanwhile, and when n5 dies and n2 is elected again it serves the slot
// itself: a SET of the migrated key succeeds there, where an n2 that kept
// the MIGRATING state would answer -ASK to n1 (which still holds the key).
func TestReplicaForgetsMigratingSlots(t *testing.T) {
	const nt = 2 * time.Second
	w, _ := clusterWorld(t, nt, 1, "n1", "n2", "n3", "n4", "n5", "n6")
	w.Advance(time.Second)
	require.True(t, w.do("n2", "SET", "lock", "c1", "PX", "60000").IsOK())
	openSlot(t, w)
	require.True(t, w.do("n2", "MIGRATE", "n1", strconv.Itoa(ListenPort), "", "0", "1000", "KEYS", "lock").IsOK())
	w.Advance(time.Second)
	w.K.Crash(w.ID("n2"), sim.CrashProcess)
	w.Advance(4 * nt)
	require.Equal(t, "master", w.do("n6", "ROLE").Array[0].Str, "n6 elected")
	w.K.Restart(w.ID("n2"))
	w.Advance(time.Second)
	role := w.do("n2", "ROLE")
	require.Equal(t, "slave", role.Array[0].Str)
	assert.Empty(t, w.node("n2").cl.migrating, "a master turned replica closes its slots")
	assert.NotContains(t, w.do("n2", "CLUSTER", "NODES").Str, "[8718->-", "nor does its CLUSTER NODES show one")
	w.Advance(8 * time.Second) // n2's full resynchronisation from n6
	w.K.Crash(w.ID("n6"), sim.CrashProcess)
	w.Advance(4 * nt)
	require.Equal(t, "master", w.do("n2", "ROLE").Array[0].Str, "n2 elected again")
	assert.True(t, w.do("n2", "SET", "lock", "c2", "NX", "PX", "60000").IsOK(), "n2 serves the slot: the key is on n1")
	// n1, still importing, kept c1's key; its slot table lost the slot
	// when n2 turned replica (clusterDelNodeSlots, cluster.c:2414-2416) and
	// no claim changes an importing slot (:1905-1910), as in Redis.
	assert.Equal(t, int64(1), w.do("n1", "CLUSTER", "COUNTKEYSINSLOT", "8718").Int)
	assert.Equal(t, "CLUSTERDOWN Hash slot not served", w.do("n1", "GET", "lock").Str)
}
