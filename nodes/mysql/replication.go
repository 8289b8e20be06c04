package mysql

import (
	"strconv"

	"github.com/locksim/locksim/sim"
)

// Asynchronous replication (MySQL manual replication.html: "Replication is
// asynchronous by default"), GTID-style: every commit gets the next sequence
// number, a replica asks its source for everything after the last sequence
// number it applied, and the source streams each commit to its replicas after
// it has committed it locally and answered the client. A commit acknowledged
// by the source but not yet applied by a replica is lost if that replica is
// promoted.
//
// Simplification: the binary log and the redo log are one log (MariaDB keeps
// them consistent through its internal two-phase commit, so a commit is in
// both or neither after a crash with sync_binlog=1; with the default
// sync_binlog=0 the binlog can lose commits InnoDB kept, which the model does
// not show). Simplification: events are applied to the committed rows
// directly, ignoring the replica's own row locks and transactions (a
// read_only replica has no local writers). Simplification: one replication
// source per replica; Promote does STOP SLAVE, RESET SLAVE ALL and SET
// GLOBAL read_only = OFF at once, and other replicas are not re-pointed.

// ReplSubscribe (replica to source) opens or reopens the replication
// stream: the source sends every commit after From (MASTER_USE_GTID =
// slave_pos), or a snapshot when its log no longer goes back that far.
type ReplSubscribe struct {
	From uint64
}

// ReplEvent (source to replica) is one committed transaction.
type ReplEvent struct {
	Seq  uint64
	Rows []rowImage
}

// ReplSnapshot (source to replica) replaces the replica's rows with the
// source's committed rows as of Seq: the model's stand-in for provisioning a
// replica from a backup when the binlog it needs was purged.
type ReplSnapshot struct {
	Seq  uint64
	Rows []rowImage
}

// ReplHeartbeat (source to replica) is the heartbeat event the source sends
// every SlaveNetTimeout/2; Seq lets a replica notice events it missed.
type ReplHeartbeat struct {
	Seq uint64
}

// Promote makes a replica a primary: it stops replicating and becomes
// writable. The change is persisted on the node's disk. A primary ignores
// it.
type Promote struct{}

// Replication trace event kinds.
const (
	KindReplApplied   sim.Kind = "mysql-repl-applied"   // "seq 5 rows 1"
	KindReplSubscribe sim.Kind = "mysql-repl-subscribe" // "from seq 4 (reason)"
	KindReplError     sim.Kind = "mysql-repl-error"
	KindPromoted      sim.Kind = "mysql-promoted"
)

// RoleFile holds the node's replication role after a Promote.
const RoleFile = "master.info"

// roleRecord is the persisted replication role.
type roleRecord struct {
	ReplicaOf string
}

type heartbeatTag struct{}
type netTimeoutTag struct{}

func (heartbeatTag) AppendTrace(b []byte) []byte  { return append(b, "replication heartbeat"...) }
func (netTimeoutTag) AppendTrace(b []byte) []byte { return append(b, "slave_net_timeout"...) }

// replState is the node's replication state.
type replState struct {
	source    string     // the source's name; "" on a primary
	sourceID  sim.ProcID // its process
	replicas  []sim.ProcID
	beating   bool        // the heartbeat timer is set
	netTimer  sim.TimerID // replica: slave_net_timeout
	askedFrom uint64      // replica: From of the last subscribe not yet answered
	asked     bool
	// retried is true once the replica re-subscribed after its connection
	// to the source ended, until the source is heard from again: the I/O
	// thread reconnects at once after a read error, and further attempts
	// wait for the next slave_net_timeout.
	retried bool
}

func (n *Node) initReplication() {
	n.readOnly = n.cfg.ReadOnly
	n.repl = replState{source: n.cfg.ReplicaOf, sourceID: sim.NoProc}
	if recs := n.env.Disk().File(RoleFile).Records(); len(recs) > 0 {
		n.repl.source = recs[len(recs)-1].(roleRecord).ReplicaOf
		n.readOnly = false
	}
	if n.repl.source == "" {
		return
	}
	id, ok := n.env.Lookup(n.repl.source)
	if !ok || id == n.env.ID() {
		n.env.Logf(KindReplError, "replica_of %q is not another process: not replicating", n.repl.source)
		n.repl.source = ""
		return
	}
	n.repl.sourceID = id
	n.subscribe("start")
}

