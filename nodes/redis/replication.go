package redis

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/sim"
)

// linkState is the replica's view of its link to the master.
type linkState uint8

const (
	linkDown       linkState = iota // connecting or waiting for the full sync
	linkConnected                   // REPL_STATE_CONNECTED
	linkNoMasterID                  // the master's name is no process: never connects
)

// replicaLink is the master's view of one replica (a client with
// CLIENT_SLAVE): its session, the offset it acked and when (wall seconds).
// A replica waiting for its full sync to start (waiting) is in the list,
// as SLAVE_STATE_WAIT_BGSAVE_START, but gets no stream
// (canFeedReplicaReplBuffer, R 7.0.15 src/replication.c:198-206), is not
// counted by WAIT (:3444-3457) nor min-replicas-to-write (:3381-3396),
// and is not timed out on acks (:3672-3681).
type replicaLink struct {
	id      sim.ProcID
	session uint64
	ackOff  int64
	ackTime int64 // repl_ack_time, wall seconds
	waiting bool  // SLAVE_STATE_WAIT_BGSAVE_START
	since   int64 // the client's lastinteraction (its PSYNC), wall seconds
}

// queued is an item of the replication delay queue.
type queued struct {
	at  int64 // mono ns
	msg sim.Message
}

// ---- master side ----

// replBacklogTTL is repl-backlog-ttl: a master frees its backlog after this
// many seconds without replicas (R 7.2.4 src/config.c:3230).
const replBacklogTTL = 60 * 60

// feedReplicas sends an execution unit down the replication stream and
// advances the replication offset (replicationFeedSlaves). Without a
// backlog (a master that never had a replica) the offset does not move.
// The first data command after slaveseldb was reset is preceded by
// SELECT 0 (the node has one database; MULTI, EXEC and PING carry no
// database, dictid -1, R 7.2.4 src/server.c:3365-3376 and
// src/replication.c:3768-3785, and do not trigger it).
func (n *Node) feedReplicas(cmds []Cmd) {
	// A replica never feeds its own writes (a writable replica's local
	// writes) to sub-replicas; it only proxies its master's stream
	// (R 7.2.4 src/replication.c:450).
	if !n.backlog || n.isReplica() {
		return
	}
	if !n.selected {
		for i, c := range cmds {
			switch strings.ToLower(c[0]) {
			case "multi", "exec", "ping":
				continue
			}
			with := make([]Cmd, 0, len(cmds)+1)
			with = append(append(append(with, cmds[:i]...), Cmd{"SELECT", "0"}), cmds[i:]...)
			cmds = with
			n.selected = true
			break
		}
	}
	start := n.offset
	for _, c := range cmds {
		n.offset += c.respLen()
	}
	n.feedBacklog(start, cmds)
	for _, r := range n.replicas {
		if !r.waiting {
			n.env.Send(r.id, Stream{Session: r.session, Start: start, Cmds: cmds})
		}
	}
}

// createBacklog creates an empty backlog that starts at the current offset
// (createReplicationBacklog: backlog->offset = master_repl_offset+1).
func (n *Node) createBacklog() {
	n.backlog = true
	n.blUnits, n.blFirst, n.blLen = nil, n.offset, 0
}

// feedBacklog appends an execution unit to the backlog and trims the oldest
// units beyond repl-backlog-size (feedReplicationBuffer,
// incrementalTrimReplicationBacklog). Simplification: the backlog holds
// whole units, so it may hold up to one unit less than the byte count allows.
func (n *Node) feedBacklog(start int64, cmds []Cmd) {
	if !n.backlog {
		return
	}
	if start != n.blFirst+n.blLen {
		n.blUnits, n.blFirst, n.blLen = nil, start, 0 // not contiguous: restart it
	}
	var size int64
	for _, c := range cmds {
		size += c.respLen()
	}
	n.blUnits = append(n.blUnits, Stream{Start: start, Cmds: cmds})
	n.blLen += size
	limit := n.cfg.backlogSize()
	for n.blLen > limit && len(n.blUnits) > 0 {
		u := n.blUnits[0]
		n.blUnits = n.blUnits[1:]
		var us int64
		for _, c := range u.Cmds {
			us += c.respLen()
		}
		n.blFirst += us
		n.blLen -= us
	}
}

