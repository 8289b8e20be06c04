package clients

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// redissonThread is the thread id in the lock's hash field: the workload
// loop is one thread.
const redissonThread = 1

// redissonUnlockMessage is LockPubSub.UNLOCK_MESSAGE (0), ARGV[1] of the
// unlock script.
const redissonUnlockMessage = "0"

// redissonLatchTTL is ARGV[5] of the unlock script, the TTL of the
// idempotency latch key: (timeout + retryDelay) * retryAttempts
// (RedissonBaseLock.unlockInnerAsync) with timeout 3000 ms, retryAttempts 4
// (BaseConfig, reference §4.3) and the upper end of the default
// EqualJitterDelay (2 s).
const redissonLatchTTL = (3000 + 2000) * 4 * time.Millisecond

// redisson is Redisson's RLock: a hash whose field <uuid>:<thread> holds a
// reentrancy counter, a watchdog that renews the lease while the lock is
// held and stops silently when the key is gone, and, with replicas, a WAIT
// after each lock command (reference §4.3).
type redisson struct {
	c        *client
	uuid     string // the Redisson instance id (ServiceManager id)
	node     sim.ProcID
	pttl     time.Duration // the holder's remaining lease from the last failed attempt
	replicas int           // connected replicas as the client's topology view knows them
	failed   bool          // the last attempt failed with an error: refresh the view
	renew    timerRef
	gen      int // bumped at release: stale renewals are ignored
}

func (r *redisson) init() {
	// A Redisson instance gets a random UUID when it starts; a restarted
	// client is a new instance.
	r.uuid = fmt.Sprintf("%016x", r.c.env.Rand().Uint64())
	r.replicas = r.cfg().Replicas
}

func (r *redisson) cfg() LockConfig { return r.c.cfg.Lock }

// field is getLockName(threadId) = id + ":" + threadId
// (RedissonBaseLock.getLockName).
func (r *redisson) field() string { return r.uuid + ":" + strconv.Itoa(redissonThread) }

func (r *redisson) value() string { return r.field() }

// expired is false: a watchdog client computes no validity; it believes
// while the watchdog renews, and after it silently stopped (reference §8.3).
func (r *redisson) expired() bool { return false }

func (r *redisson) receive(sim.ProcID, sim.Message) bool { return false }

func (r *redisson) fire(any) bool { return false }

func (r *redisson) giveUp() {}

// retryDelay: lock() waits on the unlock channel for at most the PTTL the
// lock script returned (RedissonLock.lock: entry.getLatch().tryAcquire(ttl)).
// Simplification: no pub/sub; the waiter polls after retry_delay or the
// PTTL, whichever is sooner.
func (r *redisson) retryDelay() time.Duration {
	d := r.cfg().RetryDelay.Draw(r.c.env.Rand())
	if r.pttl > 0 && r.pttl < d {
		d = r.pttl
	}
	return d
}

// synced runs a script and, when the client waits for replicas and knows
// some, pipelines WAIT <replicas> <slavesSyncTimeout> behind it (Redisson
// runs lock, unlock and renew as a batch followed by WAIT, SyncMode.WAIT;
// CommandAsyncService.java:1095-1245). A NOSCRIPT answer to EVALSHA
// (useScriptCache, Config.java:95) retries the batch with EVAL. done gets
// the script's reply and whether the replicas are in sync: false when WAIT
// answered 0, failed or timed out (NoSyncedSlavesException when
// checkLockSyncedSlaves is set).
func (r *redisson) synced(s *redis.Script, keys, args []string, done func(v redis.Value, ok, synced bool)) {
	c, cfg := r.c, r.cfg()
	wait := cfg.WaitReplicasOn && r.replicas > 0
	waitArg := strconv.Itoa(r.replicas)
	var batch func(eval bool)
	batch = func(eval bool) {
		var (
			v               redis.Value
			ok, gotCmd      bool
			inSync, gotWait = true, !wait
		)
		finish := func() {
			if !gotCmd || !gotWait {
				return
			}
			if ok && !eval && redis.IsNoScript(v) {
				batch(true)
				return
			}
			if !inSync {
				c.env.Logf(KindClient, "WAIT %s: no replica in sync", waitArg)
			}
			done(v, ok, inSync)
		}
		argv := s.EvalSHA(keys, args...)
		if eval {
			argv = s.Eval(keys, args...)
		}
		c.cmd(r.to(), cfg.NodeTimeout, func(rv redis.Value, rok bool) {
			v, ok, gotCmd = rv, rok, true
			finish()
		}, argv...)
		if wait {
			c.cmd(r.to(), cfg.WaitTimeout+cfg.NodeTimeout, func(w redis.Value, wok bool) {
				inSync = wok && w.Kind == redis.KindInt && w.Int > 0
				gotWait = true
				finish()
			}, "WAIT", waitArg, ms(cfg.WaitTimeout))
		}
	}
	batch(false)
}