// subscribe (re)opens the stream from the last applied commit and restarts
// the net timeout.
func (n *Node) subscribe(why string) {
	n.repl.asked, n.repl.askedFrom = true, n.seq
	n.env.Logf(KindReplSubscribe, "from seq %d (%s)", n.seq, why)
	n.env.Send(n.repl.sourceID, ReplSubscribe{From: n.seq})
	n.armNetTimeout()
}

func (n *Node) armNetTimeout() {
	n.env.Cancel(n.repl.netTimer)
	n.repl.netTimer = n.env.After(sim.Mono, n.cfg.SlaveNetTimeout, netTimeoutTag{})
}

// netTimeout: nothing from the source for slave_net_timeout; the I/O thread
// reconnects (and keeps retrying every slave_net_timeout while it cannot).
func (n *Node) netTimeout() {
	if n.repl.source != "" {
		n.subscribe("slave_net_timeout")
	}
}

func (n *Node) receiveRepl(from sim.ProcID, msg sim.Message) {
	switch m := msg.(type) {
	case ReplSubscribe:
		n.serveSubscribe(from, m.From)
	case Promote:
		n.promote()
	case ReplEvent, ReplSnapshot, ReplHeartbeat:
		if n.repl.source == "" || from != n.repl.sourceID {
			return // not our source (any more)
		}
		n.repl.retried = false
		n.armNetTimeout()
		switch m := msg.(type) {
		case ReplEvent:
			n.applyEvent(m)
		case ReplSnapshot:
			n.applySnapshot(m)
		case ReplHeartbeat:
			if m.Seq > n.seq {
				n.gap("heartbeat seq " + strconv.FormatUint(m.Seq, 10))
			}
		}
	}
}

// replConnEnded handles the end of a connection to peer: a replica whose
// connection to its source ended reconnects (MariaDB's I/O thread
// reconnects after a read error, sql/slave.cc try_to_reconnect) at once,
// then every slave_net_timeout while it cannot; a source forgets a replica
// whose connection ended (the binlog dump thread ends with it) until it
// subscribes again.
func (n *Node) replConnEnded(peer sim.ProcID) {
	if n.repl.source != "" && peer == n.repl.sourceID && !n.repl.retried {
		n.repl.retried = true
		n.subscribe("source connection ended")
	}
	kept := n.repl.replicas[:0]
	for _, r := range n.repl.replicas {
		if r != peer {
			kept = append(kept, r)
		}
	}
	n.repl.replicas = kept
}

// gap re-subscribes after a missed event, once per position.
func (n *Node) gap(why string) {
	if n.repl.asked && n.repl.askedFrom == n.seq {
		return
	}
	n.subscribe("gap: " + why)
}

func (n *Node) applyEvent(m ReplEvent) {
	switch {
	case m.Seq <= n.seq:
		return // already applied (a resend after a re-subscribe)
	case m.Seq > n.seq+1:
		n.gap("event seq " + strconv.FormatUint(m.Seq, 10))
		return
	}
	n.repl.asked = false
	for _, img := range m.Rows {
		n.applyImage(img)
	}
	n.seq = m.Seq
	n.logCommit(redoRecord{Seq: m.Seq, Rows: m.Rows})
	n.logRows(KindReplApplied, m.Rows, false, "seq %d rows %d", m.Seq, len(m.Rows))
	n.replicate(redoRecord{Seq: m.Seq, Rows: m.Rows})
}

func (n *Node) applyImage(img rowImage) {
	tab := n.tables[img.Table]
	if tab == nil {
		return
	}
	e := n.entry(tab, img.Key)
	e.exist, e.value = img.Exists, img.Value
	n.gc(e)
}

func (n *Node) applySnapshot(m ReplSnapshot) {
	if m.Seq < n.seq {
		return
	}
	n.repl.asked = false
	for _, tc := range n.cfg.Tables {
		for _, k := range n.keys(tc.Name) {
			n.applyImage(rowImage{Table: tc.Name, Key: k})
		}
	}
	for _, img := range m.Rows {
		n.applyImage(img)
	}
	n.seq = m.Seq
	// Simplification: the provisioned copy is durable at once.
	n.flushLog()
	n.redo.Replace([]any{n.snapshot()})
	n.logRows(KindReplApplied, m.Rows, true, "snapshot seq %d rows %d", m.Seq, len(m.Rows))
}

