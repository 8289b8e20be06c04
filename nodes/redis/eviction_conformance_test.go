package redis

// Differential tests of maxmemory eviction against a real redis-server in
// the exact mode of exact_test.go: the server's wall clock is frozen with
// realmode/clockshift and stepped exactly as the model's virtual time, so
// the idle times allkeys-lru compares do not depend on the machine's load.
// Real
// used_memory counts allocator size classes, buffers and the baseline of an
// empty server, which the model's per-key account cannot match (memory.go),
// so the real server gets maxmemory = its measured used_memory plus a
// budget, the model the same budget for its dataset, and the tests compare
// what does not depend on byte counts: which kinds of keys are evicted
// (keys with a TTL only, or any), that recently used keys survive
// allkeys-lru, and the OOM error with what still works under noeviction.

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/realmode/launch"
)

// evSide is one side of an eviction test: the real server or the model.
type evSide struct {
	name    string
	do      func(args ...string) Value
	advance func(d time.Duration)
	// limitNow sets the limit to the memory in use plus slack bytes (the
	// model's limit is set up front, see modelEvSide).
	limitNow func(slack int64)
	// evicted returns the number of keys evicted so far.
	evicted func() int64
}

const evBudget = 120 * 1024

func realEvSide(t *testing.T, policy EvictionPolicy) evSide {
	w := newExactWorld(t)
	n := w.start(launch.RedisOptions{Name: "A", ExtraConfig: []string{"maxmemory-policy " + string(policy)}})
	do := func(args ...string) Value { return n.rs.do(t, args) }
	field := func(section, name string) string {
		for _, l := range strings.Split(do("INFO", section).Str, "\r\n") {
			if v, ok := strings.CutPrefix(l, name+":"); ok {
				return v
			}
		}
		t.Fatalf("no %s in INFO %s", name, section)
		return ""
	}
	limit := func(slack int64) {
		used, _ := strconv.ParseInt(field("memory", "used_memory"), 10, 64)
		require.Positive(t, used, "used_memory in INFO memory")
		require.Equal(t, "OK", do("CONFIG", "SET", "maxmemory", strconv.FormatInt(used+slack, 10)).Str)
	}
	limit(evBudget)
	evicted := func() int64 {
		n, _ := strconv.ParseInt(field("stats", "evicted_keys"), 10, 64)
		return n
	}
	var v time.Duration
	advance := func(d time.Duration) {
		v += d
		w.clock.Freeze(exactBase + int64(v))
		// Commands stamp keys with the LRU clock that serverCron caches
		// from the wall clock (Redis 7.0 src/server.c serverCron
		// "server.lruclock = getLRUClock()", src/evict.c getLRUClock:
		// mstime()/LRU_CLOCK_RESOLUTION, 1000 ms, masked to LRU_BITS 24).
		// serverCron runs on the real monotonic clock, so wait until it
		// has seen the stepped clock (INFO server lru_clock) instead of
		// sleeping for a cron period that a loaded machine may stretch.
		want := strconv.FormatInt((exactBase/int64(time.Millisecond)+v.Milliseconds())/1000&(1<<24-1), 10)
		for i := 0; field("server", "lru_clock") != want; i++ {
			require.Less(t, i, 6000, "redis-server's LRU clock never reached %s after the wall clock stepped", want)
			time.Sleep(10 * time.Millisecond)
		}
	}
	return evSide{name: "real", do: do, advance: advance, limitNow: limit, evicted: evicted}
}

func modelEvSide(t *testing.T, policy EvictionPolicy, budget int64) evSide {
	w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: limited(policy, budget)})
	return evSide{name: "model", do: func(args ...string) Value { return w.do("A", args...) }, advance: w.Advance,
		limitNow: func(int64) {}, evicted: func() int64 { return w.node("A").EvictedKeys() }}
}

// bothSides runs f on the real server and on the model (whose limit is
// budget bytes of its dataset).
func bothSides(t *testing.T, policy EvictionPolicy, budget int64, f func(t *testing.T, s evSide)) {
	for _, s := range []evSide{realEvSide(t, policy), modelEvSide(t, policy, budget)} {
		t.Run(s.name, func(t *testing.T) { f(t, s) })
	}
}

var evValue = strings.Repeat("v", 1000)

// fillUntilOOM writes cache keys without a TTL until a write is refused
// (or max keys); it returns how many were stored and the refusal.
func fillUntilOOM(s evSide, prefix string, max int) (int, Value) {
	for i := 0; i < max; i++ {
		if v := s.do("SET", fmt.Sprintf("%s%05d", prefix, i), evValue); v.Str != "OK" {
			return i, v
		}
	}
	return max, OK()
}

