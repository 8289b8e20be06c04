package clients

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/nodes/memcached"
	"github.com/locksim/locksim/nodes/mysql"
	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/nodes/storage"
	"github.com/locksim/locksim/sim"
)

// Tests of issue 13's algorithms against the node models, on the shared
// harness (world_test.go).

func (w *world) memcached(name string, f func(*memcached.Config)) {
	cfg := memcached.DefaultConfig()
	if f != nil {
		f(&cfg)
	}
	w.Add(name, func() sim.Process { return memcached.New(cfg) }, sim.ClockSpec{})
}

func (w *world) mysql(name string, f func(*mysql.Config)) {
	cfg := mysql.DefaultConfig()
	if f != nil {
		f(&cfg)
	}
	require.NoError(w.T, cfg.Validate())
	w.Add(name, func() sim.Process { return mysql.New(cfg) }, sim.ClockSpec{})
}

func (w *world) redisWith(name string, f func(*redis.Config)) {
	cfg := redis.DefaultConfig()
	f(&cfg)
	w.Add(name, func() sim.Process { return redis.New(cfg) }, sim.ClockSpec{})
}

// lockClient adds a client of algorithm alg (node set to the world's
// server of its kind) with f applied to its lock and workload.
func (w *world) lockClient(name, alg string, clock sim.ClockSpec, wl Workload, f func(*LockConfig)) {
	w.T.Helper()
	lc := lockConfig(w.T, alg, func(c *LockConfig) {
		c.Node = map[string]string{NodeRedis: "A", NodeMemcached: "M", NodeMySQL: "D"}[Lookup(alg).NodeKind]
		if f != nil {
			f(c)
		}
	})
	cfg := clientConfig(name, lc, wl)
	require.NoError(w.T, cfg.Validate())
	w.Add(name, func() sim.Process { return New(cfg) }, clock)
}

func (w *world) filler(cfg FillerConfig) {
	w.T.Helper()
	require.NoError(w.T, cfg.Validate())
	w.Add(cfg.Name, func() sim.Process { return NewFiller(cfg) }, sim.ClockSpec{})
}

// contend is two clients c1 and c2 with cycles cycles each, hold and think
// 100 ms, c2 starting 10 ms after c1.
func contend(cycles int) (Workload, Workload) {
	wl := Workload{Cycles: cycles, Hold: 100 * time.Millisecond, Think: 100 * time.Millisecond}
	wl2 := wl
	wl2.Start = 10 * time.Millisecond
	return wl, wl2
}

// Every new algorithm: two contending clients complete their cycles, their
// beliefs never overlap and no update is lost.
func TestExtraContention(t *testing.T) {
	manyTries := func(c *LockConfig) {
		c.Tries = 100
		c.RetryDelay = sim.Range{Lo: 20 * time.Millisecond, Hi: 50 * time.Millisecond}
	}
	cases := []struct {
		name string
		add  func(w *world, name string, wl Workload)
	}{
		{MemcachedAdd + "/delete", func(w *world, name string, wl Workload) {
			w.lockClient(name, MemcachedAdd, sim.ClockSpec{}, wl, manyTries)
		}},
		{MemcachedAdd + "/cas", func(w *world, name string, wl Workload) {
			w.lockClient(name, MemcachedAdd, sim.ClockSpec{}, wl, func(p *LockConfig) { manyTries(p); p.CacheRelease = CacheReleaseCAS })
		}},
		{MySQLInsert, func(w *world, name string, wl Workload) {
			w.lockClient(name, MySQLInsert, sim.ClockSpec{}, wl, manyTries)
		}},
		{MySQLForUpdate, func(w *world, name string, wl Workload) {
			w.lockClient(name, MySQLForUpdate, sim.ClockSpec{}, wl, manyTries)
		}},
		{RedisGetSet, func(w *world, name string, wl Workload) {
			w.lockClient(name, RedisGetSet, sim.ClockSpec{}, wl, manyTries)
		}},
		{RedisReentrant, func(w *world, name string, wl Workload) {
			w.lockClient(name, RedisReentrant, sim.ClockSpec{}, wl, manyTries)
		}},
		{RedisReentrantHash, func(w *world, name string, wl Workload) {
			w.lockClient(name, RedisReentrantHash, sim.ClockSpec{}, wl, manyTries)
		}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.redis("A")
			w.memcached("M", nil)
			w.mysql("D", nil)
			w.storage(storage.FencingNone)
			wl1, wl2 := contend(3)
			tt.add(w, "c1", wl1)
			tt.add(w, "c2", wl2)
			h := w.run(20 * time.Second)
			require.Len(t, beliefs(h, "c1"), 3, w.dumpTrace())
			require.Len(t, beliefs(h, "c2"), 3, w.dumpTrace())
			assert.Empty(t, overlaps(h), w.dumpTrace())
			assert.False(t, lostUpdate(h))
			assert.Len(t, h.Sections, 6)
			for _, b := range h.Beliefs {
				assert.Equal(t, sim.EndReleased, b.Reason)
			}
		})
	}
}