// canContinue is masterTryPartialResynchronization's test (R 7.2.4
// src/replication.c:740-788): the replication id is ours, or our previous
// one up to second_repl_offset, and the offset is within the backlog.
func (n *Node) canContinue(replID string, off int64) bool {
	if !n.backlog || replID == "" {
		return false
	}
	if replID != n.replID && (replID != n.replID2 || off+1 > n.secondOffset) {
		return false
	}
	return off >= n.blFirst && off <= n.blFirst+n.blLen
}

// onSyncRequest answers a PSYNC (syncCommand, R 7.0.15
// src/replication.c:938-1110): +CONTINUE when the backlog can serve it
// (masterTryPartialResynchronization, :725-800: the id is ours, or our
// id2 up to second_repl_offset, and the offset is within the backlog; a
// partial resync never waits), else a full synchronisation (PSYNC ? -1,
// an unknown id, an offset outside the backlog). The replica then waits
// in SLAVE_STATE_WAIT_BGSAVE_START (:1019-1022): with repl-diskless-sync
// yes and a non-zero repl-diskless-sync-delay the transfer is left to
// replicationCron ("Delay next BGSAVE for diskless SYNC", :1092-1099,
// startPendingSync); with a zero delay it starts at once (:1100-1104).
// A replica can serve its own replicas (chained replication) with its
// master's id and offset.
func (n *Node) onSyncRequest(from sim.ProcID, m SyncRequest) {
	// A replica whose own link is not up refuses: "-NOMASTERLINK Can't
	// SYNC while not connected with my master" (R 7.0.15
	// src/replication.c:954-959); the asker tries again from its
	// replicationCron (PSYNC_TRY_LATER, :2545-2553, :2800; onReset).
	if from == n.masterID || (n.isReplica() && n.link != linkConnected) {
		n.env.Send(from, Reset{Session: m.Session})
		return
	}
	n.dropReplica(from, 0)
	if n.canContinue(m.ReplID, m.Offset) {
		n.stats.syncPartialOK++
		// Partial resynchronisation: +CONTINUE and the backlog from the
		// replica's offset.
		n.replicas = append(n.replicas, &replicaLink{id: from, session: m.Session, ackOff: m.Offset, ackTime: n.wallSec()})
		n.env.Send(from, Continue{Session: m.Session, ReplID: n.replID})
		for _, u := range n.blUnits {
			if u.Start >= m.Offset {
				n.env.Send(from, Stream{Session: m.Session, Start: u.Start, Cmds: u.Cmds})
			}
		}
		n.refreshGoodReplicas()
		return
	}
	if m.ReplID != "" {
		n.stats.syncPartialErr++ // not PSYNC ? -1
	}
	n.stats.syncFull++
	n.replicas = append(n.replicas, &replicaLink{id: from, session: m.Session, waiting: true, since: n.wallSec()})
	if !n.backlog {
		// The first replica creates the backlog, with a new replication id
		// and no id2 (R 7.0.15 src/replication.c:1026-1037).
		n.replID, n.replID2, n.secondOffset = randHex(n.env), zeroID, -1
		n.createBacklog()
	}
	// Boot: the model's start-of-run state, replicas in sync from the
	// start (SyncRequest.Boot).
	if n.cfg.ReplDisklessSyncDelay == 0 || m.Boot {
		n.startFullSync()
	}
	n.refreshGoodReplicas()
}

// startFullSync is startBgsaveForReplication with a socket target (R 7.0.15
// src/replication.c:841-935, rdb.c rdbSaveToSlavesSockets): one transfer
// serves every replica waiting for it, each told +FULLRESYNC with the
// current id and offset (replicationSetupSlaveForFullResync, :696-722,
// which also resets slaveseldb). Simplification: the RDB's transfer and
// load take no time, so the replica is online at once (replicaPutOnline,
// :1269-1287: repl_ack_time is now), and the stream starts right away
// rather than at its first REPLCONF ACK (repl_start_cmd_stream_on_ack).
func (n *Node) startFullSync() {
	now := n.wallSec()
	for _, r := range n.replicas {
		if !r.waiting {
			continue
		}
		n.selected = false
		r.waiting, r.ackOff, r.ackTime = false, 0, now
		n.env.Send(r.id, FullSync{Session: r.session, ReplID: n.replID, Offset: n.offset, Entries: n.snapshot()})
	}
}

