package clients

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/nodes/memcached"
	"github.com/locksim/locksim/nodes/zookeeper"
	"github.com/locksim/locksim/sim"
)

// Algorithm declares one lock algorithm in one place: its name, the node
// kind it needs, its parameters (each with its parser and its check), its
// defaults with their sources (the DefaultLockConfig constants), its own
// validation, its lock lifetime and the bound of one acquire attempt (for the
// liveness bound and fuzz sizing), and its constructor. Adding an algorithm
// is one entry in registry plus its implementation file; docs/design/extending.md
// walks through it.
type Algorithm struct {
	// Name is the scenario's lock.algorithm.
	Name string
	// Doc says what the algorithm is and where it comes from (Markdown,
	// one paragraph); simrun docs writes it, with the parameters and their
	// defaults, into docs/reference/algorithms.md.
	Doc string
	// NodeKind is the process kind of the lock's servers (NodeRedis or
	// NodeZooKeeper); the scenario layer checks lock.node(s) against it.
	NodeKind string
	// MultiNode: the algorithm takes nodes (independent masters), not node.
	MultiNode bool
	// MinTries is the smallest lock.tries; 0 means tries 0 (wait forever)
	// is allowed.
	MinTries int
	// Fencing lists the fencing_token sources the algorithm can use.
	Fencing []string
	// Params are the parameters the algorithm accepts besides "algorithm",
	// in documentation order.
	Params []Param
	// defaults sets the real library's defaults (beyond key and
	// fencing_token, which every algorithm shares).
	defaults func(*LockConfig)
	// validate checks what is specific to the algorithm, after the common
	// checks; nil means nothing more.
	validate func(LockConfig) error
	// lifetime is how long one grant lives without renewal as the client
	// configures it (ttl, Redisson's lease, the requested session timeout).
	lifetime func(LockConfig) time.Duration
	// MaxLifetime caps the lifetime a server with default settings grants
	// (0: no cap). ZooKeeper negotiates a session down to its
	// maxSessionTimeout, 20 × tickTime = 40 s (ZooKeeperServer.java;
	// nodes/zookeeper Config.Negotiate).
	MaxLifetime time.Duration
	// tryBound bounds one acquire attempt before its retry delay.
	tryBound func(LockConfig) time.Duration
	// build returns the algorithm's implementation for a client.
	build func(*client) algorithm
}

// Node kinds an algorithm can need: the process kinds of nodes/redis and
// nodes/zookeeper as the scenario names them.
const (
	NodeRedis     = "redis"
	NodeZooKeeper = "zookeeper"
	NodeMemcached = "memcached"
	NodeMySQL     = "mysql"
)

// Param is one lock parameter: its scenario name (snake_case), how its text
// is parsed into a LockConfig, and its range check.
type Param struct {
	Name string
	// Doc says what the parameter means (Markdown, a sentence or two);
	// docs/reference/algorithms.md shows it beside the parameter's
	// default.
	Doc   string
	set   func(*LockConfig, string) error
	get   func(LockConfig) string
	check func(LockConfig) error
}

// Default returns the parameter's value in c as a scenario would write it
// (c is usually DefaultLockConfig's: the parameter's default).
func (p Param) Default(c LockConfig) string { return p.get(c) }

// registry holds every algorithm, in the order the documentation gives
// them. This is the one list of algorithms.
var registry = []*Algorithm{
	singleAlgorithm(RedisSingle, pExtendEvery),
	singleAlgorithm(RedisSetNXExpire),
	singleAlgorithm(RedisFixedValue),
	singleAlgorithm(RedisGetDel),
	redlockAlgorithm,
	redsyncAlgorithm,
	redissonAlgorithm,
	zookeeperAlgorithm,
	memcachedAddAlgorithm,
	mysqlAlgorithm(MySQLInsert, 2, func(c *client) algorithm { return &mysqlInsert{mysqlConn: mysqlConn{c: c}} }),
	// BEGIN, SELECT ... FOR UPDATE (which waits for the row lock, up to
	// innodb_lock_wait_timeout), and when the row is missing ROLLBACK,
	// INSERT, BEGIN and SELECT again, each bounded by node_timeout.
	mysqlAlgorithm(MySQLForUpdate, 7, func(c *client) algorithm { return &mysqlForUpdate{mysqlConn: mysqlConn{c: c}} }),
	getsetAlgorithm,
	reentrantAlgorithm(RedisReentrant, false),
	reentrantAlgorithm(RedisReentrantHash, true),
}