// Bad parameters name the parameter.
func TestExtraValidation(t *testing.T) {
	check := func(alg string, wl Workload, f func(*LockConfig)) error {
		lc, err := DefaultLockConfig(alg)
		require.NoError(t, err)
		lc.Node = "N"
		if f != nil {
			f(&lc)
		}
		return Config{Name: "c1", Lock: lc, Workload: wl}.Validate()
	}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"exptime over 30 days", check(MemcachedAdd, Workload{}, func(c *LockConfig) { c.Exptime = 31 * 24 * time.Hour }), "lock.exptime"},
		{"exptime fraction", check(MemcachedAdd, Workload{}, func(c *LockConfig) { c.Exptime = 1500 * time.Millisecond }), "lock.exptime"},
		{"memcached release", check(MemcachedAdd, Workload{}, func(c *LockConfig) { c.CacheRelease = "unlink" }), "lock.release"},
		{"memcached node", check(MemcachedAdd, Workload{}, func(c *LockConfig) { c.Node = "" }), "lock.node"},
		{"mysql no table", check(MySQLInsert, Workload{}, func(c *LockConfig) { c.Table = "" }), "lock.table"},
		{"mysql tries", check(MySQLForUpdate, Workload{}, func(c *LockConfig) { c.Tries = 0 }), "lock.tries"},
		{"mysql fencing", check(MySQLForUpdate, Workload{}, func(c *LockConfig) { c.FencingToken = FencingIncr }), "lock.fencing_token"},
		{"reentry elsewhere", check(RedisSingle, Workload{Reentry: 2}, nil), "workload.reentry"},
		{"reentry negative", check(RedisReentrant, Workload{Reentry: -1}, nil), "workload.reentry"},
		{"inner hold", check(RedisReentrantHash, Workload{Reentry: 2, InnerHold: -1}, nil), "workload.inner_hold"},
		{"ttl", check(RedisReentrant, Workload{}, func(c *LockConfig) { c.TTL = 0 }), "lock.ttl"},
		{"getset timeout", check(RedisGetSet, Workload{}, func(c *LockConfig) { c.LockTimeout = 0 }), "lock.timeout"},
		{"filler kind", FillerConfig{Name: "f", Node: "A", Kind: "mysql", Every: time.Second, ValueSize: 1}.Validate(), "kind"},
		{"filler memcached ttl", FillerConfig{Name: "f", Node: "M", Kind: FillMemcached, Every: time.Second, ValueSize: 1, TTL: 1500 * time.Millisecond}.Validate(), "ttl"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			require.Error(t, tt.err)
			assert.Contains(t, tt.err.Error(), tt.want)
		})
	}
	require.NoError(t, check(MemcachedAdd, Workload{}, func(c *LockConfig) { c.Exptime = 30 * 24 * time.Hour }))
	require.NoError(t, check(MemcachedAdd, Workload{}, func(c *LockConfig) { c.Exptime = 0 }))
	require.NoError(t, check(RedisReentrant, Workload{Reentry: 3}, nil))
}

