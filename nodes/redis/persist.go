package redis

import (
	"strconv"
	"strings"

	"github.com/locksim/locksim/sim"
)

// Files on the node's disk (sim.Disk). Their records are the values below;
// the kernel's disk model decides which of them survive a crash: a process
// crash keeps the page cache, a power loss keeps only fsynced records (or
// records the OS wrote back after sim.Writeback).
const (
	fileAOF  = "appendonly.aof"
	fileRDB  = "dump.rdb"
	fileConf = "redis.conf"
)

// aofRecord is one write(2) to the AOF: an execution unit of commands, or a
// rewrite's base snapshot.
type aofRecord struct {
	HasBase bool
	Base    []Entry
	Cmds    []Cmd
}

// rdbRecord is an RDB file: a snapshot with every key and its absolute
// deadline (rdbSaveMillisecondTime, R 7.2.4 src/rdb.c:1130-1132).
type rdbRecord struct {
	SavedMs int64
	Entries []Entry
}

// roleRecord is what CONFIG REWRITE persists of the role.
type roleRecord struct {
	ReplicaOf string
}

// ---- AOF ----

// feedAOF writes an execution unit to the AOF before the reply is sent
// (flushAppendOnlyFile from beforeSleep, R 7.2.4 src/server.c:1718-1738):
// always fsyncs at once, everysec when the wall-clock gate allows, no
// leaves it to the OS. Simplification: each command is written on its own
// (no batching per event-loop iteration) and the everysec fsync is
// instantaneous, so the 2 s write postponement behind a slow fsync
// (R src/aof.c:1098-1115) never happens.
func (n *Node) feedAOF(cmds []Cmd) {
	if !n.cfg.AppendOnly || n.loading {
		return
	}
	f := n.env.Disk().File(fileAOF)
	f.Append(n.carveRecord(cmds))
	if !n.quiet {
		b := n.scratch[:0]
		for i, c := range cmds {
			if i > 0 {
				b = append(b, " | "...)
			}
			b = appendCmd(b, c)
		}
		// Fields: cmds, each command's words (built only when the trace
		// is kept).
		if n.env.TraceKeeps(EventAOFWrite) {
			cmdList := make([][]string, len(cmds))
			for i, c := range cmds {
				cmdList[i] = c
			}
			n.env.LogBytesAttrs(EventAOFWrite, b, sim.Groups("cmds", cmdList))
		} else {
			n.env.LogBytes(EventAOFWrite, b)
		}
		n.scratch = b[:0]
	}
	switch n.cfg.AppendFsync {
	case FsyncAlways:
		n.fsyncAOF("always")
	case FsyncEverysec:
		n.everysecFsync()
	}
}

// fsyncAOF makes the AOF durable.
func (n *Node) fsyncAOF(why string) {
	f := n.env.Disk().File(fileAOF)
	n.lastFsync = n.wallSec()
	if f.Synced() >= f.Len() {
		return
	}
	f.Sync()
	if n.quiet {
		return
	}
	// "%s records=%d", rendered with appends (every write with
	// appendfsync always).
	b := strconv.AppendInt(append(append(n.scratch[:0], why...), " records="...), int64(f.Len()), 10)
	n.logBytes(EventAOFFsync, b, sim.Str("why", why), sim.Int64("records", int64(f.Len())))
}

// everysecFsync issues the background fsync when the wall clock has entered
// a later whole second than the last fsync: server.unixtime >
// server.aof_last_fsync, both in seconds (R 7.0.15 src/aof.c:1075-1077 and
// :1255-1261; 7.2.4 is the same). A write just before a second boundary is
// thus fsynced within milliseconds, one just after it up to a second later,
// and a backward wall-clock jump delays it. Redis 7.4 changed the test to
// server.mstime - server.aof_last_fsync >= 1000 (7.4.0 src/aof.c:1058,
// PR #13041); the model follows 7.0.15, the version its twin runs check it
// against (realmode, the Debian/Ubuntu package).
func (n *Node) everysecFsync() {
	if !n.cfg.AppendOnly || n.cfg.AppendFsync != FsyncEverysec {
		return
	}
	f := n.env.Disk().File(fileAOF)
	if f.Synced() >= f.Len() {
		return
	}
	if n.wallSec() > n.lastFsync {
		n.fsyncAOF("everysec")
	}
}

// ---- RDB ----

// checkSavePoints is the save-point check of serverCron (R 7.2.4
// src/server.c:1397-1416): dirty >= changes and unixtime - lastsave >
// seconds, on the wall clock, so a forward jump saves early and a backward
// jump delays saves. Simplification: BGSAVE is modelled as an instantaneous
// snapshot, written and fsynced at once (rdbSave writes a temporary file,
// fsyncs and renames it).
func (n *Node) checkSavePoints() {
	now := n.wallSec()
	for _, sp := range n.cfg.Save {
		if n.dirty >= sp.Changes && now-n.lastSave > sp.Seconds {
			n.rdbSave("save point")
			return
		}
	}
}

