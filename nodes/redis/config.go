package redis

import (
	"fmt"
	"strings"
	"time"

	"github.com/locksim/locksim/sim"
)

// FsyncPolicy is the appendfsync setting: when the append-only file is
// fsynced relative to the write(2) that put a command into the page cache.
type FsyncPolicy string

// The three appendfsync policies (R 7.2.4 src/config.c:3136, aof_fsync_enum;
// reference section 2.2).
const (
	// FsyncAlways writes and fsyncs before the reply is sent
	// (flushAppendOnlyFile, R src/aof.c:1064-1265).
	FsyncAlways FsyncPolicy = "always"
	// FsyncEverysec writes before the reply and fsyncs in the background at
	// most once per wall-clock second (R 7.0.15 src/aof.c:1075-1077).
	FsyncEverysec FsyncPolicy = "everysec"
	// FsyncNo writes before the reply and leaves the flush to the OS
	// (sim.Writeback, 30 s).
	FsyncNo FsyncPolicy = "no"
)

// SavePoint is one RDB save point: save when at least Changes writes happened
// and more than Seconds seconds passed since the last save, both measured on
// the wall clock (R 7.2.4 src/server.c:1403-1407).
type SavePoint struct {
	Seconds int64
	Changes int64
}

// Config configures one simulated Redis server. Build it from DefaultConfig
// and change the fields a scenario sets.
type Config struct {
	// AppendOnly turns the append-only file on (appendonly yes). When it is on,
	// a restart loads only the AOF, as real Redis does (loadDataFromDisk).
	AppendOnly bool
	// AppendFsync is the AOF fsync policy.
	AppendFsync FsyncPolicy
	// Save holds the RDB save points; empty means no automatic RDB saves
	// (save "").
	Save []SavePoint
	// Hz is the serverCron frequency: the active expiry cycle, save points,
	// the everysec fsync check and blocked-client timeouts run every 1/Hz.
	Hz int
	// MinReplicasToWrite is min-replicas-to-write: a master refuses writes
	// with NOREPLICAS unless that many replicas acked within
	// MinReplicasMaxLag (0 disables the check).
	MinReplicasToWrite int
	// MinReplicasMaxLag is min-replicas-max-lag, in whole seconds.
	MinReplicasMaxLag time.Duration
	// ReplicaReadOnly is replica-read-only: a replica answers writes from
	// ordinary clients with READONLY.
	ReplicaReadOnly bool
	// ReplicaPriority is replica-priority, reported in INFO replication as
	// slave_priority (Sentinel skips replicas with priority 0).
	ReplicaPriority int
	// ReplPingReplicaPeriod is repl-ping-replica-period: how often a master
	// PINGs its replicas through the replication stream.
	ReplPingReplicaPeriod time.Duration
	// ReplTimeout is repl-timeout: a replica that heard nothing from its
	// master, or a master that got no ack from a replica, for this long
	// (wall clock, whole seconds) drops the link.
	ReplTimeout time.Duration
	// ReplDisklessSyncDelay is repl-diskless-sync-delay (with
	// repl-diskless-sync yes, 7.0's default): a master that must serve a
	// full sync waits until the oldest waiting replica has waited this long
	// (whole seconds, checked once a second by replicationCron) before it
	// starts the transfer, so that more replicas can share it; 0 starts it
	// at once (replication.go, startPendingSync).
	ReplDisklessSyncDelay time.Duration
	// ReplBacklogSize is repl-backlog-size in bytes of the replication
	// stream: a reconnecting replica resynchronises partially while its
	// offset is still in the backlog (0 means the default, 1 MB).
	ReplBacklogSize int64
	// ReplicaOf is the process name of this node's master; "" makes it a
	// master. A CONFIG REWRITE persisted on the node's disk overrides it
	// after a restart.
	ReplicaOf string
	// Cluster turns on cluster mode (cluster-enabled yes, cluster.go); the
	// node's role then comes from the cluster layout and ReplicaOf must be
	// empty.
	Cluster *ClusterConfig
	// ReplicationDelay is an extra delay applied to everything this replica
	// receives from its master (the full sync and the command stream), on
	// top of the network latency. Order is preserved.
	ReplicationDelay sim.Range
	// MaxMemory is maxmemory in bytes of the model's dataset accounting
	// (see memory.go); 0 means no limit.
	MaxMemory int64
	// MaxMemoryPolicy is maxmemory-policy: what to do when a command runs
	// with memory over MaxMemory.
	MaxMemoryPolicy EvictionPolicy
	// MaxMemorySamples is maxmemory-samples: keys sampled per round of the
	// approximated LRU and TTL policies.
	MaxMemorySamples int
}