// twoClients runs c1 (holding 2 s from 0) and c2 (starting at startC2,
// retrying every 100 ms) with one cycle each.
func twoClients(startC2 time.Duration) (Workload, Workload, func(*LockConfig)) {
	wl1 := Workload{Cycles: 1, Hold: 2 * time.Second}
	wl2 := Workload{Cycles: 1, Hold: 100 * time.Millisecond, Start: startC2}
	retry := func(c *LockConfig) { c.Tries = 200; c.RetryDelay = sim.Fixed(100 * time.Millisecond) }
	return wl1, wl2, retry
}

// memcached-add: a cache workload in the lock item's slab class evicts it
// from the LRU; a crash and restart of memcached loses it. Either way a
// second client adds the key while the first holds the lock.
func TestMemcachedAddLosesTheLock(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(w *world)
		broken bool
	}{
		{"quiet", func(w *world) {}, false},
		{"eviction", func(w *world) {
			// Items of about the lock item's size (82 bytes: the 96-byte
			// class) until the class's one page (10922 chunks) is full.
			w.filler(FillerConfig{Name: "F", Node: "M", Kind: FillMemcached, Start: 200 * time.Millisecond, Every: 100 * time.Microsecond, Count: 11000, ValueSize: 20})
		}, true},
		{"restart", func(w *world) {
			w.At(500*time.Millisecond, func() { w.K.Crash(w.ID("M"), sim.CrashProcess) })
			w.At(600*time.Millisecond, func() { w.K.Restart(w.ID("M")) })
		}, true},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.memcached("M", func(c *memcached.Config) { c.MaxBytes, c.ItemSizeMax = 1<<20, 1<<19 })
			w.storage(storage.FencingNone)
			wl1, wl2, retry := twoClients(100 * time.Millisecond)
			w.lockClient("c1", MemcachedAdd, sim.ClockSpec{}, wl1, retry)
			w.lockClient("c2", MemcachedAdd, sim.ClockSpec{}, wl2, retry)
			tt.setup(w)
			h := w.run(5 * time.Second)
			require.Len(t, beliefs(h, "c1"), 1, w.dumpTrace())
			require.Len(t, beliefs(h, "c2"), 1, w.dumpTrace())
			assert.Equal(t, tt.broken, len(overlaps(h)) > 0)
			assert.Equal(t, tt.broken, lostUpdate(h))
		})
	}
}

// memcached-add with cas release: a holder whose item expired does not
// delete the next holder's item; with delete it does, and a third client
// gets in.
func TestMemcachedAddCASRelease(t *testing.T) {
	for _, mode := range []string{MemcachedReleaseDelete, MemcachedReleaseCAS} {
		t.Run(mode, func(t *testing.T) {
			w := newWorld(t)
			w.memcached("M", nil)
			w.storage(storage.FencingNone)
			retry := func(exptime time.Duration) func(p *LockConfig) {
				return func(p *LockConfig) {
					p.Tries, p.RetryDelay, p.Exptime, p.CacheRelease = 200, sim.Fixed(100*time.Millisecond), exptime, mode
				}
			}
			// c1's item expires after 1 s, while c1 still holds for 3 s.
			w.lockClient("c1", MemcachedAdd, sim.ClockSpec{}, Workload{Cycles: 1, Hold: 3 * time.Second}, retry(time.Second))
			w.lockClient("c2", MemcachedAdd, sim.ClockSpec{}, Workload{Cycles: 1, Hold: 3 * time.Second, Start: 100 * time.Millisecond}, retry(10*time.Second))
			w.lockClient("c3", MemcachedAdd, sim.ClockSpec{}, Workload{Cycles: 1, Hold: 100 * time.Millisecond, Start: 3200 * time.Millisecond}, retry(10*time.Second))
			h := w.run(10 * time.Second)
			b2, b3 := beliefs(h, "c2"), beliefs(h, "c3")
			require.Len(t, b2, 1, w.dumpTrace())
			require.Len(t, b3, 1, w.dumpTrace())
			// c1's release comes at about 3 s, while c2 (from about 1-2 s)
			// still holds: delete frees c2's item and c3 gets in at once.
			assert.Equal(t, mode == MemcachedReleaseDelete, b3[0].Start < b2[0].End, w.dumpTrace())
			if mode == MemcachedReleaseCAS {
				assert.True(t, w.TraceHas(KindClient, "c1", "no item of ours"))
			}
		})
	}
}

