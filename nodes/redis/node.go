package redis

import (
	"strings"
	"time"

	"github.com/locksim/locksim/nodes/redis/resp"
	"github.com/locksim/locksim/sim"
)

// Trace event kinds a node emits with env.Log. Fault triggers match them
// together with the node's name (SCENARIO_FORMAT.md, "Triggers").
const (
	// EventKeySet: a key was stored (SET, a script's SET, HINCRBY or HSET
	// creating a hash), on a master or on a replica applying its master's
	// stream. Text: the key, the value and the absolute deadline.
	EventKeySet sim.Kind = "key-set"
	// EventKeyDel: a key was deleted by a command (DEL, a script's DEL, an
	// EXPIRE whose deadline is already past, or the master's DEL applied by
	// a replica).
	EventKeyDel sim.Kind = "key-del"
	// EventKeyExpired: a master deleted a key whose deadline passed (lazily on
	// access, by the active expiry cycle, or after loading).
	EventKeyExpired sim.Kind = "key-expired"
	// EventAOFWrite: commands were written to the AOF (page cache).
	EventAOFWrite sim.Kind = "aof-write"
	// EventAOFFsync: the AOF was fsynced.
	EventAOFFsync sim.Kind = "aof-fsync"
	// EventRDBSave: an RDB snapshot was written and fsynced.
	EventRDBSave sim.Kind = "rdb-save"
	// EventLoaded: a (re)started node loaded its data from disk.
	EventLoaded sim.Kind = "loaded"
	// EventPromoted: a replica became a master (REPLICAOF NO ONE).
	EventPromoted sim.Kind = "promoted"
	// EventReplicaSync: a replica finished a full synchronisation with its
	// master (its data was replaced by the master's).
	EventReplicaSync sim.Kind = "replica-sync"
	// EventReplicaLink: the replica's link with its master ended.
	EventReplicaLink sim.Kind = "replica-link"
)

// ListenPort is the port every simulated node reports (INFO, ROLE): the
// default port 6379 (R 7.2.4 src/config.c:3150). Nodes are told apart by
// their process names, which play the role of host names.
const ListenPort = 6379

