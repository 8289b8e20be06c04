package clients

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/nodes/storage"
	"github.com/locksim/locksim/sim"
)

// Algorithm names (SCENARIO_FORMAT.md, "Lock algorithms").
const (
	// RedisSingle is SET k v NX PX ttl with a unique value, released by the
	// compare-and-delete script (reference §4.1, "Single instance").
	RedisSingle = "redis-single"
	// RedisSetNXExpire is SETNX then EXPIRE as two commands (not atomic).
	RedisSetNXExpire = "redis-setnx-expire"
	// RedisFixedValue uses the same value for every client and releases by DEL.
	RedisFixedValue = "redis-fixed-value"
	// RedisGetDel releases by GET, compare in the client, then DEL.
	RedisGetDel = "redis-get-del"
	// Redlock is antirez's algorithm as specified (reference §4.1, redlock-rb).
	Redlock = "redlock"
	// Redsync is go-redsync/redsync v4 (reference §4.2).
	Redsync = "redsync"
	// Redisson is Redisson's RLock with its watchdog (reference §4.3).
	Redisson = "redisson"
	// ZooKeeper is the ephemeral-sequential lock recipe (reference §6.4;
	// Curator's InterProcessMutex).
	ZooKeeper = "zookeeper"
	// MemcachedAdd is "add key 0 exptime value", released by delete or by
	// cas (reference servers-and-network §6).
	MemcachedAdd = "memcached-add"
	// MySQLInsert is a row of a lock table with a unique key: INSERT to
	// lock, DELETE to unlock, autocommit (reference servers-and-network §7).
	MySQLInsert = "mysql-insert"
	// MySQLForUpdate is BEGIN; SELECT ... FOR UPDATE; critical section;
	// COMMIT (reference servers-and-network §7).
	MySQLForUpdate = "mysql-for-update"
	// RedisGetSet is the pre-2.6.12 SETNX/GETSET timestamp recipe (Redis
	// SETNX documentation, "Design pattern: Locking with SETNX").
	RedisGetSet = "redis-getset"
	// RedisReentrant is the naive re-entrant lock: a lock value stable per
	// client, re-entry when the stored value equals it, release by DEL.
	RedisReentrant = "redis-reentrant"
	// RedisReentrantHash is Redisson's counted hash (HINCRBY on the owner
	// field; the release decrements and deletes at zero; reference §5),
	// without a watchdog.
	RedisReentrantHash = "redis-reentrant-hash"
)

// Release modes of memcached-add.
const (
	// CacheReleaseDelete is "delete key": it deletes whatever the key
	// holds, possibly another client's lock.
	CacheReleaseDelete = "delete"
	// CacheReleaseCAS is "gets key", then, if the value is the client's
	// own, "cas key 0 -1 0 <cas id>": a store with a negative exptime, which
	// memcached takes as immediately expired (doc/protocol.txt:245-249,
	// memcached.h:1061-1065), guarded by the CAS id so that it fails with
	// EXISTS when another client stored the key since the gets.
	CacheReleaseCAS = "cas"
)

// Values of the enumerated parameters.
const (
	FanoutSequential = "sequential"
	FanoutParallel   = "parallel"
	ClockWall        = "wall"
	ClockMonotonic   = "monotonic"
	ReleaseAll       = "all"
	ReleaseAcquired  = "acquired"
	FencingNone      = "none"
	FencingIncr      = "incr"
	FencingZxid      = "zxid"
)

// Discovery configures Sentinel master discovery (SCENARIO_FORMAT.md,
// "Master discovery"): when the lock's node (or an entry of its nodes) is
// Master, the client asks a sentinel for the current master before each
// acquire attempt and after an error, and follows +switch-master as
// go-redis' failover client does; Redisson polls every second instead
// (follow.go).
type Discovery struct {
	// Master is the process name the scenario's sentinel block monitors.
	Master string
	// MasterName is the name the sentinels know the master by; "" means
	// "mymaster" (sentinel.conf's example, reference §3.4).
	MasterName string
	// Sentinels are the sentinel process names, asked in this order.
	Sentinels []string
}

