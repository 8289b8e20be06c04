package redis

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

func infoLine(v Value, field string) string {
	for _, l := range strings.Split(v.Str, "\r\n") {
		if strings.HasPrefix(l, field+":") {
			return strings.TrimPrefix(l, field+":")
		}
	}
	return ""
}

// TestReplicationDelay: a replica sees writes only after the extra delay;
// WAIT reflects it.
func TestReplicationDelay(t *testing.T) {
	r := replicaOf("A")
	r.ReplicationDelay = sim.Fixed(500 * time.Millisecond)
	w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()}, nodeSpec{name: "R", cfg: r})
	w.Advance(time.Second) // the full sync is delayed too
	require.Equal(t, "up", infoLine(w.do("R", "INFO", "replication"), "master_link_status"))
	require.True(t, w.do("A", "SET", "k", "v").IsOK())
	assert.Equal(t, Int(0), w.do("A", "WAIT", "1", "100"), "not acked within 100 ms")
	assert.Equal(t, Nil(), w.do("R", "GET", "k"))
	w.Advance(500 * time.Millisecond)
	assert.Equal(t, Bulk("v"), w.do("R", "GET", "k"))
	require.True(t, w.do("A", "SET", "k", "w").IsOK())
	start := w.K.Now()
	assert.Equal(t, Int(1), w.do("A", "WAIT", "1", "2000"))
	assert.InDelta(t, 0.5, (w.K.Now() - start).Seconds(), 0.05, "WAIT returns once the delayed GETACK is answered")
}

// TestWait covers WAIT with and without acks.
func TestWait(t *testing.T) {
	w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()}, nodeSpec{name: "R", cfg: replicaOf("A")})
	w.Advance(10 * time.Millisecond)
	assert.Equal(t, Int(1), w.do("A", "WAIT", "0", "0"), "no write yet: every replica acked offset 0")
	require.True(t, w.do("A", "SET", "k", "v").IsOK())
	assert.Equal(t, Int(1), w.do("A", "WAIT", "1", "0"))
	pid := w.K.Partition([][]sim.ProcID{{w.ID("A")}, {w.ID("R")}})
	require.True(t, w.do("A", "SET", "k", "w").IsOK())
	start := w.K.Now()
	assert.Equal(t, Int(0), w.do("A", "WAIT", "1", "250"))
	// The timeout is noticed on the first serverCron tick after the deadline.
	assert.InDelta(t, 0.3, (w.K.Now() - start).Seconds(), 0.11)
	assert.Equal(t, Int(0), w.do("A", "WAIT", "0", "0"))
	// WAIT with timeout 0 blocks until the partition heals and the replica
	// resyncs.
	id := w.send("A", "WAIT", "1", "0")
	w.Advance(5 * time.Second)
	done := w.p.Answered(id)
	assert.False(t, done, "WAIT 1 0 blocks")
	w.K.Unpartition(pid)
	v, ok := w.wait(id, 20*time.Second)
	require.True(t, ok)
	assert.Equal(t, Int(1), v)
	assert.Equal(t, Bulk("w"), w.do("R", "GET", "k"), "the gap was repaired by a resync")
	assert.Equal(t, errWaitOnReplica, w.do("R", "WAIT", "0", "0"))
}

