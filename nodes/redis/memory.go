package redis

import (
	"fmt"
	"math"
	"strconv"

	"github.com/locksim/locksim/sim"
)

// maxmemory and eviction (R 7.2.4 src/evict.c; reference section 3).
//
// Memory is accounted per key, approximately: a dictEntry (24 bytes), the
// key object (16) and its sds (length + 4), the value: nothing more for a
// string that is a 64-bit integer (OBJ_ENCODING_INT keeps it in the
// pointer), else its sds (length + 4); for a hash, 8 bytes plus its fields
// and values with 4 bytes each; and 24 bytes more for the expires entry of
// a key with a deadline. Simplification: real used_memory counts every
// allocation (with jemalloc's size classes), client buffers, the
// replication backlog, Lua and the baseline of an empty server, which a
// model cannot match; MaxMemory is therefore compared with the dataset as
// accounted here, and the differential suite compares which kinds of keys
// are evicted and the OOM error, not byte counts.
//
// Scripts: EVAL and EVALSHA are not DENYOOM (R 7.0.15
// src/commands/eval.json: NOSCRIPT, SKIP_MONITOR, MAY_REPLICATE,
// NO_MANDATORY_KEYS, STALE), so processCommand runs them when memory is
// over the limit, but it records whether it was (server.c:3869-3874,
// server.pre_command_oom_state), and the script's first DENYOOM command,
// before any write, is refused with the OOM error (scriptVerifyOOM,
// script.c:401-422, called by scriptCall, script.c:551): Redisson's lock
// and unlock scripts fail at their HINCRBY, a script whose first write is
// DEL or PEXPIRE (not DENYOOM) runs. Simplification: the modelled scripts
// declare no shebang flags (allow-oom, no-writes), so they always run in
// EVAL compatibility mode.

// EvictionPolicy is maxmemory-policy.
type EvictionPolicy string

// The modelled policies (R 7.2.4 src/config.c:53-63). The LFU policies are
// not modelled.
const (
	NoEviction     EvictionPolicy = "noeviction"
	AllKeysLRU     EvictionPolicy = "allkeys-lru"
	VolatileLRU    EvictionPolicy = "volatile-lru"
	VolatileTTL    EvictionPolicy = "volatile-ttl"
	AllKeysRandom  EvictionPolicy = "allkeys-random"
	VolatileRandom EvictionPolicy = "volatile-random"
)

// EventKeyEvicted: a key was evicted to bring memory under maxmemory.
// Text: the key and the policy.
const EventKeyEvicted sim.Kind = "key-evicted"

var (
	// errOOM is shared.oomerr (R 7.2.4 src/server.c:1867-1868).
	errOOM = Err("OOM command not allowed when used memory > 'maxmemory'.")
	// denyOOM lists the modelled commands flagged DENYOOM (R 7.2.4
	// src/commands/*.json): refused when memory is over the limit.
	denyOOM = map[string]bool{"set": true, "setnx": true, "getset": true, "incr": true, "decr": true, "incrby": true,
		"decrby": true, "hset": true, "hincrby": true, "restore": true, "restore-asking": true}
)

const (
	evpoolSize         = 16   // EVPOOL_SIZE (evict.c:54)
	lruClockResolution = 1000 // LRU_CLOCK_RESOLUTION ms (server.h:894)
	lruClockMax        = 1<<24 - 1
	dictEntryBytes     = 24
	robjBytes          = 16
	sdsHeaderBytes     = 4
)

func (c Config) validateMemory() error {
	switch c.MaxMemoryPolicy {
	case NoEviction, AllKeysLRU, VolatileLRU, VolatileTTL, AllKeysRandom, VolatileRandom:
	default:
		return fmt.Errorf("redis config: MaxMemoryPolicy: unknown policy %q (allowed: noeviction, allkeys-lru, volatile-lru, volatile-ttl, allkeys-random, volatile-random; the LFU policies are not modelled)", string(c.MaxMemoryPolicy))
	}
	if c.MaxMemory < 0 {
		return fmt.Errorf("redis config: MaxMemory: %d is negative (allowed: 0 for no limit, or bytes)", c.MaxMemory)
	}
	// maxmemory-samples accepts 1..INT_MAX (config.c:3165).
	if c.MaxMemorySamples < 1 || c.MaxMemorySamples > math.MaxInt32 {
		return fmt.Errorf("redis config: MaxMemorySamples: %d out of range (allowed: 1 or more)", c.MaxMemorySamples)
	}
	return nil
}