// Workload is a client's acquire/use/release loop.
type Workload struct {
	// Start is when the client begins (a reading of its monotonic clock,
	// which starts at 0 with the run: a restarted client past Start begins
	// at once).
	Start time.Duration
	// Cycles is how many acquire/use/release cycles to complete; 0 means
	// until the end of the run. A cycle counts when the client held the lock
	// and released it, whether or not its critical section wrote.
	Cycles int
	// Hold is the time between reading and writing the resource (on the
	// client's monotonic clock).
	Hold time.Duration
	// Think is the time between cycles, and after giving up.
	Think time.Duration
	// Timeout bounds each request to the resource; 0 means
	// DefaultResourceTimeout.
	Timeout time.Duration
	// Reentry is how many times a cycle takes the lock, nested: 2 locks
	// again while holding it (a method that takes the lock calling another
	// that takes it too). 0 and 1 mean no re-entry; only the re-entrant
	// algorithms accept more. The inner acquisitions start InnerAt after
	// the outer acquire, one right after the other, hold for InnerHold and
	// release innermost first, while the outer section runs.
	Reentry   int
	InnerAt   time.Duration
	InnerHold time.Duration
}

// DefaultResourceTimeout bounds a resource request when Workload.Timeout is 0.
// locksim default: the storage node is not a modelled product; 5 s is
// go-redis v9's socket read timeout (go-redis v9.23.0 options.go:741), the
// client library most of the modelled clients are built on.
const DefaultResourceTimeout = 5 * time.Second

// Config configures one lock client process.
type Config struct {
	// Name is the process name.
	Name string
	// Lock is the lock algorithm and its parameters.
	Lock LockConfig
	// Workload is the client's loop.
	Workload Workload
	// Resource is the storage process name; "" means the client takes the
	// lock but touches no resource.
	Resource string
	// ResourceFencing is the storage node's fencing mode (the scenario's
	// resource.fencing; storage.Modes). With "token-cas" a critical section
	// first sets the resource's current-lock field to its lock value
	// (antirez's check-and-set, reference §6.2). "" means "none".
	ResourceFencing string
	// Discovery enables Sentinel master discovery; nil means none.
	Discovery *Discovery
	// Clusters make the client cluster-aware (cluster.go): a lock node that
	// is a node of one of them routes by slot within that cluster (Redlock
	// may take its nodes from several independent clusters). Empty: the
	// lock's nodes are standalone servers.
	Clusters []*Cluster
}

