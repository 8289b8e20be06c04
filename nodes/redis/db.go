package redis

import (
	"math"
	"sort"
	"strconv"

	"github.com/locksim/locksim/sim"
)

// entry is one key of the keyspace: a string or a hash, with an optional
// absolute expiry deadline in Unix milliseconds of the node's wall clock
// (setExpire, R 7.2.4 src/db.c:1649-1665).
type entry struct {
	isHash bool
	str    string
	hash   map[string]string
	hasExp bool
	exp    int64
	// setBy is the client whose command last stored the string on this
	// master, plus one (0: unknown: loaded, replicated, restored), for the
	// history's attribution of a removal by another client (keyloss.go).
	setBy int32

	// Memory account (memory.go): the accounted size (0 until the key is
	// first accounted), the key's index in memState.keys and vkeys (-1
	// when it has no deadline), and its LRU clock (robj.lru).
	size int64
	idx  int
	vidx int
	lru  uint32
}

// keyIsExpired is R 7.2.4 src/db.c:1730-1744: nothing expires while loading;
// otherwise a key is expired iff the frozen command time is strictly later
// than its deadline (a key with deadline T still exists at T).
func (n *Node) keyIsExpired(e *entry) bool {
	return !n.loading && e.hasExp && n.now > e.exp
}

// lookup is lookupKey (R 7.2.4 src/db.c:88-112) with expireIfNeeded
// (db.c:1775-1823): it returns nil for a missing or logically expired key.
// A master deletes an expired key and propagates DEL; a replica never deletes
// (except for writes on a writable replica), treats nothing as expired while
// applying its master's stream, and hides expired keys from other clients.
func (n *Node) lookup(key string, write bool) *entry {
	e := n.entry(key)
	if e == nil {
		return nil
	}
	if !n.keyIsExpired(e) {
		e.lru = n.lruClock() // lookupKey touches the object (db.c:101-111)
		return e
	}
	if n.isReplica() {
		if n.cur.fromMaster {
			return e // the master link sees every key (db.c:1798)
		}
		// Forced deletion only on writable replicas (db.c:101-105).
		// Simplification: a writable replica expires its local keys only
		// here, on write access (no expireSlaveKeys cycle).
		if !(write && !n.cfg.ReplicaReadOnly) {
			return nil
		}
	}
	// NB: DEBUG SET-ACTIVE-EXPIRE 0 disables only the active cycle; lazy
	// expiry still deletes.
	n.deleteExpired(key)
	return nil
}

// deleteExpired is deleteExpiredKeyAndPropagate (R 7.2.4 src/db.c:1680-1727):
// delete the key, and feed DEL to the AOF and the replicas.
func (n *Node) deleteExpired(key string) {
	e := n.db[key]
	n.removeKey(key)
	if !n.quiet {
		// "%q deadline=%d now=%d", rendered with appends.
		b := appendQuote(n.scratch[:0], key)
		b = strconv.AppendInt(append(b, " deadline="...), e.exp, 10)
		b = strconv.AppendInt(append(b, " now="...), n.now, 10)
		n.logBytes(EventKeyExpired, b, sim.Str("key", key), sim.Int64("deadline", e.exp), sim.Int64("now", n.now))
	}
	n.propagate(Cmd{"DEL", key})
	n.stats.expiredKeys++
	// The server removed the key on its own (lazily, found on access, or
	// by the active cycle): a loss for the history, which the checker
	// names when the key was a holder's lock.
	n.env.KeyLost(key, sim.LossExpired, "")
}

// removeKey deletes a key from the keyspace without any logging. The
// deletion counts as a modification for WATCH (signalModifiedKey after
// dbDelete, R 7.2.4 src/db.c:1687).
func (n *Node) removeKey(key string) {
	e := n.entry(key)
	if e == nil {
		return
	}
	n.memForget(key, e)
	if e.hasExp {
		delete(n.volatile, key)
	}
	delete(n.db, key)
	n.forgetMemo()
	n.deadEntries = append(n.deadEntries, e)
	n.touchWatchedKey(key)
}

// newEntry returns a zero entry, reused from a deleted key when one is free
// (the lock keys of a Redlock cycle are set and deleted once per cycle;
// issue 15).
func (n *Node) newEntry() *entry {
	if k := len(n.freeEntries); k > 0 {
		e := n.freeEntries[k-1]
		n.freeEntries = n.freeEntries[:k-1]
		return e
	}
	return &entry{}
}

// recycleEntries makes the entries of the keys deleted during the event
// just handled free for reuse. NB: not at once in removeKey: a command may
// still read the entry it deleted (a value it returns, a key it renames),
// and nothing keeps an *entry from one event to the next.
func (n *Node) recycleEntries() {
	for i, e := range n.deadEntries {
		*e = entry{}
		n.freeEntries = append(n.freeEntries, e)
		n.deadEntries[i] = nil
	}
	n.deadEntries = n.deadEntries[:0]
}

// setString stores a string value (setKey). keepTTL keeps an existing
// deadline (SET KEEPTTL, or SET with an expire that is set right after);
// otherwise any deadline is removed, as a plain SET does.
func (n *Node) setString(key, val string, keepTTL bool) {
	e := n.entry(key)
	if e == nil {
		e = n.newEntry()
		n.db[key] = e
		n.memoKey, n.memoEntry = key, e
	}
	e.isHash, e.hash, e.str = false, nil, val
	n.noteSetter(key, e)
	if !keepTTL && e.hasExp {
		e.hasExp, e.exp = false, 0
		delete(n.volatile, key)
	}
	n.keyModified(key)
}