// refreshReplicas updates the topology view with INFO replication's
// connected_slaves. Simplification: Redisson tracks replicas through
// Sentinel and its connection manager; locksim asks the master at the
// first attempt of each want and after an error. In a Redis Cluster the
// count is the slot map's (clusterReplicas) at every attempt.
func (r *redisson) refreshReplicas(force bool, then func()) {
	if !r.cfg().WaitReplicasOn {
		then()
		return
	}
	if n, ok := r.c.clusterReplicas(r.node, r.cfg().Key); ok {
		// In a cluster the entry of the key's slot knows its replicas from
		// the topology scan (ClusterConnectionManager builds each
		// MasterSlaveEntry from CLUSTER NODES, without failed replicas):
		// the slot map's count, as it is at each attempt.
		r.replicas = n
		then()
		return
	}
	if !force {
		then()
		return
	}
	r.c.cmd(r.node, r.cfg().NodeTimeout, func(v redis.Value, ok bool) {
		if n, inCluster := r.c.clusterReplicas(r.node, r.cfg().Key); inCluster {
			// The cluster's first attempt: the INFO waited for the slot
			// map, which is the topology Redisson's entry has.
			r.replicas = n
		} else if ok && v.Kind == redis.KindBulk {
			for _, line := range strings.Split(v.Str, "\n") {
				if s, found := strings.CutPrefix(strings.TrimSpace(line), "connected_slaves:"); found {
					if n, err := strconv.Atoi(s); err == nil {
						r.replicas = n
					}
				}
			}
		}
		then()
	}, "INFO", "replication")
}

// acquire makes one attempt: the lock script, with WAIT.
func (r *redisson) acquire(try int, done func(bool)) {
	c, cfg := r.c, r.cfg()
	node := c.addr(cfg.Node)
	refresh := try == 0 || r.failed || node != r.node
	r.node, r.pttl, r.failed = node, 0, false
	r.refreshReplicas(refresh, func() {
		// tryLockInnerAsync: ARGV[1] = lease ms, ARGV[2] = uuid:thread
		// (RedissonLock.java:214-224).
		r.synced(scriptRedissonLock, []string{cfg.Key}, []string{ms(cfg.Lease), r.field()}, func(v redis.Value, ok, inSync bool) {
			switch {
			case !ok || v.IsErr():
				c.noteError(cfg.Node)
				r.failed = true
				done(false)
			case v.Kind == redis.KindInt:
				// Held by another: the script returned its PTTL.
				r.pttl = time.Duration(v.Int) * time.Millisecond
				done(false)
			case !inSync:
				// handleNoSync: unlock and fail (RedissonBaseLock.java:281-283).
				r.sendUnlock(nil)
				done(false)
			case cfg.FencingToken == FencingIncr:
				// Simplification: RFencedLock increments its token inside the
				// lock script (RedissonFencedLock.java:106-118); locksim sends
				// INCR right after it.
				c.incrToken(r.to(), cfg.NodeTimeout, func(ok bool) {
					if !ok {
						r.sendUnlock(nil)
					}
					done(ok)
				})
			default:
				done(true)
			}
		})
	})
}