// startPendingSync is replicationStartPendingFork (R 7.0.15
// src/replication.c:3814-3824), run from replicationCron (:3741): the
// transfer starts once the longest-waiting replica's idle time
// (server.unixtime - lastinteraction, whole seconds; its PSYNC was its last
// interaction) reaches repl-diskless-sync-delay (shouldStartChildReplication,
// :3762-3812; repl-diskless-sync-max-replicas is 0, so the count of waiting
// replicas never starts it early). As replicationCron runs once a second,
// a full sync starts 4-6 s after the PSYNC with the default delay of 5
// (both times are floored to seconds). The model has no fork child in
// progress to wait for (hasActiveChildProcess): its saves take no time.
func (n *Node) startPendingSync() {
	now := n.wallSec()
	var maxIdle int64
	waiting := false
	for _, r := range n.replicas {
		if r.waiting {
			waiting = true
			if idle := now - r.since; idle > maxIdle {
				maxIdle = idle
			}
		}
	}
	if waiting && maxIdle >= int64(n.cfg.ReplDisklessSyncDelay/time.Second) {
		n.startFullSync()
	}
}

// onAck records REPLCONF ACK (replconfCommand: the ack offset only grows)
// and wakes WAIT clients. An ack from an unknown link gets a Reset, as a
// restarted master would reset the replica's old connection.
func (n *Node) onAck(from sim.ProcID, m Ack) {
	r := n.findReplica(from, m.Session)
	if r == nil {
		n.env.Send(from, Reset{Session: m.Session})
		return
	}
	if m.Offset > r.ackOff {
		r.ackOff = m.Offset
	}
	r.ackTime = n.wallSec()
	n.processWaiters()
}

// onReset handles a link reset from either side.
func (n *Node) onReset(from sim.ProcID, m Reset) {
	if from == n.masterID && m.Session == n.session && n.isReplica() {
		if n.link != linkConnected {
			// The PSYNC was refused (NOMASTERLINK): the next
			// replicationCron tick connects again (syncWithMaster's
			// error path sets REPL_STATE_CONNECT, :2800, :2935-2940).
			n.answered = false
			n.session = n.env.Rand().Uint64() | 1
			n.syncSent = -1
			return
		}
		n.masterLinkLost()
		return
	}
	n.dropReplica(from, m.Session)
}

func (n *Node) findReplica(id sim.ProcID, session uint64) *replicaLink {
	for _, r := range n.replicas {
		if r.id == id && r.session == session {
			return r
		}
	}
	return nil
}

// dropReplica forgets the link with a replica (session 0: any session).
func (n *Node) dropReplica(id sim.ProcID, session uint64) {
	for i, r := range n.replicas {
		if r.id == id && (session == 0 || r.session == session) {
			n.replicas = append(n.replicas[:i], n.replicas[i+1:]...)
			n.replicasGone()
			return
		}
	}
}

// replicasGone notes the time the last replica left (repl_no_slaves_since,
// R 7.2.4 src/networking.c:1668) and refreshes the good-replica count.
func (n *Node) replicasGone() {
	if len(n.replicas) == 0 {
		n.noReplicasSince = n.wallSec()
	}
	n.refreshGoodReplicas()
}

// disconnectReplicas resets every replica link (disconnectSlaves): they
// reconnect and resync.
func (n *Node) disconnectReplicas() {
	for _, r := range n.replicas {
		n.env.Close(r.id)
	}
	n.replicas = nil
	n.replicasGone()
}

// refreshGoodReplicas is refreshGoodSlavesCount (R 7.2.4
// src/replication.c:3432-3449): replicas whose last ack is at most
// min-replicas-max-lag seconds old on the wall clock.
func (n *Node) refreshGoodReplicas() {
	lag := int64(n.cfg.MinReplicasMaxLag / time.Second)
	if n.cfg.MinReplicasToWrite == 0 || lag == 0 || n.env == nil {
		return
	}
	now := n.wallSec()
	good := 0
	for _, r := range n.replicas {
		if !r.waiting && now-r.ackTime <= lag {
			good++
		}
	}
	n.goodReplicas = good
}