func countPresent(s evSide, keys []string) int {
	n := 0
	for _, k := range keys {
		if s.do("EXISTS", k).Int == 1 {
			n++
		}
	}
	return n
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%05d", prefix, i)
	}
	return out
}

func TestConformanceEvictionNoEviction(t *testing.T) {
	bothSides(t, NoEviction, evBudget, func(t *testing.T, s evSide) {
		stored, refusal := fillUntilOOM(s, "cache", 2000)
		t.Logf("%s: %d keys of %d bytes stored before OOM", s.name, stored, len(evValue))
		assert.Equal(t, errOOM, refusal)
		// NB: real used_memory moves with client buffers, so the real
		// server may dip under its limit again; a limit far below the use
		// keeps it over, as the model stays over after a refusal.
		s.limitNow(-evBudget)
		// The lock cannot be taken; reads, EXISTS and DEL still work; a
		// transaction is refused at queue time and aborted.
		assert.Equal(t, errOOM, s.do("SET", "lock", "c1", "NX", "PX", "30000"))
		assert.Equal(t, errOOM, s.do("INCRBY", "n", "1"))
		assert.Equal(t, Bulk(evValue), s.do("GET", "cache00000"))
		assert.Equal(t, Int(1), s.do("EXISTS", "cache00001"))
		assert.Equal(t, "OK", s.do("MULTI").Str)
		assert.Equal(t, errOOM, s.do("GET", "cache00000"))
		assert.Equal(t, errExecAbort, s.do("EXEC"))
		assert.Equal(t, Int(1), s.do("DEL", "cache00000"))
		assert.Equal(t, stored-1, countPresent(s, names("cache", stored)), "nothing was evicted")
	})
}

func TestConformanceEvictionVolatile(t *testing.T) {
	for _, policy := range []EvictionPolicy{VolatileLRU, VolatileTTL, VolatileRandom} {
		t.Run(string(policy), func(t *testing.T) {
			bothSides(t, policy, evBudget, func(t *testing.T, s evSide) {
				// Lock keys carry TTLs; a cache workload without TTLs fills
				// memory.
				locks := names("lock", 10)
				for i, l := range locks {
					require.True(t, s.do("SET", l, "c1", "NX", "PX", strconv.Itoa(600000+i*1000)).Str == "OK")
				}
				stored, refusal := fillUntilOOM(s, "cache", 2000)
				t.Logf("%s: %d cache keys stored before OOM", s.name, stored)
				assert.Zero(t, countPresent(s, locks), "every lock key was evicted")
				assert.Equal(t, stored, countPresent(s, names("cache", stored)), "no cache key was evicted")
				assert.Equal(t, errOOM, refusal, "with no key with a TTL left, writes fail")
				// The lock is free again for anyone... but cannot be taken.
				assert.Equal(t, errOOM, s.do("SET", locks[0], "c2", "NX", "PX", "30000"))
			})
		})
	}
}

func TestConformanceEvictionAllKeysLRU(t *testing.T) {
	old := names("old", 60)
	// The model's account of the 60 old keys (memory.go) plus slack: the
	// limit is reached once they are written, on both sides.
	oldBytes := int64(len(old)) * sizeOf(old[0], &entry{str: evValue})
	const slack = 2000
	bothSides(t, AllKeysLRU, oldBytes+slack, func(t *testing.T, s evSide) {
		s.limitNow(1 << 30)
		for _, k := range old {
			require.Equal(t, "OK", s.do("SET", k, evValue).Str)
		}
		// NB: real used_memory moves with client buffers by kilobytes; a
		// larger slack there keeps one write from evicting many keys.
		s.limitNow(30000)
		s.advance(2 * time.Second)
		hot := old[:10]
		for _, k := range hot {
			s.do("GET", k)
		}
		s.advance(2 * time.Second)
		// New keys until 10 keys were evicted: fewer than the 50 cold ones.
		// (Real used_memory moves with client buffers, so the number of
		// new keys it takes differs from the model's.)
		added := 0
		for _, k := range names("new", 200) {
			if s.evicted() >= 10 {
				break
			}
			require.Equal(t, "OK", s.do("SET", k, evValue).Str)
			added++
		}
		coldLeft := countPresent(s, old[10:])
		hotLeft := countPresent(s, hot)
		newLeft := countPresent(s, names("new", added))
		// NB: every command evicts first when memory is over the limit, so
		// the checks above may evict too: count evictions after them.
		evicted := s.evicted()
		t.Logf("%s: %d new keys; %d evicted; hot keys left %d/10, cold keys left %d/50, new keys left %d/%d", s.name,
			added, evicted, hotLeft, coldLeft, newLeft, added)
		require.Less(t, evicted, int64(40), "the writes evicted too much to compare")
		assert.Equal(t, len(hot), hotLeft, "recently read keys survive")
		assert.Equal(t, added, newLeft, "new keys survive")
		// The checks ran in order cold, hot, new: an eviction during them
		// can take a cold key already counted.
		assert.InDelta(t, 50-int(evicted), coldLeft, 2, "every evicted key is one of the least recently used")
	})
}