// Node is one simulated Redis server. It is a sim.Process; build it with New.
type Node struct {
	cfg Config
	env *sim.Env

	// Keyspace (one database: db 0).
	db map[string]*entry
	// memoKey and memoEntry remember the last key found in db (entry):
	// one command looks its key up several times (SET: store, account,
	// deadline, account, trace), and a string hash each time was about 3%
	// of a Redlock cycle. Cleared whenever db loses or gains a key.
	memoKey   string
	memoEntry *entry
	volatile  map[string]struct{} // keys with a deadline (db->expires)

	loading bool    // while loading from disk: nothing expires
	quiet   bool    // suppress per-key trace events (loading)
	now     int64   // commandTimeSnapshot(): frozen Unix ms
	cur     execCtx // the command being executed
	prop    []Cmd   // commands propagated by the current execution unit
	// propDropped: the current unit propagated commands that nothing would
	// keep (see keepsProp), so they were not built.
	propDropped bool
	callArgv    []string // reused argv of a script's redis.call (scriptArgv)
	// Slabs that what the AOF and the replication backlog keep is carved
	// from (slab.go): the words of built commands, the units' command
	// lists and the AOF's records.
	wordSlab     []string
	unitSlab     []Cmd
	recSlab      []aofRecord
	byteSlab     []byte
	dirty        int64 // server.dirty: changes since the last RDB save
	activeExpire bool  // DEBUG SET-ACTIVE-EXPIRE

	// Replication identity (server.replid, replid2, master_repl_offset).
	runID        string
	replID       string
	replID2      string
	offset       int64
	secondOffset int64

	// Replica side: master address and link state.
	masterName string
	masterPort int64
	masterID   sim.ProcID
	link       linkState
	session    uint64
	answered   bool  // a FullSync for session arrived (maybe still delayed)
	syncSent   int64 // wall seconds the PSYNC of session was sent (or the master's last presync newline); -1: not yet
	// booting: the replica was started with the run (incarnation 0) and
	// has not synced yet, so its PSYNCs ask to be served at once
	// (SyncRequest.Boot).
	booting bool
	// presyncSession is the session whose PSYNC the master answered with
	// a presync newline (it waits for its full sync: ROLE "handshake").
	presyncSession uint64
	lastIO         int64 // wall seconds of the last message from the master
	downSince      int64 // wall seconds the link went down; 0 if never up
	queue          []queued
	queueArmed     bool
	queueLast      int64 // mono ns of the last queued item's apply time

	// Master side.
	backlog         bool     // a replication backlog exists (repl_backlog != NULL)
	blUnits         []Stream // the backlog's content, whole execution units, oldest first
	blFirst         int64    // offset of the backlog's first byte, minus 1 (the offset before it)
	blLen           int64    // bytes held (histlen)
	noReplicasSince int64    // repl_no_slaves_since, wall seconds
	replicas        []*replicaLink
	goodReplicas    int
	woff            map[sim.ProcID]int64
	waiters         []*waiter

	// Persistence.
	lastSave  int64 // server.lastsave, wall seconds
	lastFsync int64 // server.aof_last_fsync, wall seconds (7.0.15 semantics)

	cronLoops int64
	// selected is false while server.slaveseldb is -1: the next command
	// fed to the replication stream is preceded by SELECT 0 (R 7.2.4
	// src/replication.c:470-491; -1 at start, server.c:2590, when a full
	// sync is set up, replication.c:720, and on promotion,
	// replication.c:3088).
	selected  bool
	startMono int64
	scripts   map[string]bool // the script cache: loaded SHAs
	// evalMemo is the script the last EVALSHA ran, its SHA in scripts
	// (which only grows until Init or SCRIPT FLUSH reset both): the next
	// EVALSHA of the same SHA skips the two map look-ups.
	evalMemo *Script
	// loadedFrom is what the last start loaded: "aof", "rdb" or "none".
	loadedFrom string
	// resyncLosses: the node was a master and became a replica, so the
	// keys its next full sync drops are recorded as losses (keyloss.go).
	resyncLosses bool
	// restartLoss: a restarted cluster node's restart losses, recorded
	// when it learns it still serves its slots (keyloss.go).
	restartLoss *pendingLoss
	stats       stats
	// minDeadline is at most the earliest deadline of a key in volatile
	// (math.MaxInt64 when none was set): lowered when a deadline is set,
	// made exact by each scan (expiredVolatile).
	minDeadline int64

	tx      txState   // MULTI/EXEC/WATCH state of the clients (multi.go)
	mem     memState  // maxmemory accounting and eviction (memory.go)
	run     scriptRun // the script being run (reused: scripts do not nest)
	scratch []byte    // reused buffer for rendering trace texts
	// Entries of keys deleted during the current event, and entries free
	// for reuse (db.go, recycleEntries).
	deadEntries []*entry
	freeEntries []*entry

	// cl is the cluster state in cluster mode (cluster.go), nil otherwise.
	cl *clusterState
	// pausedReqs are write commands held by a manual failover's
	// CLIENT_PAUSE_WRITE (cluster_bus.go), in arrival order.
	pausedReqs []pausedReq
	// mig is the MIGRATE in flight (cluster_migrate.go): the node is
	// blocked in it, as Redis is in its synchronous socket calls, and
	// holds every client command meanwhile (migHeld); migSeq numbers its
	// RESTORE-ASKING requests.
	mig     *migrateOp
	migHeld []pausedReq
	migSeq  uint64
}

type stats struct {
	expiredKeys     int64
	loadKeysLoaded  int64
	loadKeysExpired int64
	// syncFull, syncPartialOK and syncPartialErr count the synchronisations
	// this node served as a master (R 7.2.4 src/replication.c:1016-1035,
	// syncCommand: a PSYNC with a replication id that cannot continue is a
	// partial error as well as a full sync; PSYNC ? -1 is a full sync only).
	syncFull       int64
	syncPartialOK  int64
	syncPartialErr int64
}

// execCtx describes the execution unit in progress.
type execCtx struct {
	client      sim.ProcID
	reqID       uint64
	pooled      bool // the request was a *Request: answer with a *Reply
	fromMaster  bool // applying the master's replication stream
	inScript    bool
	scriptDirty bool   // SCRIPT_WRITE_DIRTY
	blocked     bool   // the command blocked the client (WAIT)
	name        string // the command running (runSpec), a script's redis.call too
}