// goodReplicasOK is checkGoodReplicasStatus (R 7.2.4
// src/replication.c:3451-3457).
func (n *Node) goodReplicasOK() bool {
	return n.isReplica() || n.cfg.MinReplicasMaxLag < time.Second || n.cfg.MinReplicasToWrite == 0 ||
		n.goodReplicas >= n.cfg.MinReplicasToWrite
}

// replicationCron runs once a second (R 7.2.4 src/replication.c:3712-3906).
func (n *Node) replicationCron() {
	now := n.wallSec()
	timeout := int64(n.cfg.ReplTimeout / time.Second)
	if n.isReplica() {
		switch {
		case n.link == linkConnected && now-n.lastIO > timeout:
			// "MASTER timeout: no data nor PING received" (:3737-3743):
			// the replica closes the link and reconnects.
			n.env.Close(n.masterID)
			n.masterLinkLost()
		case n.link == linkDown && !n.answered && n.masterID != sim.NoProc:
			// Reconnect attempts once a second (connectWithMaster,
			// :3745-3750) while no attempt is under way; an attempt
			// unanswered for repl-timeout is abandoned ("Timeout
			// connecting to the MASTER...", the first check of replicationCron).
			switch {
			case n.syncSent < 0:
				n.sendSync()
			case now-n.syncSent > timeout:
				n.env.Close(n.masterID)
				n.session = n.env.Rand().Uint64() | 1
				n.sendSync()
			}
		case n.link == linkConnected:
			// REPLCONF ACK every second (replicationSendAck, :3752-3757).
			n.env.Send(n.masterID, Ack{Session: n.session, Offset: n.offset})
		}
	}
	// PING the replicas every repl-ping-replica-period through the stream
	// (:3767-3785).
	period := int64(n.cfg.ReplPingReplicaPeriod / time.Second)
	loops := n.cronLoops / int64(n.cfg.Hz)
	if !n.isReplica() && len(n.replicas) > 0 && loops%period == 0 {
		n.feedReplicas([]Cmd{{"PING"}})
	}
	// A newline to every replica waiting for its full sync to start
	// (R 7.0.15 src/replication.c:3641-3665).
	for _, r := range n.replicas {
		if r.waiting {
			n.env.Send(r.id, PresyncPing{Session: r.session})
		}
	}
	// Disconnect timed-out replicas, online ones only (:3818-3834;
	// R 7.0.15 :3667-3681).
	for i := 0; i < len(n.replicas); {
		if r := n.replicas[i]; !r.waiting && now-r.ackTime > timeout {
			// "Disconnecting timedout replica" (:3828-3829): the master
			// closes the connection.
			n.env.Close(r.id)
			n.replicas = append(n.replicas[:i], n.replicas[i+1:]...)
			n.replicasGone()
			continue
		}
		i++
	}
	// Free the backlog of a master without replicas after repl-backlog-ttl,
	// with a new replication id (:3852-3880).
	if !n.isReplica() && len(n.replicas) == 0 && n.backlog && now-n.noReplicasSince > replBacklogTTL {
		n.replID, n.replID2, n.secondOffset = randHex(n.env), zeroID, -1
		n.backlog = false
		n.blUnits, n.blLen = nil, 0
	}
	n.startPendingSync()
	n.refreshGoodReplicas()
}

// ---- replica side ----

// connectMaster starts a new link to the master: a new session and a
// SyncRequest (PSYNC). Simplification: real Redis connects from the next
// replicationCron; the model sends at once.
func (n *Node) connectMaster() {
	n.link = linkDown
	n.answered = false
	n.session = n.env.Rand().Uint64() | 1
	if n.masterID == sim.NoProc {
		n.link = linkNoMasterID
		return
	}
	n.sendSync()
}

// sendSync sends the PSYNC of the current session.
func (n *Node) sendSync() {
	n.syncSent = n.wallSec()
	n.env.Send(n.masterID, n.syncRequest())
}