func TestConformanceEvictionAllKeysRandom(t *testing.T) {
	bothSides(t, AllKeysRandom, evBudget, func(t *testing.T, s evSide) {
		locks := names("lock", 20)
		for _, l := range locks {
			require.True(t, s.do("SET", l, "c1", "NX", "PX", "600000").Str == "OK")
		}
		for _, k := range names("cache", 400) {
			require.True(t, s.do("SET", k, evValue).Str == "OK", "allkeys-random always finds a key to evict")
		}
		locksLeft := countPresent(s, locks)
		cacheLeft := countPresent(s, names("cache", 200))
		t.Logf("%s: locks left %d/20, first 200 cache keys left %d", s.name, locksLeft, cacheLeft)
		assert.Less(t, locksLeft, len(locks), "keys with a TTL are evicted")
		assert.Less(t, cacheLeft, 200, "keys without a TTL are evicted too")
	})
}

// TestConformanceEvictionScripts compares scripts under noeviction once
// memory is full: EVAL itself is not refused, but its first DENYOOM command
// before any write is (scriptVerifyOOM): Redisson's lock script fails at
// HINCRBY and creates nothing, its unlock script fails at HINCRBY and
// leaves the lock, while a plain DEL and a script whose first write is DEL
// (not DENYOOM) still run.
func TestConformanceEvictionScripts(t *testing.T) {
	eval := func(s evSide, sc Script, keys []string, args ...string) Value {
		a := append([]string{"EVAL", sc.Source, strconv.Itoa(len(keys))}, keys...)
		return s.do(append(a, args...)...)
	}
	const id = "uuid-1:1"
	bothSides(t, NoEviction, evBudget, func(t *testing.T, s evSide) {
		// Before memory is full: c1 holds Redisson lock "held" (and a
		// string lock "plain").
		require.Equal(t, Nil(), eval(s, ScriptRedissonLock, []string{"held"}, "30000", id))
		// NB: the first EVAL grows real used_memory by some 100 KB (the
		// Lua client and its buffers): the limit is set again after it.
		s.limitNow(evBudget)
		require.Equal(t, "OK", s.do("SET", "plain", "v1", "PX", "30000").Str)
		require.Equal(t, "OK", s.do("SET", "cad", "v1", "PX", "30000").Str)
		stored, refusal := fillUntilOOM(s, "cache", 2000)
		t.Logf("%s: %d keys stored before OOM", s.name, stored)
		require.Equal(t, errOOM, refusal)
		s.limitNow(-evBudget)
		// A second client's lock attempt is refused and creates nothing.
		v := eval(s, ScriptRedissonLock, []string{"lock"}, "30000", "uuid-2:1")
		assert.Equal(t, Err(errOOM.Str+" script: "+ScriptRedissonLock.SHA+", on @user_script:2."), v, "lock script refused")
		assert.Equal(t, Int(0), s.do("EXISTS", "lock"), "the lock key was not created")
		// A re-entry by the holder is refused the same way.
		v = eval(s, ScriptRedissonLock, []string{"held"}, "30000", id)
		assert.True(t, strings.HasPrefix(v.Str, errOOM.Str), "re-entry refused: %q", v.Str)
		// The holder's release is refused at its HINCRBY: the lock stays.
		v = eval(s, ScriptRedissonUnlock, []string{"held", "redisson_lock__channel:{held}", "latch"},
			"0", "30000", id, "publish", "30000")
		assert.Equal(t, Err(errOOM.Str+" script: "+ScriptRedissonUnlock.SHA+", on @user_script:8."), v, "unlock script refused")
		assert.Equal(t, Int(1), s.do("EXISTS", "held"), "the lock is still held")
		assert.Equal(t, Bulk("1"), s.do("HGET", "held", id))
		// A script whose first write is DEL runs; so does a plain DEL.
		assert.Equal(t, Int(1), eval(s, ScriptCompareAndDelete, []string{"cad"}, "v1"))
		assert.Equal(t, Int(1), s.do("DEL", "plain"))
	})
}