// mysql-insert: the holder crashes after its INSERT; the row never
// expires, so the other client never gets the lock (liveness).
func TestMySQLInsertCrashedHolderKeepsTheRow(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run(map[bool]string{false: "no-crash", true: "crash"}[crash], func(t *testing.T) {
			w := newWorld(t)
			w.mysql("D", nil)
			w.storage(storage.FencingNone)
			wl1, wl2, retry := twoClients(100 * time.Millisecond)
			w.lockClient("c1", MySQLInsert, sim.ClockSpec{}, wl1, retry)
			w.lockClient("c2", MySQLInsert, sim.ClockSpec{}, wl2, func(p *LockConfig) { p.Tries = 3; p.RetryDelay = sim.Fixed(time.Second) })
			if crash {
				w.At(time.Second, func() { w.K.Crash(w.ID("c1"), sim.CrashProcess) })
			}
			h := w.run(60 * time.Second)
			ws := wants(h, "c2")
			require.NotEmpty(t, ws)
			got := false
			for _, x := range ws {
				got = got || x.Got
			}
			assert.Equal(t, !crash, got, w.dumpTrace())
			if crash {
				assert.Equal(t, []string{"lock"}, keysOf(w, "D"))
			}
		})
	}
}

func keysOf(w *world, node string) []string {
	rows := w.Process(node).(*mysql.Node).Rows("locks")
	var out []string
	for k := range rows {
		out = append(out, k)
	}
	return out
}

// mysql-for-update: the holder pauses past wait_timeout; the server closes
// its connection, rolls back and frees the row; the waiter locks while the
// paused holder still believes. Without the pause it holds.
func TestMySQLForUpdatePause(t *testing.T) {
	for _, pause := range []bool{false, true} {
		t.Run(map[bool]string{false: "no-pause", true: "pause"}[pause], func(t *testing.T) {
			w := newWorld(t)
			w.mysql("D", func(c *mysql.Config) { c.WaitTimeout = 5 * time.Second })
			w.storage(storage.FencingNone)
			wl1, wl2, retry := twoClients(100 * time.Millisecond)
			w.lockClient("c1", MySQLForUpdate, sim.ClockSpec{}, wl1, retry)
			w.lockClient("c2", MySQLForUpdate, sim.ClockSpec{}, wl2, retry)
			if pause {
				w.At(500*time.Millisecond, func() { w.K.Pause(w.ID("c1"), 10*time.Second) })
			}
			h := w.run(30 * time.Second)
			require.Len(t, beliefs(h, "c1"), 1, w.dumpTrace())
			require.Len(t, beliefs(h, "c2"), 1, w.dumpTrace())
			assert.Equal(t, pause, len(overlaps(h)) > 0, w.dumpTrace())
			assert.Equal(t, pause, lostUpdate(h))
			if pause {
				assert.True(t, w.TraceHas(KindClient, "c1", "COMMIT: ERROR 2006"), w.dumpTrace())
			}
		})
	}
}

// redis-getset: a client whose clock runs 40 s ahead finds the holder's
// 30 s lock expired on its clock and takes it over with GETSET; with
// synced clocks it waits.
func TestGetSetClockSkew(t *testing.T) {
	for _, skew := range []time.Duration{0, 40 * time.Second} {
		t.Run(skew.String(), func(t *testing.T) {
			w := newWorld(t)
			w.redis("A")
			w.storage(storage.FencingNone)
			wl1, wl2, retry := twoClients(100 * time.Millisecond)
			w.lockClient("c1", RedisGetSet, sim.ClockSpec{}, wl1, retry)
			w.lockClient("c2", RedisGetSet, sim.ClockSpec{Offset: skew}, wl2, retry)
			h := w.run(10 * time.Second)
			require.Len(t, beliefs(h, "c1"), 1, w.dumpTrace())
			require.Len(t, beliefs(h, "c2"), 1, w.dumpTrace())
			assert.Equal(t, skew > 0, len(overlaps(h)) > 0)
			assert.Equal(t, skew > 0, w.TraceHas(KindClient, "c2", "expired on our clock"))
		})
	}
}