// memState is the node's memory account: the bytes of the dataset, the
// keys and the keys with a deadline as slices (for deterministic random
// sampling in place of dictGetSomeKeys and dictGetRandomKey) and the
// eviction pool, which persists between evictions as EvictionPoolLRU does.
type memState struct {
	used    int64
	keys    []string
	vkeys   []string
	pool    []poolEntry // ascending idle; the best candidate last
	evicted int64       // stat_evictedkeys
	// preCommandOOM is server.pre_command_oom_state: memory was over the
	// limit (performEvictions failed) when the current client command
	// started (R 7.0.15 src/server.c:3869-3874).
	preCommandOOM bool
	// detail is the key losses' detail of an eviction, for the setting
	// detailFor and detailPolicy.
	detail       string
	detailFor    int64
	detailPolicy EvictionPolicy
}

type poolEntry struct {
	key  string
	idle uint64
}

// sizeOf is the accounted size of a key (see the comment at the top).
func sizeOf(key string, e *entry) int64 {
	n := int64(dictEntryBytes + robjBytes + len(key) + sdsHeaderBytes)
	if e.isHash {
		n += 8
		for f, v := range e.hash {
			n += int64(len(f) + len(v) + 2*sdsHeaderBytes)
		}
	} else if _, ok := parseLL(e.str); !ok {
		n += int64(len(e.str) + sdsHeaderBytes)
	}
	if e.hasExp {
		n += dictEntryBytes
	}
	return n
}

// lruClock is LRU_CLOCK(): wall-clock seconds in 24 bits (getLRUClock,
// R 7.2.4 src/evict.c:73-75). Simplification: computed from the command's
// time instead of the copy serverCron refreshes.
func (n *Node) lruClock() uint32 {
	return uint32(floorDiv(n.now, lruClockResolution) & lruClockMax)
}

// memAccount brings the account of key up to date after a change: new keys
// join the key slices, the size is re-measured. It runs at every
// signalModifiedKey point (keyModified).
func (n *Node) memAccount(key string) {
	e := n.entry(key)
	if e == nil {
		return
	}
	if e.size == 0 {
		e.idx = len(n.mem.keys)
		n.mem.keys = append(n.mem.keys, key)
		e.vidx = -1
		e.lru = n.lruClock()
	}
	if e.hasExp && e.vidx < 0 {
		e.vidx = len(n.mem.vkeys)
		n.mem.vkeys = append(n.mem.vkeys, key)
	} else if !e.hasExp && e.vidx >= 0 {
		n.dropVolatileIdx(e)
	}
	s := sizeOf(key, e)
	n.mem.used += s - e.size
	e.size = s
}

// memForget removes a key about to be deleted from the account.
func (n *Node) memForget(key string, e *entry) {
	if e.size == 0 {
		return
	}
	n.mem.used -= e.size
	last := len(n.mem.keys) - 1
	if e.idx != last {
		moved := n.mem.keys[last]
		n.mem.keys[e.idx] = moved
		n.db[moved].idx = e.idx
	}
	n.mem.keys = n.mem.keys[:last]
	if e.vidx >= 0 {
		n.dropVolatileIdx(e)
	}
	e.size = 0
}

func (n *Node) dropVolatileIdx(e *entry) {
	last := len(n.mem.vkeys) - 1
	if e.vidx != last {
		moved := n.mem.vkeys[last]
		n.mem.vkeys[e.vidx] = moved
		n.db[moved].vidx = e.vidx
	}
	n.mem.vkeys = n.mem.vkeys[:last]
	e.vidx = -1
}

// keyModified is signalModifiedKey: WATCH and the memory account.
func (n *Node) keyModified(key string) {
	n.memAccount(key)
	n.touchWatchedKey(key)
}

// UsedMemory returns the dataset's accounted bytes (for tests and
// inspection).
func (n *Node) UsedMemory() int64 { return n.mem.used }

// EvictedKeys returns the number of keys evicted since the start.
func (n *Node) EvictedKeys() int64 { return n.mem.evicted }

// performEvictions is R 7.2.4 src/evict.c:538-700, run before every client
// command when maxmemory is set (server.c:3976-3977). It reports false
// (EVICT_FAIL) when memory stays over the limit: the policy is
// noeviction, or no candidate key is left. Replicas do not evict
// (replica-ignore-maxmemory yes, evict.c:486-488). Simplification: there
// is no time limit per call (maxmemory-eviction-tenacity): the model
// evicts until memory is under the limit.
func (n *Node) performEvictions() bool {
	if n.cfg.MaxMemory == 0 || n.mem.used <= n.cfg.MaxMemory || n.isReplica() || n.loading {
		return true
	}
	if n.cfg.MaxMemoryPolicy == NoEviction {
		return false
	}
	for n.mem.used > n.cfg.MaxMemory {
		key, ok := n.evictionCandidate()
		if !ok {
			return false
		}
		n.evictKey(key)
	}
	return true
}

