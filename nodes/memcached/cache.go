package memcached

import (
	"math"
	"strconv"
	"strings"
)

// item is one stored item. The items of one LRU of a slab class (HOT,
// WARM or COLD) form a doubly linked list, most recently linked at the
// head.
type item struct {
	key     string
	flags   uint32
	value   string
	exptime int64 // server-relative seconds (rel_time_t); 0 = never
	cas     uint64
	size    int64 // bytes accounted (Config.ItemSize)
	time    int64 // current_time of the last bump (it->time)
	cls     int   // slab class
	chunks  int64 // chunks of that class the item occupies
	lru     uint8 // lruHot, lruWarm or lruCold (ITEM_lruid)
	iflags  uint8 // itemFetched, itemActive (it->it_flags)
	linked  bool  // ITEM_LINKED
	// bumpQueued: an asynchronous bump of this item waits for the LRU
	// maintainer (lru_bump_async); it holds a reference to the item.
	bumpQueued bool

	prev, next *item
}

// The segmented LRU (M 1.6.45 items.h:1-3, memcached.h:589-591): each slab
// class has a HOT, a WARM and a COLD queue (TEMP_LRU is off by default,
// settings.temp_lru = false, memcached.c:254); items carry ITEM_FETCHED
// (fetched at least once) and ITEM_ACTIVE (fetched twice, or again after
// that).
const (
	lruHot  = 0 // HOT_LRU 0
	lruWarm = 1 // WARM_LRU 64
	lruCold = 2 // COLD_LRU 128

	itemFetched = 1 << 0 // ITEM_FETCHED 8
	itemActive  = 1 << 1 // ITEM_ACTIVE 16
)

// Segmented LRU settings, memcached's defaults (M 1.6.45 memcached.c:249-253):
// lru_segmented true; HOT may hold hot_lru_pct 20 and WARM warm_lru_pct 40
// percent of the class's item bytes; an item idle longer than the COLD
// tail's age times hot_max_factor 0.2 (HOT) or warm_max_factor 2.0 (WARM)
// moves to COLD.
const (
	hotLRUPct     = 20
	warmLRUPct    = 40
	hotMaxFactor  = 0.2
	warmMaxFactor = 2.0
)

// lruQueue is one LRU of a class: its list, and sizes/sizes_bytes
// (items.c:407-431).
type lruQueue struct {
	head, tail *item
	count      int64
	bytes      int64
}

// slabClass is one slab class: its chunk size, the pages it was given,
// its HOT, WARM and COLD queues (slabs.c slabclass_t; items.c heads/tails)
// and its counters.
type slabClass struct {
	size    int64 // chunk size
	perslab int64 // chunks per page
	pages   int64
	used    int64 // chunks in use
	lru     [3]lruQueue
	stats   ItemStats
}

// ItemStats are a slab class's counters as "stats items" reports them
// (items:N:..., M 1.6.45 items.c:782-912, summed over the class's LRUs).
type ItemStats struct {
	Number, NumberHot, NumberWarm, NumberCold int64 // items linked
	Evicted                                   int64 // live items evicted from the COLD tail
	EvictedNonzero                            int64 // ... of which had an exptime
	EvictedUnfetched                          int64 // ... never fetched
	EvictedActive                             int64 // ... ITEM_ACTIVE
	OutOfMemory                               int64 // allocations that failed
	Reclaimed                                 int64 // expired items unlinked at an LRU tail
	ExpiredUnfetched                          int64 // ... never fetched
	MovesToCold                               int64
	MovesToWarm                               int64
	MovesWithinLRU                            int64
	DirectReclaims                            int64 // tail pulls by allocations (do_item_alloc_pull)
}

// eventKind tells the node which trace event to log.
type eventKind uint8

const (
	evStored eventKind = iota + 1
	evDeleted
	evExpired
	evEvicted
	evFlushed
)

type event struct {
	kind eventKind
	it   item // a copy: the item as it was
}

// cache is the pure state machine of one memcached server: the hash table,
// the slab classes with their LRUs, the memory account and the CAS
// counter. It never reads a clock: the node sets now (memcached's
// current_time) before each command.
type cache struct {
	cfg            Config
	items          map[string]*item
	classes        []slabClass // classes[0] is unused, as POWER_SMALLEST is 1
	malloced       int64       // bytes of slab pages handed out (mem_malloced)
	used           int64       // bytes of the stored items (ItemSize)
	casSeq         uint64      // the last CAS id handed out (get_cas_id)
	processStarted int64       // Unix seconds (memcached.c:203)
	now            int64       // current_time: server-relative seconds
	events         []event
	// version counts the changes to the LRU queues and items' flags (the
	// maintainer's idle test).
	version int64
	// bumps are the asynchronous bumps waiting for the LRU maintainer
	// (lru_bump_async, items.c:1286-1306), oldest first.
	bumps []*item
	maint maintainer
}

