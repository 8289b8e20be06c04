package redis

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeyLosses: the node records a key loss where it removes a key on its
// own (an expiry found on access or by the active cycle, an eviction), and
// none for a removal a command asked for (DEL) or on a replica.
func TestKeyLosses(t *testing.T) {
	causes := func(w *world) []string {
		var out []string
		for _, l := range w.K.History().KeyLosses {
			out = append(out, l.Node+" "+l.Key+" "+string(l.Cause)+" "+l.Detail)
		}
		return out
	}
	t.Run("DEL and an overwrite are no loss", func(t *testing.T) {
		w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()})
		require.True(t, w.do("A", "SET", "lock", "c1", "NX", "PX", "30000").IsOK())
		assert.Equal(t, Int(1), w.do("A", "DEL", "lock"))
		require.True(t, w.do("A", "SET", "k", "v", "PX", "30000").IsOK())
		require.True(t, w.do("A", "SET", "k", "w").IsOK())
		assert.Empty(t, causes(w))
	})
	t.Run("an expiry found on access, at that time", func(t *testing.T) {
		w := newWorld(t, 0, nodeSpec{name: "A", cfg: master()})
		require.True(t, w.do("A", "DEBUG", "SET-ACTIVE-EXPIRE", "0").IsOK())
		require.True(t, w.do("A", "SET", "lock", "c1", "NX", "PX", "100").IsOK())
		w.Advance(time.Second)
		assert.Empty(t, causes(w), "nothing removed yet")
		at := w.K.Now()
		assert.True(t, w.do("A", "SET", "lock", "c2", "NX", "PX", "100").IsOK())
		assert.Equal(t, []string{"A lock expired "}, causes(w))
		assert.Equal(t, at, w.K.History().KeyLosses[0].At)
	})
	t.Run("an expiry by the active cycle, on the master only", func(t *testing.T) {
		w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()}, nodeSpec{name: "R", cfg: replicaOf("A")})
		w.Advance(10 * time.Millisecond)
		require.True(t, w.do("A", "SET", "lock", "c1", "NX", "PX", "100").IsOK())
		w.Advance(time.Second)
		assert.Equal(t, []string{"A lock expired "}, causes(w), "the replica applies the master's DEL: no loss of its own")
	})
	t.Run("an eviction names the limit and the policy", func(t *testing.T) {
		w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: limited(VolatileLRU, 6000)})
		require.True(t, w.do("A", "SET", "lock", "c1", "NX", "PX", "600000").IsOK())
		fill(w, "cache", 60, strings.Repeat("v", 100))
		require.Equal(t, int64(1), w.node("A").EvictedKeys())
		assert.Equal(t, []string{"A lock evicted maxmemory 6000 bytes, policy volatile-lru"}, causes(w))
	})
}

// TestRestartAndResyncLosses: a master that restarts without a key the
// crashed instance held records a restart loss naming what it loaded; one
// that recovers it records none; a demoted master whose full sync drops
// its keys records resync losses. These are history records only.
func TestRestartAndResyncLosses(t *testing.T) {
	causes := func(w *world) []string {
		var out []string
		for _, l := range w.K.History().KeyLosses {
			out = append(out, l.Node+" "+l.Key+" "+string(l.Cause)+" "+l.Detail)
		}
		return out
	}
	cases := []struct {
		name string
		cfg  Config
		mode sim.CrashMode
		want []string
	}{
		{"no persistence, process crash", master(), sim.CrashProcess,
			[]string{"A lock lost-at-restart process crash; appendonly no and no RDB file on disk"}},
		{"everysec, power crash before the fsync", aof(FsyncEverysec), sim.CrashPower,
			[]string{"A lock lost-at-restart power crash; appendfsync everysec: the AOF it loaded did not have it"}},
		{"everysec, process crash: the page cache keeps it", aof(FsyncEverysec), sim.CrashProcess, nil},
		{"always, power crash: fsynced", aof(FsyncAlways), sim.CrashPower, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: tc.cfg})
			w.Advance(10 * time.Millisecond)
			require.True(t, w.do("A", "SET", "lock", "c1", "NX", "PX", "30000").IsOK())
			require.True(t, w.do("A", "SET", "gone", "x", "PX", "50").IsOK())
			w.Advance(100 * time.Millisecond) // "gone" expires on its own: not a restart loss
			w.K.Crash(w.ID("A"), tc.mode)
			w.Advance(100 * time.Millisecond)
			w.K.Restart(w.ID("A"))
			w.Advance(10 * time.Millisecond)
			var got []string
			for _, c := range causes(w) {
				if !strings.Contains(c, " expired") {
					got = append(got, c)
				}
			}
			assert.Equal(t, tc.want, got)
		})
	}
	t.Run("a demoted master's full sync", func(t *testing.T) {
		w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()}, nodeSpec{name: "B", cfg: master()})
		w.Advance(10 * time.Millisecond)
		require.True(t, w.do("A", "SET", "lock", "c1", "NX", "PX", "30000").IsOK())
		require.True(t, w.do("A", "REPLICAOF", "B", "6379").IsOK())
		w.Advance(7 * time.Second) // the full sync waits repl-diskless-sync-delay (5s)
		assert.Equal(t, []string{"A lock resync full resynchronisation from its new master B"}, causes(w))
	})
}

