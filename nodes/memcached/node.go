package memcached

import (
	"math"
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
	// reclaimed at an LRU tail by an allocation or the LRU maintainer).
	KindItemExpired sim.Kind = "item-expired"
	// KindItemEvicted: a live item was evicted from the COLD LRU's tail to
	// make room for a new one.
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
	// The LRU maintainer's timer: the monotonic instant of its next run,
	// its pending timer, and whether it is parked (idle, see
	// armMaintainer).
	nextWake   int64
	maintTimer sim.TimerID
	parked     bool
	buf        []byte
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
	// The LRU maintainer thread starts with the server and first sleeps
	// MIN_LRU_MAINTAINER_SLEEP (memcached.c:6073-6075; items.c:1549).
	n.c.maint.toSleep = minMaintainerSleep
	n.nextWake = n.monoInit + wakeAfter(minMaintainerSleep)
	n.armMaintainer()
	n.recordRestartLosses(env)
}

// witnessedItem is an item a crashed server held, with the monotonic
// instant (ns) its exptime would have passed (0: never).
type witnessedItem struct {
	key      string
	deadline int64
}

// WitnessCrash is sim.CrashWitness: the items held at the crash, in LRU
// order, for the next incarnation's history records. It only reads.
func (n *Node) WitnessCrash() any {
	if n.c == nil {
		return nil
	}
	mono := n.env.Mono()
	var out []witnessedItem
	for i := range n.c.classes {
		for l := range n.c.classes[i].lru {
			for it := n.c.classes[i].lru[l].head; it != nil; it = it.next {
				if n.c.expired(it) {
					continue
				}
				w := witnessedItem{key: it.key}
				if it.exptime != 0 {
					w.deadline = mono + (it.exptime-n.c.now)*int64(time.Second)
				}
				out = append(out, w)
			}
		}
	}
	return out
}

// recordRestartLosses records the loss of every item the crashed instance
// held and that had not expired by now: memcached keeps nothing across a
// restart (the history's sim.LossRestart, for the checker's explanations).
func (n *Node) recordRestartLosses(env *sim.Env) {
	memo, mode, ok := env.WitnessedCrash()
	if !ok {
		return
	}
	items, _ := memo.([]witnessedItem)
	mono := env.Mono()
	for _, w := range items {
		if w.deadline != 0 && w.deadline <= mono {
			continue
		}
		env.KeyLost(w.key, sim.LossRestart, mode.String()+" crash; memcached keeps items in memory only")
	}
}

// timerTag tags the node's timers.
type timerTag string

// tagMaintainer is the LRU maintainer thread's wake-up (its usleep).
const tagMaintainer timerTag = "lru-maintainer"

// armMaintainer sets the timer of the maintainer's next run, nextWake.
//
// An idle maintainer (cache.maintainer.idle) wakes every
// MAX_LRU_MAINTAINER_SLEEP and does nothing until a command changes the
// cache or the clock reaches cache.idleUntil. The node skips those runs
// (parks): its timer is set for the first run at or after the instant the
// clock can matter, none if it never can; that run, or a command (Do),
// first steps the maintainer's waits and backoffs over the runs it skipped
// (maintainer.skipIdle). The runs skipped would have changed nothing else,
// so the result is the same as waking every second, and an idle server
// costs a few timer events instead of one a second.
func (n *Node) armMaintainer() {
	n.parked = false
	at := n.nextWake
	if n.c.maint.idle && parkIdle {
		n.parked = true
		until := n.c.idleUntil()
		if until == math.MaxInt64 {
			n.maintTimer = sim.TimerID{}
			return
		}
		// current_time reaches until at monoInit + (until - the
		// current_time of the start) seconds (currentTime).
		clockAt := n.monoInit + (until-(floorDiv(n.monoInit, int64(time.Second))-n.monoStart))*int64(time.Second)
		m := n.c.maint
		m.skipIdle(&at, clockAt)
	}
	n.maintTimer = n.env.SetTimer(sim.Mono, at, tagMaintainer)
}