// TestReadOnlyReplica: writes on a replica answer READONLY, also from a
// script at its first write; a writable replica accepts them locally.
func TestReadOnlyReplica(t *testing.T) {
	w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()}, nodeSpec{name: "R", cfg: replicaOf("A")})
	w.Advance(10 * time.Millisecond)
	assert.Equal(t, errReadOnly, w.do("R", "SET", "k", "v"))
	assert.Equal(t, errReadOnly, w.do("R", "HINCRBY", "h", "f", "1"))
	assert.Equal(t, Int(-1), w.do("R", ScriptRedsyncDelete.Eval([]string{"k"}, "v")...), "a read-only run is fine")
	v := w.do("R", ScriptRedsyncTouchSetNX.Eval([]string{"k"}, "v", "100")...)
	assert.Equal(t, "READONLY You can't write against a read only replica. script: "+ScriptRedsyncTouchSetNX.SHA+", on @user_script:3.", v.Str)

	rw := replicaOf("A")
	rw.ReplicaReadOnly = false
	w = newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()}, nodeSpec{name: "R", cfg: rw})
	w.Advance(10 * time.Millisecond)
	assert.True(t, w.do("R", "SET", "k", "v").IsOK())
	assert.Equal(t, Nil(), w.do("A", "GET", "k"), "writes on a replica stay local")
}

// TestMinReplicasToWrite: NOREPLICAS once no replica acked within the max
// lag on the master's wall clock (reference 3.3), also after a forward
// jump of the master's clock.
func TestMinReplicasToWrite(t *testing.T) {
	m := master()
	m.MinReplicasToWrite = 1
	t.Run("partition", func(t *testing.T) {
		w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: m}, nodeSpec{name: "R", cfg: replicaOf("A")})
		w.Advance(10 * time.Millisecond)
		require.True(t, w.do("A", "SET", "k", "v").IsOK())
		w.K.Partition([][]sim.ProcID{{w.ID("A"), w.ID("c")}, {w.ID("R")}})
		w.Advance(9 * time.Second)
		assert.True(t, w.do("A", "SET", "k", "v").IsOK(), "within max lag the old ack still counts")
		w.Advance(3 * time.Second)
		assert.Equal(t, errNoReplicas, w.do("A", "SET", "k", "v"))
		assert.Equal(t, "NOREPLICAS Not enough good replicas to write. script: "+ScriptRedissonLock.SHA+", on @user_script:2.",
			w.do("A", ScriptRedissonLock.Eval([]string{"h"}, "1000", "c")...).Str)
		assert.Equal(t, Bulk("v"), w.do("A", "GET", "k"), "reads still work")
		w.K.Heal()
		w.Advance(3 * time.Second)
		assert.True(t, w.do("A", "SET", "k", "v").IsOK())
	})
	t.Run("forward-jump", func(t *testing.T) {
		w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: m}, nodeSpec{name: "R", cfg: replicaOf("A")})
		w.Advance(10 * time.Millisecond)
		require.True(t, w.do("A", "SET", "k", "v").IsOK())
		w.Advance(1500 * time.Millisecond)
		w.K.JumpWall(w.ID("A"), 30*time.Second)
		w.Advance(time.Second)
		// The next ack arrives every second and refreshes the count; right
		// after the refresh in replicationCron the replica may look lagging.
		good := 0
		for i := 0; i < 20; i++ {
			if w.do("A", "SET", "k", "v").IsOK() {
				good++
			}
			w.Advance(50 * time.Millisecond)
		}
		assert.Less(t, good, 20, "a forward jump makes the replica look lagging for a while")
	})
}

// TestMasterRestartWipesReplicas: a master without persistence restarts
// empty and its replica resyncs to empty (reference 3.1).
func TestMasterRestartWipesReplicas(t *testing.T) {
	m := master()
	m.Save = nil
	w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: m}, nodeSpec{name: "R", cfg: replicaOf("A")})
	w.Advance(10 * time.Millisecond)
	require.True(t, w.do("A", "SET", "lock", "c1").IsOK())
	require.Equal(t, Int(1), w.do("A", "WAIT", "1", "0"))
	w.K.Crash(w.ID("A"), sim.CrashProcess)
	w.Advance(500 * time.Millisecond)
	assert.Equal(t, Bulk("c1"), w.do("R", "GET", "lock"), "the replica serves stale data meanwhile")
	w.K.Restart(w.ID("A"))
	w.Advance(3 * time.Second)
	assert.Equal(t, Bulk("c1"), w.do("R", "GET", "lock"), "the full sync waits repl-diskless-sync-delay (5s)")
	w.Advance(4 * time.Second)
	assert.Equal(t, Nil(), w.do("R", "GET", "lock"), "wiped by the resync with the empty master")
	assert.Len(t, w.Events(EventReplicaSync, "R"), 2)
	assert.Equal(t, "1", infoLine(w.do("A", "INFO", "replication"), "connected_slaves"))
}