// Algorithms lists the algorithm names in the order the documentation gives
// them.
var Algorithms = func() []string {
	var out []string
	for _, a := range registry {
		out = append(out, a.Name)
	}
	return out
}()

// Lookup returns the descriptor of an algorithm, or nil when there is none.
func Lookup(name string) *Algorithm {
	for _, a := range registry {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// Lifetime is how long one grant of the lock lives without renewal as the
// client configures it: the ttl, Redisson's lease or the requested session
// timeout. The liveness bound uses it (SCENARIO_FORMAT.md "Verdicts").
func (c LockConfig) Lifetime() time.Duration {
	if a := Lookup(c.Algorithm); a != nil {
		return a.lifetime(c)
	}
	return 0
}

// ServerLifetime is Lifetime capped by what a default server grants
// (Algorithm.MaxLifetime): how long a lock really lives. Fuzzing sizes its
// faults with it.
func (c LockConfig) ServerLifetime() time.Duration {
	a := Lookup(c.Algorithm)
	if a == nil {
		return 0
	}
	l := a.lifetime(c)
	if a.MaxLifetime > 0 && l > a.MaxLifetime {
		return a.MaxLifetime
	}
	return l
}

// WaitBound bounds how long one want can take before it ends (acquired or
// gave up): tries × (the longest retry delay + the bound of one attempt),
// counting one try when the algorithm waits forever (tries 0).
func (c LockConfig) WaitBound() time.Duration {
	a := Lookup(c.Algorithm)
	if a == nil {
		return 0
	}
	tries := c.Tries
	if tries <= 0 {
		tries = 1
	}
	return time.Duration(tries) * (c.RetryDelay.Hi + a.tryBound(c))
}

// The algorithms.

// algorithmDocs are the Doc texts of the algorithms that share a
// constructor (the single-instance family, the MySQL locks, the re-entrant
// locks), beside their names.
var algorithmDocs = map[string]string{
	RedisSingle:        "`SET k v NX PX ttl` with a unique value, released by the compare-and-delete script (the distlock page's single instance); with `wait_replicas`, WAIT for that many replicas after the SET.",
	RedisSetNXExpire:   "SETNX then EXPIRE as two commands (not atomic): a crash between them leaves a key that never expires.",
	RedisFixedValue:    "The same value for every client, released by DEL: a late release deletes someone else's lock.",
	RedisGetDel:        "Release by GET, compare in the client, then DEL (not atomic): a pause between them deletes someone else's lock.",
	MySQLInsert:        "INSERT of the lock's row into a lock table with a unique key (autocommit); error 1062 means held; DELETE releases. The row never expires.",
	MySQLForUpdate:     "BEGIN; SELECT ... FOR UPDATE on the lock's row (created once if missing); the critical section; COMMIT. The connection stays open while the lock is held.",
	RedisReentrant:     "Naive re-entry: SET NX PX with a value fixed per client; on failure GET, and its own value counts as re-entry; every release is DEL, so an inner release frees the outer lock.",
	RedisReentrantHash: "Redisson's counted hash without a watchdog: HINCRBY on the owner field; the release decrements and deletes at zero (`ttl` is the lease).",
}

// singleAlgorithm is the single-instance family (reference §4.1): one
// Redis node, SET NX PX or its broken variants, optional WAIT.
func singleAlgorithm(name string, extra ...Param) *Algorithm {
	ps := []Param{pKey, pNode, pTTL, pTries, pRetryDelay, pNodeTimeout, pWaitReplicas, pWaitTimeout, pFencingToken}
	return &Algorithm{
		Name: name, Doc: algorithmDocs[name], NodeKind: NodeRedis, MinTries: 1,
		Fencing: []string{FencingNone, FencingIncr},
		Params:  append(ps, extra...),
		defaults: func(c *LockConfig) {
			c.TTL = singleTTL
			c.Tries = singleTries
			c.RetryDelay = sim.Range{Lo: 0, Hi: singleRetryMax}
			c.NodeTimeout = commandTimeout
			c.WaitTimeout = waitTimeout
		},
		lifetime: ttlLifetime,
		tryBound: nodeTimeoutBound,
		build:    func(c *client) algorithm { return &single{c: c} },
	}
}

var redlockAlgorithm = &Algorithm{
	Name: Redlock, NodeKind: NodeRedis, MultiNode: true, MinTries: 1,
	Doc:     "antirez's algorithm as specified (the distlock page; redlock-rb): SET NX PX on each of `nodes` in turn, held when a majority granted within the validity (ttl - elapsed - drift), released on every node.",
	Fencing: []string{FencingNone, FencingIncr},
	Params:  []Param{pKey, pNodes, pTTL, pTries, pRetryDelay, pDriftFactor, pDriftExtra, pNodeTimeout, pFanout, pElapsedClock, pRelease, pValidityCheck, pExtendEvery, pFencingToken},
	defaults: func(c *LockConfig) {
		c.TTL = redlockTTL
		c.Tries = redlockTries
		c.RetryDelay = sim.Range{Lo: 0, Hi: redlockRetryMax}
		c.DriftFactor = redlockDriftFactor
		c.DriftExtra = redlockDriftExtra
		c.NodeTimeout = redlockNodeTimeout
		// The spec and redlock-rb contact the nodes one after the other
		// (redlock.rb:55-83 "@servers.each"), read Time.now (the wall clock),
		// unlock all nodes on failure ("unlock all", reference §4.1 step 5)
		// and require validity > 0.
		c.Fanout = FanoutSequential
		c.ElapsedClock = ClockWall
		c.Release = ReleaseAll
		c.ValidityCheck = true
	},
	lifetime: ttlLifetime,
	// A sequential round waits on each node in turn.
	tryBound: func(c LockConfig) time.Duration {
		if c.Fanout == FanoutSequential && len(c.Nodes) > 0 {
			return c.NodeTimeout * time.Duration(len(c.Nodes))
		}
		return c.NodeTimeout
	},
	build: func(c *client) algorithm { return &quorumLock{c: c} },
}

var redsyncAlgorithm = &Algorithm{
	Name: Redsync, NodeKind: NodeRedis, MultiNode: true, MinTries: 1,
	Doc:     "go-redsync/redsync v4: Redlock with its own defaults, parallel requests, elapsed time on the monotonic clock and a round bounded by ttl x `timeout_factor`.",
	Fencing: []string{FencingNone, FencingIncr},
	Params:  []Param{pKey, pNodes, pTTL, pTries, pRetryDelay, pDriftFactor, pTimeoutFactor, pNodeTimeout, pSetNXOnExtend, pExtendEvery, pFencingToken},
	defaults: func(c *LockConfig) {
		c.TTL = redsyncTTL
		c.Tries = redsyncTries
		c.RetryDelay = sim.Range{Lo: redsyncRetryMin, Hi: redsyncRetryMax}
		c.DriftFactor = redsyncDriftFactor
		c.TimeoutFactor = redsyncTimeoutFactor
		// Unlock and Extend run with the caller's context and no timeout
		// of their own (mutex.go:142-173): the go-redis read timeout bounds them.
		c.NodeTimeout = commandTimeout
		// redsync is parallel (actOnPoolsAsync, mutex.go:269-321), measures
		// on Go's monotonic reading (time.Now/Sub, reference §4.2), unlocks
		// all pools and requires now.Before(until).
		c.Fanout = FanoutParallel
		c.ElapsedClock = ClockMonotonic
		c.Release = ReleaseAll
		c.ValidityCheck = true
	},
	lifetime: ttlLifetime,
	// The acquire round is bounded by ttl × timeout_factor (mutex.go:269-321).
	tryBound: func(c LockConfig) time.Duration { return time.Duration(float64(c.TTL) * c.TimeoutFactor) },
	build:    func(c *client) algorithm { return &quorumLock{c: c} },
}

var redissonAlgorithm = &Algorithm{
	Name: Redisson, NodeKind: NodeRedis, MinTries: 0,
	Doc:     "Redisson's RLock with its watchdog: a hash lock renewed every `renew_every` while held; WAIT after each lock operation when the node has replicas.",
	Fencing: []string{FencingNone, FencingIncr},
	Params:  []Param{pKey, pNode, pLease, pRenewEvery, pWatchdog, pWaitReplicasOn, pWaitTimeout, pNodeTimeout, pTries, pRetryDelay, pFencingToken},
	defaults: func(c *LockConfig) {
		c.Lease = redissonLease
		c.Watchdog = true
		// lock() waits until it gets the lock (RedissonLock.java lock()).
		c.Tries = 0
		c.RetryDelay = sim.Range{Lo: redissonPollMin, Hi: redissonPollMax}
		c.NodeTimeout = redissonTimeout
		// checkLockSyncedSlaves = true, slavesSyncTimeout = 1000 ms
		// (config/Config.java:81-89).
		c.WaitReplicasOn = true
		c.WaitTimeout = waitTimeout
	},
	validate: func(c LockConfig) error {
		if c.Replicas < 0 {
			return fmt.Errorf("lock.replicas: must be >= 0, got %d", c.Replicas)
		}
		return nil
	},
	lifetime: func(c LockConfig) time.Duration { return c.Lease },
	tryBound: nodeTimeoutBound,
	build:    func(c *client) algorithm { return &redisson{c: c} },
}

var zookeeperAlgorithm = &Algorithm{
	Name: ZooKeeper, NodeKind: NodeZooKeeper, MinTries: 0,
	Doc:     "The ephemeral-sequential znode recipe (Curator's InterProcessMutex) over a session that the client keeps alive with pings.",
	Fencing: []string{FencingNone, FencingZxid},
	Params:  []Param{pKey, pNode, pSessionTimeout, pHeartbeat, pClientExpiry, pLostOnDisconnect, pTries, pRetryDelay, pFencingToken},
	defaults: func(c *LockConfig) {
		c.SessionTimeout = zkSessionTimeout
		// InterProcessMutex.acquire() without a timeout waits forever.
		c.Tries = 0
		c.RetryDelay = sim.Range{Lo: 0, Hi: zkRetryMax}
	},
	validate: func(c LockConfig) error {
		if strings.Contains(c.Key, "/") {
			return fmt.Errorf("lock.key: the zookeeper lock's parent znode is /<key>; %q must not contain '/'", c.Key)
		}
		return nil
	},
	lifetime:    func(c LockConfig) time.Duration { return c.SessionTimeout },
	MaxLifetime: zookeeper.DefaultConfig().Negotiate(math.MaxInt64),
	tryBound:    nodeTimeoutBound,
	build:       func(c *client) algorithm { return &zkLock{c: c} },
}

// singleRetry is the retry policy of the single-instance recipes, which
// issue 13's algorithms share (the recipes give none; redlock-rb's, see
// singleTries).
func singleRetry(c *LockConfig) {
	c.Tries = singleTries
	c.RetryDelay = sim.Range{Lo: 0, Hi: singleRetryMax}
}

var memcachedAddAlgorithm = &Algorithm{
	Name: MemcachedAdd, NodeKind: NodeMemcached, MinTries: 1,
	Doc: "`add key 0 exptime value` on a memcached server; NOT_STORED means held; released by `delete`, or by `gets` then a `cas` with exptime -1 that expires only the client's own item.",
	// incr: "incr <key>:token" on the lock's memcached server.
	Fencing: []string{FencingNone, FencingIncr},
	Params:  []Param{pKey, pNode, pExptime, pCacheRelease, pTries, pRetryDelay, pNodeTimeout, pFencingToken},
	defaults: func(c *LockConfig) {
		c.Exptime = memcachedExptime
		c.CacheRelease = CacheReleaseDelete
		singleRetry(c)
		c.NodeTimeout = commandTimeout
	},
	// exptime 0 never expires: the lock lives until it is deleted or
	// evicted; the liveness bound then counts no lifetime.
	lifetime: func(c LockConfig) time.Duration { return c.Exptime },
	tryBound: nodeTimeoutBound,
	build:    func(c *client) algorithm { return &memcachedAdd{c: c} },
}

// mysqlAlgorithm is mysql-insert or mysql-for-update: statements is the
// most statements one attempt sends (each bounded by node_timeout).
func mysqlAlgorithm(name string, statements int, build func(*client) algorithm) *Algorithm {
	return &Algorithm{
		Name: name, Doc: algorithmDocs[name], NodeKind: NodeMySQL, MinTries: 1,
		Fencing: []string{FencingNone},
		Params:  []Param{pKey, pNode, pTable, pTries, pRetryDelay, pNodeTimeout, pFencingToken},
		defaults: func(c *LockConfig) {
			c.Table = mysqlTable
			singleRetry(c)
			c.NodeTimeout = mysqlStatementTimeout
		},
		// Neither lock expires (lifetime 0): the row stays until DELETE
		// (insert), the row lock until the transaction ends (for update),
		// so the liveness bound is the wait bound alone.
		lifetime: func(LockConfig) time.Duration { return 0 },
		tryBound: func(c LockConfig) time.Duration { return time.Duration(statements) * c.NodeTimeout },
		build:    build,
	}
}

var getsetAlgorithm = &Algorithm{
	Name: RedisGetSet, NodeKind: NodeRedis, MinTries: 1,
	Doc:     "The pre-2.6.12 SETNX recipe: SETNX key now+timeout on the client's clock; on failure GET, and if that time passed on the client's clock GETSET and win if it returned the value read; release by DEL only if not expired on the client's clock.",
	Fencing: []string{FencingNone, FencingIncr},
	Params:  []Param{pKey, pNode, pLockTimeout, pTries, pRetryDelay, pNodeTimeout, pFencingToken},
	defaults: func(c *LockConfig) {
		c.LockTimeout = getsetTimeout
		singleRetry(c)
		c.NodeTimeout = commandTimeout
	},
	lifetime: func(c LockConfig) time.Duration { return c.LockTimeout },
	// SETNX, GET, GETSET.
	tryBound: func(c LockConfig) time.Duration { return 3 * c.NodeTimeout },
	build:    func(c *client) algorithm { return &getSet{c: c} },
}

func reentrantAlgorithm(name string, counted bool) *Algorithm {
	return &Algorithm{
		Name: name, Doc: algorithmDocs[name], NodeKind: NodeRedis, MinTries: 1,
		Fencing: []string{FencingNone, FencingIncr},
		Params:  []Param{pKey, pNode, pTTL, pTries, pRetryDelay, pNodeTimeout, pFencingToken},
		defaults: func(c *LockConfig) {
			// The single-instance TTL (reference §4.1); for the hash it is
			// the lease of lock(leaseTime), which has no watchdog.
			c.TTL = singleTTL
			singleRetry(c)
			c.NodeTimeout = commandTimeout
		},
		lifetime: ttlLifetime,
		// SET NX PX then GET (naive); one script (counted).
		tryBound: func(c LockConfig) time.Duration { return 2 * c.NodeTimeout },
		build:    func(c *client) algorithm { return &reentrant{c: c, counted: counted} },
	}
}

func ttlLifetime(c LockConfig) time.Duration { return c.TTL }

// nodeTimeoutBound: one attempt waits on one node at a time.
func nodeTimeoutBound(c LockConfig) time.Duration { return c.NodeTimeout }

// The parameters. Each is declared once; an algorithm lists those it takes.
var (
	pKey = Param{Name: "key", Doc: "The lock key (Redis, memcached, the MySQL row), or the parent znode without its leading slash (ZooKeeper); it also names the lock in the history.",
		set: func(c *LockConfig, v string) error { c.Key = v; return nil }, get: func(c LockConfig) string { return c.Key }}
	pNode = Param{Name: "node", Doc: "The lock's server, a process of the algorithm's node kind; a lock on the master that `sentinel.master` monitors finds the current master through Sentinel.",
		set: func(c *LockConfig, v string) error { c.Node = v; return nil }, get: func(c LockConfig) string { return c.Node }}
	pNodes = Param{Name: "nodes", Doc: "The independent masters, a list.", get: func(c LockConfig) string { return strings.Join(c.Nodes, ",") }, set: func(c *LockConfig, v string) error {
		c.Nodes = nil
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				c.Nodes = append(c.Nodes, n)
			}
		}
		return nil
	}}
	pTTL = durationParam("ttl", "The lock key's time to live (PX).", func(c *LockConfig) *time.Duration { return &c.TTL }, func(c LockConfig) error {
		if c.TTL <= 0 {
			return fmt.Errorf("lock.ttl: must be > 0, got %v", c.TTL)
		}
		if c.TTL%time.Millisecond != 0 {
			return fmt.Errorf("lock.ttl: must be a whole number of milliseconds (Redis PX), got %v", c.TTL)
		}
		return nil
	})
	pTries       = intParam("tries", "Acquire attempts one want makes before giving up (0: forever, where the algorithm allows it).", func(c *LockConfig) *int { return &c.Tries }, nil)
	pRetryDelay  = Param{Name: "retry_delay", Doc: "The wait before each retry: a duration, or a range `lo..hi` drawn uniformly per retry.", set: func(c *LockConfig, v string) (err error) { c.RetryDelay, err = sim.ParseRange(v); return err }, get: func(c LockConfig) string { return c.RetryDelay.String() }}
	pNodeTimeout = durationParam("node_timeout", "Bounds one request to one node.", func(c *LockConfig) *time.Duration { return &c.NodeTimeout }, func(c LockConfig) error {
		if c.NodeTimeout <= 0 {
			return fmt.Errorf("lock.node_timeout: must be > 0, got %v", c.NodeTimeout)
		}
		return nil
	})
	pWaitReplicas = intParam("wait_replicas", "Replicas that must acknowledge the lock write (`WAIT n wait_timeout`) for an acquire to count; 0: no WAIT.", func(c *LockConfig) *int { return &c.WaitReplicas }, func(c LockConfig) error {
		if c.WaitReplicas < 0 {
			return fmt.Errorf("lock.wait_replicas: must be >= 0, got %d", c.WaitReplicas)
		}
		return nil
	})
	// pWaitReplicasOn is Redisson's wait_replicas: a boolean
	// (checkLockSyncedSlaves).
	pWaitReplicasOn = boolParam("wait_replicas", "Follow each lock command with WAIT and fail when no replica acknowledged while replicas exist (Redisson's checkLockSyncedSlaves).", func(c *LockConfig) *bool { return &c.WaitReplicasOn })
	pWaitTimeout    = durationParam("wait_timeout", "WAIT's timeout (0: WAIT blocks forever).", func(c *LockConfig) *time.Duration { return &c.WaitTimeout }, func(c LockConfig) error {
		if c.WaitTimeout < 0 {
			return fmt.Errorf("lock.wait_timeout: must be >= 0 (0 = WAIT blocks forever), got %v", c.WaitTimeout)
		}
		return nil
	})
	pDriftFactor = floatParam("drift_factor", "Clock-drift allowance as a fraction of the ttl.", func(c *LockConfig) *float64 { return &c.DriftFactor }, func(c LockConfig) error {
		if math.IsNaN(c.DriftFactor) || c.DriftFactor < 0 || c.DriftFactor >= 1 {
			return fmt.Errorf("lock.drift_factor: must be in [0, 1), got %v", c.DriftFactor)
		}
		return nil
	})
	pDriftExtra = durationParam("drift_extra", "Added to the drift allowance (redlock-rb's +2ms).", func(c *LockConfig) *time.Duration { return &c.DriftExtra }, func(c LockConfig) error {
		if c.DriftExtra < 0 {
			return fmt.Errorf("lock.drift_extra: must be >= 0, got %v", c.DriftExtra)
		}
		return nil
	})
	pFanout        = enumParam("fanout", "How the nodes are contacted: `sequential` (the spec, redlock-rb) or `parallel`.", func(c *LockConfig) *string { return &c.Fanout }, FanoutSequential, FanoutParallel)
	pElapsedClock  = enumParam("elapsed_clock", "The clock elapsed time and validity are measured on: `wall` (the reference implementation) or `monotonic`.", func(c *LockConfig) *string { return &c.ElapsedClock }, ClockWall, ClockMonotonic)
	pRelease       = enumParam("release", "Which nodes are unlocked after a failed attempt: `all` (as specified) or `acquired` (only those that granted).", func(c *LockConfig) *string { return &c.Release }, ReleaseAll, ReleaseAcquired)
	pValidityCheck = boolParam("validity_check", "Require validity > 0 to succeed and check it again before writing; false: a majority alone succeeds, no check.", func(c *LockConfig) *bool { return &c.ValidityCheck })
	pTimeoutFactor = floatParam("timeout_factor", "Bounds the acquire round to ttl x timeout_factor (redsync).", func(c *LockConfig) *float64 { return &c.TimeoutFactor }, func(c LockConfig) error {
		if math.IsNaN(c.TimeoutFactor) || c.TimeoutFactor <= 0 {
			return fmt.Errorf("lock.timeout_factor: must be > 0, got %v", c.TimeoutFactor)
		}
		return nil
	})
	pSetNXOnExtend = boolParam("set_nx_on_extend", "redsync's WithSetNXOnExtend: Extend re-creates a missing key with SET NX.", func(c *LockConfig) *bool { return &c.SetNXOnExtend })
	pExtendEvery   = durationParam("extend_every", "Extend the lock this often while holding it (0: never).", func(c *LockConfig) *time.Duration { return &c.ExtendEvery }, func(c LockConfig) error {
		if c.ExtendEvery < 0 {
			return fmt.Errorf("lock.extend_every: must be >= 0 (0 = never), got %v", c.ExtendEvery)
		}
		return nil
	})
	pLease = durationParam("lease", "Redisson's lock lease (lockWatchdogTimeout).", func(c *LockConfig) *time.Duration { return &c.Lease }, func(c LockConfig) error {
		if c.Lease <= 0 || c.Lease%time.Millisecond != 0 {
			return fmt.Errorf("lock.lease: must be > 0 and a whole number of milliseconds, got %v", c.Lease)
		}
		return nil
	})
	pRenewEvery = durationParam("renew_every", "The watchdog's renewal period (0: lease/3).", func(c *LockConfig) *time.Duration { return &c.RenewEvery }, func(c LockConfig) error {
		if c.RenewEvery < 0 || c.RenewEvery >= c.Lease {
			return fmt.Errorf("lock.renew_every: must be in [0, lease) (0 = lease/3), got %v with lease %v", c.RenewEvery, c.Lease)
		}
		return nil
	})
	pWatchdog       = boolParam("watchdog", "Renew the lease while held; false models lock(leaseTime), which has no watchdog.", func(c *LockConfig) *bool { return &c.Watchdog })
	pSessionTimeout = durationParam("session_timeout", "The session timeout the client requests; the server negotiates it into its [min, max] (by default [4s, 40s]).", func(c *LockConfig) *time.Duration { return &c.SessionTimeout }, func(c LockConfig) error {
		if c.SessionTimeout <= 0 {
			return fmt.Errorf("lock.session_timeout: must be > 0, got %v", c.SessionTimeout)
		}
		return nil
	})
	pHeartbeat = durationParam("heartbeat", "The ping period (0: a third of the negotiated timeout, at most 10s).", func(c *LockConfig) *time.Duration { return &c.Heartbeat }, func(c LockConfig) error {
		if c.Heartbeat < 0 || c.Heartbeat >= c.SessionTimeout {
			return fmt.Errorf("lock.heartbeat: must be in [0, session_timeout) (0 = session_timeout/3, at most 10s), got %v with session_timeout %v", c.Heartbeat, c.SessionTimeout)
		}
		return nil
	})
	pClientExpiry     = boolParam("client_expiry", "The client declares its session expired on its own after hearing nothing for 4/3 of the timeout (ZooKeeper 3.9.3+); false: it waits for the server, as Curator over earlier clients.", func(c *LockConfig) *bool { return &c.ClientExpiry })
	pLostOnDisconnect = boolParam("lost_on_disconnect", "The holder treats a lost connection (Curator's SUSPENDED) as a lost lock, as Curator's guidance recommends; false: InterProcessMutex itself, which believes until it learns its session expired.", func(c *LockConfig) *bool { return &c.LostOnDisconnect })
	pExptime          = durationParam("exptime", "The item's exptime: whole seconds, 0 = never, at most 30 days (memcached's REALTIME_MAXDELTA).", func(c *LockConfig) *time.Duration { return &c.Exptime }, func(c LockConfig) error {
		if c.Exptime < 0 || c.Exptime%time.Second != 0 || c.Exptime > memcached.RealtimeMaxDelta*time.Second {
			return fmt.Errorf("lock.exptime: %v must be whole seconds from 0s (never) to %v (30 days, memcached's REALTIME_MAXDELTA, memcached.h:1060; larger values are absolute Unix times)",
				c.Exptime, memcached.RealtimeMaxDelta*time.Second)
		}
		return nil
	})
	pCacheRelease = enumParam("release", "How the lock is released: `delete` (whatever the key holds) or `cas` (gets, then a cas with exptime -1 that expires only the client's own item).", func(c *LockConfig) *string { return &c.CacheRelease }, CacheReleaseDelete, CacheReleaseCAS)
	pTable        = Param{Name: "table", Doc: "The lock table, one of the node's `tables`.", set: func(c *LockConfig, v string) error { c.Table = v; return nil }, get: func(c LockConfig) string { return c.Table }, check: func(c LockConfig) error {
		if c.Table == "" {
			return errors.New("lock.table: a MySQL lock needs a lock table (one of its node's tables)")
		}
		return nil
	}}
	pLockTimeout = durationParam("timeout", "The lock timeout, added to the client's wall clock to form the stored expiry time.", func(c *LockConfig) *time.Duration { return &c.LockTimeout }, func(c LockConfig) error {
		if c.LockTimeout < time.Millisecond || c.LockTimeout%time.Millisecond != 0 {
			return fmt.Errorf("lock.timeout: must be a whole number of milliseconds >= 1ms, got %v", c.LockTimeout)
		}
		return nil
	})
	// pFencingToken is checked against Algorithm.Fencing by validate.
	pFencingToken = Param{Name: "fencing_token", Doc: "How the client obtains a fencing token, sent with every resource access: `none`; `incr` (INCR `<key>:token` on the lock's server; on memcached `incr <key>:token`, evicted and forgotten like any item); `zxid` (the znode's creation zxid, zookeeper only). The MySQL locks take only `none`.",
		set: func(c *LockConfig, v string) error { c.FencingToken = v; return nil }, get: func(c LockConfig) string { return c.FencingToken }}
)