// New returns a fresh server instance for the kernel to start or restart;
// it recovers its data from env.Disk() in Init. Pass it to sim.Kernel.Add as
// func() sim.Process { return redis.New(cfg) }. The config must be valid
// (Validate); New panics otherwise, since scenarios validate first.
func New(cfg Config) sim.Process {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	return &Node{cfg: cfg}
}

// timerTag names the node's timers in the trace.
type timerTag uint8

const (
	tagCron    timerTag = iota + 1 // serverCron, every 1/hz on the monotonic clock
	tagApply                       // the replication delay queue
	tagMigrate                     // the timeout of a MIGRATE in flight
)

// AppendTrace renders the tag.
func (t timerTag) AppendTrace(b []byte) []byte {
	if t == tagApply {
		return append(b, "repl-apply"...)
	}
	if t == tagMigrate {
		return append(b, "migrate-timeout"...)
	}
	return append(b, "cron"...)
}

// Init starts the server: it recovers data from disk, starts serverCron and,
// for a replica, connects to its master.
func (n *Node) Init(env *sim.Env) {
	n.env = env
	n.flushData()
	n.activeExpire = true
	n.woff = map[sim.ProcID]int64{}
	n.scripts = map[string]bool{}
	n.evalMemo = nil
	n.masterID = sim.NoProc
	n.runID = randHex(env)
	n.replID = randHex(env)
	n.replID2 = zeroID
	n.secondOffset = -1
	n.startMono = env.Mono()
	n.now = env.WallMs()
	replicaOf := n.cfg.ReplicaOf
	if rec, ok := n.loadRole(); ok {
		replicaOf = rec.ReplicaOf
	}
	if n.cfg.Cluster != nil {
		// The role comes from the cluster configuration (nodes.conf).
		replicaOf = n.clusterInit()
	}
	if replicaOf != "" {
		n.masterName, n.masterPort = replicaOf, ListenPort
		if id, ok := env.Lookup(replicaOf); ok && id != env.ID() {
			n.masterID = id
		}
	}
	n.load()
	n.recordRestartLosses(env)
	// server.lastsave = time(NULL): "At startup we consider the DB saved"
	// (R 7.2.4 src/server.c:2668).
	n.lastSave = n.wallSec()
	n.lastFsync = n.wallSec() // server.aof_last_fsync = time(NULL) (R 7.0.15 src/server.c:1934)
	n.noReplicasSince = n.wallSec()
	n.armCron()
	if n.isReplica() {
		n.booting = env.Incarnation() == 0
		n.connectMaster()
	}
}

// Receive handles a client request or a replication message.
func (n *Node) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	n.env = env
	switch m := msg.(type) {
	case *Request:
		// Pooled (resp/pool.go): the kernel recycles m when Receive
		// returns; nothing below keeps m itself (Args may be kept).
		n.handleRequest(from, m.ID, m.Args, true)
	case Request:
		n.handleRequest(from, m.ID, m.Args, false)
	case SyncRequest:
		n.onSyncRequest(from, m)
	case FullSync:
		n.onFromMaster(from, m)
	case Continue:
		n.onFromMaster(from, m)
	case PresyncPing:
		n.onPresyncPing(from, m)
	case Stream:
		n.onFromMaster(from, m)
	case Ack:
		n.onAck(from, m)
	case Reset:
		n.onReset(from, m)
	case *BusMsg:
		if n.cl != nil {
			n.onBus(m)
		}
	case Reply:
		// The target's answer to a MIGRATE's RESTORE-ASKING.
		n.onMigrateReply(from, m)
	}
	n.beforeSleep()
	n.recycleEntries()
}

// Fire handles the node's timers.
func (n *Node) Fire(env *sim.Env, tag any) {
	n.env = env
	switch tag {
	case tagCron:
		n.serverCron()
		n.armCron()
	case tagApply:
		n.queueArmed = false
		n.drainQueue()
	case tagMigrate:
		n.migrateFailed(false)
	}
	n.beforeSleep()
	n.recycleEntries()
}

