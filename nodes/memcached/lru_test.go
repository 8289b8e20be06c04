package memcached

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// lockClass is the slab class of the lock item and the fillers below
// (96-byte chunks, 10922 a page).
const lockClass = 1

// fillClass stores n fillers of the lock's class with exptime exp, several
// per millisecond as a cache workload writes them.
func fillClass(w *world, n int, exp int64) {
	for i := 0; i < n; i += 10 {
		for j := i; j < i+10 && j < n; j++ {
			r := set(fmt.Sprintf("f%05d", j), "x", exp)
			w.p.Send(w.m, func(id uint64) sim.Message { r.ID = id; return r })
		}
		w.Advance(time.Millisecond)
	}
}

// TestSegmentedLRU: the HOT, WARM and COLD queues, the bumps and the LRU
// maintainer (M 1.6.45 items.c), in scenarios whose outcome the real
// server shows in "stats items" (TestConformanceMaintainer compares them
// with memcached).
func TestSegmentedLRU(t *testing.T) {
	oneMB := func() Config { c := smallConfig(); return c }
	perPage := int(SlabPageSize / 96)
	t.Run("new items go to HOT, the maintainer moves them to COLD", func(t *testing.T) {
		c := newCache(DefaultConfig(), 0)
		c.now = 100
		require.Equal(t, "STORED", c.do(add("lock", "c1", 30)).Status)
		assert.Equal(t, lruHot, int(c.items["lock"].lru), "linked into HOT")
		w := newWorld(t, DefaultConfig(), sim.ClockSpec{})
		require.Equal(t, "STORED", w.do(add("lock", "c1", 30)).Status)
		w.Advance(5 * time.Millisecond)
		// Alone, the lock is over HOT's 20 % share: moved to COLD.
		assert.Equal(t, []string{"lock"}, w.node().LRUKeys(lockClass, lruCold))
		assert.Equal(t, int64(1), w.node().ItemStats(lockClass).MovesToCold)
	})
	t.Run("HOT keeps about 20 % of the class's bytes", func(t *testing.T) {
		w := newWorld(t, DefaultConfig(), sim.ClockSpec{})
		fillClass(w, 1000, 0)
		w.Advance(10 * time.Millisecond)
		st := w.node().ItemStats(lockClass)
		assert.Equal(t, int64(1000), st.Number)
		assert.InDelta(t, 200, st.NumberHot, 2, "stats %+v", st)
		assert.Equal(t, st.Number-st.NumberHot, st.NumberCold)
	})
	t.Run("a fetch twice in COLD moves the item to WARM at the maintainer's next run", func(t *testing.T) {
		w := newWorld(t, DefaultConfig(), sim.ClockSpec{})
		for i := 0; i < 10; i++ {
			require.Equal(t, "STORED", w.do(set(fmt.Sprint("k", i), "v", 0)).Status)
		}
		w.Advance(20 * time.Second) // idle: the maintainer sleeps up to a second
		require.Len(t, w.node().LRUKeys(lockClass, lruCold), 10)
		require.Len(t, w.do(get("k5")).Items, 1) // ITEM_FETCHED
		assert.Len(t, w.node().LRUKeys(lockClass, lruCold), 10, "one fetch: still COLD")
		require.Len(t, w.do(get("k5")).Items, 1) // ITEM_ACTIVE, bump queued
		assert.Len(t, w.node().LRUKeys(lockClass, lruCold), 10, "the bump is asynchronous")
		w.Advance(2 * time.Second)
		assert.Equal(t, []string{"k5"}, w.node().LRUKeys(lockClass, lruWarm))
		assert.Equal(t, int64(1), w.node().ItemStats(lockClass).MovesToWarm)
	})
	t.Run("an item alone in WARM is over WARM's 40 % share: back to COLD", func(t *testing.T) {
		w := newWorld(t, DefaultConfig(), sim.ClockSpec{})
		require.Equal(t, "STORED", w.do(set("k", "v", 0)).Status)
		w.Advance(20 * time.Second)
		w.do(get("k"))
		w.do(get("k"))
		w.Advance(2 * time.Second)
		assert.Equal(t, []string{"k"}, w.node().LRUKeys(lockClass, lruCold))
		st := w.node().ItemStats(lockClass)
		assert.Equal(t, int64(1), st.MovesToWarm)
		assert.Equal(t, int64(2), st.MovesToCold)
	})
	t.Run("an incr while a bump is queued makes a new item", func(t *testing.T) {
		w := newWorld(t, DefaultConfig(), sim.ClockSpec{})
		require.Equal(t, "STORED", w.do(set("n", "100", 0)).Status)
		// Idle for a while, the maintainer sleeps up to a second.
		w.Advance(20 * time.Second)
		w.do(get("n"))
		w.do(get("n")) // queued for the maintainer
		assert.Equal(t, "99", w.do(decr("n", 1)).Status)
		assert.Equal(t, "VALUE n 0 2\r\n99\r\nEND\r\n", w.do(get("n")).Wire(), "not padded: a new item")
		assert.Equal(t, []string{"n"}, w.node().LRUKeys(lockClass, lruHot))
	})
	t.Run("expired fillers are reclaimed by the maintainer: the lock at the COLD tail survives", func(t *testing.T) {
		w := newWorld(t, oneMB(), sim.ClockSpec{})
		require.Equal(t, "STORED", w.do(add("lock", "c1", 600)).Status)
		// The lock, the COLD tail, is 6 s old when the fillers come: HOT's
		// age limit is then 1 s (0.2 times COLD's age), and a filler idle
		// that long has expired too: reclaimed first (items.c:1130).
		w.Advance(6 * time.Second)
		fillClass(w, perPage-1, 1) // the class's one page is full
		w.Advance(4 * time.Second)
		st := w.node().ItemStats(lockClass)
		assert.Zero(t, st.Evicted)
		assert.InDelta(t, perPage/5, st.Reclaimed, float64(perPage)/50, "HOT's share of expired fillers reclaimed: %+v", st)
		assert.Equal(t, []string{"lock"}, w.node().LRUKeys(lockClass, lruCold)[st.NumberCold-1:], "the lock is the COLD tail")
		assert.Equal(t, "NOT_STORED", w.do(add("lock", "c2", 600)).Status, "the contender's add finds a free chunk")
		assert.Zero(t, w.node().ItemStats(lockClass).Evicted)
		assert.Empty(t, w.events(KindItemEvicted))
	})
	t.Run("expired fillers moved to COLD before they expired: the lock is evicted", func(t *testing.T) {
		w := newWorld(t, oneMB(), sim.ClockSpec{})
		require.Equal(t, "STORED", w.do(add("lock", "c1", 600)).Status)
		// The lock is young: HOT's age limit is 0 and every filler moves
		// to COLD a second after its store, before it expires; the COLD
		// tail is the lock.
		w.Advance(5 * time.Millisecond)
		fillClass(w, perPage-1, 1)
		w.Advance(4 * time.Second)
		st := w.node().ItemStats(lockClass)
		assert.Zero(t, st.Reclaimed)
		assert.Equal(t, int64(perPage), st.NumberCold)
		assert.Equal(t, "STORED", w.do(add("lock", "c2", 600)).Status)
		assert.Equal(t, []string{"lock"}, w.events(KindItemEvicted))
	})
	t.Run("fillers that never expire evict the lock", func(t *testing.T) {
		w := newWorld(t, oneMB(), sim.ClockSpec{})
		require.Equal(t, "STORED", w.do(add("lock", "c1", 600)).Status)
		w.Advance(6 * time.Second)
		fillClass(w, perPage-1, 0)
		w.Advance(4 * time.Second)
		assert.Zero(t, w.node().ItemStats(lockClass).Reclaimed)
		assert.Equal(t, "STORED", w.do(add("lock", "c2", 600)).Status)
		st := w.node().ItemStats(lockClass)
		assert.Equal(t, int64(1), st.Evicted)
		assert.Equal(t, int64(1), st.EvictedNonzero)
		assert.Equal(t, []string{"lock"}, w.events(KindItemEvicted))
	})
	big := strings.Repeat("v", 400000) // class 39: 2 chunks a page
	t.Run("with nothing in COLD, an allocation moves the HOT tail there and evicts it", func(t *testing.T) {
		c := newCache(oneMB(), 0) // no maintainer
		c.now = 100
		require.Equal(t, Stored, c.do(set("k0", big, 0)).Status)
		require.Equal(t, Stored, c.do(set("k1", big, 0)).Status)
		require.Equal(t, Stored, c.do(set("k2", big, 0)).Status)
		st := c.classStats(c.items["k2"].cls)
		assert.Equal(t, int64(1), st.Evicted)
		assert.Equal(t, int64(1), st.MovesToCold)
		assert.Equal(t, int64(2), st.DirectReclaims, "COLD empty, then evicted")
		assert.Nil(t, c.items["k0"], "the oldest is evicted")
	})
	t.Run("under -M the COLD tail is not evicted: out of memory", func(t *testing.T) {
		cfg := oneMB()
		cfg.EvictToFree = false
		c := newCache(cfg, 0)
		c.now = 100
		require.Equal(t, Stored, c.do(set("k0", big, 0)).Status)
		require.Equal(t, Stored, c.do(set("k1", big, 0)).Status)
		assert.Equal(t, ErrOutOfMem, c.do(set("k2", big, 0)).Status)
		st := c.classStats(c.items["k0"].cls)
		assert.Equal(t, int64(1), st.OutOfMemory)
		assert.Equal(t, int64(maxAllocTries), st.DirectReclaims)
		assert.Equal(t, int64(2), st.Number)
	})
}