// syncRequest is the replica's PSYNC: with its replication id and offset
// when it has a replication history (a backlog: it was synced, or it was a
// master with replicas; replicationCacheMasterUsingMyself), else PSYNC ? -1.
// Simplification: a restarted node does not reload its replication id
// from the RDB file, so it always asks for a full resync.
func (n *Node) syncRequest() SyncRequest {
	if !n.backlog {
		return SyncRequest{Session: n.session, Boot: n.booting}
	}
	return SyncRequest{Session: n.session, ReplID: n.replID, Offset: n.offset, Boot: n.booting}
}

// onPresyncPing is the master's newline while the replica waits for its
// full sync: it refreshes repl_transfer_lastio, so the PSYNC is not timed
// out (R 7.0.15 src/replication.c:3572-3580, syncWithMaster reading an
// empty line as "still waiting").
func (n *Node) onPresyncPing(from sim.ProcID, m PresyncPing) {
	if n.isReplica() && from == n.masterID && m.Session == n.session && n.link == linkDown {
		n.syncSent = n.wallSec()
		n.presyncSession = m.Session
	}
}

// ConnEnded handles the end of a connection: the master link (the replica
// marks it down and reconnects from the next replicationCron, :3745-3750),
// a replica's link (the master frees the replica client), or a client's
// (its blocked WAIT ends with it).
func (n *Node) ConnEnded(env *sim.Env, peer sim.ProcID, why sim.ConnEnd) {
	n.ConnEndedOn(env, peer, 0, why)
}

// ConnEndedOn is ConnEnded for one of the node's connections with peer:
// connection 0 carries clients, replication and MIGRATE, connection busConn
// the cluster bus (sim.ConnsObserver).
func (n *Node) ConnEndedOn(env *sim.Env, peer sim.ProcID, ch uint8, why sim.ConnEnd) {
	n.env = env
	if ch == busConn {
		if n.cl != nil {
			n.clusterBusEnded(peer)
		}
		n.beforeSleep()
		return
	}
	if n.cl != nil {
		n.clusterConnEnded(peer)
	}
	if n.isReplica() && peer == n.masterID {
		if n.link == linkConnected {
			n.downSince = n.wallSec()
		}
		n.queue, n.queueLast = nil, 0
		n.logf(EventReplicaLink, "lost the link with master %s: %v", n.masterName, why)
		if why == sim.ConnClosed {
			// The master closed the link (it changed role, or resynced
			// its own master): reconnect at once (the model's
			// simplification, see connectMaster).
			n.masterLinkLost()
		} else {
			// Reset or timed out: the next replicationCron tick retries.
			n.link = linkDown
			n.answered = false
			n.session = n.env.Rand().Uint64() | 1
			n.syncSent = -1
		}
	}
	n.dropReplica(peer, 0)
	// A client's connection is its client: freeClient drops its MULTI
	// state and its WATCHed keys (R 7.2.4 src/networking.c freeClient ->
	// freeClientMultiState, unwatchAllKeys).
	if c := n.tx.clients[peer]; c != nil {
		n.discardTransaction(c)
		delete(n.tx.clients, peer)
	}
	kept := n.waiters[:0]
	for _, w := range n.waiters {
		if w.client != peer {
			kept = append(kept, w)
		}
	}
	n.waiters = kept
	n.beforeSleep()
}

// masterLinkLost marks the link down and reconnects.
func (n *Node) masterLinkLost() {
	if n.link == linkConnected {
		n.downSince = n.wallSec()
	}
	n.connectMaster()
}

// onFromMaster receives a FullSync or a Stream message. Messages of another
// process or an old session are answered with Reset (a closed connection).
// Everything from the master goes through the replication delay queue, in
// order.
func (n *Node) onFromMaster(from sim.ProcID, msg sim.Message) {
	var session uint64
	switch m := msg.(type) {
	case FullSync:
		session = m.Session
	case Continue:
		session = m.Session
	case Stream:
		session = m.Session
	}
	if !n.isReplica() || from != n.masterID || session != n.session {
		n.env.Send(from, Reset{Session: session})
		return
	}
	switch msg.(type) {
	case FullSync, Continue:
		n.answered = true
	}
	if n.cfg.ReplicationDelay.Hi == 0 && len(n.queue) == 0 {
		n.applyFromMaster(msg)
		return
	}
	at := n.env.Mono() + int64(n.cfg.ReplicationDelay.Draw(n.env.Rand()))
	if at < n.queueLast {
		at = n.queueLast
	}
	n.queueLast = at
	n.queue = append(n.queue, queued{at: at, msg: msg})
	n.armQueue()
}