// Shutdown is a clean shutdown (SHUTDOWN, SIGTERM): flush and fsync the AOF
// and save an RDB snapshot if save points are configured (finishShutdown,
// R 7.2.4 src/server.c around 4390-4406; reference section 2.1).
// Simplification: it does not wait for replicas to catch up
// (shutdown-timeout).
func (n *Node) Shutdown(env *sim.Env) {
	n.env = env
	n.now = env.WallMs()
	if n.cfg.AppendOnly {
		n.fsyncAOF("shutdown")
	}
	if len(n.cfg.Save) > 0 {
		n.rdbSave("shutdown")
	}
}

var (
	_ sim.Shutdowner    = (*Node)(nil)
	_ sim.ConnsObserver = (*Node)(nil)
)

// armCron schedules the next serverCron: every 1000/hz ms, in integer
// milliseconds as ae computes it.
func (n *Node) armCron() {
	n.env.After(sim.Mono, time.Duration(1000/n.cfg.Hz)*time.Millisecond, tagCron)
}

// runWithPeriod is serverCron's run_with_period(ms) (R 7.2.4 src/server.h:668).
func (n *Node) runWithPeriod(ms int64) bool {
	tick := int64(1000 / n.cfg.Hz)
	return ms <= tick || n.cronLoops%(ms/tick) == 0
}

// serverCron runs every 1/hz on the monotonic clock: ae timers use the
// monotonic clock since 6.2 (reference section 1.2).
func (n *Node) serverCron() {
	n.now = n.env.WallMs()
	// databasesCron: the active expiry cycle runs on masters only
	// (R 7.2.4 src/server.c:1048-1056, expire.c). Simplification: with a
	// handful of lock keys, the cycle checks every key with a deadline instead
	// of sampling 20 per loop, using a fresh wall-clock reading.
	if !n.isReplica() && n.activeExpire {
		n.activeExpireCycle()
	}
	n.checkSavePoints()
	// replicationCron every second (R 7.2.4 src/server.c:1467-1469).
	if n.runWithPeriod(1000) {
		n.replicationCron()
	}
	// clusterCron every 100 ms (R 7.0.15 src/server.c:1411-1413).
	if n.cl != nil && n.runWithPeriod(100) {
		n.clusterCron()
	}
	n.cronLoops++
}

// activeExpireCycle deletes every key whose deadline passed, each deletion
// propagated on its own, not wrapped in MULTI/EXEC (propagateDeletion,
// R 7.2.4 src/db.c:1697-1711).
func (n *Node) activeExpireCycle() {
	if !n.mayHaveExpired() {
		return
	}
	for _, k := range n.expiredVolatile() {
		n.deleteExpired(k)
		n.endUnit(sim.NoProc)
	}
}

// beforeSleep runs after every event: blocked WAIT timeouts
// (handleBlockedClientsTimeout, R 7.2.4 src/timeout.c:137-155) and the
// background everysec fsync (flushAppendOnlyFile from beforeSleep,
// R 7.2.4 src/server.c:1718-1738).
func (n *Node) beforeSleep() {
	if n.cl != nil {
		n.clusterBeforeSleep()
	}
	n.handleWaitTimeouts()
	n.everysecFsync()
}

// handleRequest executes one client command and replies in the request's
// form: a *Reply to a pooled *Request, a Reply to a Request.
func (n *Node) handleRequest(from sim.ProcID, id uint64, args []string, pooled bool) {
	n.now = n.env.WallMs()
	n.cur = execCtx{client: from, reqID: id, pooled: pooled}
	if n.mig != nil {
		// Blocked in MIGRATE: the command waits in the socket buffer.
		n.migHeld = append(n.migHeld, pausedReq{client: from, id: id, args: args, pooled: pooled})
		return
	}
	if n.cl != nil && n.pauseWrite(from, id, args, pooled) {
		return
	}
	v := n.process(args)
	if n.cl != nil {
		n.resetAsking(from, args)
	}
	n.endUnit(from)
	if n.cur.blocked {
		return
	}
	n.reply(from, id, pooled, v)
}

// reply sends the answer to request id, pooled (resp.NewReply) if the
// request was.
func (n *Node) reply(to sim.ProcID, id uint64, pooled bool, v Value) {
	if pooled {
		n.env.SendPooled(to, resp.NewReply(id, v))
		return
	}
	n.env.Send(to, Reply{ID: id, Value: v})
}

