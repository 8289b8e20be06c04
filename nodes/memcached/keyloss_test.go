package memcached

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// TestKeyLosses: the node records a key loss for an item whose exptime
// passed and for one evicted from its LRU tail, none for a delete, an
// overwrite or flush_all (commands asked for those).
func TestKeyLosses(t *testing.T) {
	losses := func(w *world) []string {
		var out []string
		for _, l := range w.K.History().KeyLosses {
			out = append(out, l.Node+" "+l.Key+" "+string(l.Cause)+" "+l.Detail)
		}
		return out
	}
	t.Run("delete, overwrite and flush_all are no loss", func(t *testing.T) {
		w := newWorld(t, DefaultConfig(), sim.ClockSpec{})
		require.Equal(t, "STORED", w.do(add("lock", "c1", 600)).Status)
		require.Equal(t, "DELETED", w.do(del("lock")).Status)
		require.Equal(t, "STORED", w.do(set("k", "v", 600)).Status)
		require.Equal(t, "STORED", w.do(set("k", "w", 600)).Status)
		require.Equal(t, "OK", w.do(Request{Cmd: CmdFlushAll}).Status)
		assert.Empty(t, losses(w))
	})
	t.Run("an exptime that passed, found on access", func(t *testing.T) {
		w := newWorld(t, DefaultConfig(), sim.ClockSpec{})
		// The maintainer checks only the LRU tails: an older item at the
		// COLD tail hides the lock from it.
		require.Equal(t, "STORED", w.do(add("other", "v", 0)).Status)
		w.Advance(5 * time.Millisecond)
		require.Equal(t, "STORED", w.do(add("lock", "c1", 2)).Status)
		w.Advance(20 * time.Second)
		require.Equal(t, []string{"lock", "other"}, w.node().LRUKeys(1, lruCold))
		assert.Empty(t, losses(w), "found only on access")
		require.Equal(t, "STORED", w.do(add("lock", "c2", 2)).Status)
		assert.Equal(t, []string{"M lock expired "}, losses(w))
	})
	t.Run("an exptime that passed, reclaimed at an LRU tail by the maintainer", func(t *testing.T) {
		w := newWorld(t, DefaultConfig(), sim.ClockSpec{})
		require.Equal(t, "STORED", w.do(add("lock", "c1", 2)).Status)
		w.Advance(5 * time.Second)
		assert.Equal(t, []string{"M lock expired "}, losses(w))
		assert.Equal(t, int64(1), w.node().ItemStats(1).Reclaimed)
	})
	t.Run("an eviction from the LRU tail names the limit", func(t *testing.T) {
		w := newWorld(t, smallConfig(), sim.ClockSpec{})
		val := strings.Repeat("v", 250000)
		for _, k := range []string{"k0", "k1", "k2", "k3", "k4"} {
			require.Equal(t, "STORED", w.do(set(k, val, 0)).Status)
		}
		assert.Equal(t, []string{"M k0 evicted memory limit " + memLimit(smallConfig().MaxBytes) + ", COLD LRU tail"}, losses(w))
	})
}

func TestMemLimit(t *testing.T) {
	assert.Equal(t, "64 MB", memLimit(64<<20))
	assert.Equal(t, "1000 bytes", memLimit(1000))
}

// TestRestartLosses: memcached keeps nothing across a restart, so every
// item the crashed server held and whose exptime had not passed is a
// restart loss of the next incarnation; an item that would have expired
// during the downtime is not.
func TestRestartLosses(t *testing.T) {
	w := newWorld(t, DefaultConfig(), sim.ClockSpec{})
	require.Equal(t, "STORED", w.do(add("lock", "c1", 600)).Status)
	require.Equal(t, "STORED", w.do(add("short", "v", 1)).Status)
	w.Advance(100 * time.Millisecond)
	w.K.Crash(w.ID("M"), sim.CrashProcess)
	w.Advance(3 * time.Second)
	w.K.Restart(w.ID("M"))
	w.Advance(10 * time.Millisecond)
	var got []string
	for _, l := range w.K.History().KeyLosses {
		got = append(got, l.Node+" "+l.Key+" "+string(l.Cause)+" "+l.Detail)
	}
	assert.Equal(t, []string{"M lock lost-at-restart process crash; memcached keeps items in memory only"}, got)
}