// LockConfig is a lock algorithm and its parameters. Start from
// DefaultLockConfig(algorithm), which holds the real library's defaults, and
// override what the scenario sets. Params lists the scenario parameter
// (snake_case) names each algorithm accepts; the comment of each field gives
// its name.
type LockConfig struct {
	// Algorithm is one of Algorithms.
	Algorithm string
	// Key is the lock key (Redis) or the parent znode without its leading
	// slash (ZooKeeper); it also names the lock in the history. Parameter
	// "key", default "lock".
	Key string
	// Node is the server process of a single-node algorithm (redis-*,
	// redisson, zookeeper). Parameter "node".
	Node string
	// Nodes are the independent masters of redlock and redsync. Parameter
	// "nodes".
	Nodes []string
	// TTL is the lock key's time to live. Parameter "ttl".
	TTL time.Duration
	// Tries is how many acquire attempts one want makes before giving up;
	// 0 (redisson, zookeeper only) means forever. Parameter "tries".
	Tries int
	// RetryDelay is the wait before each retry, drawn uniformly. Parameter
	// "retry_delay".
	RetryDelay sim.Range
	// NodeTimeout bounds one request to one node. Parameter "node_timeout".
	NodeTimeout time.Duration
	// WaitReplicas (redis-single family) is the number of replicas that must
	// acknowledge the lock write (WAIT n wait_timeout) for an acquire to
	// count; 0 means no WAIT. Parameter "wait_replicas".
	WaitReplicas int
	// WaitTimeout is WAIT's timeout. Parameter "wait_timeout".
	WaitTimeout time.Duration
	// DriftFactor is the clock-drift allowance as a fraction of the TTL.
	// Parameter "drift_factor".
	DriftFactor float64
	// DriftExtra is added to the drift allowance (redlock-rb's +2 ms).
	// Parameter "drift_extra".
	DriftExtra time.Duration
	// Fanout is how redlock contacts its nodes: sequential or parallel.
	// Parameter "fanout".
	Fanout string
	// ElapsedClock is the client clock redlock measures elapsed time and
	// validity on: wall or monotonic. Parameter "elapsed_clock".
	ElapsedClock string
	// Release is which nodes redlock unlocks after a failed attempt: all, or
	// only those that acknowledged. Parameter "release".
	Release string
	// ValidityCheck makes redlock require validity > 0 to succeed and check
	// it before writing; false means success on a majority alone and no
	// check. Parameter "validity_check".
	ValidityCheck bool
	// TimeoutFactor bounds redsync's acquire round to TTL*TimeoutFactor.
	// Parameter "timeout_factor".
	TimeoutFactor float64
	// SetNXOnExtend makes redsync's Extend re-create a missing key
	// (WithSetNXOnExtend). Parameter "set_nx_on_extend".
	SetNXOnExtend bool
	// ExtendEvery is the period at which a holder extends its lock
	// (redis-single: the touch script; redlock, redsync: Extend on all
	// nodes); 0 means never. Parameter "extend_every".
	ExtendEvery time.Duration
	// Lease is Redisson's lock lease (the watchdog timeout). Parameter
	// "lease".
	Lease time.Duration
	// RenewEvery is the watchdog's renewal period; 0 means Lease/3.
	// Parameter "renew_every".
	RenewEvery time.Duration
	// Watchdog enables Redisson's renewal; false models lock(leaseTime),
	// which has none. Parameter "watchdog".
	Watchdog bool
	// WaitReplicasOn makes Redisson follow each lock command with WAIT
	// <replicas> wait_timeout and fail when no replica acknowledged while
	// replicas exist. Parameter "wait_replicas" (a boolean for redisson).
	WaitReplicasOn bool
	// Replicas is Redisson's initial view of the number of replicas of
	// Node; the client refreshes it from INFO replication (connected_slaves)
	// at the first attempt of each want, so 0 is fine. Not a scenario
	// parameter.
	Replicas int
	// SessionTimeout is the ZooKeeper session timeout the client requests;
	// the server negotiates it into its bounds ([4 s, 40 s] by default).
	// Parameter "session_timeout".
	SessionTimeout time.Duration
	// Heartbeat is the ZooKeeper ping period; 0 means the client's default,
	// a third of the negotiated timeout and at most 10 s
	// (zookeeper.MaxPingInterval). Parameter "heartbeat".
	Heartbeat time.Duration
	// ClientExpiry makes the ZooKeeper client declare its session expired
	// on its own after hearing nothing for 4/3 of the timeout (ZooKeeper
	// 3.9.3+, ZOOKEEPER-4508); false, the default, is Curator over earlier
	// clients, which waits for the server. Parameter "client_expiry".
	ClientExpiry bool
	// LostOnDisconnect makes the ZooKeeper holder treat a lost connection
	// (Curator's SUSPENDED) as a lost lock, as Curator's error-handling
	// guidance recommends. false, the default, is InterProcessMutex itself,
	// which registers no connection-state listener: the holder believes
	// until it learns that its session expired. Parameter
	// "lost_on_disconnect".
	LostOnDisconnect bool
	// FencingToken is how the client obtains a fencing token: none, incr
	// (INCR <key>:token on the lock's Redis node) or zxid (the znode's
	// creation zxid; zookeeper only). Parameter "fencing_token".
	FencingToken string
	// Exptime is memcached-add's item exptime: whole seconds from 0
	// (never) to 30 days. Parameter "exptime".
	Exptime time.Duration
	// CacheRelease is how memcached-add releases: delete or cas.
	// Parameter "release" (for memcached-add).
	CacheRelease string
	// Table is the MySQL lock table. Parameter "table".
	Table string
	// LockTimeout is redis-getset's lock timeout, added to the client's
	// wall clock to form the stored expiry time. Parameter "timeout".
	LockTimeout time.Duration
}

