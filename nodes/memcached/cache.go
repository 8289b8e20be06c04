package memcached

import (
	"math"
	"strconv"
	"strings"
)

// item is one stored item. The items of a slab class form a doubly linked
// LRU list, most recently used at the head.
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

	prev, next *item
}

// slabClass is one slab class: its chunk size, the pages it was given and
// the LRU of its items (slabs.c slabclass_t; items.c heads/tails).
type slabClass struct {
	size       int64 // chunk size
	perslab    int64 // chunks per page
	pages      int64
	used       int64 // chunks in use
	head, tail *item
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

// ---- per-class LRU lists ----

func (c *cache) linkHead(it *item) {
	sc := &c.classes[it.cls]
	it.prev, it.next = nil, sc.head
	if sc.head != nil {
		sc.head.prev = it
	}
	sc.head = it
	if sc.tail == nil {
		sc.tail = it
	}
}

func (c *cache) unlinkList(it *item) {
	sc := &c.classes[it.cls]
	if it.prev != nil {
		it.prev.next = it.next
	} else {
		sc.head = it.next
	}
	if it.next != nil {
		it.next.prev = it.prev
	} else {
		sc.tail = it.prev
	}
	it.prev, it.next = nil, nil
}

// bump is do_item_update without the segmented LRU (M 1.6.45
// items.c:567-574): an item moves to the head of its LRU only if its last
// bump is more than ITEM_UPDATE_INTERVAL (60 s) old, so that hot items
// are not relinked on every access.
func (c *cache) bump(it *item) {
	if it.time >= c.now-ItemUpdateInterval {
		return
	}
	it.time = c.now
	c.unlinkList(it)
	c.linkHead(it)
}

// free returns an item's chunks to its class.
func (c *cache) free(it *item) {
	c.classes[it.cls].used -= it.chunks
	c.used -= it.size
}

// remove unlinks an item from the table and its LRU and frees its memory.
func (c *cache) remove(it *item, why eventKind) {
	c.unlinkList(it)
	delete(c.items, it.key)
	c.free(it)
	c.emit(why, it)
}

// link stores a new item whose chunks alloc reserved, replacing old (may
// be nil).
func (c *cache) link(it, old *item) {
	if old != nil {
		c.unlinkList(old)
		delete(c.items, old.key)
		c.free(old)
	}
	c.items[it.key] = it
	c.used += it.size
	it.time = c.now
	c.linkHead(it)
	c.emit(evStored, it)
}

// lookup finds a live item; an expired one is unlinked on the way
// (do_item_get, M 1.6.45 items.c:974-1010). bump moves a hit to the head
// of its LRU.
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

// alloc reserves the chunks of a new item of size bytes, as
// do_item_alloc_pull does (M 1.6.45 items.c:162-190). It takes a free
// chunk of the item's class, or a new 1 MB page for the class while the
// pages handed out stay within MaxBytes (a class's first page is granted
// even beyond the limit, do_slabs_newslab, slabs.c:374-388), or else pulls
// the tail of the class's LRU (lru_pull_tail, items.c:1072-1198): an
// expired tail item is reclaimed (exptime < current_time, items.c:1130); a
// live one is evicted, unless -M forbids evicting, and then the allocation
// fails. NB: eviction pressure is per class: a cache workload evicts a
// lock key only if their items fall in the same class.
func (c *cache) alloc(size int64) (cls int, chunks int64, ok bool) {
	cls, chunks = c.classFor(size)
	sc := &c.classes[cls]
	for sc.pages*sc.perslab-sc.used < chunks {
		if sc.pages == 0 || c.malloced+SlabPageSize <= c.cfg.MaxBytes {
			sc.pages++
			c.malloced += SlabPageSize
			continue
		}
		t := sc.tail
		switch {
		case t == nil:
			return 0, 0, false
		case t.exptime != 0 && t.exptime < c.now:
			c.remove(t, evExpired)
		case c.cfg.EvictToFree:
			c.remove(t, evEvicted)
		default:
			return 0, 0, false
		}
	}
	sc.used += chunks
	return cls, chunks, true
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
			// LRU" (memcached.c:1576-1578).
			c.bump(old)
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
	if len(s) <= len(it.value) {
		it.value = s + strings.Repeat(" ", len(it.value)-len(s))
		it.cas = c.nextCAS()
		c.bump(it)
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
		for c.classes[i].head != nil {
			c.remove(c.classes[i].head, evFlushed)
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
