package reports

import (
	"strings"

	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/sim"
)

// laneKeys is a server kind's part of the timeline: how the lock keys its
// lane holds are drawn from the typed fields of its own trace events. The
// builder looks it up by what the lane draws (record.Lane, which the
// process kind declares for its processes), so a node kind whose keys the
// timeline should draw names a lane with an entry here and its handler; a
// kind of LanePlain gets a lane with its faults, pauses and downtime but
// no held keys.
type laneKeys struct {
	// init sets up the lane's state.
	init func(b *builder, s Server)
	// event handles one of the server's own events, of any kind the
	// builder's own switch does not take (it picks its kinds).
	event func(b *builder, e sim.Event)
	// crash ends what a crash of the server loses (mode: process, power
	// or clean).
	crash func(b *builder, e sim.Event, mode string)
}

// redisLaneKeys: a Redis master's or replica's keys, with what its RDB and
// AOF would restore (redisEvent).
var redisLaneKeys = laneKeys{
	init: func(b *builder, s Server) {
		b.redis[s.Name] = &redisState{db: map[string]*keyRec{}, aofWritten: map[string]*keyRec{}, aofSynced: map[string]*keyRec{}, rdb: map[string]*keyRec{}, aof: s.AOF}
	},
	event: func(b *builder, e sim.Event) {
		switch e.Kind {
		case "key-set", "key-del", "key-evicted", "key-expired", "loaded", "aof-write", "aof-fsync", "rdb-save", "replica-sync", "promoted":
			b.redisEvent(e)
		}
	},
	crash: func(b *builder, e sim.Event, mode string) { b.redisCrash(e, mode) },
}

// zkLaneKeys: the ZooKeeper service's lock znodes (zkEvent).
var zkLaneKeys = laneKeys{
	init: func(b *builder, s Server) { b.znodes[s.Name] = map[string]*znode{} },
	event: func(b *builder, e sim.Event) {
		switch e.Kind {
		case "znode-created", "znode-deleted", "lock-delay", "session-open", "session-expired":
			b.zkEvent(e)
		}
	},
	crash: func(b *builder, e sim.Event, _ string) { b.zkCrash(e) },
}

// memcachedLaneKeys: a memcached server's lock items (itemEvent). The
// item-expired event comes when the server unlinks the item (found on
// access or by the LRU crawler/maintainer), which may be after its
// exptime passed: the bar ends at the unlink (a simplification; the item
// was already invisible to gets from its exptime).
var memcachedLaneKeys = laneKeys{
	init: func(b *builder, s Server) { b.redis[s.Name] = &redisState{db: map[string]*keyRec{}} },
	event: func(b *builder, e sim.Event) {
		switch e.Kind {
		case "item-stored", "item-deleted", "item-expired", "item-evicted", "item-flushed":
			b.itemEvent(e)
		}
	},
	// memcached keeps its items in memory only: a restart starts empty.
	crash: func(b *builder, e sim.Event, _ string) {
		if r := b.redis[e.Proc]; r != nil {
			for _, k := range sortedKeys(r.db) {
				b.endHeld(e.Proc, k, e.At)
			}
		}
	},
}

// itemEvent follows one lock item of a memcached server from the typed
// key and value fields of its item events.
func (b *builder) itemEvent(e sim.Event) {
	r := b.redis[e.Proc]
	key, ok := e.Fields.String("key")
	if r == nil || !ok || !b.keys[key] {
		return
	}
	if r.db[key] != nil {
		b.endHeld(e.Proc, key, e.At)
	}
	if e.Kind == "item-stored" {
		value, _ := e.Fields.String("value")
		b.startHeld(e.Proc, key, &keyRec{holder: b.holderOf(e.Proc, key, value), start: e.At}, "")
	}
}

// mysqlLaneKeys: the row locks a MySQL server has granted on lock rows
// (rowEvent): from mysql-row-locked to the mysql-lock-released of the same
// transaction, which comes at its commit or rollback, a KILL, the end of
// its connection (wait_timeout, a client that hung up) or a deadlock.
// Only exclusive record locks are drawn (SELECT ... FOR UPDATE, an
// INSERT's or DELETE's lock): the shared lock of an INSERT's duplicate
// check and gap locks hold nobody out of the lock. A committed lock row
// whose value names a client (mysql-insert's: the row is the lock) is
// drawn while it exists (committedRows); a crash ends it, the recovery
// draws it again "(from disk)".
var mysqlLaneKeys = laneKeys{
	init: func(b *builder, s Server) { b.redis[s.Name] = &redisState{db: map[string]*keyRec{}} },
	event: func(b *builder, e sim.Event) {
		switch e.Kind {
		case "mysql-row-locked", "mysql-lock-released", "mysql-conn-closed":
			b.rowEvent(e)
		case "mysql-commit", "mysql-recovered", "mysql-repl-applied":
			b.committedRows(e)
		}
	},
	// InnoDB's locks live in memory: a crash releases them all.
	crash: func(b *builder, e sim.Event, _ string) {
		if r := b.redis[e.Proc]; r != nil {
			for _, k := range sortedKeys(r.db) {
				b.endHeld(e.Proc, k, e.At)
			}
		}
	},
}

