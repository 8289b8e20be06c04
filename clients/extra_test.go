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
	require.NoError(w.t, cfg.Validate())
	w.Add(name, func() sim.Process { return mysql.New(cfg) }, sim.ClockSpec{})
}

func (w *world) redisWith(name string, f func(*redis.Config)) {
	cfg := redis.DefaultConfig()
	f(&cfg)
	w.Add(name, func() sim.Process { return redis.New(cfg) }, sim.ClockSpec{})
}

// extra adds a client built by mk after checking validate.
func (w *world) extra(cfg Config, clock sim.ClockSpec, validate func() error, mk func() sim.Process) {
	w.t.Helper()
	require.NoError(w.t, validate())
	w.Add(cfg.Name, mk, clock)
}

func (w *world) memcachedAdd(name string, wl Workload, f func(*MemcachedAddParams)) {
	p := DefaultMemcachedAddParams()
	p.Node = "M"
	if f != nil {
		f(&p)
	}
	cfg := clientConfig(name, LockConfig{}, wl)
	w.extra(cfg, sim.ClockSpec{}, func() error { return ValidateMemcachedAdd(cfg, p) }, func() sim.Process { return NewMemcachedAdd(cfg, p) })
}

func (w *world) mysqlClient(name string, forUpdate bool, wl Workload, f func(*MySQLParams)) {
	p := DefaultMySQLParams()
	p.Node = "D"
	if f != nil {
		f(&p)
	}
	cfg := clientConfig(name, LockConfig{}, wl)
	mk := func() sim.Process { return NewMySQLInsert(cfg, p) }
	if forUpdate {
		mk = func() sim.Process { return NewMySQLForUpdate(cfg, p) }
	}
	w.extra(cfg, sim.ClockSpec{}, func() error { return ValidateMySQL(cfg, p) }, mk)
}

func (w *world) getset(name string, clock sim.ClockSpec, wl Workload, f func(*GetSetParams)) {
	p := DefaultGetSetParams()
	p.Node = "A"
	if f != nil {
		f(&p)
	}
	cfg := clientConfig(name, LockConfig{}, wl)
	w.extra(cfg, clock, func() error { return ValidateGetSet(cfg, p) }, func() sim.Process { return NewGetSet(cfg, p) })
}

func (w *world) reentrantClient(name string, counted bool, wl Workload, f func(*ReentrantParams)) {
	p := DefaultReentrantParams()
	p.Node = "A"
	if f != nil {
		f(&p)
	}
	cfg := clientConfig(name, LockConfig{}, wl)
	w.extra(cfg, sim.ClockSpec{}, func() error { return ValidateReentrant(cfg, p) }, func() sim.Process { return NewReentrant(cfg, p, counted) })
}

