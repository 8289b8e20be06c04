package clients

import (
	"fmt"
	"time"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// User code as a lock client (issue 24).
//
// A user client runs the workload loop of every client (want, attempts,
// belief, critical section, release, think), recording the same history,
// around a lock whose acquire and release are real Go code running outside
// the kernel (package usercode runs it in a testing/synctest bubble). The
// scenario's lock block still gives the workload's tries and retry delay;
// one attempt is one call of the user's obtain.

// UserLock is the bridge between a user client's workload loop and the
// user's code. Its methods run inside kernel steps of the client process;
// the user's code runs elsewhere and comes back through the kernel (the
// process's Fire with a tag the bridge recognises, after sim.Kernel.Wake).
type UserLock interface {
	// Start runs when the process starts (at every incarnation); lost
	// ends the client's belief (the code learnt it lost the lock).
	Start(env *sim.Env, lost func(why string))
	// Acquire makes one attempt and calls done once, in a later kernel
	// step, with the outcome: whether the lock was obtained, its fencing
	// token when the code returned one, and the lock's value (for a
	// token-cas resource).
	Acquire(done func(r UserAcquired))
	// Expired reports whether the validity the code returned has passed.
	Expired() bool
	// Release starts the release and calls done once when it finished.
	Release(done func())
	// Extend starts one extension of the lock held (the lock's
	// extend_every) and calls done once, in a later kernel step, with ""
	// when the lock was extended and otherwise why not. It returns false,
	// and never calls done, when the user's code has no extension.
	Extend(done func(failed string)) bool
	// Fire handles a tag of the bridge's own (reports whether it did).
	Fire(tag any) bool
	// Receive handles a message for the user's connections (replies of
	// the Redis nodes) and reports whether it did.
	Receive(from sim.ProcID, msg sim.Message) bool
	// ConnEnded tells the user's connections that the kernel's connection
	// with peer ended.
	ConnEnded(peer sim.ProcID, why sim.ConnEnd)
}

// UserAcquired is the outcome of one attempt of user code.
type UserAcquired struct {
	OK       bool
	Token    int64
	HasToken bool
	Value    string
}

// NewUser returns a client process whose lock is user code reached through
// u (the kernel calls the factory again on restart, so a restarted client
// gets a fresh bridge from the caller's factory). cfg is validated as for
// New: its lock block gives the workload's tries and retry delay.
func NewUser(cfg Config, u UserLock) sim.Process {
	if err := cfg.Validate(); err != nil {
		panic(fmt.Sprintf("clients: invalid config for %s: %v", cfg.Name, err))
	}
	// The user's code finds the master itself (go-redis' failover client):
	// the workload does not ask the sentinels before each attempt.
	cfg.Discovery = nil
	c := &client{cfg: cfg, lock: cfg.Lock.Key, want: -1, belief: -1, section: -1}
	a := &userAlg{c: c, u: u}
	c.alg = a
	c.startWantFn, c.nextTryFn, c.tryNowFn = c.startWant, c.nextTry, c.tryNow
	c.holdFn, c.writeFn, c.releasedFn = c.holdDone, c.writeResource, c.released
	c.acquiredFn, c.onReadFn, c.onWriteFn = c.acquired, c.onRead, c.onWrite
	return &userClient{client: c, u: u}
}

// userClient routes what belongs to the user's code (Redis replies, the
// bridge's wake-ups, connection ends) to the bridge, and the rest (the
// resource's replies, the workload's timers) to the workload loop.
type userClient struct {
	*client
	u UserLock
}

func (uc *userClient) Init(env *sim.Env) {
	uc.u.Start(env, uc.client.lost)
	uc.client.Init(env)
}

func (uc *userClient) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	switch msg.(type) {
	case *redis.Reply, redis.Reply, redis.Push:
		if uc.u.Receive(from, msg) {
			return
		}
	}
	uc.client.Receive(env, from, msg)
}

func (uc *userClient) Fire(env *sim.Env, tag any) {
	if uc.u.Fire(tag) {
		return
	}
	uc.client.Fire(env, tag)
}

func (uc *userClient) ConnEnded(env *sim.Env, peer sim.ProcID, why sim.ConnEnd) {
	uc.u.ConnEnded(peer, why)
	uc.client.ConnEnded(env, peer, why)
}

// userAlg is the algorithm of a user client: the bridge's calls.
type userAlg struct {
	c      *client
	u      UserLock
	val    string
	until  bool
	extend timerRef
	gen    uint64 // bumped at each release: a late extension's outcome is stale
}

func (a *userAlg) init() {}

func (a *userAlg) acquire(_ int, done func(ok bool)) {
	a.u.Acquire(func(r UserAcquired) {
		if r.OK {
			a.c.token, a.c.hasToken = r.Token, r.HasToken
			a.val = r.Value
		}
		done(r.OK)
	})
}

// held starts the extension timer when the lock extends (extend_every), as
// a modelled client's (single.go scheduleExtend): every period of the
// client's monotonic clock the workload calls the code's Extend, and a
// failed extension ends the client's belief (the lock is lost).
func (a *userAlg) held() {
	if a.c.cfg.Lock.ExtendEvery > 0 {
		a.scheduleExtend()
	}
}

func (a *userAlg) scheduleExtend() {
	c, gen := a.c, a.gen
	a.extend = c.after(c.cfg.Lock.ExtendEvery, whatExtend, func() {
		a.extend = timerRef{}
		a.u.Extend(func(failed string) {
			if gen != a.gen {
				return // released meanwhile
			}
			if failed == "" {
				a.scheduleExtend()
				return
			}
			c.lost("extend failed: " + failed)
		})
	})
}

func (a *userAlg) expired() bool { return a.u.Expired() }
func (a *userAlg) release(done func()) {
	a.c.cancel(&a.extend)
	a.gen++
	a.u.Release(done)
}
func (a *userAlg) value() string { return a.val }
func (a *userAlg) retryDelay() time.Duration {
	return a.c.cfg.Lock.RetryDelay.Draw(a.c.env.Rand())
}
func (a *userAlg) giveUp()                                       {}
func (a *userAlg) receive(from sim.ProcID, msg sim.Message) bool { return false }
func (a *userAlg) fire(tag any) bool                             { return false }
