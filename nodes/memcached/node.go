package memcached

import (
	"strconv"
	"time"

	"github.com/locksim/locksim/sim"
)

// Trace event kinds a node emits with env.Log. Fault triggers match them
// together with the node's name.
const (
	// KindItemStored: an item was stored (set, add, replace, cas, or an
	// incr/decr that changed its value). Text: key, value, CAS id and the
	// server-relative expiry second (0 = never).
	KindItemStored sim.Kind = "item-stored"
	// KindItemDeleted: an item was deleted by delete, or unlinked by a set
	// that failed to allocate.
	KindItemDeleted sim.Kind = "item-deleted"
	// KindItemExpired: an expired item was unlinked (found on access, or
	// reclaimed at the LRU tail to make room).
	KindItemExpired sim.Kind = "item-expired"
	// KindItemEvicted: a live item was evicted from the LRU tail to make
	// room for a new one.
	KindItemEvicted sim.Kind = "item-evicted"
	// KindItemFlushed: an item was invalidated by flush_all.
	KindItemFlushed sim.Kind = "item-flushed"
)

var eventKinds = [...]sim.Kind{evStored: KindItemStored, evDeleted: KindItemDeleted, evExpired: KindItemExpired,
	evEvicted: KindItemEvicted, evFlushed: KindItemFlushed}

// Node is one simulated memcached server. It is a sim.Process; build it
// with New. A restart builds a fresh, empty instance: memcached keeps
// nothing across a restart.
type Node struct {
	cfg Config
	env *sim.Env
	c   *cache

	monoInit  int64 // monotonic reading (ns) when the server started
	monoStart int64 // monotonic_start (s)
	buf       []byte
	// evictDetail is the key losses' detail of an eviction, rendered once
	// (a cache workload evicts on every store).
	evictDetail string
}

// New returns a memcached node process. It panics if cfg is invalid
// (callers validate configurations first; see Config.Validate).
func New(cfg Config) *Node {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	return &Node{cfg: cfg}
}

// Init starts the server with an empty cache. The server reads the wall
// clock once, for process_started = time(0) - ITEM_UPDATE_INTERVAL - 2
// (M 1.6.45 memcached.c:203), and keeps its own time, current_time, from
// the monotonic clock, starting at the same ITEM_UPDATE_INTERVAL + 2
// seconds (monotonic_start, memcached.c:6097-6108). A later step of the
// wall clock therefore changes nothing in the server: relative exptimes
// run on the monotonic clock, and absolute ones are converted against the
// wall clock as it read at start-up ("users who are setting explicit dates
// for expiration times *must* ensure their clocks are correct before
// starting memcached", memcached.c:3922-3924).
func (n *Node) Init(env *sim.Env) {
	n.env = env
	wall := floorDiv(env.Wall(), int64(time.Second))
	n.monoInit = env.Mono()
	n.monoStart = floorDiv(n.monoInit, int64(time.Second)) - ItemUpdateInterval - 2
	n.c = newCache(n.cfg, wall-ItemUpdateInterval-2)
}

// currentTime is memcached's current_time: clock_handler ticks once a
// second from start-up and sets it to the monotonic second minus
// monotonic_start (memcached.c:3925-3991), so it advances in whole
// seconds, at instants one second apart from the start.
func (n *Node) currentTime() int64 {
	ticks := floorDiv(n.env.Mono()-n.monoInit, int64(time.Second))
	return floorDiv(n.monoInit+ticks*int64(time.Second), int64(time.Second)) - n.monoStart
}

// Fire does nothing: the model sets no timers (expired items are found on
// access or at the LRU tail; the LRU crawler is not modelled).
func (n *Node) Fire(env *sim.Env, tag any) {}

// Receive serves one Request; other messages are ignored.
func (n *Node) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	r, ok := msg.(Request)
	if !ok {
		return
	}
	rep := n.Do(r)
	env.Send(from, rep)
}

// Do executes one request at the current instant and returns the reply
// (Receive sends it; tests may call Do directly).
func (n *Node) Do(r Request) Reply {
	n.c.now = n.currentTime()
	rep := n.c.do(r)
	n.flushEvents()
	return rep
}

func (n *Node) flushEvents() {
	for i := range n.c.events {
		e := &n.c.events[i]
		b := append(n.buf[:0], e.it.key...)
		if e.kind == evStored {
			b = strconv.AppendQuote(append(b, ' '), e.it.value)
			b = strconv.AppendUint(append(b, " cas "...), e.it.cas, 10)
			b = strconv.AppendInt(append(b, " exp "...), e.it.exptime, 10)
		}
		n.env.LogBytes(eventKinds[e.kind], b)
		n.buf = b
		// An item unlinked because its exptime passed (do_item_get,
		// items.c:992, or the LRU tail, items.c:1130) or evicted from the
		// tail of its class's LRU (lru_pull_tail, items.c:1072-1198): the
		// server's own removal, a loss for the history.
		switch e.kind {
		case evExpired:
			n.env.KeyLost(e.it.key, sim.LossExpired, "")
		case evEvicted:
			if n.evictDetail == "" {
				n.evictDetail = "memory limit " + memLimit(n.cfg.MaxBytes) + ", LRU tail"
			}
			n.env.KeyLost(e.it.key, sim.LossEvicted, n.evictDetail)
		}
		e.it = item{}
	}
	n.c.events = n.c.events[:0]
}

// CurrentTime returns the server's current_time in seconds (for tests and
// inspection).
func (n *Node) CurrentTime() int64 { return n.currentTime() }

// ProcessStarted returns process_started, the Unix second the server
// treats as its start (for tests and inspection).
func (n *Node) ProcessStarted() int64 { return n.c.processStarted }

// Used returns the bytes of the stored items (ItemSize each).
func (n *Node) Used() int64 { return n.c.used }

// Len returns the number of items linked (expired ones not yet found
// included).
func (n *Node) Len() int { return len(n.c.items) }

// Keys returns the linked keys, by slab class and in each class from the
// most to the least recently used.
func (n *Node) Keys() []string {
	var out []string
	for i := range n.c.classes {
		for it := n.c.classes[i].head; it != nil; it = it.next {
			out = append(out, it.key)
		}
	}
	return out
}

// Malloced returns the bytes of slab pages handed out (mem_malloced).
func (n *Node) Malloced() int64 { return n.c.malloced }

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// memLimit renders -m: in megabytes, as it is given, or in bytes.
func memLimit(b int64) string {
	if b > 0 && b%(1<<20) == 0 {
		return strconv.FormatInt(b>>20, 10) + " MB"
	}
	return strconv.FormatInt(b, 10) + " bytes"
}