// Defaults, each with its source.
const (
	// defaultKey is the lock key; the articles call it "resource_name"
	// (reference §4.1); any constant works.
	defaultKey = "lock"

	// singleTTL: the distlock page's single-instance example,
	// "SET resource_name my_random_value NX PX 30000" (reference §4.1).
	singleTTL = 30 * time.Second
	// singleTries and singleRetryMax: the single-instance recipe gives no
	// retry policy, so locksim uses the reference implementation's:
	// redlock-rb DefaultRetryCount=3 and a rand(200) ms wait
	// (redlock.rb:4-12, reference §4.1).
	singleTries    = 3
	singleRetryMax = 200 * time.Millisecond
	// commandTimeout bounds one command of a client that sets no timeout of
	// its own: go-redis v9's default socket read timeout (go-redis v9.23.0
	// options.go:741, "default: 5 seconds").
	commandTimeout = 5 * time.Second
	// waitTimeout: WAIT's timeout when none is given; Redisson's
	// slavesSyncTimeout = 1000 ms (config/Config.java:81-89, reference §4.3).
	waitTimeout = 1000 * time.Millisecond

	// redlockTTL: the spec's example, "if the auto-release time is 10
	// seconds" (RD distributed-locks.md, reference §4.1); redlock-rb takes
	// the TTL from the caller.
	redlockTTL = 10 * time.Second
	// redlockTries, redlockRetryMax: redlock-rb DefaultRetryCount=3,
	// DefaultRetryDelay=200 with sleep(rand(200)) (redlock.rb:4-12,55-83).
	redlockTries    = 3
	redlockRetryMax = 200 * time.Millisecond
	// redlockDriftFactor, redlockDriftExtra: redlock-rb ClockDriftFactor=0.01
	// and drift = (ttl*0.01).to_i + 2 ms ("Redis expires precision, which is
	// 1 ms, plus 1 ms min drift", redlock.rb:55-83).
	redlockDriftFactor = 0.01
	redlockDriftExtra  = 2 * time.Millisecond
	// redlockNodeTimeout: the spec's per-instance timeout, "in the ~ 5-50
	// milliseconds range" for a 10 s TTL (reference §4.1); the upper end.
	redlockNodeTimeout = 50 * time.Millisecond

	// redsyncTTL, redsyncTries, redsyncRetry*, redsyncDriftFactor,
	// redsyncTimeoutFactor: NewMutex (redsync.go:29-52, reference §4.2):
	// expiry 8 s, tries 32, delay rand.Intn(250-50)+50 ms (so 50..249 ms),
	// driftFactor 0.01, timeoutFactor 0.05.
	redsyncTTL           = 8 * time.Second
	redsyncTries         = 32
	redsyncRetryMin      = 50 * time.Millisecond
	redsyncRetryMax      = 249 * time.Millisecond
	redsyncDriftFactor   = 0.01
	redsyncTimeoutFactor = 0.05

	// redissonLease: lockWatchdogTimeout = 30000 ms (config/Config.java:81-89).
	redissonLease = 30 * time.Second
	// redissonTimeout: BaseConfig timeout = 3000 ms (:58-67, reference §4.3).
	redissonTimeout = 3 * time.Second
	// redissonPollMin, redissonPollMax: Redisson's lock() waits for the
	// unlock message on a pub/sub channel, or at most the PTTL the lock
	// script returned (RedissonLock.java lock(), reference §4.3). locksim
	// has no pub/sub: a waiter polls after a delay drawn from this range or
	// after the PTTL, whichever is sooner. locksim default.
	redissonPollMin = 10 * time.Millisecond
	redissonPollMax = 50 * time.Millisecond

	// zkSessionTimeout: Curator requests 60 s
	// (CuratorFrameworkFactory DEFAULT_SESSION_TIMEOUT_MS, reference §6.4); a
	// server with the default tickTime of 2000 ms negotiates it down to its
	// maximum, 20*tickTime = 40 s (nodes/zookeeper Config.Negotiate).
	zkSessionTimeout = 60 * time.Second
	// zkRetryMax: a failed acquire step (connection loss) is retried after
	// 0..1 s, after the base sleep of the ExponentialBackoffRetry(1000, 3)
	// that Curator's documentation uses in its examples. locksim default.
	zkRetryMax = 1000 * time.Millisecond

	// memcachedExptime is memcached-add's default exptime. locksim
	// default: the memcached lock recipes give none; 30 s is the distlock
	// page's single-instance TTL that redis-single uses (reference §4.1).
	// memcached-add, mysql-*, redis-getset and redis-reentrant* retry as
	// the single-instance recipe does (singleTries, singleRetryMax).
	memcachedExptime = 30 * time.Second
	// mysqlStatementTimeout bounds one MySQL statement. locksim default:
	// Connector/J's socketTimeout and the C client's read timeout default
	// to none (0); a finite bound longer than innodb_lock_wait_timeout's
	// default of 50 s (reference servers-and-network §7) lets the server's
	// error 1205 arrive first.
	mysqlStatementTimeout = 60 * time.Second
	// mysqlTable is the default lock table, the node model's default
	// (nodes/mysql DefaultConfig: "locks").
	mysqlTable = "locks"
	// getsetTimeout is redis-getset's default lock timeout. locksim
	// default: the SETNX page's recipe leaves it to the application; 30 s
	// is the distlock page's TTL that redis-single uses (reference §4.1).
	getsetTimeout = 30 * time.Second
)