// TestRemovalByAnotherClient: a master records, as the holder's loss, a DEL
// or an overwrite by a client other than the one that stored the key (the
// release races of redis-get-del and redis-fixed-value, GETSET's takeover),
// and nothing for a client's own DEL, a compare-and-delete that found
// another value, or a key restored by a migration.
func TestRemovalByAnotherClient(t *testing.T) {
	sw := simtest.NewWorld(t, time.Millisecond)
	cfg := master()
	sw.Add("A", func() sim.Process { return New(cfg) }, sim.ClockSpec{})
	c1, c2 := newProbe(), newProbe()
	simtest.AddProbe(sw, "c1", c1)
	simtest.AddProbe(sw, "c2", c2)
	sw.Start()
	do := func(p *probe, args ...string) Value {
		t.Helper()
		id := p.Send(sw.ID("A"), func(id uint64) sim.Message { return Request{ID: id, Args: args} })
		a, ok := simtest.Wait(sw, p, id, time.Minute)
		require.True(t, ok)
		return a.Reply.Value
	}
	losses := func() []string {
		var out []string
		for _, l := range sw.K.History().KeyLosses {
			out = append(out, l.Node+" "+l.Key+" "+string(l.Cause)+" holder="+l.Holder+" "+l.Detail)
		}
		return out
	}
	require.True(t, do(c1, "SET", "lock", "v1", "NX", "PX", "30000").IsOK())
	assert.Equal(t, Int(0), do(c2, "EVAL", ScriptCompareAndDelete.Source, "1", "lock", "v2"))
	assert.Equal(t, Int(1), do(c1, "DEL", "lock"))
	assert.Empty(t, losses(), "a client's own DEL and a compare-and-delete that did not match are no loss")

	require.True(t, do(c1, "SET", "lock", "same", "NX", "PX", "30000").IsOK())
	assert.Equal(t, Int(1), do(c2, "DEL", "lock"))
	require.True(t, do(c2, "SET", "lock", "same", "NX", "PX", "30000").IsOK())
	assert.Equal(t, Bulk("same"), do(c1, "GETSET", "lock", "mine"))
	assert.Equal(t, []string{
		"A lock removed-by-client holder=c1 DEL from c2",
		"A lock overwritten holder=c2 write from c1",
	}, losses())
}

// TestActsOnAnotherClientsKey: the node records each command of a client
// on a key another client stored (sim.History.KeyActs): an extension
// (PEXPIRE, EXPIRE, PEXPIREAT), an overwrite (SET XX, GETSET), a DEL, an
// HSET or HINCRBY on a hash another created, the same from a script; and
// nothing for a client's commands on its own keys.
func TestActsOnAnotherClientsKey(t *testing.T) {
	sw := simtest.NewWorld(t, time.Millisecond)
	cfg := master()
	sw.Add("A", func() sim.Process { return New(cfg) }, sim.ClockSpec{})
	c1, c2 := newProbe(), newProbe()
	simtest.AddProbe(sw, "c1", c1)
	simtest.AddProbe(sw, "c2", c2)
	sw.Start()
	do := func(p *probe, args ...string) Value {
		t.Helper()
		id := p.Send(sw.ID("A"), func(id uint64) sim.Message { return Request{ID: id, Args: args} })
		a, ok := simtest.Wait(sw, p, id, time.Minute)
		require.True(t, ok)
		return a.Reply.Value
	}
	acts := func() []string {
		var out []string
		for _, x := range sw.K.History().KeyActs {
			out = append(out, x.Client+" "+x.Command+" "+x.Key+" of "+x.Holder)
		}
		return out
	}
	require.True(t, do(c1, "SET", "lock", "v1", "NX", "PX", "30000").IsOK())
	assert.Equal(t, Int(1), do(c1, "PEXPIRE", "lock", "30000"))
	assert.Empty(t, acts(), "a holder's extension of its own key")
	assert.Equal(t, Int(1), do(c2, "PEXPIRE", "lock", "30000"))
	assert.Equal(t, Int(1), do(c2, "EXPIRE", "lock", "30"))
	assert.Equal(t, Int(1), do(c2, "PEXPIREAT", "lock", "9999999999999"))
	require.True(t, do(c2, "SET", "lock", "v2", "XX").IsOK())
	assert.Equal(t, Bulk("v2"), do(c1, "GETSET", "lock", "v1"))
	assert.Equal(t, Int(1), do(c2, "EVAL", ScriptCompareAndDelete.Source, "1", "lock", "v1"))
	assert.Equal(t, Int(1), do(c1, "HSET", "h", "c1", "1"))
	assert.Equal(t, Int(2), do(c1, "HINCRBY", "h", "c1", "1"))
	assert.Equal(t, Int(1), do(c2, "HINCRBY", "h", "c2", "1"))
	assert.Equal(t, Int(0), do(c2, "HSET", "h", "c2", "5"))
	assert.Equal(t, []string{
		"c2 PEXPIRE lock of c1",
		"c2 EXPIRE lock of c1",
		"c2 PEXPIREAT lock of c1",
		"c2 SET lock of c1",
		"c1 GETSET lock of c2",
		"c2 a script's DEL lock of c1",
		"c2 HINCRBY h of c1",
		"c2 HSET h of c1",
	}, acts())
}