func newCache(cfg Config, processStarted int64) *cache {
	return &cache{cfg: cfg, items: map[string]*item{}, processStarted: processStarted, classes: slabClasses()}
}

// Slab geometry (M 1.6.45): the smallest chunk is sizeof(item) +
// settings.chunk_size 48 (memcached.c:232; slabs.c:204); each next class
// is 1.25 times larger (settings.factor, memcached.c:231), aligned to
// CHUNK_ALIGN_BYTES 8 (memcached.h:121; slabs.c:252-253), until the size
// reaches slab_chunk_size_max / factor; the last class has chunks of
// slab_chunk_size_max = slab_page_size / 2 = 512 KB (memcached.c:241-242;
// slabs.c:243-267). Pages are slab_page_size 1 MB.
const (
	SlabPageSize    = 1024 * 1024
	SlabChunkMax    = SlabPageSize / 2
	slabChunkSize   = 48
	slabFactor      = 1.25
	chunkAlignBytes = 8
)

func slabClasses() []slabClass {
	cls := []slabClass{{}}
	size := float64(ItemHeaderSize + slabChunkSize)
	for len(cls) < 63 && size < SlabChunkMax/slabFactor {
		n := int64(size)
		if n%chunkAlignBytes != 0 {
			n += chunkAlignBytes - n%chunkAlignBytes
		}
		cls = append(cls, slabClass{size: n, perslab: SlabPageSize / n})
		// NB: the C code keeps the aligned size and multiplies it
		// (unsigned int size; size *= factor).
		size = float64(n) * slabFactor
		size = float64(int64(size))
	}
	return append(cls, slabClass{size: SlabChunkMax, perslab: SlabPageSize / SlabChunkMax})
}

// classFor is slabs_clsid (slabs.c:77-86): the smallest class whose chunk
// holds size bytes. An item larger than the largest chunk is stored in
// chunks of the largest class. Simplification: such an item is accounted
// as whole chunks of the largest class (real memcached also keeps a header
// item in a smaller class).
func (c *cache) classFor(size int64) (int, int64) {
	last := len(c.classes) - 1
	for i := 1; i < last; i++ {
		if size <= c.classes[i].size {
			return i, 1
		}
	}
	return last, (size + SlabChunkMax - 1) / SlabChunkMax
}

// realtime converts a protocol exptime to server-relative seconds, as
// memcached's realtime() does after EXPTIME_TO_POSITIVE_TIME (M 1.6.45
// memcached.c:174-192, memcached.h:1064-1065): 0 never expires; a
// negative value becomes REALTIME_MAXDELTA+1, an absolute time long past;
// up to REALTIME_MAXDELTA (30 days) it is relative to now; beyond it is an
// absolute Unix time converted against process_started, and a time at or
// before the server's start becomes 1 (already expired).
func (c *cache) realtime(exptime int64) int64 {
	if exptime < 0 {
		exptime = RealtimeMaxDelta + 1
	}
	if exptime == 0 {
		return 0
	}
	if exptime > RealtimeMaxDelta {
		if exptime <= c.processStarted {
			return 1
		}
		return exptime - c.processStarted
	}
	return exptime + c.now
}

// expired is do_item_get's test: exptime != 0 && exptime <= current_time
// (M 1.6.45 items.c:992).
func (c *cache) expired(it *item) bool { return it.exptime != 0 && it.exptime <= c.now }

func (c *cache) emit(kind eventKind, it *item) {
	cp := *it
	cp.prev, cp.next = nil, nil
	c.events = append(c.events, event{kind: kind, it: cp})
}

// ---- per-class LRU queues ----

// linkQ is do_item_link_q (items.c:407-431): the item becomes the head of
// its LRU.
func (c *cache) linkQ(it *item) {
	c.version++
	q := &c.classes[it.cls].lru[it.lru]
	it.prev, it.next = nil, q.head
	if q.head != nil {
		q.head.prev = it
	}
	q.head = it
	if q.tail == nil {
		q.tail = it
	}
	q.count++
	q.bytes += it.size
}

// unlinkQ is do_item_unlink_q (items.c:447-477).
func (c *cache) unlinkQ(it *item) {
	c.version++
	q := &c.classes[it.cls].lru[it.lru]
	if it.prev != nil {
		it.prev.next = it.next
	} else {
		q.head = it.next
	}
	if it.next != nil {
		it.next.prev = it.prev
	} else {
		q.tail = it.prev
	}
	it.prev, it.next = nil, nil
	q.count--
	q.bytes -= it.size
}

