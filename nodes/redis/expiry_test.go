package redis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// TestClockJumpForward: a forward wall-clock jump on a master expires a lock
// at once; the next access deletes it (DEL to the replica) and another
// client's SET NX succeeds (reference 1.5, Kleppmann's S3).
func TestClockJumpForward(t *testing.T) {
	w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()}, nodeSpec{name: "R", cfg: replicaOf("A")})
	w.Advance(10 * time.Millisecond)
	require.True(t, w.do("A", "SET", "lock", "c1", "NX", "PX", "30000").IsOK())
	assert.Equal(t, Nil(), w.do("A", "SET", "lock", "c2", "NX", "PX", "30000"))
	w.K.JumpWall(w.ID("A"), 31*time.Second)
	assert.True(t, w.do("A", "SET", "lock", "c2", "NX", "PX", "30000").IsOK(), "the lock expired at once")
	assert.Equal(t, Bulk("c2"), w.do("A", "GET", "lock"))
	exp := w.Events(EventKeyExpired, "A")
	require.Len(t, exp, 1)
	w.Advance(10 * time.Millisecond)
	assert.Equal(t, Bulk("c2"), w.do("R", "GET", "lock"), "the replica got DEL then SET PXAT")
	assert.Len(t, w.Events(EventKeyDel, "R"), 1)
	assert.Empty(t, w.Events(EventKeyExpired, "R"), "replicas never expire by themselves")
}

// TestClockJumpBackward: keys live longer by the jump (reference 1.5).
func TestClockJumpBackward(t *testing.T) {
	w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()})
	require.True(t, w.do("A", "SET", "lock", "c1", "NX", "PX", "1000").IsOK())
	w.K.JumpWall(w.ID("A"), -5*time.Second)
	w.Advance(2 * time.Second)
	assert.Equal(t, Bulk("c1"), w.do("A", "GET", "lock"))
	pttl := w.do("A", "PTTL", "lock").Int
	assert.InDelta(t, 4000, pttl, 20)
	w.Advance(4 * time.Second)
	assert.Equal(t, Nil(), w.do("A", "GET", "lock"))
}

// TestExpiryStrictAndFrozen: a key with deadline T exists at wall time T and
// is gone at T+1 ms (now > deadline, reference 1.3).
func TestExpiryStrictAndFrozen(t *testing.T) {
	// Zero latency: the commands execute exactly when sent.
	w := newWorld(t, 0, nodeSpec{name: "A", cfg: master()})
	require.True(t, w.do("A", "SET", "k", "v", "PX", "100").IsOK())
	w.Advance(100 * time.Millisecond)
	assert.Equal(t, Bulk("v"), w.do("A", "GET", "k"), "at the deadline the key is still valid")
	assert.Equal(t, Int(0), w.do("A", "PTTL", "k"))
	w.Advance(time.Millisecond)
	assert.Equal(t, Nil(), w.do("A", "GET", "k"))
}

// TestActiveExpiry: a master deletes an expired key within one hz period
// without any access, and propagates DEL; DEBUG SET-ACTIVE-EXPIRE 0 stops
// that.
func TestActiveExpiry(t *testing.T) {
	for _, active := range []bool{true, false} {
		w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()})
		if !active {
			require.True(t, w.do("A", "DEBUG", "SET-ACTIVE-EXPIRE", "0").IsOK())
		}
		require.True(t, w.do("A", "SET", "k", "v", "PX", "50").IsOK())
		w.Advance(160 * time.Millisecond)
		if active {
			assert.Len(t, w.Events(EventKeyExpired, "A"), 1)
			assert.Equal(t, Int(0), w.do("A", "DBSIZE"))
		} else {
			assert.Empty(t, w.Events(EventKeyExpired, "A"))
			assert.Equal(t, Int(1), w.do("A", "DBSIZE"))
		}
	}
}