// DefaultConfig returns the configuration of a stock Redis 7.2 server.
func DefaultConfig() Config {
	return Config{
		// appendonly no (R 7.2.4 src/config.c:3086; redis.conf:1387).
		AppendOnly: false,
		// appendfsync everysec (R 7.2.4 src/config.c:3136).
		AppendFsync: FsyncEverysec,
		// save 3600 1 300 100 60 10000 (R 7.2.4 src/server.c:2073-2077;
		// redis.conf:439).
		Save: []SavePoint{{Seconds: 3600, Changes: 1}, {Seconds: 300, Changes: 100}, {Seconds: 60, Changes: 10000}},
		// hz 10 (CONFIG_DEFAULT_HZ, R 7.2.4 src/server.h:114).
		Hz: 10,
		// min-replicas-to-write 0, min-replicas-max-lag 10
		// (R 7.2.4 src/config.c:3181-3182).
		MinReplicasToWrite: 0,
		MinReplicasMaxLag:  10 * time.Second,
		// replica-read-only yes (R 7.2.4 src/config.c:3080).
		ReplicaReadOnly: true,
		// replica-priority 100 (R 7.2.4 src/config.c:3163).
		ReplicaPriority: 100,
		// repl-ping-replica-period 10, repl-timeout 60
		// (R 7.2.4 src/config.c:3174-3175).
		ReplPingReplicaPeriod: 10 * time.Second,
		ReplTimeout:           60 * time.Second,
		// repl-diskless-sync yes, repl-diskless-sync-delay 5,
		// repl-diskless-sync-max-replicas 0 (R 7.0.15 src/config.c:2985,
		// :3075, :3096).
		ReplDisklessSyncDelay: 5 * time.Second,
		// maxmemory 0, maxmemory-policy noeviction, maxmemory-samples 5
		// (R 7.2.4 src/config.c:3211, :3135, :3165).
		MaxMemory:        0,
		MaxMemoryPolicy:  NoEviction,
		MaxMemorySamples: 5,
		// repl-backlog-size 1mb (R 7.2.4 src/config.c:3208).
		ReplBacklogSize: defaultBacklogSize,
	}
}

// defaultBacklogSize is repl-backlog-size's default, 1 MB (R 7.2.4
// src/config.c:3208).
const defaultBacklogSize = 1 << 20

func (c Config) backlogSize() int64 {
	if c.ReplBacklogSize <= 0 {
		return defaultBacklogSize
	}
	return c.ReplBacklogSize
}

// Validate reports the first bad field, naming it and what is allowed.
func (c Config) Validate() error {
	switch c.AppendFsync {
	case FsyncAlways, FsyncEverysec, FsyncNo:
	default:
		return fmt.Errorf("redis config: AppendFsync: unknown policy %q (allowed: always, everysec, no)", string(c.AppendFsync))
	}
	for i, sp := range c.Save {
		if sp.Seconds <= 0 || sp.Changes <= 0 {
			return fmt.Errorf("redis config: Save[%d]: save point %d %d: seconds and changes must both be positive", i, sp.Seconds, sp.Changes)
		}
	}
	// CONFIG_MIN_HZ 1, CONFIG_MAX_HZ 500 (R 7.2.4 src/server.h:115-116).
	if c.Hz < 1 || c.Hz > 500 {
		return fmt.Errorf("redis config: Hz: %d out of range (allowed: 1..500)", c.Hz)
	}
	if c.MinReplicasToWrite < 0 {
		return fmt.Errorf("redis config: MinReplicasToWrite: %d is negative (allowed: 0 or more)", c.MinReplicasToWrite)
	}
	if err := wholeSeconds("MinReplicasMaxLag", c.MinReplicasMaxLag, false); err != nil {
		return err
	}
	if err := wholeSeconds("ReplPingReplicaPeriod", c.ReplPingReplicaPeriod, true); err != nil {
		return err
	}
	if err := wholeSeconds("ReplTimeout", c.ReplTimeout, true); err != nil {
		return err
	}
	if err := wholeSeconds("ReplDisklessSyncDelay", c.ReplDisklessSyncDelay, false); err != nil {
		return err
	}
	if c.ReplicaPriority < 0 {
		return fmt.Errorf("redis config: ReplicaPriority: %d is negative (allowed: 0 or more)", c.ReplicaPriority)
	}
	if c.ReplicationDelay.Lo < 0 || c.ReplicationDelay.Hi < c.ReplicationDelay.Lo {
		return fmt.Errorf("redis config: ReplicationDelay: %v is not a valid range (allowed: 0 <= lo <= hi)", c.ReplicationDelay)
	}
	if err := c.validateMemory(); err != nil {
		return err
	}
	if c.Cluster != nil {
		if c.ReplicaOf != "" {
			return fmt.Errorf("redis config: ReplicaOf: must be empty in cluster mode (the cluster layout gives the role)")
		}
		if err := c.Cluster.Validate(); err != nil {
			return fmt.Errorf("redis config: %w", err)
		}
	}
	if strings.ContainsAny(c.ReplicaOf, " \t\r\n") {
		return fmt.Errorf("redis config: ReplicaOf: %q is not a process name", c.ReplicaOf)
	}
	return nil
}

// wholeSeconds checks a duration that Redis configures in whole seconds.
func wholeSeconds(field string, d time.Duration, positive bool) error {
	switch {
	case d < 0 || (positive && d == 0):
		want := "0s or more"
		if positive {
			want = "at least 1s"
		}
		return fmt.Errorf("redis config: %s: %v out of range (allowed: whole seconds, %s)", field, d, want)
	case d%time.Second != 0:
		return fmt.Errorf("redis config: %s: %v is not a whole number of seconds (Redis configures it in seconds)", field, d)
	}
	return nil
}