// serveSubscribe answers a replica's (re)subscription: the commits after
// from, preceded by a snapshot when the log starts later.
func (n *Node) serveSubscribe(to sim.ProcID, from uint64) {
	known := false
	for _, r := range n.repl.replicas {
		known = known || r == to
	}
	if !known {
		n.repl.replicas = append(n.repl.replicas, to)
	}
	if !n.repl.beating {
		n.repl.beating = true
		n.env.After(sim.Mono, n.cfg.SlaveNetTimeout/2, heartbeatTag{})
	}
	if from > n.seq {
		// The replica has commits this server never had or lost in a crash
		// (MariaDB stops the slave with error 1236); it is left as it is.
		n.env.Logf(KindReplError, "%s asks from seq %d, ahead of seq %d", n.env.NameOf(to), from, n.seq)
		return
	}
	log := n.redo.Records()
	recs := make([]redoRecord, 0, len(log)+len(n.unflushed))
	for _, r := range log {
		recs = append(recs, r.(redoRecord))
	}
	for _, r := range n.unflushed {
		recs = append(recs, r.(redoRecord))
	}
	for _, r := range recs {
		switch {
		case r.Snapshot && from < r.Seq:
			n.env.Send(to, ReplSnapshot{Seq: r.Seq, Rows: r.Rows})
			from = r.Seq
		case !r.Snapshot && r.Seq > from:
			n.env.Send(to, ReplEvent{Seq: r.Seq, Rows: r.Rows})
		}
	}
	n.env.Send(to, ReplHeartbeat{Seq: n.seq})
}

// replicate streams a commit to the replicas (after the local commit and
// the client's reply: asynchronous).
func (n *Node) replicate(rec redoRecord) {
	for _, r := range n.repl.replicas {
		n.env.Send(r, ReplEvent{Seq: rec.Seq, Rows: rec.Rows})
	}
}

func (n *Node) heartbeat() {
	for _, r := range n.repl.replicas {
		n.env.Send(r, ReplHeartbeat{Seq: n.seq})
	}
	n.env.After(sim.Mono, n.cfg.SlaveNetTimeout/2, heartbeatTag{})
}

func (n *Node) promote() {
	if n.repl.source == "" {
		return
	}
	n.env.Logf(KindPromoted, "was a replica of %s, at seq %d", n.repl.source, n.seq)
	n.repl.source, n.repl.sourceID, n.repl.asked = "", sim.NoProc, false
	n.env.Cancel(n.repl.netTimer)
	n.readOnly = false
	n.env.Disk().File(RoleFile).Replace([]any{roleRecord{}})
}

// AppendTrace renderings.

func (m ReplSubscribe) AppendTrace(b []byte) []byte {
	return strconv.AppendUint(append(b, "repl-subscribe from "...), m.From, 10)
}

func (m ReplEvent) AppendTrace(b []byte) []byte {
	b = strconv.AppendUint(append(b, "repl-event seq "...), m.Seq, 10)
	return appendImages(b, m.Rows)
}

func (m ReplSnapshot) AppendTrace(b []byte) []byte {
	b = strconv.AppendUint(append(b, "repl-snapshot seq "...), m.Seq, 10)
	return strconv.AppendInt(append(b, " rows "...), int64(len(m.Rows)), 10)
}

func (m ReplHeartbeat) AppendTrace(b []byte) []byte {
	return strconv.AppendUint(append(b, "repl-heartbeat seq "...), m.Seq, 10)
}

func (Promote) AppendTrace(b []byte) []byte { return append(b, "promote"...) }

func appendImages(b []byte, rows []rowImage) []byte {
	for _, r := range rows {
		b = append(append(append(append(b, ' '), r.Table...), '.'), r.Key...)
		if r.Exists {
			b = append(append(b, '='), r.Value...)
		} else {
			b = append(b, " deleted"...)
		}
	}
	return b
}