// moveQ relinks an item at the head of another LRU of its class.
func (c *cache) moveQ(it *item, lru uint8) {
	c.unlinkQ(it)
	it.lru = lru
	c.linkQ(it)
}

// bump is do_item_bump with the segmented LRU (items.c:1032-1057), on a
// get, gets or touch hit: the first fetch sets ITEM_FETCHED; the second
// sets ITEM_ACTIVE and, outside COLD, only refreshes the item's time; an
// ACTIVE item in COLD is queued for the LRU maintainer, which moves it to
// WARM at its next run (lru_bump_async). An item already ACTIVE is left
// alone.
func (c *cache) bump(it *item) {
	c.version++
	switch {
	case it.iflags&itemActive != 0:
	case it.iflags&itemFetched == 0:
		it.iflags |= itemFetched
	default:
		it.iflags |= itemActive
		if it.lru != lruCold {
			it.time = c.now
			return
		}
		if !it.bumpQueued {
			it.bumpQueued = true
			c.bumps = append(c.bumps, it)
		}
	}
}

// update is do_item_update with the segmented LRU (items.c:549-576), on a
// failed add, an in-place incr/decr and each queued bump: an ACTIVE item
// in COLD moves to the head of WARM and loses ITEM_ACTIVE; any other
// linked item only gets its time refreshed (no ITEM_UPDATE_INTERVAL
// check in segmented mode).
func (c *cache) update(it *item) {
	if !it.linked {
		return
	}
	c.version++
	it.time = c.now
	if it.lru == lruCold && it.iflags&itemActive != 0 {
		it.iflags &^= itemActive
		c.moveQ(it, lruWarm)
		c.classes[it.cls].stats.MovesToWarm++
	}
}

// free returns an item's chunks to its class.
func (c *cache) free(it *item) {
	c.classes[it.cls].used -= it.chunks
	c.used -= it.size
}

// remove unlinks an item from the table and its LRU and frees its memory.
// Simplification: an item with a queued bump holds a reference in
// memcached, so its chunk is reusable only after the maintainer ran; the
// model frees it at once.
func (c *cache) remove(it *item, why eventKind) {
	c.unlinkQ(it)
	it.linked = false
	delete(c.items, it.key)
	c.free(it)
	c.emit(why, it)
}

// link stores a new item whose chunks alloc reserved, replacing old (may
// be nil): do_item_link (items.c:485-505) into the HOT LRU, where
// do_item_alloc puts every new item (items.c:308-319).
func (c *cache) link(it, old *item) {
	if old != nil {
		c.unlinkQ(old)
		old.linked = false
		delete(c.items, old.key)
		c.free(old)
	}
	c.items[it.key] = it
	c.used += it.size
	it.time = c.now
	it.lru = lruHot
	it.linked = true
	c.linkQ(it)
	c.emit(evStored, it)
}

// lookup finds a live item; an expired one is unlinked on the way
// (do_item_get, M 1.6.45 items.c:974-1010). bump is DO_UPDATE: a hit is
// bumped (do_item_bump).
func (c *cache) lookup(key string, bump bool) *item {
	it := c.items[key]
	if it == nil {
		return nil
	}
	if c.expired(it) {
		c.remove(it, evExpired)
		return nil
	}
	if bump {
		c.bump(it)
	}
	return it
}

// nextCAS is get_cas_id(): a server-wide counter starting at 1 (0 when
// CAS is off).
func (c *cache) nextCAS() uint64 {
	if !c.cfg.UseCAS {
		return 0
	}
	c.casSeq++
	return c.casSeq
}

// alloc reserves the chunks of a new item of size bytes. Each chunk is
// taken as do_item_alloc_pull takes one with the segmented LRU (M 1.6.45
// items.c:162-197): up to 10 times, slabs_alloc (a free chunk of the
// class, or a new 1 MB page while the pages handed out stay within
// MaxBytes; a class's first page is granted even beyond the limit,
// do_slabs_newslab, slabs.c:374-388), and if that fails, pull the COLD
// tail with LRU_PULL_EVICT (reclaims expired items, evicts one live item
// unless -M), or, when that removed nothing, the HOT tail (which moves an
// item to COLD); the tries are counted as direct_reclaims and a failure
// as outofmemory (items.c:296-301). NB: eviction pressure is per class: a
// cache workload evicts a lock key only if their items fall in the same
// class. Simplification: an item larger than the largest chunk takes
// several chunks of the largest class, each pulled this way (memcached
// also allocates a header item in a smaller class).
func (c *cache) alloc(size int64) (cls int, chunks int64, ok bool) {
	cls, chunks = c.classFor(size)
	for n := int64(0); n < chunks; n++ {
		if !c.allocChunk(cls) {
			c.classes[cls].used -= n
			c.classes[cls].stats.OutOfMemory++
			return 0, 0, false
		}
	}
	return cls, chunks, true
}