// GETSET decides a race between two clients that both found the lock
// expired: only the one whose GETSET returned the value it read wins.
func TestGetSetRaceOnExpiredLock(t *testing.T) {
	w := newWorld(t)
	w.redis("A")
	w.storage(storage.FencingNone)
	// c0 leaves a stale lock: its 1 ms timeout has passed when it
	// releases, so it does not DEL.
	w.lockClient("c0", RedisGetSet, sim.ClockSpec{}, Workload{Cycles: 1, Hold: 10 * time.Millisecond}, func(p *LockConfig) { p.LockTimeout = time.Millisecond })
	wl := Workload{Cycles: 1, Hold: time.Second, Think: 100 * time.Millisecond, Start: 50 * time.Millisecond}
	one := func(p *LockConfig) { p.Tries = 1; p.RetryDelay = sim.Fixed(100 * time.Millisecond) }
	w.lockClient("c1", RedisGetSet, sim.ClockSpec{}, wl, one)
	w.lockClient("c2", RedisGetSet, sim.ClockSpec{}, wl, one)
	h := w.run(5 * time.Second)
	got := 0
	for _, b := range h.Beliefs {
		// Beliefs that began in the race (a loser tries again later, after
		// the winner released).
		if b.Client != "c0" && b.Start < sim.At(500*time.Millisecond) {
			got++
		}
	}
	assert.Equal(t, 1, got, w.dumpTrace())
	assert.Empty(t, overlaps(h))
	assert.True(t, w.TraceHas(KindClient, "c0", "no DEL"))
	assert.True(t, w.TraceHas(KindClient, "", "another client was faster"), w.dumpTrace())
}

// Re-entry: the naive lock's inner release deletes the key while the outer
// section runs and another client locks (violated); Redisson's counted
// hash only decrements (holds).
func TestReentrantNesting(t *testing.T) {
	for _, counted := range []bool{false, true} {
		t.Run(map[bool]string{false: RedisReentrant, true: RedisReentrantHash}[counted], func(t *testing.T) {
			w := newWorld(t)
			w.redis("A")
			w.storage(storage.FencingNone)
			wl1, wl2, retry := twoClients(100 * time.Millisecond)
			alg := map[bool]string{false: RedisReentrant, true: RedisReentrantHash}[counted]
			wl1.Reentry, wl1.InnerAt, wl1.InnerHold = 2, 200*time.Millisecond, 200*time.Millisecond
			wl2.Reentry, wl2.InnerAt, wl2.InnerHold = 2, 200*time.Millisecond, 200*time.Millisecond
			w.lockClient("c1", alg, sim.ClockSpec{}, wl1, retry)
			w.lockClient("c2", alg, sim.ClockSpec{}, wl2, retry)
			h := w.run(10 * time.Second)
			require.Len(t, beliefs(h, "c1"), 1, w.dumpTrace())
			require.Len(t, beliefs(h, "c2"), 1, w.dumpTrace())
			assert.True(t, w.TraceHas(KindClient, "c1", "re-entered at depth 2"), w.dumpTrace())
			assert.Equal(t, !counted, len(overlaps(h)) > 0, w.dumpTrace())
			assert.Equal(t, !counted, lostUpdate(h))
		})
	}
}