func durationParam(name, doc string, f func(*LockConfig) *time.Duration, check func(LockConfig) error) Param {
	return Param{Name: name, Doc: doc, check: check, get: func(c LockConfig) string { return durationText(*f(&c)) }, set: func(c *LockConfig, v string) error {
		d, err := sim.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("lock.%s: %v", name, err)
		}
		*f(c) = d
		return nil
	}}
}

func intParam(name, doc string, f func(*LockConfig) *int, check func(LockConfig) error) Param {
	return Param{Name: name, Doc: doc, check: check, get: func(c LockConfig) string { return strconv.Itoa(*f(&c)) }, set: func(c *LockConfig, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return cannotParse(name, v, err)
		}
		*f(c) = n
		return nil
	}}
}

func floatParam(name, doc string, f func(*LockConfig) *float64, check func(LockConfig) error) Param {
	return Param{Name: name, Doc: doc, check: check, get: func(c LockConfig) string { return strconv.FormatFloat(*f(&c), 'g', -1, 64) }, set: func(c *LockConfig, v string) error {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return cannotParse(name, v, err)
		}
		*f(c) = x
		return nil
	}}
}

func boolParam(name, doc string, f func(*LockConfig) *bool) Param {
	return Param{Name: name, Doc: doc, get: func(c LockConfig) string { return strconv.FormatBool(*f(&c)) }, set: func(c *LockConfig, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return cannotParse(name, v, err)
		}
		*f(c) = b
		return nil
	}}
}

func enumParam(name, doc string, f func(*LockConfig) *string, allowed ...string) Param {
	return Param{Name: name, Doc: doc,
		set:   func(c *LockConfig, v string) error { *f(c) = v; return nil },
		get:   func(c LockConfig) string { return *f(&c) },
		check: func(c LockConfig) error { return oneOf("lock."+name, *f(&c), allowed...) },
	}
}

// durationText is d as a scenario writes it: 30s, 1m, 1h30m (not 1m0s).
func durationText(d time.Duration) string {
	t := d.String()
	if strings.HasSuffix(t, "m0s") {
		t = strings.TrimSuffix(t, "0s")
	}
	if strings.HasSuffix(t, "h0m") {
		t = strings.TrimSuffix(t, "0m")
	}
	return t
}

func cannotParse(name, v string, err error) error {
	if u := errors.Unwrap(err); u != nil {
		err = u
	}
	return fmt.Errorf("lock.%s: cannot parse %q: %v", name, v, err)
}