func (w *world) filler(cfg FillerConfig) {
	w.t.Helper()
	require.NoError(w.t, cfg.Validate())
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
	manyTries := func(c *Common) {
		c.Tries = 100
		c.RetryDelay = sim.Range{Lo: 20 * time.Millisecond, Hi: 50 * time.Millisecond}
	}
	cases := []struct {
		name string
		add  func(w *world, name string, wl Workload)
	}{
		{MemcachedAdd + "/delete", func(w *world, name string, wl Workload) {
			w.memcachedAdd(name, wl, func(p *MemcachedAddParams) { manyTries(&p.Common) })
		}},
		{MemcachedAdd + "/cas", func(w *world, name string, wl Workload) {
			w.memcachedAdd(name, wl, func(p *MemcachedAddParams) { manyTries(&p.Common); p.Release = MemcachedReleaseCAS })
		}},
		{MySQLInsert, func(w *world, name string, wl Workload) {
			w.mysqlClient(name, false, wl, func(p *MySQLParams) { manyTries(&p.Common) })
		}},
		{MySQLForUpdate, func(w *world, name string, wl Workload) {
			w.mysqlClient(name, true, wl, func(p *MySQLParams) { manyTries(&p.Common) })
		}},
		{RedisGetSet, func(w *world, name string, wl Workload) {
			w.getset(name, sim.ClockSpec{}, wl, func(p *GetSetParams) { manyTries(&p.Common) })
		}},
		{RedisReentrant, func(w *world, name string, wl Workload) {
			w.reentrantClient(name, false, wl, func(p *ReentrantParams) { manyTries(&p.Common) })
		}},
		{RedisReentrantHash, func(w *world, name string, wl Workload) {
			w.reentrantClient(name, true, wl, func(p *ReentrantParams) { manyTries(&p.Common) })
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
	cfg := Config{Name: "c1", Resource: "S"}
	mc := func(f func(*MemcachedAddParams)) error {
		p := DefaultMemcachedAddParams()
		p.Node = "M"
		f(&p)
		return ValidateMemcachedAdd(cfg, p)
	}
	my := func(f func(*MySQLParams)) error {
		p := DefaultMySQLParams()
		p.Node = "D"
		f(&p)
		return ValidateMySQL(cfg, p)
	}
	re := func(f func(*ReentrantParams)) error {
		p := DefaultReentrantParams()
		p.Node = "A"
		f(&p)
		return ValidateReentrant(cfg, p)
	}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"exptime over 30 days", mc(func(p *MemcachedAddParams) { p.Exptime = 31 * 24 * time.Hour }), "exptime"},
		{"exptime fraction", mc(func(p *MemcachedAddParams) { p.Exptime = 1500 * time.Millisecond }), "exptime"},
		{"memcached release", mc(func(p *MemcachedAddParams) { p.Release = "unlink" }), "release"},
		{"memcached node", mc(func(p *MemcachedAddParams) { p.Node = "" }), "node"},
		{"mysql no table", my(func(p *MySQLParams) { p.Table = "" }), "table"},
		{"mysql tries", my(func(p *MySQLParams) { p.Tries = -1 }), "tries"},
		{"reentry", re(func(p *ReentrantParams) { p.Depth = 0 }), "reentry"},
		{"ttl", re(func(p *ReentrantParams) { p.TTL = 0 }), "ttl"},
		{"getset timeout", ValidateGetSet(cfg, GetSetParams{Common: Common{Key: "k", Node: "A", NodeTimeout: time.Second}}), "timeout"},
		{"workload", ValidateGetSet(Config{Name: "c", Workload: Workload{Hold: -1}}, DefaultGetSetParams()), "workload.hold"},
		{"filler kind", FillerConfig{Name: "f", Node: "A", Kind: "mysql", Every: time.Second, ValueSize: 1}.Validate(), "kind"},
		{"filler memcached ttl", FillerConfig{Name: "f", Node: "M", Kind: FillMemcached, Every: time.Second, ValueSize: 1, TTL: 1500 * time.Millisecond}.Validate(), "ttl"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			require.Error(t, tt.err)
			assert.Contains(t, tt.err.Error(), tt.want)
		})
	}
	require.NoError(t, mc(func(p *MemcachedAddParams) { p.Exptime = 30 * 24 * time.Hour }))
	require.NoError(t, mc(func(p *MemcachedAddParams) { p.Exptime = 0 }))
}