// Redis maxmemory: a cache workload pushes memory over the limit. With
// volatile-lru the lock key, the only key with a TTL, is evicted and a
// second client locks (violated); with noeviction the cache writes are
// refused with OOM and the lock holds.
func TestRedisEvictionOfTheLockKey(t *testing.T) {
	for _, policy := range []redis.EvictionPolicy{redis.NoEviction, redis.VolatileLRU} {
		t.Run(string(policy), func(t *testing.T) {
			w := newWorld(t)
			// The lock key is accounted 95 bytes (24+16+4+4 for the key, 19+4
			// for its value, 24 for its deadline), each cache key 155: nine
			// of them fit under 1450 bytes, not with the lock key too.
			w.redisWith("A", func(c *redis.Config) { c.MaxMemory = 1450; c.MaxMemoryPolicy = policy })
			w.storage(storage.FencingNone)
			w.filler(FillerConfig{Name: "F", Node: "A", Kind: FillRedis, Start: 200 * time.Millisecond, Every: 10 * time.Millisecond, Count: 9, ValueSize: 100})
			lc := func(f func(*LockConfig)) LockConfig {
				return lockConfig(t, RedisSingle, func(c *LockConfig) {
					c.Node, c.Tries, c.RetryDelay = "A", 200, sim.Fixed(100*time.Millisecond)
				})
			}
			wl1, wl2, _ := twoClients(100 * time.Millisecond)
			w.client(clientConfig("c1", lc(nil), wl1))
			w.client(clientConfig("c2", lc(nil), wl2))
			h := w.run(10 * time.Second)
			require.Len(t, beliefs(h, "c1"), 1, w.dumpTrace())
			require.Len(t, beliefs(h, "c2"), 1, w.dumpTrace())
			evicted := policy == redis.VolatileLRU
			assert.Equal(t, evicted, len(overlaps(h)) > 0, w.dumpTrace())
			assert.Equal(t, evicted, w.TraceHas(redis.EventKeyEvicted, "A", `"lock"`), w.dumpTrace())
			// Under noeviction c2's SET is refused until c1 deletes the key.
			assert.Equal(t, !evicted, w.TraceHas(sim.KindSend, "A", "-OOM command not allowed"))
		})
	}
}

// The filler notes when its writes start being refused (memcached -M, Redis
// noeviction) and when they succeed again.
func TestFillerNotesRefusedWrites(t *testing.T) {
	for _, kind := range []string{FillRedis, FillMemcached} {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			w.redisWith("A", func(c *redis.Config) { c.MaxMemory = 1000; c.MaxMemoryPolicy = redis.NoEviction })
			w.memcached("M", func(c *memcached.Config) { c.MaxBytes, c.ItemSizeMax = 1<<20, 1<<19; c.EvictToFree = false })
			node, size := "A", 100
			if kind == FillMemcached {
				// 8 KB items: one 1 MB page of their class holds about 120.
				node, size = "M", 8000
			}
			w.filler(FillerConfig{Name: "F", Node: node, Kind: kind, Every: time.Millisecond, Count: 200, ValueSize: size})
			w.run(time.Second)
			assert.True(t, w.TraceHas(KindFiller, "F", "write refused: "), w.dumpTrace())
			assert.True(t, w.TraceHas(KindFiller, "F", "wrote 200 keys; done"))
			assert.Len(t, w.Texts(KindFiller, "F"), 2)
		})
	}
}

// fencing_token incr: each grant gets the next INCR of <key>:token on the
// lock's server (Redis INCR, memcached incr after an add of 0).
func TestExtraFencingTokens(t *testing.T) {
	for _, alg := range []string{MemcachedAdd, RedisGetSet, RedisReentrant, RedisReentrantHash} {
		t.Run(alg, func(t *testing.T) {
			w := newWorld(t)
			w.redis("A")
			w.memcached("M", nil)
			w.storage(storage.FencingMonotonic)
			wl1, wl2 := contend(2)
			tokens := func(c *LockConfig) {
				c.FencingToken = FencingIncr
				c.Tries, c.RetryDelay = 100, sim.Range{Lo: 20 * time.Millisecond, Hi: 50 * time.Millisecond}
			}
			w.lockClient("c1", alg, sim.ClockSpec{}, wl1, tokens)
			w.lockClient("c2", alg, sim.ClockSpec{}, wl2, tokens)
			h := w.run(20 * time.Second)
			require.Len(t, h.Beliefs, 4, w.dumpTrace())
			for i, b := range h.Beliefs {
				assert.True(t, b.HasToken)
				assert.Equal(t, int64(i+1), b.Token)
			}
			for _, s := range h.Sections {
				assert.Equal(t, sim.WriteAccepted, s.Outcome)
			}
		})
	}
}