// endUnit ends an execution unit: what it propagated goes to the AOF and to
// the replicas, before the reply is sent (R 7.2.4 src/server.c:1718-1738),
// and the client's write offset moves (c->woff, server.c:3683).
func (n *Node) endUnit(client sim.ProcID) {
	if client != sim.NoProc && !n.loading && !n.isReplica() && (len(n.prop) > 0 || n.propDropped) {
		// A client's write on a master: what a demotion records as its
		// last (sim.RoleChange.LastWrite), for split brain.
		n.env.WroteAsMaster()
	}
	if len(n.prop) == 0 {
		if n.propDropped {
			// What the unit would have propagated went nowhere (no AOF, no
			// backlog); only the client's write offset moves.
			n.propDropped = false
			if client != sim.NoProc {
				n.woff[client] = n.offset
			}
		}
		return
	}
	n.propDropped = false
	unit := n.prop
	cmds := unit
	n.prop = nil
	// Without an AOF to write and replicas to feed, nothing keeps the
	// unit's commands: the slice is reused for the next unit (one
	// allocation less per write command).
	reuse := !(n.cfg.AppendOnly && !n.loading) && !(n.backlog && !n.isReplica())
	if len(cmds) > 1 {
		// propagatePendingCommands wraps an execution unit of several
		// commands in MULTI/EXEC (R 7.2.4 src/server.c:3340-3366).
		wrapped := make([]Cmd, 0, len(cmds)+2)
		wrapped = append(wrapped, Cmd{"MULTI"})
		wrapped = append(wrapped, cmds...)
		cmds = append(wrapped, Cmd{"EXEC"})
	}
	n.feedAOF(cmds)
	n.feedReplicas(cmds)
	if client != sim.NoProc {
		n.woff[client] = n.offset
	}
	if reuse && n.prop == nil {
		clear(unit)
		n.prop = unit[:0]
	}
}

// propagate records a command for the AOF and the replicas of the current
// execution unit. Nothing is propagated while loading or while applying the
// master's stream (the stream itself is forwarded instead).
// keepsProp reports whether a command propagated now would be kept: by the
// AOF or by the replication backlog. When it would not, hot commands skip
// building it (dropProp instead; 2 of SET's allocations). Neither changes
// within an execution unit: AppendOnly is fixed, and the backlog is created
// and freed only by replication events and the cron, never by a command.
func (n *Node) keepsProp() bool {
	return (n.cfg.AppendOnly || n.backlog) && !n.loading && !n.cur.fromMaster
}

// dropProp records that the unit propagated a command nothing keeps.
func (n *Node) dropProp() {
	if !n.loading && !n.cur.fromMaster {
		n.propDropped = true
	}
}

func (n *Node) propagate(c Cmd) {
	if n.loading || n.cur.fromMaster {
		return
	}
	if n.prop == nil {
		n.prop = n.carveUnit()
	}
	n.prop = append(n.prop, c)
}

func (n *Node) isReplica() bool { return n.masterName != "" }

func (n *Node) wallSec() int64 { return floorDiv(n.env.WallMs(), 1000) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// logBytes records a trace event whose text b was rendered into n.scratch,
// and keeps the (possibly grown) buffer for the next one. Callers check
// n.quiet first.
func (n *Node) logBytes(kind sim.Kind, b []byte, attrs ...sim.Attr) {
	n.env.LogBytesAttrs(kind, b, attrs...)
	n.scratch = b[:0]
}

// logfAttrs is logf with typed fields.
func (n *Node) logfAttrs(kind sim.Kind, attrs []sim.Attr, format string, args ...any) {
	if n.quiet {
		return
	}
	n.env.LogfAttrs(kind, attrs, format, args...)
}

func (n *Node) logf(kind sim.Kind, format string, args ...any) {
	if n.quiet {
		return
	}
	n.env.Logf(kind, format, args...)
}

// zeroID is the cleared replid2 (clearReplicationId2).
const zeroID = "0000000000000000000000000000000000000000"

// randHex draws a 40-character hex id (run id, replication id) from the
// process's random stream.
func randHex(env *sim.Env) string {
	const digits = "0123456789abcdef"
	var b strings.Builder
	b.Grow(40)
	r := env.Rand()
	for i := 0; i < 40; i++ {
		b.WriteByte(digits[r.Intn(16)])
	}
	return b.String()
}
