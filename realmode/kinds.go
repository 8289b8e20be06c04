package realmode

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/realmode/launch"
	"github.com/locksim/locksim/realmode/lazyfs"
	"github.com/locksim/locksim/scenarios"
)

// launcher is real mode's part of a process kind (scenarios.ProcKind): how
// the kind's real servers start, and what of its section real mode cannot
// reproduce. A kind without a launcher makes real mode refuse a scenario
// that has processes of it (exit 2).
type launcher struct {
	// real names what runs for the kind ("redis-server").
	real string
	// check reports the first part of the kind's section real mode cannot
	// reproduce (nil: none).
	check func(s *scenarios.Scenario) error
	// start starts the kind's servers; nil when the kind stays a model
	// driven by the kernel in real time (the storage service, which is
	// locksim's own).
	start func(rt *runtime, s *scenarios.Scenario, env *startEnv) error
	// group places the kind's real processes in replication groups (nil:
	// none); called in build order, so a kind may join another's group.
	group func(s *scenarios.Scenario, r *roles)
	// checkFault says why real mode cannot apply fault f to one of the
	// kind's servers, or "" (nil: it can apply any the proxy and the clock
	// library can).
	checkFault func(s *scenarios.Scenario, f faults.Spec) string
	// seen are the kind's trigger events (scenarios.ProcKind
	// TriggerEvents) that its gateway logs, from the replies that show
	// them; a trigger on another is refused.
	seen []string
}

// startEnv is what launchers share: loopback addresses, the data directory
// and the binaries.
type startEnv struct {
	pool        *launch.AddrPool
	dir         string
	serverBin   string
	sentinelBin string
}

// launchers maps a process kind's name (scenarios.ProcKind.Name) to its
// launcher. A kind with a real server adds one entry and its start
// function.
var launchers = map[string]launcher{
	scenarios.KindRedis:    {real: "redis-server", check: checkRedis, start: startRedis, group: groupRedis, checkFault: checkRedisFault, seen: []string{"key-set"}},
	scenarios.KindSentinel: {real: "redis-sentinel", start: startSentinels, group: groupSentinels},
	scenarios.KindStorage:  {real: "locksim's storage service"},
	// Counter loaders and clients are clients, not servers: models driven
	// in real time, talking to the real Redis through its gateway.
	scenarios.KindCounter: {real: "locksim's counter clients"},
	// memcached: Debian's memcached; the section's every field maps to a
	// flag (-m, -I, -M, -C); a restart starts an empty cache, as the
	// model's does. A clock drift is refused (checkMemcached).
	scenarios.KindMemcached: {real: launch.MemcachedProgram, check: checkMemcached, start: startMemcached, group: ownGroup(scenarios.KindMemcached), checkFault: checkMemcachedFault, seen: []string{"key-set"}},
	// MySQL: Debian's mariadb-server (mariadbd); see checkMySQL for what
	// real mode refuses.
	scenarios.KindMySQL: {real: launch.MariaDBServerProgram, check: checkMySQL, start: startMySQL, group: ownGroup(scenarios.KindMySQL), checkFault: checkMySQLFault,
		seen: []string{"row-locked", "committed"}},
	// Cache fillers are locksim's own processes, driven by the kernel in
	// real time; their writes go through the server's gateway.
	scenarios.KindFiller: {real: "locksim's cache filler"},
}

// ownGroup: each server of kind is a group of its own (no replication).
func ownGroup(kind string) func(s *scenarios.Scenario, r *roles) {
	return func(s *scenarios.Scenario, r *roles) {
		for _, p := range s.ServersOf(scenarios.KindNamed(kind)) {
			r.group[p.Name] = p.Name
		}
	}
}

// groupRedis: a master is its own group, a replica joins its master's.
func groupRedis(s *scenarios.Scenario, r *roles) {
	for _, n := range s.Redis() {
		r.group[n.Name] = n.Name
	}
	for _, n := range s.Redis() {
		if n.ReplicaOf != "" {
			r.group[n.Name] = r.group[n.ReplicaOf]
		}
	}
	// A cluster's nodes all talk over the bus: one group per cluster.
	for _, cs := range s.Clusters() {
		for _, n := range cs.Nodes {
			r.group[n.Name] = "cluster " + cs.Path
		}
	}
}

// groupSentinels: sentinels join their master's group and talk to all of
// it.
func groupSentinels(s *scenarios.Scenario, r *roles) {
	if sp := s.Sentinel(); sp != nil {
		for _, n := range sp.Names {
			r.watcher[n] = true
			r.group[n] = r.group[sp.Master]
		}
	}
}

// checkRedisFault: a power loss with AOF and a lazy fsync loses what the
// page cache held, which killing a real process does not: real mode puts
// the server's data directory on lazyfs (FUSE), which drops unsynced
// writes at the power loss; without FUSE it refuses the fault.
func checkRedisFault(s *scenarios.Scenario, f faults.Spec) string {
	if f.Kind != faults.KindCrash || f.Mode != "power" {
		return ""
	}
	for _, spec := range s.Redis() {
		if spec.Name == f.Node && spec.AppendOnly && spec.AppendFsync != "always" {
			if err := lazyfs.Available(); err != nil {
				return fmt.Sprintf("power loss with appendfsync %s loses writes that a kill keeps (they sit in the page cache); real mode needs FUSE (/dev/fuse) for a file system that drops unsynced writes: %v", fsyncName(spec.AppendFsync), err)
			}
		}
	}
	return ""
}

