package sentinel

import (
	"fmt"
	"strings"
	"time"
)

// Config is one Sentinel process's configuration: the master it monitors
// and the timings of sentinel.conf. Every sentinel of a deployment normally
// gets the same Config (it may list its own name among Sentinels; New drops
// it).
type Config struct {
	// MasterName is the name clients ask for ("sentinel monitor <name> ..."),
	// "mymaster" in sentinel.conf:92.
	MasterName string
	// Master is the process name of the initial master. A process name
	// stands for an address in the simulation: Sentinel sends it as the host
	// of REPLICAOF and returns it from get-master-addr-by-name, with Port.
	Master string
	// Replicas are the known replica process names. Real Sentinel learns them
	// from the master's INFO (slaveN lines, sentinel.c:2557-2595); the model
	// does that too, and starts from this list as a restarted Sentinel starts
	// from the "known-replica" lines of its rewritten config.
	Replicas []string
	// Sentinels are the other sentinel process names. Real Sentinel learns
	// them from hello messages on the masters' __sentinel__:hello channel
	// (sentinel.c:2858-2960). Simplification: the model starts from this list
	// (its own name, if present, is ignored) and also adds any sentinel whose
	// hello reaches it.
	Sentinels []string
	// Quorum is how many sentinels must agree that the master is down
	// (ODOWN) before a failover starts; 2 in sentinel.conf:92. The leader
	// additionally needs a majority of all known sentinels
	// (sentinelGetLeader, sentinel.c:4805-4870).
	Quorum int
	// DownAfter is down-after-milliseconds: how long without a valid PING
	// reply before an instance is subjectively down. 30 s (sentinel.conf:133,
	// sentinel_default_down_after sentinel.c:89).
	DownAfter time.Duration
	// FailoverTimeout is failover-timeout: it bounds the election (with 10 s,
	// sentinel.c:5120-5126), the wait for the promotion and the replica
	// reconfiguration, and a sentinel retries a failover only after twice
	// this (sentinel.c:4980). 180 s (sentinel.conf:233, sentinel.c:97).
	FailoverTimeout time.Duration
	// ParallelSyncs is how many replicas are reconfigured to the new master
	// at a time (sentinel.conf:208, SENTINEL_DEFAULT_PARALLEL_SYNCS
	// sentinel.c:101).
	ParallelSyncs int
}

// Port is the port every simulated Redis node listens on. Addresses are
// process names, so the port carries no information; it is there because
// Sentinel's replies and REPLICAOF carry one (redis.conf "port 6379").
const Port = 6379

// portString is Port as Sentinel writes it on the wire.
const portString = "6379"

// DefaultConfig returns the settings of the sentinel.conf shipped with Redis
// 7.2. It leaves Master, Replicas and Sentinels empty: the caller names the
// processes.
func DefaultConfig() Config {
	return Config{
		MasterName:      "mymaster",        // sentinel.conf:92
		Quorum:          2,                 // sentinel.conf:92
		DownAfter:       30 * time.Second,  // sentinel.conf:133; sentinel.c:89
		FailoverTimeout: 180 * time.Second, // sentinel.conf:233; sentinel.c:97
		ParallelSyncs:   1,                 // sentinel.conf:208; sentinel.c:101
	}
}

// Validate reports the first problem with c, naming the field and what is
// allowed.
func (c Config) Validate() error {
	if c.MasterName == "" || strings.ContainsAny(c.MasterName, " \t\r\n") {
		return fmt.Errorf("sentinel: MasterName %q: must be a non-empty name without spaces", c.MasterName)
	}
	if c.Master == "" {
		return fmt.Errorf("sentinel: Master is empty: name the process of the initial master")
	}
	seen := map[string]string{c.Master: "Master"}
	for i, r := range c.Replicas {
		if r == "" {
			return fmt.Errorf("sentinel: Replicas[%d] is empty: each replica is a process name", i)
		}
		if prev, dup := seen[r]; dup {
			return fmt.Errorf("sentinel: Replicas[%d] %q is already named by %s: each process may appear once", i, r, prev)
		}
		seen[r] = fmt.Sprintf("Replicas[%d]", i)
	}
	peers := map[string]int{}
	for i, s := range c.Sentinels {
		if s == "" {
			return fmt.Errorf("sentinel: Sentinels[%d] is empty: each sentinel is a process name", i)
		}
		if prev, dup := seen[s]; dup {
			return fmt.Errorf("sentinel: Sentinels[%d] %q is already named by %s: a sentinel cannot also be a Redis node", i, s, prev)
		}
		if j, dup := peers[s]; dup {
			return fmt.Errorf("sentinel: Sentinels[%d] %q repeats Sentinels[%d]", i, s, j)
		}
		peers[s] = i
	}
	if c.Quorum < 1 {
		return fmt.Errorf("sentinel: Quorum %d: must be at least 1", c.Quorum)
	}
	if c.DownAfter < time.Millisecond {
		return fmt.Errorf("sentinel: DownAfter %v: must be at least 1ms (down-after-milliseconds is a positive number of milliseconds)", c.DownAfter)
	}
	if c.FailoverTimeout < time.Millisecond {
		return fmt.Errorf("sentinel: FailoverTimeout %v: must be at least 1ms (failover-timeout is a positive number of milliseconds)", c.FailoverTimeout)
	}
	if c.ParallelSyncs < 1 {
		return fmt.Errorf("sentinel: ParallelSyncs %d: must be at least 1", c.ParallelSyncs)
	}
	return nil
}