func (n *Node) armQueue() {
	if n.queueArmed || len(n.queue) == 0 {
		return
	}
	n.queueArmed = true
	n.env.SetTimer(sim.Mono, n.queue[0].at, tagApply)
}

func (n *Node) drainQueue() {
	now := n.env.Mono()
	for len(n.queue) > 0 && n.queue[0].at <= now {
		msg := n.queue[0].msg
		n.queue = n.queue[1:]
		n.applyFromMaster(msg)
	}
	n.armQueue()
}

func (n *Node) applyFromMaster(msg sim.Message) {
	switch m := msg.(type) {
	case FullSync:
		if m.Session == n.session && n.isReplica() {
			n.applyFullSync(m)
		}
	case Continue:
		if m.Session == n.session && n.isReplica() {
			n.applyContinue(m)
		}
	case Stream:
		if m.Session == n.session && n.isReplica() && n.link == linkConnected {
			n.applyStream(m)
		}
	}
}

// applyFullSync replaces the replica's data with the master's snapshot
// (readSyncBulkPayload): every key is loaded, expired or not, since a
// replica waits for the master's DEL. The received RDB becomes the
// replica's dump.rdb, and an AOF is rewritten from it
// (restartAOFAfterSYNC). Sub-replicas are disconnected to resync.
func (n *Node) applyFullSync(m FullSync) {
	n.now = n.env.WallMs()
	n.booting = false
	n.disconnectReplicas()
	var before []witnessedKey
	if n.resyncLosses {
		before, n.resyncLosses = n.liveKeys(), false
	}
	n.flushData()
	for _, e := range m.Entries {
		n.loadEntry(e)
	}
	n.recordLosses(before, sim.LossResync, "full resynchronisation from its new master "+n.masterName)
	n.replID, n.offset = m.ReplID, m.Offset
	n.replID2, n.secondOffset = zeroID, -1
	n.createBacklog() // replicas always keep a backlog (:2275-2279)
	n.link = linkConnected
	n.lastIO = n.wallSec()
	n.persistSnapshot("full sync")
	n.logfAttrs(EventReplicaSync, []sim.Attr{sim.Str("master", n.masterName), sim.Str("replid", m.ReplID), sim.Int64("offset", m.Offset), sim.Int64("keys", int64(len(m.Entries)))},
		"from %s replid %s offset %d keys %d", n.masterName, m.ReplID, m.Offset, len(m.Entries))
}

// applyContinue is a successful partial resync (+CONTINUE): the replica
// keeps its data and offset; a new replication id (the master was promoted
// since) becomes its id, the old one its id2
// (replicationResurrectCachedMaster, syncWithMaster's +CONTINUE handling).
func (n *Node) applyContinue(m Continue) {
	n.booting = false
	if m.ReplID != n.replID {
		n.replID2, n.secondOffset = n.replID, n.offset+1
		n.replID = m.ReplID
		n.disconnectReplicas()
	}
	n.link = linkConnected
	n.lastIO = n.wallSec()
	n.logfAttrs(EventReplicaSync, []sim.Attr{sim.Str("master", n.masterName), sim.Str("replid", m.ReplID), sim.Int64("offset", n.offset), sim.Int64("partial", 1)},
		"partial resync with %s replid %s offset %d", n.masterName, m.ReplID, n.offset)
}

// applyStream applies one unit of the master's stream with the master
// client's privileges (no expiry, no READONLY), writes it to the AOF and
// proxies it to sub-replicas. The connection delivers the stream in order
// and without gaps; a gap can only mean a bug, and breaks the link (a
// resync) rather than corrupting the data.
func (n *Node) applyStream(m Stream) {
	if m.Start != n.offset {
		n.env.Close(n.masterID)
		n.masterLinkLost()
		return
	}
	n.lastIO = n.wallSec()
	n.now = n.env.WallMs()
	saved := n.cur
	n.cur = execCtx{client: n.masterID, fromMaster: true}
	var data []Cmd
	for _, c := range m.Cmds {
		name := strings.ToLower(c[0])
		switch name {
		case "ping", "multi", "exec", "select":
		case "replconf":
			// REPLCONF GETACK: ack at once, with the offset before this command.
			if len(c) > 1 && strings.EqualFold(c[1], "getack") {
				n.env.Send(n.masterID, Ack{Session: n.session, Offset: n.offset})
			}
		default:
			if spec, errv := resolve(c); errv == nil {
				spec.run(n, c)
			}
			data = append(data, c)
		}
		n.offset += c.respLen()
	}
	n.prop, n.propDropped = nil, false
	n.cur = saved
	if len(data) > 0 {
		n.feedAOF(data)
	}
	n.feedBacklog(m.Start, m.Cmds)
	for _, r := range n.replicas {
		if !r.waiting {
			n.env.Send(r.id, Stream{Session: r.session, Start: m.Start, Cmds: m.Cmds})
		}
	}
}

