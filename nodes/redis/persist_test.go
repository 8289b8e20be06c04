package redis

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// TestCrashPersistence crosses crash modes with persistence modes: which
// acknowledged write survives (reference section 2.2, the loss table).
func TestCrashPersistence(t *testing.T) {
	rdb := DefaultConfig()
	tests := []struct {
		name     string
		cfg      Config
		writeAt  time.Duration // true time of SET k v (no TTL)
		crashAt  time.Duration
		mode     sim.CrashMode
		survives bool
	}{
		// RDB only: nothing since the last save survives an unclean stop;
		// save 3600 1 fires once more than 3600 s passed with a change.
		{"rdb/process", rdb, 500 * time.Millisecond, 10 * time.Second, sim.CrashProcess, false},
		{"rdb/power", rdb, 500 * time.Millisecond, 10 * time.Second, sim.CrashPower, false},
		{"rdb/clean", rdb, 500 * time.Millisecond, 10 * time.Second, sim.CrashClean, true},
		{"rdb/after-save-point", rdb, 500 * time.Millisecond, 3602 * time.Second, sim.CrashPower, true},
		{"rdb/before-save-point", rdb, 500 * time.Millisecond, 3599 * time.Second, sim.CrashPower, false},
		// AOF always: write + fsync before the reply.
		{"always/process", aof(FsyncAlways), 500 * time.Millisecond, 501 * time.Millisecond, sim.CrashProcess, true},
		{"always/power", aof(FsyncAlways), 500 * time.Millisecond, 501 * time.Millisecond, sim.CrashPower, true},
		// AOF everysec: page cache survives a process crash; a power loss
		// loses what the once-a-second fsync has not covered.
		{"everysec/process", aof(FsyncEverysec), 500 * time.Millisecond, 501 * time.Millisecond, sim.CrashProcess, true},
		{"everysec/power-before-fsync", aof(FsyncEverysec), 500 * time.Millisecond, 600 * time.Millisecond, sim.CrashPower, false},
		{"everysec/power-after-fsync", aof(FsyncEverysec), 500 * time.Millisecond, 1200 * time.Millisecond, sim.CrashPower, true},
		// AOF no: the OS writes back after 30 s.
		{"no/process", aof(FsyncNo), 500 * time.Millisecond, 501 * time.Millisecond, sim.CrashProcess, true},
		{"no/power-10s", aof(FsyncNo), 500 * time.Millisecond, 10 * time.Second, sim.CrashPower, false},
		{"no/power-31s", aof(FsyncNo), 500 * time.Millisecond, 31 * time.Second, sim.CrashPower, true},
		{"no/clean", aof(FsyncNo), 500 * time.Millisecond, 10 * time.Second, sim.CrashClean, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, 100*time.Microsecond, nodeSpec{name: "A", cfg: tt.cfg})
			w.Advance(tt.writeAt)
			require.True(t, w.do("A", "SET", "k", "v").IsOK())
			w.Advance(tt.crashAt - time.Duration(w.K.Now()))
			w.K.Crash(w.ID("A"), tt.mode)
			w.Advance(time.Second)
			w.K.Restart(w.ID("A"))
			got := w.do("A", "GET", "k")
			if tt.survives {
				assert.Equal(t, Bulk("v"), got)
			} else {
				assert.Equal(t, Nil(), got)
			}
			assert.Len(t, w.Events(EventLoaded, "A"), 2, "one load at start, one after the restart")
		})
	}
}

// TestEverysecFsyncDelayedByBackwardJump: the everysec gate compares wall
// time, so after a backward jump no fsync happens until the wall clock
// catches up, and a power loss loses more than a second (reference 1.5).
func TestEverysecFsyncDelayedByBackwardJump(t *testing.T) {
	for _, jump := range []time.Duration{0, -10 * time.Second} {
		t.Run(jump.String(), func(t *testing.T) {
			w := newWorld(t, 100*time.Microsecond, nodeSpec{name: "A", cfg: aof(FsyncEverysec)})
			w.Advance(500 * time.Millisecond)
			w.K.JumpWall(w.ID("A"), jump)
			require.True(t, w.do("A", "SET", "k", "v").IsOK())
			w.Advance(5 * time.Second)
			w.K.Crash(w.ID("A"), sim.CrashPower)
			w.K.Restart(w.ID("A"))
			if jump == 0 {
				assert.Equal(t, Bulk("v"), w.do("A", "GET", "k"))
			} else {
				assert.Equal(t, Nil(), w.do("A", "GET", "k"), "no fsync within 5 s after a -10 s jump")
			}
		})
	}
}