// entry returns the entry of key in db (nil when there is none), from the
// memo when key was the last one found.
func (n *Node) entry(key string) *entry {
	if n.memoEntry != nil && key == n.memoKey {
		return n.memoEntry
	}
	e := n.db[key]
	if e != nil {
		n.memoKey, n.memoEntry = key, e
	}
	return e
}

// forgetMemo clears entry's memo: db lost or gained a key.
func (n *Node) forgetMemo() { n.memoKey, n.memoEntry = "", nil }

// setExpire gives an existing key an absolute deadline.
func (n *Node) setExpire(key string, when int64) {
	e := n.entry(key)
	e.hasExp, e.exp = true, when
	n.volatile[key] = struct{}{}
	n.noteDeadline(when)
	n.keyModified(key)
}

// logKeySet emits key-set for a string key just stored.
func (n *Node) logKeySet(key string) {
	if n.quiet {
		return
	}
	// KEY (quoted), "hash" or the quoted value, and the deadline, rendered
	// with appends (this runs for every lock taken).
	// Fields: key; value (a string) or hash; deadline (ms on the node's
	// wall clock) when the key has one.
	e := n.entry(key)
	var fields [3]sim.Attr
	fields[0] = sim.Str("key", key)
	b := appendQuote(n.scratch[:0], key)
	if e.isHash {
		b = append(b, " hash"...)
		fields[1] = sim.Int64("hash", 1)
	} else {
		b = appendQuote(append(b, ' '), e.str)
		fields[1] = sim.Str("value", e.str)
	}
	b = append(b, " deadline="...)
	nf := 2
	if e.hasExp {
		b = strconv.AppendInt(b, e.exp, 10)
		fields[2] = sim.Int64("deadline", e.exp)
		nf = 3
	} else {
		b = append(b, "none"...)
	}
	n.logBytes(EventKeySet, b, fields[:nf]...)
}

// sortedKeys returns the keys of the keyspace in order (map order must never
// reach the trace or a message).
func (n *Node) sortedKeys() []string {
	keys := make([]string, 0, len(n.db))
	for k := range n.db {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// snapshot returns every key, including logically expired ones (an RDB save
// writes them all), in key order.
func (n *Node) snapshot() []Entry {
	keys := n.sortedKeys()
	out := make([]Entry, 0, len(keys))
	for _, k := range keys {
		e := n.db[k]
		en := Entry{Key: k, Hash: e.isHash, Str: e.str, HasExpire: e.hasExp, ExpireAt: e.exp}
		if e.isHash {
			names := make([]string, 0, len(e.hash))
			for f := range e.hash {
				names = append(names, f)
			}
			sort.Strings(names)
			en.Fields = make([]Field, len(names))
			for i, f := range names {
				en.Fields[i] = Field{Name: f, Value: e.hash[f]}
			}
		}
		out = append(out, en)
	}
	return out
}

// loadEntry inserts a snapshot entry.
func (n *Node) loadEntry(en Entry) {
	e := &entry{isHash: en.Hash, str: en.Str, hasExp: en.HasExpire, exp: en.ExpireAt}
	if en.Hash {
		e.hash = make(map[string]string, len(en.Fields))
		for _, f := range en.Fields {
			e.hash[f.Name] = f.Value
		}
	}
	n.db[en.Key] = e
	n.forgetMemo()
	if e.hasExp {
		n.volatile[en.Key] = struct{}{}
		n.noteDeadline(e.exp)
	}
	n.memAccount(en.Key)
}

// flushData empties the keyspace; the clients watching a key that existed
// are flagged (touchAllWatchedKeysInDb from emptyData).
func (n *Node) flushData() {
	n.touchAllWatchedKeys()
	n.mem.used, n.mem.keys, n.mem.vkeys, n.mem.pool = 0, nil, nil, nil
	n.db = map[string]*entry{}
	n.forgetMemo()
	n.volatile = map[string]struct{}{}
	n.minDeadline = math.MaxInt64
}

// noteDeadline lowers minDeadline to a deadline just set.
func (n *Node) noteDeadline(when int64) {
	if when < n.minDeadline {
		n.minDeadline = when
	}
}

// mayHaveExpired reports whether a key with a deadline may have expired:
// false when no deadline has passed yet (minDeadline is at most the
// earliest deadline, so this never hides an expired key). It lets the
// active expiry cycle, which runs hz times a second on every node, skip
// its scan of the keys in the usual case.
func (n *Node) mayHaveExpired() bool {
	return len(n.volatile) > 0 && !n.loading && n.now > n.minDeadline
}

// expiredVolatile returns, in order, the keys whose deadline has passed on
// the node's wall clock now.
func (n *Node) expiredVolatile() []string {
	var out []string
	earliest := int64(math.MaxInt64)
	for k := range n.volatile {
		e := n.db[k]
		if e != nil && n.keyIsExpired(e) {
			out = append(out, k)
		} else if e != nil && e.exp < earliest {
			earliest = e.exp
		}
	}
	// Every key left has a deadline of at least earliest: the exact bound
	// (the expired keys are deleted by the caller).
	n.minDeadline = earliest
	sort.Strings(out)
	return out
}