// held starts the watchdog: lock() without a lease time schedules renewal
// (scheduleExpirationRenewal, RedissonLock.java:185-207).
func (r *redisson) held() {
	if r.cfg().Watchdog {
		r.scheduleRenew()
	}
}

// scheduleRenew arms the next renewal (RenewalTask.schedule: every
// lockWatchdogTimeout/3 on Netty's HashedWheelTimer).
func (r *redisson) scheduleRenew() {
	c, cfg := r.c, r.cfg()
	gen := r.gen
	r.renew = c.after(cfg.renewEvery(), whatRenew, func() {
		r.renew = timerRef{}
		// LockTask: for each key, if hexists(KEYS[i], ARGV[i+1]) then
		// pexpire(KEYS[i], ARGV[1]) (LockTask.java:84-93).
		r.synced(scriptRedissonRenew, []string{cfg.Key}, []string{ms(cfg.Lease), r.field()}, func(v redis.Value, ok, inSync bool) {
			if gen != r.gen {
				return
			}
			res, isResult := renewResult(v)
			switch {
			case !ok || v.IsErr() || !isResult:
				// On error the task logs and reschedules.
				c.noteError(cfg.Node)
				c.env.Logf(KindClient, "watchdog: renewal error %v; rescheduled", v)
				r.scheduleRenew()
			case res == 0:
				// The key is gone or not ours: the renewal is cancelled
				// silently; the holder is not told (reference §4.3).
				c.env.Logf(KindClient, "watchdog: %s no longer ours; renewal cancelled silently", cfg.Key)
			default:
				if !inSync {
					c.env.Logf(KindClient, "watchdog: renewed but no replica in sync; rescheduled")
				}
				r.scheduleRenew()
			}
		})
	})
}

// renewResult reads the renew script's answer: an array of 0/1 per key
// (Redisson 3.44+) or a single integer (3.x).
func renewResult(v redis.Value) (int64, bool) {
	switch v.Kind {
	case redis.KindInt:
		return v.Int, true
	case redis.KindArray:
		if len(v.Array) == 1 && v.Array[0].Kind == redis.KindInt {
			return v.Array[0].Int, true
		}
	}
	return 0, false
}

// release runs the unlock script (and cancels the renewal).
func (r *redisson) release(done func()) {
	r.c.cancel(&r.renew)
	r.gen++
	r.sendUnlock(done)
}

// sendUnlock runs unlockInnerAsync (RedissonLock.java:347-371) and then
// deletes the latch key, as unlockInnerAsync's continuation does.
func (r *redisson) sendUnlock(done func()) {
	c, cfg := r.c, r.cfg()
	if done == nil {
		done = func() {}
	}
	latch := "redisson_unlock_latch:{" + cfg.Key + "}:" + fmt.Sprintf("%016x", c.env.Rand().Uint64())
	keys := []string{cfg.Key, "redisson_lock__channel:{" + cfg.Key + "}", latch}
	args := []string{redissonUnlockMessage, ms(cfg.Lease), r.field(), "publish", ms(redissonLatchTTL)}
	r.synced(scriptRedissonUnlock, keys, args, func(v redis.Value, ok, _ bool) {
		if ok && v.IsNil() {
			// IllegalMonitorStateException: the lock was not ours any more.
			c.env.Logf(KindClient, "unlock: %s not held by us (IllegalMonitorStateException)", cfg.Key)
		}
		if ok && !v.IsErr() {
			c.cmd(r.to(), cfg.NodeTimeout, func(redis.Value, bool) {}, "DEL", latch)
		}
		done()
	})
}

// to is the process a command goes to: the lock's node, or for the
// Sentinel-monitored master the master the sentinel scan found last
// (follow.go): a renewal or an unlock after a change goes to the new master,
// as Redisson's MasterSlaveEntry does once changeMaster replaced its master
// entry.
func (r *redisson) to() sim.ProcID { return r.c.addr(r.cfg().Node) }
