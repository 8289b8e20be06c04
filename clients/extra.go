package clients

import (
	"errors"
	"fmt"
	"time"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// noValue is the Redis value complete takes for a reply of another kind.
var noValue redis.Value

// Issue 13's lock algorithms (memcached-add, mysql-insert,
// mysql-for-update, redis-getset, redis-reentrant, redis-reentrant-hash).
// Each is an algorithm driven by the same workload loop as the others, with
// its own parameter struct. NB: until the algorithm registry lands they are
// built with their own constructors (NewMemcachedAdd, ...) and are not part
// of LockConfig or Algorithms; the scenario layer does not know them yet.
const (
	// MemcachedAdd is "add key value exptime", released by delete or by
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
	// field; the release decrements and deletes at zero; reference §5).
	RedisReentrantHash = "redis-reentrant-hash"
)

// ExtraAlgorithms lists issue 13's algorithm names in documentation order.
var ExtraAlgorithms = []string{MemcachedAdd, MySQLInsert, MySQLForUpdate, RedisGetSet, RedisReentrant, RedisReentrantHash}

// Common holds the parameters every issue 13 algorithm has.
type Common struct {
	// Key is the lock's name: the key (Redis, memcached) or the row's
	// unique key (MySQL); it also names the lock in the history.
	// Parameter "key", default "lock".
	Key string
	// Node is the server process. Parameter "node".
	Node string
	// Tries is how many acquire attempts one want makes before giving up;
	// 0 means forever. Parameter "tries".
	Tries int
	// RetryDelay is the wait before each retry, drawn uniformly. Parameter
	// "retry_delay".
	RetryDelay sim.Range
	// NodeTimeout bounds one request to the node. Parameter "node_timeout".
	NodeTimeout time.Duration
}

// defaultCommon is the retry policy the single-instance recipes share with
// redis-single (the recipes give none; redlock-rb's DefaultRetryCount=3 and
// rand(200) ms, redlock.rb:4-12, reference §4.1) and go-redis' 5 s read
// timeout (go-redis v9.23.0 options.go:741) as the request timeout.
func defaultCommon() Common {
	return Common{Key: defaultKey, Tries: singleTries, RetryDelay: sim.Range{Hi: singleRetryMax}, NodeTimeout: commandTimeout}
}

func (c Common) validate() error {
	switch {
	case c.Key == "":
		return errors.New("key: must not be empty")
	case c.Node == "":
		return errors.New("node: must name the lock's server process")
	case c.Tries < 0:
		return fmt.Errorf("tries: must be >= 0 (0 = forever), got %d", c.Tries)
	case c.RetryDelay.Lo < 0 || c.RetryDelay.Hi < c.RetryDelay.Lo:
		return fmt.Errorf("retry_delay: %v..%v is not a range of durations >= 0", c.RetryDelay.Lo, c.RetryDelay.Hi)
	case c.NodeTimeout <= 0:
		return fmt.Errorf("node_timeout: must be > 0, got %v", c.NodeTimeout)
	}
	return nil
}

// validateOuter checks what Config.Validate checks outside the lock: the
// name, the workload and the resource's fencing mode. Discovery is refused:
// none of these algorithms talks to Sentinel.
func validateOuter(cfg Config) error {
	c := cfg
	// Validate with a lock configuration that is valid by construction, so
	// that only the outer fields are checked.
	c.Lock, _ = DefaultLockConfig(RedisSingle)
	c.Lock.Node = "-"
	c.Discovery = nil
	if err := c.Validate(); err != nil {
		return err
	}
	if cfg.Discovery != nil {
		return errors.New("discovery: issue 13's algorithms take no Sentinel discovery")
	}
	return nil
}

// newExtra returns a client whose lock is algorithm name with the common
// parameters p, its algorithm built by mk. It panics on an invalid
// configuration, as New does: callers validate first.
func newExtra(cfg Config, name string, p Common, check func() error, mk func(c *client) algorithm) sim.Process {
	if err := validateExtra(cfg, p, check); err != nil {
		panic(fmt.Sprintf("clients: invalid config for %s: %v", cfg.Name, err))
	}
	cfg.Lock = LockConfig{Algorithm: name, Key: p.Key, Node: p.Node, Tries: p.Tries, RetryDelay: p.RetryDelay, NodeTimeout: p.NodeTimeout, FencingToken: FencingNone}
	c := &client{cfg: cfg, lock: p.Key, want: -1, belief: -1, section: -1}
	c.alg = mk(c)
	return c
}

func validateExtra(cfg Config, p Common, check func() error) error {
	if err := validateOuter(cfg); err != nil {
		return err
	}
	if err := p.validate(); err != nil {
		return err
	}
	return check()
}

// noExtras is embedded by the issue 13 algorithms: they receive only
// replies and set no timers of their own.
type noExtras struct{}

func (noExtras) giveUp()       {}
func (noExtras) fire(any) bool { return false }
func (noExtras) expired() bool { return false }
func (noExtras) init()         {}
func (noExtras) held()         {}
func (noExtras) value() string { return "" }
