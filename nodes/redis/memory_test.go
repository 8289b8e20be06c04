package redis

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

func limited(policy EvictionPolicy, bytes int64) Config {
	c := DefaultConfig()
	c.MaxMemory = bytes
	c.MaxMemoryPolicy = policy
	return c
}

// fill writes cache keys without a TTL until n were sent; it returns the
// replies.
func fill(w *world, prefix string, n int, val string) []Value {
	out := make([]Value, n)
	for i := range out {
		out[i] = w.do("A", "SET", fmt.Sprintf("%s%04d", prefix, i), val)
	}
	return out
}

func present(w *world, keys ...string) []string {
	var out []string
	for _, k := range keys {
		if w.do("A", "EXISTS", k).Int == 1 {
			out = append(out, k)
		}
	}
	return out
}

func TestEvictionPolicies(t *testing.T) {
	val := strings.Repeat("v", 100)
	locks := []string{"lock:a", "lock:b", "lock:c"}
	takeLocks := func(w *world) {
		for _, l := range locks {
			require.True(t, w.do("A", "SET", l, "c1", "NX", "PX", "600000").IsOK())
		}
	}
	t.Run("noeviction refuses writes with OOM, reads and DEL work", func(t *testing.T) {
		w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: limited(NoEviction, 4000)})
		replies := fill(w, "cache", 60, val)
		assert.True(t, replies[0].IsOK())
		assert.Equal(t, errOOM, replies[59])
		assert.Equal(t, errOOM, w.do("A", "SET", "lock", "c1", "NX", "PX", "30000"))
		assert.Equal(t, errOOM, w.do("A", "INCR", "n"))
		assert.Equal(t, Bulk(val), w.do("A", "GET", "cache0000"))
		assert.Equal(t, OK(), w.do("A", "MULTI"))
		assert.Equal(t, errOOM, w.do("A", "GET", "cache0001"), "inside MULTI every command is refused")
		assert.Equal(t, errExecAbort, w.do("A", "EXEC"))
		assert.Equal(t, Int(1), w.do("A", "DEL", "cache0000"))
		assert.Zero(t, w.node("A").EvictedKeys())
	})
	t.Run("volatile-lru evicts only keys with a TTL: the locks", func(t *testing.T) {
		w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: limited(VolatileLRU, 6000)})
		takeLocks(w)
		replies := fill(w, "cache", 60, val)
		assert.Empty(t, present(w, locks...), "every lock key was evicted")
		stored := 0
		for _, r := range replies {
			if r.IsOK() {
				stored++
			} else {
				assert.Equal(t, errOOM, r, "once no key has a TTL, writes fail")
			}
		}
		for i := 0; i < stored; i++ {
			assert.Equal(t, Int(1), w.do("A", "EXISTS", fmt.Sprintf("cache%04d", i)), "cache keys are never evicted")
		}
		assert.Equal(t, int64(len(locks)), w.node("A").EvictedKeys())
		assert.Len(t, w.Events(EventKeyEvicted, "A"), len(locks))
	})
	t.Run("volatile-random evicts only keys with a TTL", func(t *testing.T) {
		w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: limited(VolatileRandom, 6000)})
		takeLocks(w)
		fill(w, "cache", 60, val)
		assert.Empty(t, present(w, locks...))
		assert.Equal(t, int64(len(locks)), w.node("A").EvictedKeys())
	})
	t.Run("volatile-ttl evicts the nearest deadline first", func(t *testing.T) {
		w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: limited(VolatileTTL, 3000)})
		for i := 0; i < 10; i++ {
			w.do("A", "SET", fmt.Sprintf("t%02d", i), val, "PX", fmt.Sprint(100000+i*1000))
		}
		fill(w, "cache", 10, val)
		var evicted []string
		for _, e := range w.Events(EventKeyEvicted, "A") {
			evicted = append(evicted, strings.Fields(e.Text)[0])
		}
		require.NotEmpty(t, evicted)
		assert.True(t, sort.StringsAreSorted(evicted), "evicted in deadline order: %v", evicted)
		assert.Equal(t, `"t00"`, evicted[0])
	})
	t.Run("allkeys-lru evicts the least recently used", func(t *testing.T) {
		w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: limited(AllKeysLRU, 6000)})
		fill(w, "old", 20, val)
		w.Advance(5 * time.Second)
		for i := 0; i < 5; i++ {
			w.do("A", "GET", fmt.Sprintf("old%04d", i)) // hot
		}
		w.Advance(5 * time.Second)
		fill(w, "new", 30, val)
		hot := present(w, "old0000", "old0001", "old0002", "old0003", "old0004")
		var cold []string
		for i := 5; i < 20; i++ {
			cold = append(cold, fmt.Sprintf("old%04d", i))
		}
		assert.Len(t, hot, 5, "recently read keys survive")
		assert.Less(t, len(present(w, cold...)), 5, "most cold keys were evicted")
	})
	t.Run("allkeys-random evicts keys of both kinds", func(t *testing.T) {
		w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: limited(AllKeysRandom, 6000)})
		takeLocks(w)
		fill(w, "cache", 200, val)
		assert.Less(t, len(present(w, locks...)), len(locks))
		assert.Less(t, len(present(w, "cache0000", "cache0001", "cache0002", "cache0003", "cache0004")), 5)
	})
	t.Run("an eviction dirties a WATCH", func(t *testing.T) {
		w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: limited(VolatileLRU, 3000)})
		w.do("A", "SET", "stock", "10", "PX", "600000")
		w.do("A", "WATCH", "stock")
		fill(w, "cache", 30, val)
		w.do("A", "DEL", "cache0000", "cache0001") // room again
		w.do("A", "MULTI")
		w.do("A", "DECR", "stock")
		assert.Equal(t, Nil(), w.do("A", "EXEC"))
	})
	t.Run("replicas do not evict", func(t *testing.T) {
		cfg := limited(AllKeysLRU, 3000)
		w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: DefaultConfig()},
			nodeSpec{name: "B", cfg: func() Config { c := cfg; c.ReplicaOf = "A"; return c }()})
		w.Advance(2 * time.Second)
		fill(w, "cache", 60, val)
		w.Advance(time.Second)
		assert.Zero(t, w.node("B").EvictedKeys())
		assert.Greater(t, w.node("B").UsedMemory(), int64(3000))
	})
}