// parkIdle is true but in the test that compares parking with waking
// every second.
var parkIdle = true

// unpark brings a parked maintainer up to now after a command: the runs
// before now are stepped over, and the timer is set for the next one.
func (n *Node) unpark() {
	if !n.parked {
		return
	}
	n.env.Cancel(n.maintTimer) // a zero TimerID cancels nothing
	n.c.maint.skipIdle(&n.nextWake, n.env.Mono())
	n.parked = false
	n.maintTimer = n.env.SetTimer(sim.Mono, n.nextWake, tagMaintainer)
}

// currentTime is memcached's current_time: clock_handler ticks once a
// second from start-up and sets it to the monotonic second minus
// monotonic_start (memcached.c:3925-3991), so it advances in whole
// seconds, at instants one second apart from the start.
func (n *Node) currentTime() int64 {
	ticks := floorDiv(n.env.Mono()-n.monoInit, int64(time.Second))
	return floorDiv(n.monoInit+ticks*int64(time.Second), int64(time.Second)) - n.monoStart
}

// Fire runs the LRU maintainer thread when its sleep ends (items.c:1570-1624):
// it juggles the segmented LRU of the classes that are due, reclaiming
// expired items at the tails and moving items between HOT, WARM and COLD,
// and processes the queued bumps.
func (n *Node) Fire(env *sim.Env, tag any) {
	if tag != tagMaintainer {
		return
	}
	now := n.env.Mono()
	if n.parked {
		n.c.maint.skipIdle(&n.nextWake, now)
	}
	n.c.now = n.currentTime()
	sleep := n.c.maintain()
	n.flushEvents()
	n.nextWake = now + wakeAfter(sleep)
	n.armMaintainer()
}

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
	n.unpark()
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
		// The key and value as typed fields, for the reports' item lane
		// (record.LaneItems), built only when the event is kept.
		if kind := eventKinds[e.kind]; !n.env.TraceKeeps(kind) {
			n.env.LogBytes(kind, b)
		} else if e.kind == evStored {
			n.env.LogBytesAttrs(kind, b, sim.Str("key", e.it.key), sim.Str("value", e.it.value))
		} else {
			n.env.LogBytesAttrs(kind, b, sim.Str("key", e.it.key))
		}
		n.buf = b
		// An item unlinked because its exptime passed (do_item_get,
		// items.c:992, or an LRU tail, items.c:1130) or evicted from the
		// tail of its class's COLD LRU (lru_pull_tail, items.c:1072-1253):
		// the server's own removal, a loss for the history.
		switch e.kind {
		case evExpired:
			n.env.KeyLost(e.it.key, sim.LossExpired, "")
		case evEvicted:
			if n.evictDetail == "" {
				n.evictDetail = "memory limit " + memLimit(n.cfg.MaxBytes) + ", COLD LRU tail"
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

// Keys returns the linked keys, by slab class, in each class HOT, WARM
// then COLD, each from its head to its tail.
func (n *Node) Keys() []string {
	var out []string
	for i := range n.c.classes {
		for l := range n.c.classes[i].lru {
			for it := n.c.classes[i].lru[l].head; it != nil; it = it.next {
				out = append(out, it.key)
			}
		}
	}
	return out
}

// LRUKeys returns the keys of one LRU (0 HOT, 1 WARM, 2 COLD) of a slab
// class, from its head to its tail (for tests and inspection).
func (n *Node) LRUKeys(cls, lru int) []string {
	var out []string
	for it := n.c.classes[cls].lru[lru].head; it != nil; it = it.next {
		out = append(out, it.key)
	}
	return out
}

// ClassOf returns the slab class of the item a store of key with flags
// and a value of valueLen bytes would make.
func (n *Node) ClassOf(key string, flags uint32, valueLen int) int {
	cls, _ := n.c.classFor(n.cfg.ItemSize(key, flags, valueLen))
	return cls
}

// ItemStats returns a slab class's "stats items" counters (items:N:...).
func (n *Node) ItemStats(cls int) ItemStats { return n.c.classStats(cls) }

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