// evictionCandidate chooses the key to evict (evict.c:583-652).
func (n *Node) evictionCandidate() (string, bool) {
	p := n.cfg.MaxMemoryPolicy
	from := n.mem.keys
	if p == VolatileLRU || p == VolatileTTL || p == VolatileRandom {
		from = n.mem.vkeys // db->expires (evict.c:593-596)
	}
	if len(from) == 0 {
		return "", false
	}
	if p == AllKeysRandom || p == VolatileRandom {
		return from[n.env.Rand().Intn(len(from))], true
	}
	for {
		n.poolPopulate(from)
		// Take the best candidate that still exists (evict.c:600-632).
		for k := len(n.mem.pool) - 1; k >= 0; k-- {
			key := n.mem.pool[k].key
			n.mem.pool = append(n.mem.pool[:k], n.mem.pool[k+1:]...)
			if e := n.db[key]; e != nil && (p == AllKeysLRU || e.hasExp) {
				return key, true
			}
		}
	}
}

// poolPopulate is evictionPoolPopulate (evict.c:142-240): sample
// maxmemory-samples distinct keys and insert each into the pool by its
// score (idle time, or ULLONG_MAX minus the deadline for volatile-ttl),
// dropping the worst entry when the pool is full.
func (n *Node) poolPopulate(from []string) {
	for _, key := range n.sampleKeys(from) {
		e := n.db[key]
		var idle uint64
		if n.cfg.MaxMemoryPolicy == VolatileTTL {
			idle = math.MaxUint64 - uint64(e.exp)
		} else {
			idle = n.idleTime(e)
		}
		pool := n.mem.pool
		k := 0
		for k < len(pool) && pool[k].idle < idle {
			k++
		}
		if k == 0 && len(pool) == evpoolSize {
			continue // worse than every entry of a full pool
		}
		entry := poolEntry{key: key, idle: idle}
		if len(pool) < evpoolSize {
			pool = append(pool, poolEntry{})
			copy(pool[k+1:], pool[k:])
			pool[k] = entry
		} else {
			// Full: drop the entry with the smallest idle, insert at k-1.
			copy(pool[:k-1], pool[1:k])
			pool[k-1] = entry
		}
		n.mem.pool = pool
	}
}

// idleTime is estimateObjectIdleTime (evict.c:92-100).
func (n *Node) idleTime(e *entry) uint64 {
	now := uint64(n.lruClock())
	lru := uint64(e.lru)
	if now >= lru {
		return (now - lru) * lruClockResolution
	}
	return (now + (lruClockMax - lru)) * lruClockResolution
}

// sampleKeys stands in for dictGetSomeKeys: every key when there are at
// most maxmemory-samples, else that many distinct keys drawn from the
// node's random stream. Simplification: dictGetSomeKeys returns keys of
// neighbouring hash buckets from a random start, not a uniform sample.
func (n *Node) sampleKeys(from []string) []string {
	count := n.cfg.MaxMemorySamples
	if len(from) <= count {
		return append([]string(nil), from...)
	}
	out := make([]string, 0, count)
	seen := make(map[int]bool, count)
	r := n.env.Rand()
	for len(out) < count {
		i := r.Intn(len(from))
		if seen[i] {
			continue
		}
		seen[i] = true
		out = append(out, from[i])
	}
	return out
}

// evictKey deletes a key as performEvictions does (evict.c:655-690): the
// deletion counts as a modification (WATCH), fires "evicted" and is
// propagated as DEL to replicas and the AOF in its own execution unit.
func (n *Node) evictKey(key string) {
	n.removeKey(key)
	n.mem.evicted++
	if !n.quiet {
		b := appendQuote(n.scratch[:0], key)
		b = append(append(b, " policy="...), n.cfg.MaxMemoryPolicy...)
		n.logBytes(EventKeyEvicted, b, sim.Str("key", key), sim.Str("policy", string(n.cfg.MaxMemoryPolicy)))
	}
	n.propagate(Cmd{"DEL", key})
	// performEvictions deletes the key the policy chose (R 7.2.4
	// src/evict.c:538-700: dbGenericDelete with DB_FLAG_KEY_EVICTED, then
	// stat_evictedkeys++): a loss for the history, with the limit and the
	// policy that chose it.
	if m := &n.mem; m.detailFor != n.cfg.MaxMemory || m.detailPolicy != n.cfg.MaxMemoryPolicy || m.detail == "" {
		// Rendered once per setting: a cache workload evicts on every write.
		m.detailFor, m.detailPolicy = n.cfg.MaxMemory, n.cfg.MaxMemoryPolicy
		m.detail = "maxmemory " + strconv.FormatInt(n.cfg.MaxMemory, 10) + " bytes, policy " + string(n.cfg.MaxMemoryPolicy)
	}
	n.env.KeyLost(key, sim.LossEvicted, n.mem.detail)
	n.endUnit(sim.NoProc)
}