// maxAllocTries: do_item_alloc_pull's loop bound (items.c:171).
const maxAllocTries = 10

func (c *cache) allocChunk(cls int) bool {
	sc := &c.classes[cls]
	ok := false
	i := 0
	for ; i < maxAllocTries; i++ {
		if c.slabsAlloc(cls) {
			ok = true
			break
		}
		// total_bytes 0: "this routine is always pulling to evict, or
		// forcing HOT -> COLD migration" (items.c:180-183).
		if c.pullTail(cls, lruCold, 0, true, 0) <= 0 {
			c.pullTail(cls, lruHot, 0, false, 0)
		}
	}
	sc.stats.DirectReclaims += int64(i)
	return ok
}

// slabsAlloc takes one free chunk of the class, giving it a new page if
// none is free and the limit allows (do_slabs_alloc, do_slabs_newslab).
func (c *cache) slabsAlloc(cls int) bool {
	sc := &c.classes[cls]
	if sc.pages*sc.perslab-sc.used < 1 {
		if sc.pages != 0 && c.malloced+SlabPageSize > c.cfg.MaxBytes {
			return false
		}
		sc.pages++
		c.malloced += SlabPageSize
	}
	sc.used++
	return true
}

// pullTail is lru_pull_tail (M 1.6.45 items.c:1072-1253) on one LRU of a
// class: it looks at up to 5 items from the tail. An expired item is
// reclaimed (exptime < current_time, items.c:1130-1144) and the walk goes
// on. Otherwise, in HOT and WARM an ACTIVE item loses the flag and moves
// (HOT: to WARM, ending the walk; WARM: to WARM's head, going on); an item
// of a queue over its share of totalBytes (hot_lru_pct, warm_lru_pct) or
// idle longer than maxAge moves to COLD; else the walk ends. In COLD the
// walk ends at the first live item: with evict it is evicted (unless -M),
// without, an ACTIVE one moves to WARM. It returns the number of items
// removed or moved.
func (c *cache) pullTail(cls int, lru uint8, totalBytes int64, evict bool, maxAge int64) int {
	sc := &c.classes[cls]
	q := &sc.lru[lru]
	removed := 0
	var limit int64
	next := (*item)(nil)
	for tries, search := 5, q.tail; tries > 0 && search != nil; tries, search = tries-1, next {
		next = search.prev
		if search.exptime != 0 && search.exptime < c.now {
			sc.stats.Reclaimed++
			if search.iflags&itemFetched == 0 {
				sc.stats.ExpiredUnfetched++
			}
			c.remove(search, evExpired)
			removed++
			continue
		}
		switch lru {
		case lruHot, lruWarm:
			if lru == lruHot {
				limit = totalBytes * hotLRUPct / 100
			}
			if limit == 0 {
				limit = totalBytes * warmLRUPct / 100
			}
			switch {
			case search.iflags&itemActive != 0:
				// "Rescue ACTIVE items aggressively".
				search.iflags &^= itemActive
				removed++
				if lru == lruWarm {
					sc.stats.MovesWithinLRU++
					c.moveQ(search, lruWarm)
					continue
				}
				sc.stats.MovesToWarm++
				c.moveQ(search, lruWarm)
			case q.bytes > limit || c.now-search.time > maxAge:
				sc.stats.MovesToCold++
				c.moveQ(search, lruCold)
				removed++
			}
			return removed
		default: // COLD: "No matter what, we're stopping".
			switch {
			case evict:
				if !c.cfg.EvictToFree {
					return removed
				}
				sc.stats.Evicted++
				if search.exptime != 0 {
					sc.stats.EvictedNonzero++
				}
				if search.iflags&itemFetched == 0 {
					sc.stats.EvictedUnfetched++
				}
				if search.iflags&itemActive != 0 {
					sc.stats.EvictedActive++
				}
				c.remove(search, evEvicted)
				removed++
			case search.iflags&itemActive != 0:
				sc.stats.MovesToWarm++
				search.iflags &^= itemActive
				c.moveQ(search, lruWarm)
				removed++
			}
			return removed
		}
	}
	return removed
}