// TestReplicaOfReplacesData: REPLICAOF host makes a master a replica with a
// full resync that discards its own data.
func TestReplicaOfReplacesData(t *testing.T) {
	w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()}, nodeSpec{name: "B", cfg: master()})
	require.True(t, w.do("A", "SET", "a", "1").IsOK())
	require.True(t, w.do("B", "SET", "b", "2").IsOK())
	require.True(t, w.do("B", "REPLICAOF", "A", "6379").IsOK())
	assert.Equal(t, Status("OK Already connected to specified master"), w.do("B", "REPLICAOF", "A", "6379"))
	w.Advance(7 * time.Second) // the full sync waits repl-diskless-sync-delay (5s)
	assert.Equal(t, Nil(), w.do("B", "GET", "b"))
	assert.Equal(t, Bulk("1"), w.do("B", "GET", "a"))
	role := w.do("B", "ROLE")
	assert.Equal(t, Array(Bulk("slave"), Bulk("A"), Int(6379), Bulk("connected"), role.Array[4]), role)
	mrole := w.do("A", "ROLE")
	require.Len(t, mrole.Array[2].Array, 1)
	assert.Equal(t, Bulk("B"), mrole.Array[2].Array[0].Array[0])
	// Promotion keeps the data and changes the replication id.
	info := w.do("B", "INFO", "replication")
	require.True(t, w.do("B", "REPLICAOF", "NO", "ONE").IsOK())
	info2 := w.do("B", "INFO", "replication")
	assert.Equal(t, infoLine(info, "master_replid"), infoLine(info2, "master_replid2"))
	assert.NotEqual(t, infoLine(info, "master_replid"), infoLine(info2, "master_replid"))
	assert.Equal(t, Bulk("1"), w.do("B", "GET", "a"))
	w.Advance(2 * time.Second)
	assert.Equal(t, "0", infoLine(w.do("A", "INFO", "replication"), "connected_slaves"))
}

// TestScriptEffectsReplicate: scripts replicate by effects, with absolute
// deadlines computed from the time frozen at the script's start.
func TestScriptEffectsReplicate(t *testing.T) {
	w := newWorld(t, 0, nodeSpec{name: "A", cfg: master()}, nodeSpec{name: "R", cfg: replicaOf("A")})
	w.Advance(10 * time.Millisecond)
	wall := w.K.ReadClock(w.ID("A"), sim.Wall) / int64(time.Millisecond)
	require.True(t, w.do("A", ScriptRedissonLock.Eval([]string{"h"}, "30000", "c:1")...).IsNil())
	var stream []string
	for _, e := range w.K.Trace() {
		if e.Kind == sim.KindSend && e.Proc == "A" && e.Peer == "R" && strings.Contains(e.Text, "stream") {
			stream = append(stream, e.Text)
		}
	}
	require.NotEmpty(t, stream)
	last := stream[len(stream)-1]
	// The first data command fed after the full sync is preceded by SELECT
	// 0, inside the MULTI (R 7.2.4 src/replication.c:470-491, src/server.c:3365).
	assert.Contains(t, last, "| MULTI | SELECT 0 | hincrby h c:1 1 | PEXPIREAT h "+itoa(wall+30000)+" | EXEC")
	assert.NotContains(t, last, "EVAL")
	require.Equal(t, Int(1), w.do("A", "WAIT", "1", "0"))
	assert.Equal(t, Bulk("1"), w.do("R", "HGET", "h", "c:1"))
}

