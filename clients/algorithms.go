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
// is one entry in registry plus its implementation file; docs/extending.md
// walks through it.
type Algorithm struct {
	// Name is the scenario's lock.algorithm.
	Name string
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
	Name  string
	set   func(*LockConfig, string) error
	check func(LockConfig) error
}

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

// singleAlgorithm is the single-instance family (reference §4.1): one
// Redis node, SET NX PX or its broken variants, optional WAIT.
func singleAlgorithm(name string, extra ...Param) *Algorithm {
	ps := []Param{pKey, pNode, pTTL, pTries, pRetryDelay, pNodeTimeout, pWaitReplicas, pWaitTimeout, pFencingToken}
	return &Algorithm{
		Name: name, NodeKind: NodeRedis, MinTries: 1,
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
		Name: name, NodeKind: NodeMySQL, MinTries: 1,
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
		Name: name, NodeKind: NodeRedis, MinTries: 1,
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
	pKey   = Param{Name: "key", set: func(c *LockConfig, v string) error { c.Key = v; return nil }}
	pNode  = Param{Name: "node", set: func(c *LockConfig, v string) error { c.Node = v; return nil }}
	pNodes = Param{Name: "nodes", set: func(c *LockConfig, v string) error {
		c.Nodes = nil
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				c.Nodes = append(c.Nodes, n)
			}
		}
		return nil
	}}
	pTTL = durationParam("ttl", func(c *LockConfig) *time.Duration { return &c.TTL }, func(c LockConfig) error {
		if c.TTL <= 0 {
			return fmt.Errorf("lock.ttl: must be > 0, got %v", c.TTL)
		}
		if c.TTL%time.Millisecond != 0 {
			return fmt.Errorf("lock.ttl: must be a whole number of milliseconds (Redis PX), got %v", c.TTL)
		}
		return nil
	})
	pTries       = intParam("tries", func(c *LockConfig) *int { return &c.Tries }, nil)
	pRetryDelay  = Param{Name: "retry_delay", set: func(c *LockConfig, v string) (err error) { c.RetryDelay, err = sim.ParseRange(v); return err }}
	pNodeTimeout = durationParam("node_timeout", func(c *LockConfig) *time.Duration { return &c.NodeTimeout }, func(c LockConfig) error {
		if c.NodeTimeout <= 0 {
			return fmt.Errorf("lock.node_timeout: must be > 0, got %v", c.NodeTimeout)
		}
		return nil
	})
	pWaitReplicas = intParam("wait_replicas", func(c *LockConfig) *int { return &c.WaitReplicas }, func(c LockConfig) error {
		if c.WaitReplicas < 0 {
			return fmt.Errorf("lock.wait_replicas: must be >= 0, got %d", c.WaitReplicas)
		}
		return nil
	})
	// pWaitReplicasOn is Redisson's wait_replicas: a boolean
	// (checkLockSyncedSlaves).
	pWaitReplicasOn = boolParam("wait_replicas", func(c *LockConfig) *bool { return &c.WaitReplicasOn })
	pWaitTimeout    = durationParam("wait_timeout", func(c *LockConfig) *time.Duration { return &c.WaitTimeout }, func(c LockConfig) error {
		if c.WaitTimeout < 0 {
			return fmt.Errorf("lock.wait_timeout: must be >= 0 (0 = WAIT blocks forever), got %v", c.WaitTimeout)
		}
		return nil
	})
	pDriftFactor = floatParam("drift_factor", func(c *LockConfig) *float64 { return &c.DriftFactor }, func(c LockConfig) error {
		if math.IsNaN(c.DriftFactor) || c.DriftFactor < 0 || c.DriftFactor >= 1 {
			return fmt.Errorf("lock.drift_factor: must be in [0, 1), got %v", c.DriftFactor)
		}
		return nil
	})
	pDriftExtra = durationParam("drift_extra", func(c *LockConfig) *time.Duration { return &c.DriftExtra }, func(c LockConfig) error {
		if c.DriftExtra < 0 {
			return fmt.Errorf("lock.drift_extra: must be >= 0, got %v", c.DriftExtra)
		}
		return nil
	})
	pFanout        = enumParam("fanout", func(c *LockConfig) *string { return &c.Fanout }, FanoutSequential, FanoutParallel)
	pElapsedClock  = enumParam("elapsed_clock", func(c *LockConfig) *string { return &c.ElapsedClock }, ClockWall, ClockMonotonic)
	pRelease       = enumParam("release", func(c *LockConfig) *string { return &c.Release }, ReleaseAll, ReleaseAcquired)
	pValidityCheck = boolParam("validity_check", func(c *LockConfig) *bool { return &c.ValidityCheck })
	pTimeoutFactor = floatParam("timeout_factor", func(c *LockConfig) *float64 { return &c.TimeoutFactor }, func(c LockConfig) error {
		if math.IsNaN(c.TimeoutFactor) || c.TimeoutFactor <= 0 {
			return fmt.Errorf("lock.timeout_factor: must be > 0, got %v", c.TimeoutFactor)
		}
		return nil
	})
	pSetNXOnExtend = boolParam("set_nx_on_extend", func(c *LockConfig) *bool { return &c.SetNXOnExtend })
	pExtendEvery   = durationParam("extend_every", func(c *LockConfig) *time.Duration { return &c.ExtendEvery }, func(c LockConfig) error {
		if c.ExtendEvery < 0 {
			return fmt.Errorf("lock.extend_every: must be >= 0 (0 = never), got %v", c.ExtendEvery)
		}
		return nil
	})
	pLease = durationParam("lease", func(c *LockConfig) *time.Duration { return &c.Lease }, func(c LockConfig) error {
		if c.Lease <= 0 || c.Lease%time.Millisecond != 0 {
			return fmt.Errorf("lock.lease: must be > 0 and a whole number of milliseconds, got %v", c.Lease)
		}
		return nil
	})
	pRenewEvery = durationParam("renew_every", func(c *LockConfig) *time.Duration { return &c.RenewEvery }, func(c LockConfig) error {
		if c.RenewEvery < 0 || c.RenewEvery >= c.Lease {
			return fmt.Errorf("lock.renew_every: must be in [0, lease) (0 = lease/3), got %v with lease %v", c.RenewEvery, c.Lease)
		}
		return nil
	})
	pWatchdog       = boolParam("watchdog", func(c *LockConfig) *bool { return &c.Watchdog })
	pSessionTimeout = durationParam("session_timeout", func(c *LockConfig) *time.Duration { return &c.SessionTimeout }, func(c LockConfig) error {
		if c.SessionTimeout <= 0 {
			return fmt.Errorf("lock.session_timeout: must be > 0, got %v", c.SessionTimeout)
		}
		return nil
	})
	pHeartbeat = durationParam("heartbeat", func(c *LockConfig) *time.Duration { return &c.Heartbeat }, func(c LockConfig) error {
		if c.Heartbeat < 0 || c.Heartbeat >= c.SessionTimeout {
			return fmt.Errorf("lock.heartbeat: must be in [0, session_timeout) (0 = session_timeout/3, at most 10s), got %v with session_timeout %v", c.Heartbeat, c.SessionTimeout)
		}
		return nil
	})
	pClientExpiry     = boolParam("client_expiry", func(c *LockConfig) *bool { return &c.ClientExpiry })
	pLostOnDisconnect = boolParam("lost_on_disconnect", func(c *LockConfig) *bool { return &c.LostOnDisconnect })
	pExptime          = durationParam("exptime", func(c *LockConfig) *time.Duration { return &c.Exptime }, func(c LockConfig) error {
		if c.Exptime < 0 || c.Exptime%time.Second != 0 || c.Exptime > memcached.RealtimeMaxDelta*time.Second {
			return fmt.Errorf("lock.exptime: %v must be whole seconds from 0s (never) to %v (30 days, memcached's REALTIME_MAXDELTA, memcached.h:1060; larger values are absolute Unix times)",
				c.Exptime, memcached.RealtimeMaxDelta*time.Second)
		}
		return nil
	})
	pCacheRelease = enumParam("release", func(c *LockConfig) *string { return &c.CacheRelease }, CacheReleaseDelete, CacheReleaseCAS)
	pTable        = Param{Name: "table", set: func(c *LockConfig, v string) error { c.Table = v; return nil }, check: func(c LockConfig) error {
		if c.Table == "" {
			return errors.New("lock.table: a MySQL lock needs a lock table (one of its node's tables)")
		}
		return nil
	}}
	pLockTimeout = durationParam("timeout", func(c *LockConfig) *time.Duration { return &c.LockTimeout }, func(c LockConfig) error {
		if c.LockTimeout < time.Millisecond || c.LockTimeout%time.Millisecond != 0 {
			return fmt.Errorf("lock.timeout: must be a whole number of milliseconds >= 1ms, got %v", c.LockTimeout)
		}
		return nil
	})
	// pFencingToken is checked against Algorithm.Fencing by validate.
	pFencingToken = Param{Name: "fencing_token", set: func(c *LockConfig, v string) error { c.FencingToken = v; return nil }}
)