// release gives back chunks reserved by alloc for an item that was not
// stored.
func (c *cache) release(cls int, chunks int64) { c.classes[cls].used -= chunks }

// validKey reports whether a key can be sent in the text protocol: 1 to
// KEY_MAX_LENGTH bytes (memcached.h:71) without spaces or control
// characters (the tokenizer splits on spaces; keys must not contain
// control characters, doc/protocol.txt "Keys").
func validKey(k string) bool {
	if len(k) == 0 || len(k) > KeyMaxLength {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] <= ' ' || k[i] == 0x7f {
			return false
		}
	}
	return true
}

// exptime32 is what the server keeps of an exptime token: safe_strtol
// parses a long and stores it in an int32_t, so the value is truncated to
// its low 32 bits (M 1.6.45 util.c:168-183; process_update_cmd_start,
// proto_parser.c:758-763). 2^32 becomes 0 (never expires) and 2^31
// becomes negative (already expired), as real memcached 1.6.18 answers.
// NB: memcached 1.6.45 parses touch's exptime with mcmc_token_get_32
// instead; the model truncates there too, as 1.6.18 does.
func exptime32(v int64) int64 { return int64(int32(v)) }

// do executes one request and returns its reply.
func (c *cache) do(r Request) Reply {
	rep := Reply{ID: r.ID}
	switch r.Cmd {
	case CmdSet, CmdAdd, CmdReplace, CmdCas:
		rep.Status = c.store(r)
	case CmdGet, CmdGets:
		rep.Gets = r.Cmd == CmdGets
		rep.Status, rep.Items = c.get(r.Keys)
	case CmdDelete:
		rep.Status = c.del(r.Key)
	case CmdTouch:
		rep.Status = c.touch(r.Key, r.Exptime)
	case CmdIncr, CmdDecr:
		rep.Status = c.arith(r.Key, r.Cmd == CmdIncr, r.Delta)
	case CmdFlushAll:
		rep.Status = c.flushAll()
	default:
		// An unknown command line gets "ERROR" (doc/protocol.txt "Error
		// strings").
		rep.Status = "ERROR"
	}
	return rep
}

// store serves set, add, replace and cas (process_update_cmd_start and
// do_store_item, M 1.6.45 proto_parser.c:741-851, memcached.c:1547-1720).
func (c *cache) store(r Request) string {
	if !validKey(r.Key) {
		return ErrBadFormat
	}
	exptime := c.realtime(exptime32(r.Exptime))
	size := c.cfg.ItemSize(r.Key, r.Flags, len(r.Value))
	// The new item is allocated before the command looks at the old one,
	// so an add that will answer NOT_STORED can still evict, or fail
	// with out of memory under -M.
	tooLarge := size > c.cfg.ItemSizeMax
	var cls int
	var chunks int64
	ok := false
	if !tooLarge {
		cls, chunks, ok = c.alloc(size)
	}
	if !ok {
		status := ErrOutOfMem
		if tooLarge {
			status = ErrTooLarge
		}
		// "Avoid stale data persisting in cache because we failed alloc":
		// a failed set unlinks the old value (proto_parser.c:801-808).
		if r.Cmd == CmdSet {
			if old := c.lookup(r.Key, false); old != nil {
				c.remove(old, evDeleted)
			}
		}
		return status
	}
	// The CAS id is drawn for every store attempt that got its memory
	// (proto_parser.c:826).
	cas := c.nextCAS()
	old := c.lookup(r.Key, false)
	it := &item{key: r.Key, flags: r.Flags, value: r.Value, exptime: exptime, cas: cas, size: size, cls: cls, chunks: chunks}
	if old != nil {
		switch r.Cmd {
		case CmdAdd:
			// "add only adds a nonexistent item, but promote to head of
			// LRU" (memcached.c:1576-1578): do_item_update.
			c.update(old)
			c.release(cls, chunks)
			return NotStored
		case CmdCas:
			if r.CAS == 0 || r.CAS != old.cas {
				c.release(cls, chunks)
				return Exists
			}
		}
		c.link(it, old)
		return Stored
	}
	switch r.Cmd {
	case CmdCas:
		c.release(cls, chunks)
		return NotFound
	case CmdReplace:
		c.release(cls, chunks)
		return NotStored
	}
	c.link(it, nil)
	return Stored
}