// ---- commands ----

// cmdReplicaOf is replicaofCommand (R 7.2.4 src/replication.c:3137-3196).
// The host is a process name; the port must be a valid port number, as in
// Redis, and is otherwise ignored (every node listens on ListenPort).
func cmdReplicaOf(n *Node, a []string) Value {
	if n.cl != nil {
		// replicaofCommand (R 7.0.15 src/replication.c:3093-3096).
		return Err("ERR REPLICAOF not allowed in cluster mode.")
	}
	if strings.EqualFold(a[1], "no") && strings.EqualFold(a[2], "one") {
		if n.isReplica() {
			cause := "REPLICAOF NO ONE"
			if n.cur.client != sim.NoProc {
				cause += " from " + n.env.NameOf(n.cur.client)
			}
			n.promote(cause)
		}
		return OK()
	}
	port, ok := parseLL(a[2])
	if !ok || port < 0 || port > 65535 {
		return Err("ERR Invalid master port")
	}
	if n.isReplica() && strings.EqualFold(n.masterName, a[1]) && n.masterPort == port {
		return Status("OK Already connected to specified master")
	}
	n.setMaster(a[1], port)
	return OK()
}

// promote is replicationUnsetMaster: the node keeps its data, shifts its
// replication id (replid2 = old id, second_repl_offset = offset+1),
// disconnects its own replicas so they learn the new id, and from now on
// expires keys with its own wall clock. cause says how, for the history
// (sim.RoleChange).
func (n *Node) promote(cause string) {
	old := n.masterName
	n.recordPromotion(old, cause)
	if n.masterID != sim.NoProc {
		n.env.Close(n.masterID)
	}
	n.masterName, n.masterPort, n.masterID = "", 0, sim.NoProc
	n.link = linkDown
	n.queue, n.queueLast = nil, 0
	n.replID2, n.secondOffset = n.replID, n.offset+1
	n.replID = randHex(n.env)
	n.disconnectReplicas()
	n.selected = false // replicationUnsetMaster (:3088)
	n.logfAttrs(EventPromoted, []sim.Attr{sim.Str("was_replica_of", old), sim.Str("replid", n.replID), sim.Int64("offset", n.offset)}, "was replica of %s; replid %s offset %d", old, n.replID, n.offset)
}

// recordPromotion adds the promotion to the history (sim.RoleChange) with
// the keys the node held, so that the checker can say that the new master
// lacked the lock key or held an older token counter. Simplification: a
// key counts as held if it is in the dataset, even if its deadline has
// passed by the replica's clock (a replica never deletes expired keys; the
// promoted master expires them on first access or in its cycle).
func (n *Node) recordPromotion(former, cause string) {
	r := sim.RoleChange{Master: true, Other: former, Cause: cause}
	if len(n.db) > sim.MaxRoleKeys {
		r.KeysCut = true
	} else {
		for k, e := range n.db {
			rk := sim.RoleKey{Key: k}
			if !e.isHash {
				if v, err := strconv.ParseInt(e.str, 10, 64); err == nil {
					rk.Int, rk.IsInt = v, true
				}
			}
			r.Keys = append(r.Keys, rk)
		}
		// Map order must not reach the history.
		sort.Slice(r.Keys, func(i, j int) bool { return r.Keys[i].Key < r.Keys[j].Key })
	}
	n.env.RoleChanged(r)
}

