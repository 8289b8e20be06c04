package redis

import (
	"fmt"
	"strings"
	"time"
)

// Version is the Redis version the node reports: the reference's main
// version (reference, "Sources").
const Version = "7.2.4"

// cmdInfo is INFO [section ...] (genRedisInfoString, R 7.2.4
// src/server.c). The node has the sections server, persistence, stats,
// replication and keyspace; "all", "everything", "default" or no argument
// give all of them; an unknown section gives an empty string.
// Simplification: fields that describe memory, CPU and clients are left
// out, and of the statistics only the synchronisation counters are kept.
func cmdInfo(n *Node, a []string) Value {
	want := map[string]bool{}
	all := len(a) == 1
	for _, s := range a[1:] {
		s = strings.ToLower(s)
		if s == "all" || s == "everything" || s == "default" {
			all = true
		}
		want[s] = true
	}
	var b strings.Builder
	section := func(name string, f func(*strings.Builder)) {
		if !all && !want[name] {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		f(&b)
	}
	section("server", n.infoServer)
	section("persistence", n.infoPersistence)
	section("stats", n.infoStats)
	section("replication", n.infoReplication)
	section("keyspace", n.infoKeyspace)
	return Bulk(b.String())
}

func (n *Node) infoServer(b *strings.Builder) {
	up := (n.env.Mono() - n.startMono) / int64(time.Second)
	fmt.Fprintf(b, "# Server\r\nredis_version:%s\r\nredis_mode:standalone\r\nprocess_name:%s\r\nrun_id:%s\r\ntcp_port:%d\r\nuptime_in_seconds:%d\r\nhz:%d\r\n",
		Version, n.env.Name(), n.runID, ListenPort, up, n.cfg.Hz)
}

func (n *Node) infoPersistence(b *strings.Builder) {
	aof := 0
	if n.cfg.AppendOnly {
		aof = 1
	}
	fmt.Fprintf(b, "# Persistence\r\nloading:0\r\nrdb_changes_since_last_save:%d\r\nrdb_bgsave_in_progress:0\r\nrdb_last_save_time:%d\r\nrdb_last_bgsave_status:ok\r\nrdb_last_load_keys_expired:%d\r\nrdb_last_load_keys_loaded:%d\r\naof_enabled:%d\r\naof_rewrite_in_progress:0\r\n",
		n.dirty, n.lastSave, n.stats.loadKeysExpired, n.stats.loadKeysLoaded, aof)
}

// infoStats has the synchronisation counters of the Stats section (R 7.2.4
// src/server.c genRedisInfoString, "# Stats": sync_full, sync_partial_ok,
// sync_partial_err, in that order); the section's other fields are left
// out.
func (n *Node) infoStats(b *strings.Builder) {
	fmt.Fprintf(b, "# Stats\r\nsync_full:%d\r\nsync_partial_ok:%d\r\nsync_partial_err:%d\r\n",
		n.stats.syncFull, n.stats.syncPartialOK, n.stats.syncPartialErr)
}

// infoReplication follows R 7.2.4 src/server.c:5999-6131 field by field.
// Replicas are listed with ip=<process name> and port=ListenPort.
func (n *Node) infoReplication(b *strings.Builder) {
	now := n.wallSec()
	b.WriteString("# Replication\r\n")
	if n.isReplica() {
		fmt.Fprintf(b, "role:slave\r\nmaster_host:%s\r\nmaster_port:%d\r\n", n.masterName, n.masterPort)
		status, lastIO, off := "down", -1, int64(1)
		if n.link == linkConnected {
			status = "up"
			lastIO = int(now - n.lastIO)
			off = n.offset
		} else if n.offset > 0 {
			off = n.offset // the cached master's offset
		}
		fmt.Fprintf(b, "master_link_status:%s\r\nmaster_last_io_seconds_ago:%d\r\nmaster_sync_in_progress:0\r\nslave_read_repl_offset:%d\r\nslave_repl_offset:%d\r\n",
			status, lastIO, off, off)
		if n.link != linkConnected {
			down := int64(-1)
			if n.downSince != 0 {
				down = now - n.downSince
			}
			fmt.Fprintf(b, "master_link_down_since_seconds:%d\r\n", down)
		}
		ro := 0
		if n.cfg.ReplicaReadOnly {
			ro = 1
		}
		fmt.Fprintf(b, "slave_priority:%d\r\nslave_read_only:%d\r\nreplica_announced:1\r\n", n.cfg.ReplicaPriority, ro)
	} else {
		b.WriteString("role:master\r\n")
	}
	fmt.Fprintf(b, "connected_slaves:%d\r\n", len(n.replicas))
	if n.cfg.MinReplicasToWrite > 0 && n.cfg.MinReplicasMaxLag >= time.Second {
		fmt.Fprintf(b, "min_slaves_good_slaves:%d\r\n", n.goodReplicas)
	}
	for i, r := range n.replicas {
		// A replica waiting for its full sync shows wait_bgsave and lag 0
		// (R 7.0.15 src/server.c:5146-5158, :5917-5921).
		state, lag := "online", now-r.ackTime
		if r.waiting {
			state, lag = "wait_bgsave", 0
		}
		fmt.Fprintf(b, "slave%d:ip=%s,port=%d,state=%s,offset=%d,lag=%d\r\n", i, n.env.NameOf(r.id), ListenPort, state, r.ackOff, lag)
	}
	active, first, hist := 0, int64(0), int64(0)
	if n.backlog {
		active, first, hist = 1, n.blFirst+1, n.blLen
	}
	fmt.Fprintf(b, "master_failover_state:no-failover\r\nmaster_replid:%s\r\nmaster_replid2:%s\r\nmaster_repl_offset:%d\r\nsecond_repl_offset:%d\r\nrepl_backlog_active:%d\r\nrepl_backlog_size:1048576\r\nrepl_backlog_first_byte_offset:%d\r\nrepl_backlog_histlen:%d\r\n",
		n.replID, n.replID2, n.offset, n.secondOffset, active, first, hist)
}

// infoKeyspace reports db0. Simplification: avg_ttl is 0 (Redis estimates
// it while sampling in the active expiry cycle).
func (n *Node) infoKeyspace(b *strings.Builder) {
	b.WriteString("# Keyspace\r\n")
	if len(n.db) > 0 {
		fmt.Fprintf(b, "db0:keys=%d,expires=%d,avg_ttl=0\r\n", len(n.db), len(n.volatile))
	}
}

// cmdRole is roleCommand (R 7.2.4 src/replication.c:3201-3260).
func cmdRole(n *Node, a []string) Value {
	if !n.isReplica() {
		reps := make([]Value, 0, len(n.replicas))
		for _, r := range n.replicas {
			if r.waiting {
				continue // roleCommand lists online replicas only (R 7.0.15 src/replication.c:3181)
			}
			reps = append(reps, Array(Bulk(n.env.NameOf(r.id)), Bulk(fmt.Sprint(ListenPort)), Bulk(fmt.Sprint(r.ackOff))))
		}
		return Array(Bulk("master"), Int(n.offset), Array(reps...))
	}
	state, off := "connecting", int64(-1)
	switch {
	case n.link == linkConnected:
		state, off = "connected", n.offset
	case n.answered:
		state = "sync"
	case n.presyncSession == n.session:
		// Its PSYNC is waiting for the master's full sync to start
		// (REPL_STATE_RECEIVE_PSYNC_REPLY is a handshake state, R 7.0.15
		// src/replication.c:1682-1685, :3196-3197).
		state = "handshake"
	}
	return Array(Bulk("slave"), Bulk(n.masterName), Int(n.masterPort), Bulk(state), Int(off))
}
