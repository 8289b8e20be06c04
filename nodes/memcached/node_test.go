package memcached

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// step is one request and the exact wire reply expected.
type step struct {
	req  Request
	want string
}

// TestCommands: the replies on the wire to what a step file cannot write
// (a key too long or with a blank, no key, an unknown command, a value of
// a megabyte) and the exact wire form of a value; the other commands are
// in testdata/interactions.
func TestCommands(t *testing.T) {
	long := strings.Repeat("k", KeyMaxLength+1)
	tests := []struct {
		name  string
		steps []step
	}{
		{"client errors", []step{
			{set(long, "v", 0), ErrBadFormat + "\r\n"},
			{set("a b", "v", 0), ErrBadFormat + "\r\n"},
			{set("", "v", 0), ErrBadFormat + "\r\n"},
			{get(long), ErrBadFormat + "\r\n"},
			{get(), "ERROR\r\n"},
			{del(long), ErrBadFormat + "\r\n"},
			{touch(long, 1), ErrBadFormat + "\r\n"},
			{incr(long, 1), ErrBadFormat + "\r\n"},
			{Request{Cmd: 99}, "ERROR\r\n"},
		}},
		{"the wire form of a get and a gets", []step{
			{Request{Cmd: CmdSet, Key: "k", Flags: 7, Value: "c"}, "STORED\r\n"},
			{get("k", "nope", "k"), "VALUE k 7 1\r\nc\r\nVALUE k 7 1\r\nc\r\nEND\r\n"},
			{gets("k"), "VALUE k 7 1 1\r\nc\r\nEND\r\n"},
		}},
		{"item size limit", []step{
			{set("h", strings.Repeat("x", DefaultItemSizeMax-ItemHeaderSize-2-2-8), 0), "STORED\r\n"},
			{set("h", strings.Repeat("x", DefaultItemSizeMax-ItemHeaderSize-2-2-8+1), 0), ErrTooLarge + "\r\n"},
			// A failed set unlinks the old value.
			{get("h"), "END\r\n"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, DefaultConfig(), sim.ClockSpec{})
			for i, s := range tt.steps {
				assert.Equal(t, s.want, w.do(s.req).Wire(), "step %d: %q", i, s.req.Line())
			}
		})
	}
}

func TestExptime(t *testing.T) {
	startWall := sim.Epoch / int64(time.Second)
	tests := []struct {
		name    string
		exptime func(startWall int64) int64
		alive   []time.Duration // still there at these times after the store
		gone    time.Duration   // gone at this time
	}{
		{"relative 5 s", func(int64) int64 { return 5 }, []time.Duration{4 * time.Second}, 5 * time.Second},
		{"30 days is still relative", func(int64) int64 { return RealtimeMaxDelta }, []time.Duration{time.Hour}, RealtimeMaxDelta * time.Second},
		{"absolute: 10 s after the server's start clock", func(w int64) int64 { return w + 10 }, []time.Duration{9 * time.Second}, 10 * time.Second},
		{"absolute at or before the start: expired", func(w int64) int64 { return w - ItemUpdateInterval - 2 }, nil, 0},
		{"absolute between process_started and now: expired", func(w int64) int64 { return w - 1 }, nil, 0},
		{"just over 30 days is absolute and long past", func(int64) int64 { return RealtimeMaxDelta + 1 }, nil, 0},
		{"negative: immediately expired", func(int64) int64 { return -1 }, nil, 0},
		{"zero: never", func(int64) int64 { return 0 }, []time.Duration{365 * 24 * time.Hour}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, DefaultConfig(), sim.ClockSpec{})
			// Store at an instant well inside a second of the server's tick.
			w.Advance(300 * time.Millisecond)
			require.Equal(t, "STORED", w.do(set("k", "v", tt.exptime(startWall))).Status)
			at := w.K.Now()
			for _, d := range tt.alive {
				w.Advance(at.Add(d).Sub(w.K.Now()))
				assert.Len(t, w.do(get("k")).Items, 1, "alive at +%v", d)
			}
			if tt.gone >= 0 {
				w.Advance(at.Add(tt.gone).Sub(w.K.Now()))
				assert.Empty(t, w.do(get("k")).Items, "gone at +%v", tt.gone)
				assert.Equal(t, []string{"k"}, w.events(KindItemExpired))
			}
		})
	}
}

