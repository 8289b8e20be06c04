package reports

import (
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

// laneKeysOf maps what a server's lane draws (record.Lane: its kind
// declares it; the reports draw by lane, never by kind) to its held-key
// drawing. Only looked up, never iterated.
var laneKeysOf = map[record.Lane]laneKeys{
	record.LaneKeyspace: redisLaneKeys,
	record.LaneZnodes:   zkLaneKeys,
	record.LaneItems:    memcachedLaneKeys,
}
