package clients

import (
	"fmt"
	"time"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// reentrant is a re-entrant lock on one Redis node. Naive (counted false):
// the value is the client's own id, stable across acquisitions; SET NX PX
// takes the lock, and when it fails a GET that returns the client's own id
// counts as re-entry; every release is DEL, so an inner release frees the
// lock while the outer section still runs. Counted: Redisson's hash, whose
// owner field holds a hold count (the lock script's HINCRBY, the unlock
// script's decrement and DEL at zero, reference §5), without a watchdog
// (lock(leaseTime)).
type reentrant struct {
	noExtras
	c       *client
	counted bool
	id      string // the owner id: the naive value, Redisson's uuid:thread
	gen     int    // bumped at the outer release: a pending inner step stops
	inner   timerRef
}

// init draws the owner id; a restarted client is a new owner.
func (r *reentrant) init() {
	r.id = fmt.Sprintf("%s:%016x:%d", r.c.cfg.Name, r.c.env.Rand().Uint64(), redissonThread)
}

func (r *reentrant) cfg() LockConfig { return r.c.cfg.Lock }

func (r *reentrant) value() string { return r.id }

func (r *reentrant) retryDelay() time.Duration { return r.cfg().RetryDelay.Draw(r.c.env.Rand()) }

func (r *reentrant) receive(sim.ProcID, sim.Message) bool { return false }

func (r *reentrant) acquire(_ int, done func(bool)) {
	r.lock(false, r.c.tokenThen(func() sim.ProcID { return r.node() }, done, func() { r.unlock(func() {}) }))
}

// lock takes the lock once (inner: a re-entry, logged as such).
func (r *reentrant) lock(inner bool, done func(bool)) {
	c, key, nt := r.c, r.cfg().Key, r.cfg().NodeTimeout
	if r.counted {
		// tryLockInnerAsync: nil when taken (or re-entered), else the PTTL.
		c.evalsha(r.node(), nt, scriptRedissonLock, []string{key}, []string{ms(r.cfg().TTL), r.id}, func(v redis.Value, ok bool) {
			done(ok && v.IsNil())
		})
		return
	}
	c.cmd(r.node(), nt, func(v redis.Value, ok bool) {
		if ok && v.IsOK() {
			done(true)
			return
		}
		if !ok || v.IsErr() {
			done(false)
			return
		}
		c.cmd(r.node(), nt, func(v redis.Value, ok bool) {
			own := ok && v.Kind == redis.KindBulk && v.Str == r.id
			if own {
				c.env.Logf(KindClient, "%s holds our own value: re-entry", key)
			}
			done(own)
		}, "GET", key)
	}, "SET", key, r.id, "NX", "PX", ms(r.cfg().TTL))
}

// unlock releases once: DEL (naive) or the unlock script (counted).
func (r *reentrant) unlock(done func()) {
	c, key, nt := r.c, r.cfg().Key, r.cfg().NodeTimeout
	if !r.counted {
		c.cmd(r.node(), nt, func(redis.Value, bool) { done() }, "DEL", key)
		return
	}
	latch := "redisson_unlock_latch:{" + key + "}:" + fmt.Sprintf("%016x", c.env.Rand().Uint64())
	keys := []string{key, "redisson_lock__channel:{" + key + "}", latch}
	args := []string{redissonUnlockMessage, ms(r.cfg().TTL), r.id, "publish", ms(redissonLatchTTL)}
	c.evalsha(r.node(), nt, scriptRedissonUnlock, keys, args, func(v redis.Value, ok bool) {
		switch {
		case ok && v.IsNil():
			c.env.Logf(KindClient, "unlock: %s not held by us (IllegalMonitorStateException)", key)
		case ok && v.Kind == redis.KindInt && v.Int == 0:
			c.env.Logf(KindClient, "unlock: %s hold count decremented; still held", key)
		}
		if ok && !v.IsErr() {
			c.cmd(r.node(), nt, func(redis.Value, bool) {}, "DEL", latch)
		}
		done()
	})
}

// held starts the inner acquisitions of a nested workload.
func (r *reentrant) held() {
	if r.c.cfg.Workload.Reentry < 2 {
		return
	}
	gen := r.gen
	r.inner = r.c.after(r.c.cfg.Workload.InnerAt, whatHold, func() {
		r.inner = timerRef{}
		r.enter(gen, 2)
	})
}

// enter takes nesting level level (2 is the first re-entry).
func (r *reentrant) enter(gen, level int) {
	c := r.c
	if gen != r.gen || !c.believes() {
		return
	}
	r.lock(true, func(ok bool) {
		if gen != r.gen {
			return
		}
		if !ok {
			c.env.Logf(KindClient, "re-entry at depth %d failed; inner section skipped", level)
			r.leave(gen, level-1)
			return
		}
		c.env.Logf(KindClient, "re-entered at depth %d", level)
		if level < r.c.cfg.Workload.Reentry {
			r.enter(gen, level+1)
			return
		}
		r.inner = c.after(r.c.cfg.Workload.InnerHold, whatHold, func() {
			r.inner = timerRef{}
			r.leave(gen, level)
		})
	})
}

// leave releases nesting levels level down to 2.
func (r *reentrant) leave(gen, level int) {
	if level < 2 || gen != r.gen {
		return
	}
	r.unlock(func() {
		if gen != r.gen {
			return
		}
		r.c.env.Logf(KindClient, "left depth %d", level)
		r.leave(gen, level-1)
	})
}

func (r *reentrant) release(done func()) {
	r.c.cancel(&r.inner)
	r.gen++
	r.unlock(done)
}

// node is the process the lock's commands go to: the lock's node, or for
// the Sentinel-monitored master the master as the client knows it now
// (discovery.go, follow.go): a release or an extension after a
// +switch-master goes to the new master, as go-redis' pool dials it.
func (r *reentrant) node() sim.ProcID { return r.c.addr(r.cfg().Node) }