// TestRestartDropsExpiredKeys: after a restart a master keeps a key iff its
// deadline is still ahead on the master's wall clock (reference 1.6), for
// both the RDB and the AOF path, including a clock that jumped while the
// node was down.
func TestRestartDropsExpiredKeys(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		down    time.Duration
		jump    time.Duration // wall jump while down
		alive   bool
		expired string // expected "expired=" count in the loaded event
	}{
		{"rdb/short-downtime", DefaultConfig(), 2 * time.Second, 0, true, "expired=0"},
		{"rdb/downtime-past-ttl", DefaultConfig(), 10 * time.Second, 0, false, "expired=1"},
		{"rdb/backward-jump-resurrects", DefaultConfig(), 10 * time.Second, -20 * time.Second, true, "expired=0"},
		{"rdb/forward-jump-drops", DefaultConfig(), 2 * time.Second, time.Hour, false, "expired=1"},
		{"aof/short-downtime", aof(FsyncAlways), 2 * time.Second, 0, true, "expired=0"},
		{"aof/downtime-past-ttl", aof(FsyncAlways), 10 * time.Second, 0, false, "expired=1"},
		{"aof/backward-jump-resurrects", aof(FsyncAlways), 10 * time.Second, -20 * time.Second, true, "expired=0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, 100*time.Microsecond, nodeSpec{name: "A", cfg: tt.cfg})
			require.True(t, w.do("A", "SET", "lock", "c1", "NX", "PX", "5000").IsOK())
			w.K.Crash(w.ID("A"), sim.CrashClean)
			w.K.JumpWall(w.ID("A"), tt.jump)
			w.Advance(tt.down)
			w.K.Restart(w.ID("A"))
			loaded := w.Events(EventLoaded, "A")
			require.Len(t, loaded, 2)
			assert.Contains(t, loaded[1].Text, tt.expired)
			if tt.alive {
				assert.Equal(t, Bulk("c1"), w.do("A", "GET", "lock"))
				assert.Equal(t, Nil(), w.do("A", "SET", "lock", "c2", "NX", "PX", "5000"), "the old lock still blocks")
			} else {
				assert.Equal(t, Nil(), w.do("A", "GET", "lock"))
				assert.True(t, w.do("A", "SET", "lock", "c2", "NX", "PX", "5000").IsOK(), "another client gets the lock")
			}
		})
	}
}

// TestAOFRecordsAbsoluteDeadlines: the AOF holds SET PXAT / PEXPIREAT and
// the DEL of expired keys, never relative times (reference 1.1).
func TestAOFRecordsAbsoluteDeadlines(t *testing.T) {
	w := newWorld(t, 100*time.Microsecond, nodeSpec{name: "A", cfg: aof(FsyncAlways)})
	wall := w.K.ReadClock(w.ID("A"), sim.Wall) / int64(time.Millisecond)
	require.True(t, w.do("A", "SET", "k", "v", "PX", "100").IsOK())
	require.Equal(t, Int(1), w.do("A", "PEXPIRE", "k", "200"))
	w.Advance(time.Second)
	var lines []string
	for _, e := range w.Events(EventAOFWrite, "A") {
		lines = append(lines, e.Text)
	}
	require.Len(t, lines, 3)
	assert.Equal(t, fmt.Sprintf("SET k v PXAT %d", wall+100), lines[0])
	assert.Equal(t, fmt.Sprintf("PEXPIREAT k %d", wall+200), lines[1])
	assert.NotContains(t, lines[0], " PX ")
	assert.Equal(t, "DEL k", lines[2], "the active expiry cycle propagates DEL to the AOF")
	assert.Len(t, w.Events(EventAOFFsync, "A"), 3)
}

// TestSavePointsOnWallClock: RDB save points compare wall seconds, so a
// forward jump saves early and a backward jump delays saving (reference
// 1.5).
func TestSavePointsOnWallClock(t *testing.T) {
	for _, tt := range []struct {
		name  string
		jump  time.Duration
		saved bool
	}{
		{"no-jump", 0, false},
		{"forward", 2 * time.Hour, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, 100*time.Microsecond, nodeSpec{name: "A", cfg: DefaultConfig()})
			require.True(t, w.do("A", "SET", "k", "v").IsOK())
			w.K.JumpWall(w.ID("A"), tt.jump)
			w.Advance(time.Second)
			assert.Equal(t, tt.saved, len(w.Events(EventRDBSave, "A")) == 1)
		})
	}
	t.Run("backward-delays", func(t *testing.T) {
		w := newWorld(t, 100*time.Microsecond, nodeSpec{name: "A", cfg: DefaultConfig()})
		require.True(t, w.do("A", "SET", "k", "v").IsOK())
		w.K.JumpWall(w.ID("A"), -time.Hour)
		w.Advance(3602 * time.Second)
		assert.Empty(t, w.Events(EventRDBSave, "A"), "an hour of wall time has not passed yet")
		w.Advance(3602 * time.Second)
		assert.Len(t, w.Events(EventRDBSave, "A"), 1)
	})
}

// TestConfigRewritePersistsRole: a promoted replica whose role Sentinel
// persisted with CONFIG REWRITE comes back as a master after a restart;
// without it, it comes back as a replica of its configured master.
func TestConfigRewritePersistsRole(t *testing.T) {
	for _, rewrite := range []bool{false, true} {
		w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()}, nodeSpec{name: "R", cfg: replicaOf("A")})
		w.Advance(100 * time.Millisecond)
		require.True(t, w.do("R", "REPLICAOF", "NO", "ONE").IsOK())
		if rewrite {
			require.True(t, w.do("R", "CONFIG", "REWRITE").IsOK())
		}
		w.K.Crash(w.ID("R"), sim.CrashProcess)
		w.K.Restart(w.ID("R"))
		role := w.do("R", "ROLE")
		if rewrite {
			assert.Equal(t, Bulk("master"), role.Array[0])
		} else {
			assert.Equal(t, Bulk("slave"), role.Array[0])
		}
	}
}