// TestClocks: memcached's time runs on the monotonic clock; the wall clock
// is read once at start-up.
func TestClocks(t *testing.T) {
	t.Run("a wall jump on the server changes no TTL", func(t *testing.T) {
		w := newWorld(t, DefaultConfig(), sim.ClockSpec{})
		require.Equal(t, "STORED", w.do(set("rel", "v", 10)).Status)
		start := sim.Epoch / int64(time.Second)
		require.Equal(t, "STORED", w.do(set("abs", "v", start+10)).Status)
		w.K.JumpWall(w.m, time.Hour)
		w.Advance(5 * time.Second)
		assert.Len(t, w.do(get("rel", "abs")).Items, 2)
		w.Advance(5 * time.Second)
		assert.Empty(t, w.do(get("rel", "abs")).Items)
	})
	t.Run("absolute exptimes use the server's start-time wall clock", func(t *testing.T) {
		// The server's wall clock is 20 s behind: an absolute time 10 s
		// ahead of true time lives 30 s.
		w := newWorld(t, DefaultConfig(), sim.ClockSpec{Offset: -20 * time.Second})
		trueNow := sim.Epoch / int64(time.Second)
		require.Equal(t, "STORED", w.do(set("abs", "v", trueNow+10)).Status)
		w.Advance(29 * time.Second)
		assert.Len(t, w.do(get("abs")).Items, 1)
		w.Advance(time.Second)
		assert.Empty(t, w.do(get("abs")).Items)
	})
	t.Run("current_time starts at 62 and ticks each second", func(t *testing.T) {
		w := newWorld(t, DefaultConfig(), sim.ClockSpec{})
		n := w.node()
		assert.Equal(t, int64(ItemUpdateInterval+2), n.CurrentTime())
		assert.Equal(t, sim.Epoch/int64(time.Second)-ItemUpdateInterval-2, n.ProcessStarted())
		w.Advance(999 * time.Millisecond)
		assert.Equal(t, int64(62), n.CurrentTime())
		w.Advance(time.Millisecond)
		assert.Equal(t, int64(63), n.CurrentTime())
	})
}

// smallConfig holds one 1 MB page per class: four items with a 250 000
// byte value (class 36, 252 696-byte chunks).
func smallConfig() Config {
	c := DefaultConfig()
	c.MaxBytes = SlabPageSize
	c.ItemSizeMax = SlabPageSize / 2 // at most half of -m (Config.Validate)
	return c
}

func TestSlabClasses(t *testing.T) {
	// As memcached 1.6 prints them with -vv: 39 classes.
	cls := slabClasses()
	require.Len(t, cls, 40)
	for _, want := range []struct {
		id            int
		size, perslab int64
	}{{1, 96, 10922}, {2, 120, 8738}, {12, 1184, 885}, {36, 252696, 4}, {38, 394840, 2}, {39, 524288, 2}} {
		assert.Equal(t, want.size, cls[want.id].size, "class %d", want.id)
		assert.Equal(t, want.perslab, cls[want.id].perslab, "class %d", want.id)
	}
}

func TestEviction(t *testing.T) {
	val := strings.Repeat("v", 250000)
	t.Run("the COLD tail of the class is evicted, a key fetched twice is rescued", func(t *testing.T) {
		w := newWorld(t, smallConfig(), sim.ClockSpec{})
		for _, k := range []string{"k0", "k1", "k2", "k3"} {
			require.Equal(t, "STORED", w.do(set(k, val, 0)).Status)
		}
		require.Len(t, w.do(get("k1")).Items, 1) // fetched once: stays in COLD
		require.Len(t, w.do(get("k0")).Items, 1)
		require.Len(t, w.do(get("k0")).Items, 1) // twice: ACTIVE, moves to WARM
		w.Advance(10 * time.Millisecond)
		require.Equal(t, "STORED", w.do(set("k4", val, 0)).Status)
		assert.Equal(t, []string{"k1"}, w.events(KindItemEvicted))
		// WARM holds k0; COLD k4 (over HOT's 20 %, moved at once), k3, k2.
		assert.Equal(t, []string{"k0", "k4", "k3", "k2"}, w.node().Keys())
		assert.Equal(t, int64(SlabPageSize), w.node().Malloced())
	})
	t.Run("the add lock key is evicted only by items of its class", func(t *testing.T) {
		w := newWorld(t, smallConfig(), sim.ClockSpec{})
		require.Equal(t, "STORED", w.do(add("lock", "c1", 600)).Status)
		// Large cache items fill their own class: the lock survives.
		for i := 0; i < 8; i++ {
			require.Equal(t, "STORED", w.do(set(fmt.Sprintf("big%d", i), val, 0)).Status)
		}
		assert.Equal(t, "NOT_STORED", w.do(add("lock", "c2", 600)).Status)
		// Small cache items share the lock's class (96-byte chunks,
		// 10922 a page) and push it out of the LRU tail.
		for i := 0; i < 10922; i++ {
			require.Equal(t, "STORED", w.do(set(fmt.Sprintf("s%05d", i), "x", 0)).Status)
		}
		assert.Equal(t, "STORED", w.do(add("lock", "c2", 600)).Status, "the lock is gone before its exptime")
		assert.Equal(t, "lock", w.events(KindItemEvicted)[4])
	})
	t.Run("an expired tail item is reclaimed, not evicted", func(t *testing.T) {
		w := newWorld(t, smallConfig(), sim.ClockSpec{})
		require.Equal(t, "STORED", w.do(set("k0", val, 1)).Status)
		for _, k := range []string{"k1", "k2", "k3"} {
			require.Equal(t, "STORED", w.do(set(k, val, 0)).Status)
		}
		w.Advance(3 * time.Second)
		require.Equal(t, "STORED", w.do(set("k4", val, 0)).Status)
		assert.Empty(t, w.events(KindItemEvicted))
		assert.Equal(t, []string{"k0"}, w.events(KindItemExpired))
	})
	t.Run("-M refuses instead of evicting", func(t *testing.T) {
		cfg := smallConfig()
		cfg.EvictToFree = false
		w := newWorld(t, cfg, sim.ClockSpec{})
		for _, k := range []string{"k0", "k1", "k2", "k3"} {
			require.Equal(t, "STORED", w.do(set(k, val, 0)).Status)
		}
		assert.Equal(t, ErrOutOfMem, w.do(add("k9", val, 0)).Status)
		// An add of a present key allocates first, so it fails the same way.
		assert.Equal(t, ErrOutOfMem, w.do(add("k0", val, 0)).Status)
		// A failed set drops the old value.
		assert.Equal(t, ErrOutOfMem, w.do(set("k1", val, 0)).Status)
		assert.Empty(t, w.do(get("k1")).Items)
		assert.Equal(t, "STORED", w.do(set("k1", val, 0)).Status)
		assert.Empty(t, w.events(KindItemEvicted))
		assert.Equal(t, "DELETED", w.do(del("k0")).Status)
		assert.Equal(t, "STORED", w.do(add("k9", val, 0)).Status)
		// Another class still gets its first page.
		assert.Equal(t, "STORED", w.do(add("lock", "c1", 0)).Status)
	})
}