// rdbSave writes a snapshot of every key (expired ones included) and resets
// the change counter.
func (n *Node) rdbSave(why string) {
	keys := n.snapshot()
	n.env.Disk().File(fileRDB).Replace([]any{rdbRecord{SavedMs: n.env.WallMs(), Entries: keys}})
	n.dirty = 0
	n.lastSave = n.wallSec()
	n.logfAttrs(EventRDBSave, []sim.Attr{sim.Str("why", why), sim.Int64("keys", int64(len(keys)))}, "%s keys=%d", why, len(keys))
}

// persistSnapshot stores the snapshot a replica received in a full sync:
// it becomes the replica's dump.rdb (the transfer file is fsynced and
// renamed over it), and with the AOF on, a new AOF base (restartAOFAfterSYNC
// rewrites it; modelled as instantaneous).
func (n *Node) persistSnapshot(why string) {
	keys := n.snapshot()
	n.env.Disk().File(fileRDB).Replace([]any{rdbRecord{SavedMs: n.env.WallMs(), Entries: keys}})
	n.logfAttrs(EventRDBSave, []sim.Attr{sim.Str("why", why), sim.Int64("keys", int64(len(keys)))}, "%s keys=%d", why, len(keys))
	if n.cfg.AppendOnly {
		n.env.Disk().File(fileAOF).Replace([]any{aofRecord{HasBase: true, Base: keys}})
		n.lastFsync = n.wallSec()
		n.logfAttrs(EventAOFFsync, []sim.Attr{sim.Str("why", why), sim.Int64("rewritten", 1), sim.Int64("keys", int64(len(keys)))}, "%s: rewritten base keys=%d", why, len(keys))
	}
}

// ---- loading ----

// load recovers the keyspace at start (loadDataFromDisk): the AOF alone
// when appendonly is on, otherwise the RDB file. A master drops keys whose
// deadline passed on its wall clock: the RDB loader skips them
// (R 7.2.4 src/rdb.c:3264-3282); the AOF loader loads them and they vanish
// at the first access or expiry cycle, which the model does right after
// loading, propagating DEL. A replica loads every key (it waits for its
// master's DEL, and its full sync replaces the data anyway).
func (n *Node) load() {
	n.loading, n.quiet = true, true
	n.cur = execCtx{client: -1}
	source := "none"
	var dropped int64
	now := n.env.WallMs()
	if n.cfg.AppendOnly {
		recs := n.env.Disk().File(fileAOF).Records()
		if len(recs) > 0 {
			source = "aof"
		}
		for _, r := range recs {
			var rec aofRecord
			switch r := r.(type) {
			case *aofRecord: // a write (feedAOF)
				rec = *r
			case aofRecord: // a rewrite's base
				rec = r
			}
			if rec.HasBase {
				n.flushData()
				for _, e := range rec.Base {
					n.loadEntry(e)
				}
			}
			for _, c := range rec.Cmds {
				n.replayAOF(c)
			}
		}
	} else if recs := n.env.Disk().File(fileRDB).Records(); len(recs) > 0 {
		source = "rdb"
		rec := recs[len(recs)-1].(rdbRecord)
		for _, e := range rec.Entries {
			if !n.isReplica() && e.HasExpire && e.ExpireAt < now {
				dropped++
				continue
			}
			n.loadEntry(e)
		}
	}
	n.loading, n.quiet = false, false
	n.loadedFrom = source
	n.prop, n.propDropped = nil, false
	n.now = now
	if !n.isReplica() && n.cfg.AppendOnly {
		for _, k := range n.expiredVolatile() {
			n.deleteExpired(k)
			n.endUnit(-1)
			dropped++
		}
	}
	n.stats.loadKeysLoaded = int64(len(n.db))
	n.stats.loadKeysExpired = dropped
	n.env.LogfAttrs(EventLoaded, []sim.Attr{sim.Str("source", source), sim.Int64("keys", int64(len(n.db))), sim.Int64("expired", dropped), sim.Int64("wall", now)},
		"source=%s keys=%d expired=%d wall=%d", source, len(n.db), dropped, now)
}

// replayAOF applies one AOF command while loading (the fake AOF client obeys
// like the master link: no READONLY check, nothing expires).
func (n *Node) replayAOF(c Cmd) {
	switch strings.ToLower(c[0]) {
	case "multi", "exec", "select", "ping":
		return
	}
	if spec, errv := resolve(c); errv == nil {
		spec.run(n, c)
	}
}

// loadRole reads the role CONFIG REWRITE persisted.
func (n *Node) loadRole() (roleRecord, bool) {
	recs := n.env.Disk().File(fileConf).Records()
	if len(recs) == 0 {
		return roleRecord{}, false
	}
	return recs[len(recs)-1].(roleRecord), true
}

// cmdConfigRewrite persists the current role, as Sentinel's CONFIG REWRITE
// after REPLICAOF does; a restart then keeps the role instead of
// Config.ReplicaOf. Simplification: only the role is persisted.
func cmdConfigRewrite(n *Node, a []string) Value {
	n.env.Disk().File(fileConf).Replace([]any{roleRecord{ReplicaOf: n.masterName}})
	return OK()
}