// DefaultLockConfig returns the configuration of algorithm with the real
// library's defaults (SCENARIO_FORMAT.md "Lock algorithms"; reference §8.3;
// each algorithm's defaults are in its Algorithm entry, algorithms.go).
// An unknown algorithm is an error that lists the allowed ones.
func DefaultLockConfig(algorithm string) (LockConfig, error) {
	a := Lookup(algorithm)
	if a == nil {
		return LockConfig{}, unknownAlgorithm(algorithm)
	}
	c := LockConfig{Algorithm: algorithm, Key: defaultKey, FencingToken: FencingNone}
	a.defaults(&c)
	return c, nil
}

func unknownAlgorithm(a string) error {
	return fmt.Errorf("lock.algorithm: unknown algorithm %q (allowed: %s)", a, strings.Join(Algorithms, ", "))
}

// Params returns the scenario parameter names (snake_case, as in
// SCENARIO_FORMAT.md) that the algorithm accepts besides "algorithm", so that
// the scenario parser can reject a parameter the algorithm does not take.
// NB: "wait_replicas" is a number for the redis-* algorithms and a boolean
// for redisson. It returns nil for an unknown algorithm.
func (c LockConfig) Params() []string {
	a := Lookup(c.Algorithm)
	if a == nil {
		return nil
	}
	out := make([]string, len(a.Params))
	for i, p := range a.Params {
		out[i] = p.Name
	}
	return out
}

// param returns the algorithm's parameter name, or nil.
func (c LockConfig) param(name string) *Param {
	a := Lookup(c.Algorithm)
	if a == nil {
		return nil
	}
	for i := range a.Params {
		if a.Params[i].Name == name {
			return &a.Params[i]
		}
	}
	return nil
}

// Accepts reports whether the algorithm takes parameter name.
func (c LockConfig) Accepts(name string) bool { return c.param(name) != nil }

// Set sets one scenario parameter from its text (durations and ranges in
// sim's grammar, sim.ParseDuration and sim.ParseRange; booleans as
// true/false; nodes as a comma-separated list). It rejects a parameter the
// algorithm does not take and a value that does not parse, naming the field
// ("lock.ttl: ..."). It does not validate ranges; Config.Validate does.
func (c *LockConfig) Set(name, value string) error {
	p := c.param(name)
	if p == nil {
		return fmt.Errorf("lock.%s: %s takes no parameter %q (allowed: %s)", name, c.Algorithm, name, strings.Join(c.Params(), ", "))
	}
	return p.set(c, value)
}

// renewEvery is the effective watchdog period.
func (c LockConfig) renewEvery() time.Duration {
	if c.RenewEvery > 0 {
		return c.RenewEvery
	}
	// Renewal every internalLockLeaseTime/3 (RedissonBaseLock
	// renewExpiration, reference §4.3: "period lockWatchdogTimeout/3").
	return c.Lease / 3
}

// quorum is the majority of the nodes: len/2+1 (reference §8.3).
func (c LockConfig) quorum() int { return len(c.Nodes)/2 + 1 }

// multiNode reports whether the algorithm takes nodes rather than node.
func (c LockConfig) multiNode() bool {
	a := Lookup(c.Algorithm)
	return a != nil && a.MultiNode
}

// servers returns the lock's server process names.
func (c LockConfig) servers() []string {
	if c.multiNode() {
		return c.Nodes
	}
	return []string{c.Node}
}