func TestRestartLosesEverything(t *testing.T) {
	w := newWorld(t, DefaultConfig(), sim.ClockSpec{})
	require.Equal(t, "STORED", w.do(add("lock", "c1", 0)).Status)
	for _, mode := range []sim.CrashMode{sim.CrashProcess, sim.CrashClean, sim.CrashPower} {
		w.K.Crash(w.m, mode)
		w.K.Restart(w.m)
		w.Advance(time.Millisecond)
		assert.Empty(t, w.do(get("lock")).Items, "after %v", mode)
		assert.Equal(t, "STORED", w.do(add("lock", "c2", 0)).Status, "after %v", mode)
		assert.Equal(t, "VALUE lock 0 2 1\r\nc2\r\nEND\r\n", w.do(gets("lock")).Wire(), "CAS ids restart at 1")
	}
}

func TestTraceEvents(t *testing.T) {
	w := newWorld(t, DefaultConfig(), sim.ClockSpec{})
	w.do(set("a", "1", 5))
	w.do(incr("a", 1))
	w.do(del("a"))
	w.do(set("b", "x", 0))
	w.do(flushAll())
	assert.Equal(t, []string{`a "1" cas 1 exp 67`, `a "2" cas 2 exp 67`, `b "x" cas 3 exp 0`}, w.events(KindItemStored))
	assert.Equal(t, []string{"a"}, w.events(KindItemDeleted))
	assert.Equal(t, []string{"b"}, w.events(KindItemFlushed))
}

func TestStrtoull(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true}, {"42", 42, true}, {" \t42", 42, true}, {"+7", 7, true}, {"12 34", 12, true},
		{"-0", 0, true}, {"-1", 0, false}, {"18446744073709551615", 1<<64 - 1, true},
		{"18446744073709551616", 0, false}, {"", 0, false}, {"x", 0, false}, {"4x", 0, false}, {"-", 0, false},
		{"-18446744073709551615", 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := strtoull(tt.in)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestConfigValidate(t *testing.T) {
	require.NoError(t, DefaultConfig().Validate())
	tests := []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"item size too small", func(c *Config) { c.ItemSizeMax = 10 }, "ItemSizeMax: 10 out of range"},
		{"item size over a page", func(c *Config) { c.ItemSizeMax = 2 << 20 }, "ItemSizeMax: 2097152 out of range"},
		{"item size over half the memory", func(c *Config) { c.MaxBytes = 1 << 20 }, "ItemSizeMax: 1048576 is more than half of MaxBytes (1048576)"},
		{"no memory", func(c *Config) { c.MaxBytes = 0 }, "MaxBytes: 0 out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mod(&c)
			err := c.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Panics(t, func() { New(c) })
		})
	}
}

// TestDeterminism: the same workload gives the same trace, bit for bit.
func TestDeterminism(t *testing.T) {
	run := func() string {
		cfg := smallConfig()
		w := newWorld(t, cfg, sim.ClockSpec{})
		r := sim.NewRand(9, "memcached-determinism")
		for i := 0; i < 400; i++ {
			k := fmt.Sprintf("k%d", r.Intn(12))
			switch r.Intn(6) {
			case 0:
				w.do(set(k, strings.Repeat("v", 1000*r.Intn(300)), int64(r.Intn(4))))
			case 1:
				w.do(add(k, "lock", 2))
			case 2:
				w.do(get(k, "k1"))
			case 3:
				w.do(del(k))
			case 4:
				w.do(incr(k, 3))
			case 5:
				w.Advance(time.Duration(r.Intn(1500)) * time.Millisecond)
			}
		}
		return sim.HashString(w.K.TraceHash())
	}
	assert.Equal(t, run(), run())
}