// twoClients runs c1 (holding 2 s from 0) and c2 (starting at startC2,
// retrying every 100 ms) with one cycle each.
func twoClients(startC2 time.Duration) (Workload, Workload, func(*Common)) {
	wl1 := Workload{Cycles: 1, Hold: 2 * time.Second}
	wl2 := Workload{Cycles: 1, Hold: 100 * time.Millisecond, Start: startC2}
	retry := func(c *Common) { c.Tries = 200; c.RetryDelay = sim.Fixed(100 * time.Millisecond) }
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
			w.at(500*time.Millisecond, func() { w.k.Crash(w.id("M"), sim.CrashProcess) })
			w.at(600*time.Millisecond, func() { w.k.Restart(w.id("M")) })
		}, true},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.memcached("M", func(c *memcached.Config) { c.MaxBytes = 1 << 20 })
			w.storage(storage.FencingNone)
			wl1, wl2, retry := twoClients(100 * time.Millisecond)
			w.memcachedAdd("c1", wl1, func(p *MemcachedAddParams) { retry(&p.Common) })
			w.memcachedAdd("c2", wl2, func(p *MemcachedAddParams) { retry(&p.Common) })
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
			retry := func(exptime time.Duration) func(p *MemcachedAddParams) {
				return func(p *MemcachedAddParams) {
					p.Tries, p.RetryDelay, p.Exptime, p.Release = 200, sim.Fixed(100*time.Millisecond), exptime, mode
				}
			}
			// c1's item expires after 1 s, while c1 still holds for 3 s.
			w.memcachedAdd("c1", Workload{Cycles: 1, Hold: 3 * time.Second}, retry(time.Second))
			w.memcachedAdd("c2", Workload{Cycles: 1, Hold: 3 * time.Second, Start: 100 * time.Millisecond}, retry(10*time.Second))
			w.memcachedAdd("c3", Workload{Cycles: 1, Hold: 100 * time.Millisecond, Start: 3200 * time.Millisecond}, retry(10*time.Second))
			h := w.run(10 * time.Second)
			b2, b3 := beliefs(h, "c2"), beliefs(h, "c3")
			require.Len(t, b2, 1, w.dumpTrace())
			require.Len(t, b3, 1, w.dumpTrace())
			// c1's release comes at about 3 s, while c2 (from about 1-2 s)
			// still holds: delete frees c2's item and c3 gets in at once.
			assert.Equal(t, mode == MemcachedReleaseDelete, b3[0].Start < b2[0].End, w.dumpTrace())
			if mode == MemcachedReleaseCAS {
				assert.True(t, w.traceHas(KindClient, "c1", "no item of ours"))
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
			w.mysqlClient("c1", false, wl1, func(p *MySQLParams) { retry(&p.Common) })
			w.mysqlClient("c2", false, wl2, func(p *MySQLParams) { p.Tries = 3; p.RetryDelay = sim.Fixed(time.Second) })
			if crash {
				w.at(time.Second, func() { w.k.Crash(w.id("c1"), sim.CrashProcess) })
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
			w.mysqlClient("c1", true, wl1, func(p *MySQLParams) { retry(&p.Common) })
			w.mysqlClient("c2", true, wl2, func(p *MySQLParams) { retry(&p.Common) })
			if pause {
				w.at(500*time.Millisecond, func() { w.k.Pause(w.id("c1"), 10*time.Second) })
			}
			h := w.run(30 * time.Second)
			require.Len(t, beliefs(h, "c1"), 1, w.dumpTrace())
			require.Len(t, beliefs(h, "c2"), 1, w.dumpTrace())
			assert.Equal(t, pause, len(overlaps(h)) > 0, w.dumpTrace())
			assert.Equal(t, pause, lostUpdate(h))
			if pause {
				assert.True(t, w.traceHas(KindClient, "c1", "COMMIT: ERROR 2006"), w.dumpTrace())
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
			w.getset("c1", sim.ClockSpec{}, wl1, func(p *GetSetParams) { retry(&p.Common) })
			w.getset("c2", sim.ClockSpec{Offset: skew}, wl2, func(p *GetSetParams) { retry(&p.Common) })
			h := w.run(10 * time.Second)
			require.Len(t, beliefs(h, "c1"), 1, w.dumpTrace())
			require.Len(t, beliefs(h, "c2"), 1, w.dumpTrace())
			assert.Equal(t, skew > 0, len(overlaps(h)) > 0)
			assert.Equal(t, skew > 0, w.traceHas(KindClient, "c2", "expired on our clock"))
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
	w.getset("c0", sim.ClockSpec{}, Workload{Cycles: 1, Hold: 10 * time.Millisecond}, func(p *GetSetParams) { p.Timeout = time.Millisecond })
	wl := Workload{Cycles: 1, Hold: time.Second, Think: 100 * time.Millisecond, Start: 50 * time.Millisecond}
	one := func(p *GetSetParams) { p.Tries = 1; p.RetryDelay = sim.Fixed(100 * time.Millisecond) }
	w.getset("c1", sim.ClockSpec{}, wl, one)
	w.getset("c2", sim.ClockSpec{}, wl, one)
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
	assert.True(t, w.traceHas(KindClient, "c0", "no DEL"))
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
			nest := func(p *ReentrantParams) {
				retry(&p.Common)
				p.Nesting = Nesting{Depth: 2, At: 200 * time.Millisecond, Hold: 200 * time.Millisecond}
			}
			w.reentrantClient("c1", counted, wl1, nest)
			w.reentrantClient("c2", counted, wl2, nest)
			h := w.run(10 * time.Second)
			require.Len(t, beliefs(h, "c1"), 1, w.dumpTrace())
			require.Len(t, beliefs(h, "c2"), 1, w.dumpTrace())
			assert.True(t, w.traceHas(KindClient, "c1", "re-entered at depth 2"), w.dumpTrace())
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
			w.memcached("M", func(c *memcached.Config) { c.MaxBytes = 1 << 20; c.EvictToFree = false })
			node, size := "A", 100
			if kind == FillMemcached {
				// 8 KB items: one 1 MB page of their class holds about 120.
				node, size = "M", 8000
			}
			w.filler(FillerConfig{Name: "F", Node: node, Kind: kind, Every: time.Millisecond, Count: 200, ValueSize: size})
			w.run(time.Second)
			assert.True(t, w.traceHas(KindFiller, "F", "write refused: "), w.dumpTrace())
			assert.True(t, w.traceHas(KindFiller, "F", "wrote 200 keys; done"))
			assert.Len(t, w.Texts(KindFiller, "F"), 2)
		})
	}
}