// get serves get and gets. Every hit is bumped in the LRU.
func (c *cache) get(keys []string) (string, []Item) {
	if len(keys) == 0 {
		return "ERROR", nil
	}
	for _, k := range keys {
		if !validKey(k) {
			return ErrBadFormat, nil
		}
	}
	var out []Item
	for _, k := range keys {
		if it := c.lookup(k, true); it != nil {
			out = append(out, Item{Key: it.key, Flags: it.flags, Value: it.value, CAS: it.cas})
		}
	}
	return End, out
}

// del serves delete (process_delete_cmd, proto_parser.c:903-945).
func (c *cache) del(key string) string {
	if !validKey(key) {
		return ErrBadFormat
	}
	it := c.lookup(key, false)
	if it == nil {
		return NotFound
	}
	c.remove(it, evDeleted)
	return Deleted
}

// touch serves touch (process_touch_cmd, proto_parser.c:947-982).
func (c *cache) touch(key string, exptime int64) string {
	if !validKey(key) {
		return ErrBadFormat
	}
	rel := c.realtime(exptime32(exptime))
	it := c.lookup(key, true)
	if it == nil {
		return NotFound
	}
	it.exptime = rel
	return Touched
}

// arith serves incr and decr (do_add_delta, M 1.6.45 memcached.c:2232-2330):
// the value must be a decimal unsigned 64-bit number; incr wraps around at
// 2^64, decr stops at 0. A result no longer than the old value is written
// in place and padded with spaces; a longer one is a new item.
func (c *cache) arith(key string, incr bool, delta uint64) string {
	if !validKey(key) {
		return ErrBadFormat
	}
	it := c.lookup(key, false)
	if it == nil {
		return NotFound
	}
	v, ok := strtoull(it.value)
	if len(it.value) == 0 || !ok {
		return ErrNonNumeric
	}
	if incr {
		v += delta
	} else if delta > v {
		v = 0
	} else {
		v -= delta
	}
	s := strconv.FormatUint(v, 10)
	// In place only when nobody else holds a reference to the item
	// (refcount == 2, memcached.c:2295): a bump queued for the LRU
	// maintainer holds one, and the result is then a new item.
	if len(s) <= len(it.value) && !it.bumpQueued {
		it.value = s + strings.Repeat(" ", len(it.value)-len(s))
		it.cas = c.nextCAS()
		c.update(it)
		c.emit(evStored, it)
		return s
	}
	size := c.cfg.ItemSize(key, it.flags, len(s))
	// The old item stays linked while the new one is allocated.
	cls, chunks, ok := c.alloc(size)
	if !ok {
		return ErrIncrOOM
	}
	// NB: the allocation may have evicted the old item itself; the new
	// one is linked regardless, as item_replace does.
	old := c.items[key]
	n := &item{key: key, flags: it.flags, value: s, exptime: it.exptime, cas: c.nextCAS(), size: size, cls: cls, chunks: chunks}
	c.link(n, old)
	return s
}

// flushAll serves flush_all without a delay: every item becomes invalid
// (process_flush_all_command, M 1.6.45 proto_text.c:1176-1212, which also
// draws a CAS id for settings.oldest_cas). Simplification: the model frees
// the items at once; memcached marks them flushed and reclaims them lazily,
// which no command can tell apart.
func (c *cache) flushAll() string {
	c.nextCAS()
	for i := range c.classes {
		for l := range c.classes[i].lru {
			for c.classes[i].lru[l].head != nil {
				c.remove(c.classes[i].lru[l].head, evFlushed)
			}
		}
	}
	return OK
}

// strtoull is memcached's safe_strtoull over a stored value followed by
// its "\r\n" (M 1.6.45 util.c:67-90): C strtoull (leading white space, an
// optional sign, decimal digits, ERANGE on overflow), then the next byte
// must be white space or the end, and a negative sign is refused when the
// result would be negative as a signed number.
func strtoull(s string) (uint64, bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	var v uint64
	overflow := false
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		d := uint64(s[i] - '0')
		if v > (math.MaxUint64-d)/10 {
			overflow = true
		}
		v = v*10 + d
		i++
	}
	if i == start || overflow {
		return 0, false
	}
	// After the digits comes either more of the value or its "\r\n".
	if i < len(s) && !isSpace(s[i]) {
		return 0, false
	}
	if neg {
		v = -v
		if int64(v) < 0 {
			return 0, false
		}
	}
	return v, true
}

// isSpace is C isspace in the "C" locale.
func isSpace(b byte) bool { return b == ' ' || (b >= '\t' && b <= '\r') }

// ---- the LRU maintainer thread ----