// checkRedis: the proxy delays the replication stream by one fixed amount,
// and redis-server takes min-replicas-max-lag in whole seconds.
func checkRedis(s *scenarios.Scenario) error {
	for _, n := range s.Redis() {
		if n.ReplicationDelay.Hi != n.ReplicationDelay.Lo {
			return &UnsupportedError{Where: "redis " + n.Name + ".replication_delay", Why: "the model draws a delay per message from the range; the proxy delays every byte by one fixed amount, so real mode takes a fixed replication_delay only"}
		}
		if n.MinReplicasMaxLag%time.Second != 0 {
			return &UnsupportedError{Where: "redis " + n.Name + ".min_replicas_max_lag", Why: fmt.Sprintf("redis-server takes min-replicas-max-lag in whole seconds, got %v", n.MinReplicasMaxLag)}
		}
	}
	return nil
}

// realKinds lists what real mode starts, for errors.
func realKinds() string {
	var out []string
	for _, l := range launchers {
		if l.start != nil {
			out = append(out, l.real)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// checkMySQL refuses what of a MySQL section real mode cannot reproduce:
// replication (real mode starts no replicas), read_only (mariadbd runs with
// --skip-grant-tables, where every client is privileged and read_only does
// not apply to it), and a server clock offset or drift (real mode does not
// shift mariadbd's clock).
func checkMySQL(s *scenarios.Scenario) error {
	for i, m := range s.MySQL() {
		where := fmt.Sprintf("mysql[%d] (%s)", i, m.Name)
		switch {
		case m.Config.ReplicaOf != "":
			return &UnsupportedError{Where: where + ".replica_of", Why: "real mode starts no MariaDB replicas (binlog replication is not set up)"}
		case m.Config.ReadOnly:
			return &UnsupportedError{Where: where + ".read_only", Why: "real mode runs mariadbd with --skip-grant-tables, where every client is privileged and read_only does not apply to it"}
		case m.Clock != (scenarios.ClockSpec{}):
			return &UnsupportedError{Where: where + ".clock", Why: "real mode does not shift mariadbd's clock"}
		}
	}
	return nil
}

// checkMySQLFault: a clock fault on a MariaDB server (real mode does not
// shift its clock), and a power loss with innodb_flush_log_at_trx_commit 0
// or 2, which loses commits the page cache (2) or the log buffer (0) held
// and a kill keeps (2) or loses only partly the same way (0): it needs a
// filesystem that drops unsynced data.
func checkMySQLFault(s *scenarios.Scenario, f faults.Spec) string {
	for _, m := range s.MySQL() {
		if m.Name != f.Node {
			continue
		}
		switch {
		case faults.ClockKind(f.Kind):
			return "real mode does not shift mariadbd's clock"
		case f.Kind == faults.KindCrash && f.Mode == "power" && m.Config.FlushLogAtTrxCommit != 1:
			return fmt.Sprintf("power loss with innodb_flush_log_at_trx_commit %d loses commits that a kill keeps (the redo log is not flushed at commit); it needs a filesystem that drops unsynced data, so real mode refuses it (a power loss equals a kill only with innodb_flush_log_at_trx_commit 1)", m.Config.FlushLogAtTrxCommit)
		}
	}
	return ""
}

// memcachedDrift says why real mode cannot drift a memcached server's
// clock: memcached keeps item time on its monotonic clock (current_time,
// ticked from CLOCK_MONOTONIC: memcached.c clock_handler; nodes/memcached
// doc.go "Clocks"), and the model's drift runs both clocks, so the model's
// items expire early or late by the drift; the clock library shifts only
// the wall clock, so the real server's would not.
const memcachedDrift = "memcached measures item lifetimes on its monotonic clock (memcached.c clock_handler, CLOCK_MONOTONIC); the model's drift runs that clock too, so its items expire early or late, but real mode's clock library shifts only the wall clock: the real server's items would expire on time"

// checkMemcached refuses a memcached section's clock drift
// (memcachedDrift); an offset is taken (the wall clock read at start-up).
func checkMemcached(s *scenarios.Scenario) error {
	for i, m := range s.Memcached() {
		if m.Clock.Drift != 0 {
			return &UnsupportedError{Where: lineOf(s, fmt.Sprintf("memcached[%d].clock.drift", i)), Why: memcachedDrift}
		}
	}
	return nil
}

// checkMemcachedFault refuses a clock drift of a memcached server
// (memcachedDrift); a clock jump changes nothing on either (the wall
// clock is read at start-up only).
func checkMemcachedFault(s *scenarios.Scenario, f faults.Spec) string {
	if f.Kind != faults.KindClockDrift {
		return ""
	}
	for _, m := range s.Memcached() {
		if m.Name == f.Node {
			return memcachedDrift
		}
	}
	return ""
}