// Validate checks the configuration; errors name the field and say what is
// allowed. Process names are checked by the scenario layer.
func (c Config) Validate() error {
	if c.Name == "" {
		return errors.New("name: must not be empty")
	}
	if err := c.Lock.validate(); err != nil {
		return err
	}
	w := c.Workload
	switch {
	case w.Start < 0:
		return fmt.Errorf("workload.start: must be >= 0, got %v", w.Start)
	case w.Cycles < 0:
		return fmt.Errorf("workload.cycles: must be >= 0 (0 = until the end), got %d", w.Cycles)
	case w.Hold < 0:
		return fmt.Errorf("workload.hold: must be >= 0, got %v", w.Hold)
	case w.Think < 0:
		return fmt.Errorf("workload.think: must be >= 0, got %v", w.Think)
	case w.Timeout < 0:
		return fmt.Errorf("workload.timeout: must be >= 0 (0 = %v), got %v", DefaultResourceTimeout, w.Timeout)
	case w.Reentry < 0:
		return fmt.Errorf("workload.reentry: must be >= 0 (0 or 1 = no re-entry), got %d", w.Reentry)
	case w.Reentry > 1 && c.Lock.Algorithm != RedisReentrant && c.Lock.Algorithm != RedisReentrantHash:
		return fmt.Errorf("workload.reentry: %s does not lock re-entrantly (only %s and %s do)", c.Lock.Algorithm, RedisReentrant, RedisReentrantHash)
	case w.InnerAt < 0:
		return fmt.Errorf("workload.inner_at: must be >= 0, got %v", w.InnerAt)
	case w.InnerHold < 0:
		return fmt.Errorf("workload.inner_hold: must be >= 0, got %v", w.InnerHold)
	}
	if c.ResourceFencing != "" {
		if err := (storage.Config{Fencing: c.ResourceFencing}).Validate(); err != nil {
			return fmt.Errorf("resource.fencing: unknown mode %q (allowed: %s)", c.ResourceFencing, strings.Join(storage.Modes, ", "))
		}
	}
	if d := c.Discovery; d != nil {
		if d.Master == "" {
			return errors.New("discovery.master: must not be empty")
		}
		if len(d.Sentinels) == 0 {
			return errors.New("discovery.sentinels: need at least 1 sentinel")
		}
		if a := Lookup(c.Lock.Algorithm); a.NodeKind != NodeRedis {
			return fmt.Errorf("discovery: %s takes no Sentinel discovery (its nodes are %s, not redis)", a.Name, a.NodeKind)
		}
	}
	return nil
}

// validate runs the checks every algorithm shares (key, node or nodes,
// tries, retry_delay), then each accepted parameter's own check, then the
// algorithm's, then the fencing token source.
func (c LockConfig) validate() error {
	alg := Lookup(c.Algorithm)
	if alg == nil {
		return unknownAlgorithm(c.Algorithm)
	}
	a := c.Algorithm
	if c.Key == "" {
		return errors.New("lock.key: must not be empty")
	}
	if alg.MultiNode {
		if c.Node != "" {
			return fmt.Errorf("lock.node: %s takes nodes, not node", a)
		}
		if len(c.Nodes) == 0 {
			return fmt.Errorf("lock.nodes: %s needs at least 1 node", a)
		}
		seen := map[string]bool{}
		for i, n := range c.Nodes {
			if n == "" {
				return fmt.Errorf("lock.nodes[%d]: must not be empty", i)
			}
			if seen[n] {
				return fmt.Errorf("lock.nodes[%d]: %q is listed twice", i, n)
			}
			seen[n] = true
		}
	} else {
		if len(c.Nodes) > 0 {
			return fmt.Errorf("lock.nodes: %s takes one node, not nodes", a)
		}
		if c.Node == "" {
			return fmt.Errorf("lock.node: %s needs a node", a)
		}
	}
	if c.Tries < alg.MinTries {
		if alg.MinTries == 0 {
			return fmt.Errorf("lock.tries: must be >= 0 (0 = forever), got %d", c.Tries)
		}
		return fmt.Errorf("lock.tries: must be >= %d, got %d", alg.MinTries, c.Tries)
	}
	if c.RetryDelay.Lo < 0 || c.RetryDelay.Hi < c.RetryDelay.Lo {
		return fmt.Errorf("lock.retry_delay: must be a range lo..hi with 0 <= lo <= hi, got %v", c.RetryDelay)
	}
	for _, p := range alg.Params {
		if p.check != nil {
			if err := p.check(c); err != nil {
				return err
			}
		}
	}
	if alg.validate != nil {
		if err := alg.validate(c); err != nil {
			return err
		}
	}
	if c.FencingToken == FencingZxid && !slices.Contains(alg.Fencing, FencingZxid) {
		return fmt.Errorf("lock.fencing_token: zxid is a ZooKeeper transaction id; %s can use %s", a, strings.Join(alg.Fencing, " or "))
	}
	return oneOf("lock.fencing_token", c.FencingToken, alg.Fencing...)
}

func oneOf(field, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("%s: unknown value %q (allowed: %s)", field, v, strings.Join(allowed, ", "))
}