// The LRU maintainer's timing (M 1.6.45 items.c:1544-1545, memcached.h:123):
// it sleeps between MIN_LRU_MAINTAINER_SLEEP 1000 us and
// MAX_LRU_MAINTAINER_SLEEP 999999 us, and visits the slab class ids
// POWER_SMALLEST 1 to MAX_NUMBER_OF_SLAB_CLASSES-1 63; each juggle loops at
// most 500 times (items.c:1418).
const (
	minMaintainerSleep = 1000
	maxMaintainerSleep = 1000000 - 1
	maxSlabClassIDs    = 64
	maxJuggleLoops     = 500
)

// maintainer is lru_maintainer_thread's state (items.c:1547-1633): the
// sleep it is in, and per class id the time until its next juggle and its
// backoff, in microseconds.
type maintainer struct {
	toSleep int64
	next    [maxSlabClassIDs]int64
	backoff [maxSlabClassIDs]int64
	// quiet[i] is the cache version at class id i's last juggle if it
	// moved nothing and its backoff is at the maximum, else -1.
	quiet [maxSlabClassIDs]int64
	// idle: since every class's last juggle, which moved nothing, the
	// cache has not changed, every backoff is at its maximum and no bump
	// was queued: the runs that follow do nothing either until a command
	// changes the cache or the clock reaches idleUntil (see the node's
	// armMaintainer).
	idle bool
}

// maintain runs one iteration of the maintainer's loop, after its sleep
// (items.c:1570-1624), and returns the next sleep in microseconds: every
// class whose wait has run out is juggled; a class where nothing moved
// backs off (first 1 ms, then 1/8 more each time, up to the maximum), one
// where something moved halves its backoff (to 0 below 1 ms); the thread
// sleeps until the earliest class is due, at most 1 ms when it processed
// asynchronous bumps. NB: a sleep of 0 (a class due at once) runs the loop
// again without sleeping; the thread's own accounting counts it as 1 ms
// ("A sleep of zero counts as a minimum of a 1ms wait"), and the node
// waits that 1 ms.
func (c *cache) maintain() int64 {
	m := &c.maint
	last := max(m.toSleep, minMaintainerSleep)
	m.toSleep = maxMaintainerSleep
	bumps := len(c.bumps) != 0
	for i := 1; i < maxSlabClassIDs; i++ {
		if m.next[i] > last {
			m.next[i] -= last
		} else {
			m.next[i] = 0
		}
		if m.next[i] > 0 {
			m.toSleep = min(m.toSleep, m.next[i])
			continue
		}
		did := c.juggle(i)
		if did == 0 && m.backoff[i] == maxMaintainerSleep {
			m.quiet[i] = c.version
		} else {
			m.quiet[i] = -1
		}
		if did == 0 {
			if m.backoff[i] != 0 {
				m.backoff[i] += m.backoff[i] / 8
			} else {
				m.backoff[i] = minMaintainerSleep
			}
			m.backoff[i] = min(m.backoff[i], maxMaintainerSleep)
		} else if m.backoff[i] > 0 {
			m.backoff[i] /= 2
			if m.backoff[i] < minMaintainerSleep {
				m.backoff[i] = 0
			}
		}
		m.next[i] = m.backoff[i]
		m.toSleep = min(m.toSleep, m.next[i])
	}
	// "Minimize the sleep if we had async LRU bumps to process".
	if c.runBumps() && m.toSleep > minMaintainerSleep {
		m.toSleep = minMaintainerSleep
	}
	m.idle = !bumps
	for i := 1; i < maxSlabClassIDs && m.idle; i++ {
		m.idle = m.quiet[i] == c.version
	}
	return m.toSleep
}

// idleStep is one run of an idle maintainer, whose juggles move nothing
// (maintain without the juggles): the same waits and backoffs.
func (m *maintainer) idleStep() int64 {
	last := max(m.toSleep, minMaintainerSleep)
	m.toSleep = maxMaintainerSleep
	for i := 1; i < maxSlabClassIDs; i++ {
		if m.next[i] > last {
			m.next[i] -= last
		} else {
			m.next[i] = 0
		}
		if m.next[i] == 0 {
			if m.backoff[i] != 0 {
				m.backoff[i] += m.backoff[i] / 8
			} else {
				m.backoff[i] = minMaintainerSleep
			}
			m.backoff[i] = min(m.backoff[i], maxMaintainerSleep)
			m.next[i] = m.backoff[i]
		}
		m.toSleep = min(m.toSleep, m.next[i])
	}
	return m.toSleep
}

// wakeAfter is the wait in nanoseconds after a run that chose sleep
// microseconds (0 counts as 1 ms, see maintain).
func wakeAfter(sleep int64) int64 { return max(sleep, minMaintainerSleep) * 1000 }