// rowEvent follows the row locks on lock rows of a MySQL server from the
// typed fields of its events (nodes/mysql logLock and release).
func (b *builder) rowEvent(e sim.Event) {
	r := b.redis[e.Proc]
	if e.Kind == "mysql-conn-closed" {
		b.connClosed(e)
		return
	}
	trx, ok := e.Fields.Int("trx")
	if r == nil || !ok {
		return
	}
	if e.Kind == "mysql-lock-released" {
		for _, k := range sortedKeys(r.db) {
			if r.db[k].trx != trx || r.db[k].row {
				continue
			}
			// A lock released at the instant it was granted (an
			// autocommit INSERT's, creating the lock row) held nobody
			// out: no bar, whose label would only clutter the lane.
			if at, ok := b.held[e.Proc+"\x00"+k]; ok && r.db[k].start == e.At {
				if b.dropped == nil {
					b.dropped = map[string][]int{}
				}
				b.dropped[e.Proc] = append(b.dropped[e.Proc], at)
			}
			b.endHeld(e.Proc, k, e.At)
		}
		return
	}
	key, _ := e.Fields.String("key")
	mode, _ := e.Fields.String("mode")
	if !b.keys[key] || mode != "X" || r.db[key] != nil {
		return
	}
	holder, _ := e.Fields.String("holder")
	if !b.isClient[holder] {
		holder = "?"
	}
	b.startHeld(e.Proc, key, &keyRec{holder: holder, start: e.At, trx: trx}, "")
}

// committedRows follows the committed lock rows whose value names a
// client (mysql-insert's lock row, "c1:<hex>"; mysql-for-update's row has
// no value and is not drawn: its row lock is) from the typed rows field of
// a commit, a recovery or a replicated commit (nodes/mysql logRows): a bar
// while the row exists, "(from disk)" after a recovery.
func (b *builder) committedRows(e sim.Event) {
	r := b.redis[e.Proc]
	rows, ok := e.Fields.GroupsOf("rows")
	if r == nil || !ok {
		return
	}
	suffix := ""
	if e.Kind == "mysql-recovered" {
		suffix = " (from disk)"
	}
	listed := map[string]bool{}
	for _, row := range rows {
		if len(row) != 4 || !b.keys[row[1]] {
			continue
		}
		key, k := row[1], "row\x00"+row[1]
		holder, _, _ := strings.Cut(row[2], ":")
		if row[3] != "1" || !b.isClient[holder] {
			if r.db[k] != nil {
				b.endHeld(e.Proc, k, e.At)
			}
			continue
		}
		listed[k] = true
		if old := r.db[k]; old != nil {
			if old.holder == holder {
				continue
			}
			b.endHeld(e.Proc, k, e.At)
		}
		label := holder + suffix
		if len(b.run.Setup.LockKeys) > 1 {
			label = key + ": " + label
		}
		b.startHeld(e.Proc, k, &keyRec{holder: holder, start: e.At, row: true}, label)
	}
	if e.Fields.Has("snapshot") {
		// A full copy: a lock row it does not list is gone.
		for _, k := range sortedKeys(r.db) {
			if r.db[k].row && !listed[k] {
				b.endHeld(e.Proc, k, e.At)
			}
		}
	}
}

// connClosed marks a connection the server closed on its own
// (wait_timeout, KILL) when that ended a row lock drawn on the lane: the
// rollback released it at this instant.
func (b *builder) connClosed(e sim.Event) {
	holder, ok := e.Fields.String("holder")
	reason, _ := e.Fields.String("reason")
	l := b.lanes[e.Proc]
	if !ok || l == nil {
		return
	}
	for i := len(l.Spans) - 1; i >= 0; i-- {
		if s := l.Spans[i]; s.Kind == SpanHeld && s.Owner == holder && s.End == e.At {
			b.mark(e.Proc, Mark{Kind: MarkSessionExpired, At: e.At, Label: holder + "'s connection closed (" + reason + ")", Owner: holder})
			return
		}
	}
}

// laneKeysOf maps what a server's lane draws (record.Lane: its kind
// declares it; the reports draw by lane, never by kind) to its held-key
// drawing. Only looked up, never iterated.
var laneKeysOf = map[record.Lane]laneKeys{
	record.LaneKeyspace: redisLaneKeys,
	record.LaneZnodes:   zkLaneKeys,
	record.LaneItems:    memcachedLaneKeys,
	record.LaneRows:     mysqlLaneKeys,
}