// TestMemoryAccount: after any mix of commands the account equals the sum
// of the sizes of the keys present, and the key slices index every key.
func TestMemoryAccount(t *testing.T) {
	w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()})
	r := sim.NewRand(3, "memory-account")
	keys := []string{"a", "b", "c", "d", "e"}
	for i := 0; i < 2000; i++ {
		k := keys[r.Intn(len(keys))]
		switch r.Intn(9) {
		case 0:
			w.do("A", "SET", k, strings.Repeat("x", r.Intn(50)))
		case 1:
			w.do("A", "SET", k, "v", "PX", "50")
		case 2:
			w.do("A", "DEL", k)
		case 3:
			w.do("A", "INCRBY", k, "7")
		case 4:
			w.do("A", "HSET", k, "f"+fmt.Sprint(r.Intn(3)), "val")
		case 5:
			w.do("A", "PEXPIRE", k, "100")
		case 6:
			w.Advance(30 * time.Millisecond)
		case 7:
			w.do("A", "SET", k, "12345", "KEEPTTL")
		case 8:
			if r.Intn(20) == 0 {
				w.do("A", "FLUSHALL")
			}
		}
		n := w.node("A")
		var sum int64
		for key, e := range n.db {
			sum += sizeOf(key, e)
			assert.Equal(t, key, n.mem.keys[e.idx])
			if e.hasExp {
				assert.Equal(t, key, n.mem.vkeys[e.vidx])
			}
		}
		require.Equal(t, sum, n.UsedMemory(), "after step %d", i)
		require.Len(t, n.mem.keys, len(n.db))
		require.Len(t, n.mem.vkeys, len(n.volatile))
	}
}

func TestMemoryConfig(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"unknown policy", func(c *Config) { c.MaxMemoryPolicy = "allkeys-lfu" }, `MaxMemoryPolicy: unknown policy "allkeys-lfu"`},
		{"empty policy", func(c *Config) { c.MaxMemoryPolicy = "" }, "MaxMemoryPolicy: unknown policy"},
		{"negative limit", func(c *Config) { c.MaxMemory = -1 }, "MaxMemory: -1 is negative"},
		{"no samples", func(c *Config) { c.MaxMemorySamples = 0 }, "MaxMemorySamples: 0 out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mod(&c)
			err := c.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestScriptVerifyOOM: a script's first DENYOOM command before any write is
// refused when memory was over the limit as the EVAL began (scriptVerifyOOM,
// R 7.0.15 src/script.c:401-422); a script whose first write is not DENYOOM
// runs, and nothing is refused under the limit.
func TestScriptVerifyOOM(t *testing.T) {
	eval := func(w *world, sc Script, keys []string, args ...string) Value {
		a := append([]string{"EVAL", sc.Source, fmt.Sprint(len(keys))}, keys...)
		return w.do("A", append(a, args...)...)
	}
	unlock := func(w *world) Value {
		return eval(w, ScriptRedissonUnlock, []string{"held", "ch", "latch"}, "0", "30000", "id1", "publish", "30000")
	}
	tests := []struct {
		name   string
		full   bool
		run    func(w *world) Value
		want   string // the reply's error prefix, or "" for no error
		exists map[string]int64
	}{
		{"full: Redisson lock refused at HINCRBY, nothing created", true,
			func(w *world) Value { return eval(w, ScriptRedissonLock, []string{"lock"}, "30000", "id2") },
			errOOM.Str + " script: " + ScriptRedissonLock.SHA + ", on @user_script:2.", map[string]int64{"lock": 0}},
		{"full: Redisson unlock refused at HINCRBY, the lock stays", true, unlock,
			errOOM.Str + " script: " + ScriptRedissonUnlock.SHA + ", on @user_script:8.", map[string]int64{"held": 1}},
		{"full: compare-and-delete (DEL) runs", true,
			func(w *world) Value { return eval(w, ScriptCompareAndDelete, []string{"cad"}, "v1") }, "", map[string]int64{"cad": 0}},
		{"full: plain DEL runs", true, func(w *world) Value { return w.do("A", "DEL", "held") }, "", map[string]int64{"held": 0}},
		{"under the limit: Redisson unlock runs", false, unlock, "", map[string]int64{"held": 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: limited(NoEviction, 4000)})
			require.Equal(t, Nil(), eval(w, ScriptRedissonLock, []string{"held"}, "30000", "id1"))
			require.True(t, w.do("A", "SET", "cad", "v1").IsOK())
			if tc.full {
				replies := fill(w, "cache", 60, strings.Repeat("v", 100))
				require.Equal(t, errOOM, replies[59])
			}
			v := tc.run(w)
			if tc.want == "" {
				assert.False(t, v.IsErr(), "reply %v", v)
			} else {
				assert.Equal(t, Err(tc.want), v)
			}
			for k, n := range tc.exists {
				assert.Equal(t, Int(n), w.do("A", "EXISTS", k), "EXISTS %s", k)
			}
		})
	}
}