// TestReplicaHidesExpiredKeys: a replica hides a key whose deadline passed
// on its own clock but keeps it until the master's DEL (reference 1.3).
func TestReplicaHidesExpiredKeys(t *testing.T) {
	w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()}, nodeSpec{name: "R", cfg: replicaOf("A")})
	w.Advance(10 * time.Millisecond)
	require.True(t, w.do("A", "DEBUG", "SET-ACTIVE-EXPIRE", "0").IsOK())
	require.True(t, w.do("A", "SET", "k", "v", "PX", "100").IsOK())
	require.Equal(t, Int(1), w.do("A", "WAIT", "1", "0"))
	w.Advance(200 * time.Millisecond)
	assert.Equal(t, Nil(), w.do("R", "GET", "k"))
	assert.Equal(t, Int(-2), w.do("R", "PTTL", "k"))
	assert.Equal(t, Int(1), w.do("R", "DBSIZE"), "still stored on the replica")
	assert.Empty(t, w.Events(EventKeyExpired, "R"))
	assert.Equal(t, Nil(), w.do("A", "GET", "k"), "the master expires it on access")
	require.Equal(t, Int(1), w.do("A", "WAIT", "1", "0"))
	assert.Equal(t, Int(0), w.do("R", "DBSIZE"))
}

// TestReplicaClockSkew: a replica with a clock ahead hides a lock the master
// still serves; after promotion it expires it with its own clock
// (reference 1.1 consequence: skew shifts expiry after a failover).
func TestReplicaClockSkew(t *testing.T) {
	w := newWorld(t, time.Millisecond,
		nodeSpec{name: "A", cfg: master()},
		nodeSpec{name: "R", cfg: replicaOf("A"), clock: sim.ClockSpec{Offset: 20 * time.Second}})
	w.Advance(10 * time.Millisecond)
	require.True(t, w.do("A", "SET", "lock", "c1", "NX", "PX", "10000").IsOK())
	require.Equal(t, Int(1), w.do("A", "WAIT", "1", "0"))
	assert.Equal(t, Bulk("c1"), w.do("A", "GET", "lock"))
	assert.Equal(t, Nil(), w.do("R", "GET", "lock"), "hidden by the replica's own clock")
	assert.Equal(t, Int(1), w.do("R", "DBSIZE"))
	require.True(t, w.do("R", "REPLICAOF", "NO", "ONE").IsOK())
	require.Len(t, w.Events(EventPromoted, "R"), 1)
	assert.True(t, w.do("R", "SET", "lock", "c2", "NX", "PX", "10000").IsOK(), "the promoted node lets c2 in")
	assert.Len(t, w.Events(EventKeyExpired, "R"), 1)
}

// TestReplicaAppliesStreamIgnoringExpiry: commands from the master apply to
// keys that are logically expired on the replica's clock.
func TestReplicaAppliesStreamIgnoringExpiry(t *testing.T) {
	w := newWorld(t, time.Millisecond,
		nodeSpec{name: "A", cfg: master()},
		nodeSpec{name: "R", cfg: replicaOf("A"), clock: sim.ClockSpec{Offset: 20 * time.Second}})
	w.Advance(10 * time.Millisecond)
	require.True(t, w.do("A", "SET", "c", "1", "PX", "10000").IsOK())
	require.Equal(t, Int(2), w.do("A", "INCR", "c"))
	require.Equal(t, Int(1), w.do("A", "WAIT", "1", "0"))
	require.True(t, w.do("R", "REPLICAOF", "NO", "ONE").IsOK())
	w.K.JumpWall(w.ID("R"), -20*time.Second)
	assert.Equal(t, Bulk("2"), w.do("R", "GET", "c"), "INCR applied to the replica's expired copy")
}

// TestKeySetEvents: key-set is emitted for every stored lock key (SET, a
// script's SET, HINCRBY creating a hash), with the deadline.
func TestKeySetEvents(t *testing.T) {
	w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()})
	require.True(t, w.do("A", "SET", "a", "x", "NX", "PX", "1000").IsOK())
	require.True(t, w.do("A", ScriptRedissonLock.Eval([]string{"h"}, "1000", "c")...).IsNil())
	require.Equal(t, Int(1), w.do("A", ScriptRedsyncTouchSetNX.Eval([]string{"b"}, "y", "1000")...))
	require.Equal(t, Int(1), w.do("A", "INCR", "n"))
	ev := w.Events(EventKeySet, "A")
	require.Len(t, ev, 3)
	assert.Contains(t, ev[0].Text, `"a" "x" deadline=`)
	assert.Contains(t, ev[1].Text, `"h" hash`)
	assert.Contains(t, ev[2].Text, `"b" "y" deadline=`)
}