func itoa(n int64) string { return Int(n).String()[1:] }

// TestStreamGapResync: stream messages lost in a short partition leave a
// gap that the next message reveals; the replica resyncs.
func TestStreamGapResync(t *testing.T) {
	w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()}, nodeSpec{name: "R", cfg: replicaOf("A")})
	w.Advance(10 * time.Millisecond)
	w.K.DropNext(w.ID("A"), w.ID("R"), 1)
	require.True(t, w.do("A", "SET", "x", "1").IsOK())
	require.True(t, w.do("A", "SET", "y", "2").IsOK())
	w.Advance(100 * time.Millisecond)
	assert.Equal(t, Bulk("1"), w.do("R", "GET", "x"))
	assert.Equal(t, Bulk("2"), w.do("R", "GET", "y"))
	assert.Len(t, w.Events(EventReplicaSync, "R"), 2)
}

// TestReplicaTimeouts: after repl-timeout without acks the master drops the
// replica; the replica marks its link down; both recover after the heal.
func TestReplicaTimeouts(t *testing.T) {
	w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()}, nodeSpec{name: "R", cfg: replicaOf("A")})
	w.Advance(10 * time.Millisecond)
	w.K.Partition([][]sim.ProcID{{w.ID("A")}, {w.ID("R")}})
	w.Advance(59 * time.Second)
	assert.Equal(t, "1", infoLine(w.do("A", "INFO", "replication"), "connected_slaves"))
	assert.Equal(t, "up", infoLine(w.do("R", "INFO", "replication"), "master_link_status"))
	w.Advance(3 * time.Second)
	assert.Equal(t, "0", infoLine(w.do("A", "INFO", "replication"), "connected_slaves"))
	info := w.do("R", "INFO", "replication")
	assert.Equal(t, "down", infoLine(info, "master_link_status"))
	assert.NotEqual(t, "-1", infoLine(info, "master_link_down_since_seconds"))
	w.K.Heal()
	w.Advance(2 * time.Second)
	assert.Equal(t, "1", infoLine(w.do("A", "INFO", "replication"), "connected_slaves"))
	assert.Equal(t, "up", infoLine(w.do("R", "INFO", "replication"), "master_link_status"))
}

// TestChainedReplica: a replica of a replica gets the stream proxied.
func TestChainedReplica(t *testing.T) {
	w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()}, nodeSpec{name: "R", cfg: replicaOf("A")},
		nodeSpec{name: "S", cfg: replicaOf("R")})
	// S's first PSYNC finds R not yet synced (NOMASTERLINK): it tries
	// again from its next replicationCron.
	w.Advance(1500 * time.Millisecond)
	require.True(t, w.do("A", "SET", "k", "v", "PX", "100000").IsOK())
	w.Advance(10 * time.Millisecond)
	assert.Equal(t, Bulk("v"), w.do("S", "GET", "k"))
	ra := infoLine(w.do("R", "INFO", "replication"), "master_repl_offset")
	sa := infoLine(w.do("S", "INFO", "replication"), "master_repl_offset")
	assert.Equal(t, ra, sa)
}

// TestDeterminism: the same seed gives the same trace.
func TestDeterminism(t *testing.T) {
	run := func() string {
		r := replicaOf("A")
		r.ReplicationDelay = sim.Range{Lo: time.Millisecond, Hi: 30 * time.Millisecond}
		w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: aof(FsyncEverysec)}, nodeSpec{name: "R", cfg: r})
		for i := 0; i < 50; i++ {
			w.do("A", "SET", "k"+itoa(int64(i%5)), "v", "PX", itoa(int64(10+i*7)))
			w.do("A", ScriptRedissonLock.Eval([]string{"h"}, "50", "c")...)
			w.Advance(13 * time.Millisecond)
		}
		w.Advance(5 * time.Second)
		return sim.HashString(w.K.TraceHash())
	}
	assert.Equal(t, run(), run())
}