// setMaster is replicationSetMaster: blocked clients are unblocked with an
// error, replicas disconnected, and a full sync with the new master
// replaces the data when it arrives.
func (n *Node) setMaster(name string, port int64) {
	if !n.isReplica() {
		// A master becomes a replica: the end of a split brain, if
		// another node was promoted meanwhile (sim.RoleChange).
		n.env.RoleChanged(sim.RoleChange{Other: name, Cause: "REPLICAOF " + name})
		n.resyncLosses = true
	}
	n.restartLoss = nil
	if n.isReplica() && n.masterID != sim.NoProc {
		n.env.Close(n.masterID)
	}
	for _, w := range n.waiters {
		n.reply(w.client, w.reqID, w.pooled, errUnblocked)
	}
	n.waiters = nil
	n.disconnectReplicas()
	n.masterName, n.masterPort, n.masterID = name, port, sim.NoProc
	n.queue, n.queueLast = nil, 0
	if id, ok := n.env.Lookup(name); ok && id != n.env.ID() {
		n.masterID = id
	}
	n.downSince = 0
	n.connectMaster()
}

// ---- WAIT ----

// waiter is a client blocked in WAIT.
type waiter struct {
	client   sim.ProcID
	reqID    uint64
	pooled   bool  // the request was a *Request: answer with a *Reply
	offset   int64 // the client's woff
	num      int64
	deadline int64 // wall ms; 0 = forever
}

// countAcks is replicationCountAcksByOffset.
func (n *Node) countAcks(off int64) int64 {
	var c int64
	for _, r := range n.replicas {
		if !r.waiting && r.ackOff >= off {
			c++
		}
	}
	return c
}

// cmdWait is waitCommand (R 7.2.4 src/replication.c:3529-3559): reply at
// once if enough replicas acked the client's last write, otherwise block
// and ask every replica for an ack (REPLCONF GETACK through the stream).
// The timeout is absolute on the wall clock (getTimeoutFromObjectOrReply,
// R 7.2.4 src/timeout.c:165-202) and checked after every event and on
// every serverCron tick (timeout.c:137-155), so a WAIT times out on the
// first tick after its deadline, as in Redis.
func cmdWait(n *Node, a []string) Value {
	if n.isReplica() {
		return errWaitOnReplica
	}
	num, ok := parseLL(a[1])
	if !ok {
		return errNotInteger
	}
	t, ok := parseLL(a[2])
	if !ok {
		return Err("ERR timeout is not an integer or out of range")
	}
	if t < 0 {
		return Err("ERR timeout is negative")
	}
	var deadline int64
	if t > 0 {
		if t > 1<<63-1-n.now {
			return Err("ERR timeout is out of range")
		}
		deadline = t + n.now
	}
	off := n.woff[n.cur.client]
	acks := n.countAcks(off)
	if acks >= num || n.cur.inScript || n.cur.fromMaster {
		return Int(acks)
	}
	n.waiters = append(n.waiters, &waiter{client: n.cur.client, reqID: n.cur.reqID, pooled: n.cur.pooled, offset: off, num: num, deadline: deadline})
	n.cur.blocked = true
	n.feedReplicas([]Cmd{{"REPLCONF", "GETACK", "*"}})
	return Nil()
}

// processWaiters is processClientsWaitingReplicas.
func (n *Node) processWaiters() {
	for i := 0; i < len(n.waiters); {
		w := n.waiters[i]
		if c := n.countAcks(w.offset); c >= w.num {
			n.reply(w.client, w.reqID, w.pooled, Int(c))
			n.waiters = append(n.waiters[:i], n.waiters[i+1:]...)
			continue
		}
		i++
	}
}

// handleWaitTimeouts unblocks WAIT clients whose deadline passed
// (checkBlockedClientTimeout: timeout < now, strict) with the count
// reached so far.
func (n *Node) handleWaitTimeouts() {
	if len(n.waiters) == 0 {
		return
	}
	now := n.env.WallMs()
	for i := 0; i < len(n.waiters); {
		w := n.waiters[i]
		if w.deadline != 0 && w.deadline < now {
			n.reply(w.client, w.reqID, w.pooled, Int(n.countAcks(w.offset)))
			n.waiters = append(n.waiters[:i], n.waiters[i+1:]...)
			continue
		}
		i++
	}
}