// TestMaintainerParking: an idle maintainer's skipped runs change nothing:
// random commands at random instants, with idle stretches of up to two hours,
// give the same replies, queues, counters, maintainer state and trace
// events as a maintainer that wakes every second.
func TestMaintainerParking(t *testing.T) {
	type snap struct {
		replies []string
		keys    [][3][]string
		stats   []ItemStats
		maint   []maintainer
		events  []string
	}
	run := func(seed int64, park bool) snap {
		old := parkIdle
		parkIdle = park
		defer func() { parkIdle = old }()
		w := newWorld(t, smallConfig(), sim.ClockSpec{})
		rng := rand.New(rand.NewSource(seed))
		var s snap
		keys := []string{"a", "b", "c", "d", "e"}
		for i := 0; i < 60; i++ {
			var gap time.Duration
			switch rng.Intn(4) {
			case 0:
				gap = time.Duration(rng.Intn(1000)) * time.Millisecond
			case 1:
				gap = time.Duration(rng.Intn(120)) * time.Second
			case 2:
				gap = time.Duration(rng.Intn(7200)) * time.Second
			default:
				gap = time.Duration(rng.Intn(10)) * time.Microsecond
			}
			w.Advance(gap)
			k := keys[rng.Intn(len(keys))]
			exp := []int64{0, 1, 2, 5, 100, 4000}[rng.Intn(6)]
			var r Request
			switch rng.Intn(6) {
			case 0, 1:
				r = set(k, strings.Repeat("v", rng.Intn(3)*200000+1), exp)
			case 2, 3:
				r = get(k)
			case 4:
				r = touch(k, exp)
			default:
				r = add(k, "1", exp)
			}
			s.replies = append(s.replies, w.do(r).Wire())
			n := w.node()
			var q [3][]string
			for l := range q {
				for cls := range n.c.classes {
					q[l] = append(q[l], n.LRUKeys(cls, l)...)
				}
			}
			s.keys = append(s.keys, q)
			var st []ItemStats
			for cls := range n.c.classes {
				st = append(st, n.ItemStats(cls))
			}
			s.stats = append(s.stats, st...)
			m := n.c.maint
			m.idle, m.quiet = false, [maxSlabClassIDs]int64{}
			if n.parked {
				m.skipIdle(&n.nextWake, n.env.Mono())
				n.parked = false // the node is discarded after the run
			}
			s.maint = append(s.maint, m)
		}
		for _, kind := range []sim.Kind{KindItemExpired, KindItemEvicted} {
			for _, e := range w.Events(kind, "M") {
				s.events = append(s.events, fmt.Sprintf("%v %s %s", e.At, kind, e.Text))
			}
		}
		return s
	}
	for seed := int64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			want := run(seed, false)
			got := run(seed, true)
			require.Equal(t, want.replies, got.replies)
			require.Equal(t, want.keys, got.keys)
			require.Equal(t, want.stats, got.stats)
			require.Equal(t, want.events, got.events)
			require.Equal(t, want.maint, got.maint)
		})
	}
}