// skipIdle advances an idle maintainer m, whose next run is at *next
// (nanoseconds), over every run before t, as idleSteps. Its runs repeat
// with a period (every class is juggled once per MAX_LRU_MAINTAINER_SLEEP
// once all backoffs are at their maximum): a stretch of whole periods is
// skipped at once after one period was stepped and found to repeat.
func (m *maintainer) skipIdle(next *int64, t int64) {
	const period = maxMaintainerSleep * 1000
	if t-*next > 2*period {
		saved, start := *m, *next
		for *next-start < period {
			*next += wakeAfter(m.idleStep())
		}
		if *m == saved && *next-start == period {
			*next += (t - *next) / period * period
		}
	}
	for *next < t {
		*next += wakeAfter(m.idleStep())
	}
}

// juggle is lru_maintainer_juggle (items.c:1371-1437) with the segmented
// LRU: the COLD tail's age sets the HOT and WARM age limits (times
// hot_max_factor and warm_max_factor, truncated to whole seconds as
// rel_time_t); then up to 500 times, pull the HOT tail, or if that did
// nothing the WARM tail, and the COLD tail, until a round moves nothing.
// It returns the number of rounds that did something.
func (c *cache) juggle(cls int) int {
	if cls >= len(c.classes) {
		return 0 // an id beyond the last class: no items
	}
	sc := &c.classes[cls]
	var coldAge int64
	if t := sc.lru[lruCold].tail; t != nil {
		coldAge = c.now - t.time
	}
	total := sc.lru[lruCold].bytes + sc.lru[lruHot].bytes + sc.lru[lruWarm].bytes
	hotAge := int64(float64(coldAge) * hotMaxFactor)
	warmAge := int64(float64(coldAge) * warmMaxFactor)
	did := 0
	for i := 0; i < maxJuggleLoops; i++ {
		more := 0
		if c.pullTail(cls, lruHot, total, false, hotAge) != 0 || c.pullTail(cls, lruWarm, total, false, warmAge) != 0 {
			more++
		}
		more += c.pullTail(cls, lruCold, total, false, 0)
		if more == 0 {
			break
		}
		did++
	}
	return did
}

// idleUntil returns the first current_time at which a juggle could act
// again after an idle run, the cache unchanged (math.MaxInt64 if never):
// a juggle only looks at the tails of HOT, WARM and COLD, and with them
// unchanged only the clock can make it act, when a tail's exptime passes
// (exptime < current_time), when the HOT tail's idle time exceeds the
// COLD tail's age times hot_max_factor (the earliest second that can
// happen is bounded below by solving t - hot.time > 0.2 (t - cold.time)
// - 1), or, with COLD empty, a second after the HOT or WARM tail's time
// (their age limit is then 0). WARM's limit, twice COLD's age, grows
// faster than WARM's idle time: an idle WARM tail stays put.
func (c *cache) idleUntil() int64 {
	until := int64(math.MaxInt64)
	for cls := range c.classes {
		sc := &c.classes[cls]
		for l := range sc.lru {
			if t := sc.lru[l].tail; t != nil && t.exptime != 0 {
				until = min(until, t.exptime+1)
			}
		}
		hot, warm, cold := sc.lru[lruHot].tail, sc.lru[lruWarm].tail, sc.lru[lruCold].tail
		switch {
		case cold == nil:
			if hot != nil {
				until = min(until, hot.time+1)
			}
			if warm != nil {
				until = min(until, warm.time+1)
			}
		case hot != nil:
			// t - h > 0.2 (t - c) - 1  <=>  t > (h - 0.2 c - 1) / 0.8
			until = min(until, int64(math.Floor((float64(hot.time)-hotMaxFactor*float64(cold.time)-1)/(1-hotMaxFactor))))
		}
	}
	return until
}

// runBumps is lru_maintainer_bumps (items.c:1315-1348): do_item_update on
// every queued bump, oldest first. It reports whether there was any.
func (c *cache) runBumps() bool {
	if len(c.bumps) == 0 {
		return false
	}
	for i, it := range c.bumps {
		it.bumpQueued = false
		c.update(it)
		c.bumps[i] = nil
	}
	c.bumps = c.bumps[:0]
	return true
}

// classStats returns a class's "stats items" counters.
func (c *cache) classStats(cls int) ItemStats {
	sc := &c.classes[cls]
	st := sc.stats
	st.NumberHot, st.NumberWarm, st.NumberCold = sc.lru[lruHot].count, sc.lru[lruWarm].count, sc.lru[lruCold].count
	st.Number = st.NumberHot + st.NumberWarm + st.NumberCold
	return st
}