func durationParam(name string, f func(*LockConfig) *time.Duration, check func(LockConfig) error) Param {
	return Param{Name: name, check: check, set: func(c *LockConfig, v string) error {
		d, err := sim.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("lock.%s: %v", name, err)
		}
		*f(c) = d
		return nil
	}}
}

func intParam(name string, f func(*LockConfig) *int, check func(LockConfig) error) Param {
	return Param{Name: name, check: check, set: func(c *LockConfig, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return cannotParse(name, v, err)
		}
		*f(c) = n
		return nil
	}}
}

func floatParam(name string, f func(*LockConfig) *float64, check func(LockConfig) error) Param {
	return Param{Name: name, check: check, set: func(c *LockConfig, v string) error {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return cannotParse(name, v, err)
		}
		*f(c) = x
		return nil
	}}
}

func boolParam(name string, f func(*LockConfig) *bool) Param {
	return Param{Name: name, set: func(c *LockConfig, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return cannotParse(name, v, err)
		}
		*f(c) = b
		return nil
	}}
}

func enumParam(name string, f func(*LockConfig) *string, allowed ...string) Param {
	return Param{Name: name,
		set:   func(c *LockConfig, v string) error { *f(c) = v; return nil },
		check: func(c LockConfig) error { return oneOf("lock."+name, *f(&c), allowed...) },
	}
}

func cannotParse(name, v string, err error) error {
	if u := errors.Unwrap(err); u != nil {
		err = u
	}
	return fmt.Errorf("lock.%s: cannot parse %q: %v", name, v, err)
}
