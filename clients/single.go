package clients

import (
	"strconv"
	"time"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// fixedValue is the value every redis-fixed-value client writes: the naive
// "SET lock 1 NX PX ttl" that cannot tell one holder from another.
const fixedValue = "1"

// single is the single-instance family: redis-single, redis-setnx-expire,
// redis-fixed-value and redis-get-del.
type single struct {
	c      *client
	val    string
	extend timerRef
	gen    int // bumped at release: stale extension replies are ignored

	// The attempt in progress and the release in progress (with a done
	// to call; a release without one may run beside them).
	done    func(bool)
	relDone func()
	// Made once: the script's KEYS and the TTL in milliseconds; per lock
	// value (argvs), SET's argv and the release script's ARGV and argv,
	// from the client's argv slab and immutable once sent.
	keys                      []string
	ttlMs                     string
	setArgv, relArgs, relArgv []string
	// Continuations made once (issue 15: a closure per step, each
	// capturing the lock's config, were most of fenced-baseline's
	// allocations).
	onSetFn, onReleaseFn, onReleaseQuietFn func(redis.Value, bool)
	afterTokenFn                           func(bool)
}

func (s *single) init() {
	s.keys = []string{s.cfg().Key}
	s.ttlMs = ms(s.cfg().TTL)
	s.onSetFn, s.onReleaseFn, s.onReleaseQuietFn = s.onSet, s.onRelease, s.onReleaseQuiet
	s.afterTokenFn = s.afterToken
}

// cfg returns the lock's configuration (a pointer: the struct is large).
func (s *single) cfg() *LockConfig { return &s.c.cfg.Lock }

// argvs builds the commands of the lock value s.val, in one piece of the
// client's argv slab.
func (s *single) argvs() {
	cfg := s.cfg()
	buf := s.c.argv(6 + 1 + 3 + len(s.keys) + 1)
	// "SET resource_name my_random_value NX PX 30000" (RD
	// distributed-locks.md, "Correct Implementation with a Single Instance").
	buf = append(buf, "SET", cfg.Key, s.val, "NX", "PX", s.ttlMs)
	s.setArgv = buf[:len(buf):len(buf)]
	at := len(buf)
	buf = append(buf, s.val)
	s.relArgs = buf[at:len(buf):len(buf)]
	at = len(buf)
	buf = scriptCompareAndDelete.AppendEvalSHA(buf, s.keys, s.relArgs...)
	s.relArgv = buf[at:len(buf):len(buf)]
}

func (s *single) value() string { return s.val }

func (s *single) expired() bool { return false }

func (s *single) receive(sim.ProcID, sim.Message) bool { return false }

func (s *single) fire(any) bool { return false }

func (s *single) giveUp() {}

func (s *single) retryDelay() time.Duration { return s.cfg().RetryDelay.Draw(s.c.env.Rand()) }

// acquire makes one attempt.
func (s *single) acquire(_ int, done func(bool)) {
	c, cfg := s.c, s.cfg()
	if cfg.Algorithm == RedisFixedValue {
		s.val = fixedValue
	} else {
		s.val = c.uniqueValue()
	}
	s.argvs()
	s.done = done
	if cfg.Algorithm == RedisSetNXExpire {
		// The pre-2.6.12 pattern: SETNX, then EXPIRE as a second command. A
		// crash between the two leaves a key without a TTL, which nobody
		// ever releases (reference §8.3; the reason SET gained NX and PX).
		// SETNX answers :1 when it stored the key, :0 when it existed.
		c.cmd(s.node(), cfg.NodeTimeout, func(v redis.Value, ok bool) {
			if !ok || v.Kind != redis.KindInt || v.Int != 1 {
				s.fail(v, ok)
				return
			}
			c.cmd(s.node(), cfg.NodeTimeout, func(v redis.Value, ok bool) {
				if !ok || v.Kind != redis.KindInt || v.Int != 1 {
					// The key is ours but may have no TTL; give it back.
					s.sendRelease(nil)
					s.fail(v, ok)
					return
				}
				s.afterSet()
			}, expireArgs(cfg.Key, cfg.TTL)...)
		}, "SETNX", cfg.Key, s.val)
		return
	}
	c.cmdTo(s.node(), cfg.NodeTimeout, callback{fn: s.onSetFn}, s.setArgv)
}

// onSet handles SET's reply.
func (s *single) onSet(v redis.Value, ok bool) {
	if !ok || !v.IsOK() {
		s.fail(v, ok)
		return
	}
	s.afterSet()
}

// fail handles an error reply or a timeout: the lock was not taken (as
// far as the client knows).
func (s *single) fail(v redis.Value, ok bool) {
	if !ok || v.IsErr() {
		s.c.noteError(s.cfg().Node)
	}
	s.done(false)
}

// expireArgs is EXPIRE in seconds when the TTL is whole seconds, PEXPIRE
// otherwise (go-redis' usePrecise rule, go-redis v9 commands.go:25-27).
func expireArgs(key string, ttl time.Duration) []string {
	if ttl%time.Second == 0 {
		return []string{"EXPIRE", key, strconv.FormatInt(int64(ttl/time.Second), 10)}
	}
	return []string{"PEXPIRE", key, ms(ttl)}
}

// afterSet completes an attempt whose key was set: the fencing token, then
// WAIT for replicas when asked. A failure there releases the key and fails
// the attempt.
func (s *single) afterSet() {
	if s.cfg().FencingToken != FencingIncr {
		s.wait()
		return
	}
	s.c.incrToken(s.node(), s.cfg().NodeTimeout, s.afterTokenFn)
}

// afterToken goes on once the token came (or did not).
func (s *single) afterToken(ok bool) {
	if !ok {
		s.c.noteError(s.cfg().Node)
		s.giveBack()
		return
	}
	s.wait()
}

// giveBack releases the key and fails the attempt.
func (s *single) giveBack() {
	s.sendRelease(nil)
	s.done(false)
}

// wait runs WAIT when the lock asks for replicas, and ends the attempt.
func (s *single) wait() {
	c, cfg := s.c, s.cfg()
	if cfg.WaitReplicas == 0 {
		s.done(true)
		return
	}
	// WAIT returns the number of replicas that acknowledged, whatever
	// was asked: the caller must compare (reference §3.2).
	c.cmd(s.node(), cfg.WaitTimeout+cfg.NodeTimeout, func(v redis.Value, ok bool) {
		if !ok || v.Kind != redis.KindInt || v.Int < int64(cfg.WaitReplicas) {
			if !ok || v.IsErr() {
				c.noteError(cfg.Node)
			}
			c.env.Logf(KindClient, "WAIT %d: %v acknowledged; attempt fails", cfg.WaitReplicas, v)
			s.giveBack()
			return
		}
		s.done(true)
	}, "WAIT", strconv.Itoa(cfg.WaitReplicas), ms(cfg.WaitTimeout))
}

// held starts the extension timer (redis-single with extend_every).
func (s *single) held() {
	if s.cfg().ExtendEvery > 0 {
		s.scheduleExtend()
	}
}

func (s *single) scheduleExtend() {
	c, cfg := s.c, s.cfg()
	gen := s.gen
	s.extend = c.after(cfg.ExtendEvery, whatExtend, func() {
		s.extend = timerRef{}
		// The touch script: PEXPIRE only if the key still holds our value
		// (redsync touchScript, scripts.go:26-32, reference §5).
		c.evalsha(s.node(), cfg.NodeTimeout, scriptTouch, []string{cfg.Key}, []string{s.val, ms(cfg.TTL)}, func(v redis.Value, ok bool) {
			if gen != s.gen {
				return
			}
			if ok && v.Kind == redis.KindInt && v.Int != 0 {
				s.scheduleExtend()
				return
			}
			if !ok || v.IsErr() {
				c.noteError(cfg.Node)
			}
			c.lost("extend failed: " + v.String())
		})
	})
}

// release sends the variant's release.
func (s *single) release(done func()) {
	s.c.cancel(&s.extend)
	s.gen++
	s.sendRelease(done)
}

// sendRelease releases the key the way the variant does and calls done (if
// not nil) when the release completed.
func (s *single) sendRelease(done func()) {
	c, cfg := s.c, s.cfg()
	switch cfg.Algorithm {
	case RedisFixedValue, RedisGetDel:
		if done == nil {
			done = func() {}
		}
		if cfg.Algorithm == RedisFixedValue {
			// DEL whatever holds the key: possibly another client's lock.
			c.cmd(s.node(), cfg.NodeTimeout, func(redis.Value, bool) { done() }, "DEL", cfg.Key)
			return
		}
		// GET, compare in the client, DEL: not atomic, so the key may have
		// expired and been taken by another client between the two.
		c.cmd(s.node(), cfg.NodeTimeout, func(v redis.Value, ok bool) {
			if !ok || v.Kind != redis.KindBulk || v.Str != s.val {
				c.env.LogfAttrs(KindClient, releaseFailed(), "release: GET %s = %v, not ours; no DEL", cfg.Key, v)
				done()
				return
			}
			c.cmd(s.node(), cfg.NodeTimeout, func(redis.Value, bool) { done() }, "DEL", cfg.Key)
		}, "GET", cfg.Key)
	default:
		// The compare-and-delete script (RD distributed-locks.md, reference
		// §5), with the argv of the current value (argvs).
		cb := s.onReleaseQuietFn
		if done != nil {
			s.relDone, cb = done, s.onReleaseFn
		}
		c.evalshaTo(s.node(), cfg.NodeTimeout, scriptCompareAndDelete, s.relArgv, s.keys, s.relArgs, callback{fn: cb})
	}
}

// onReleaseQuiet handles the script's reply to a release with no done.
func (s *single) onReleaseQuiet(v redis.Value, ok bool) {
	if ok && v.Kind == redis.KindInt && v.Int == 0 {
		s.c.env.LogfAttrs(KindClient, releaseFailed(), "release: %s no longer held our value", s.cfg().Key)
	}
}

// onRelease handles the script's reply to a release and calls its done.
func (s *single) onRelease(v redis.Value, ok bool) {
	s.onReleaseQuiet(v, ok)
	done := s.relDone
	s.relDone = nil
	done()
}

// incrToken obtains a fencing token by INCR <key>:token on node and stores
// it as the client's token.
//
// NB: this is the counter Kleppmann warns about: it lives in an
// asynchronously replicated Redis, so a failover or a restart without fsync
// can hand out the same token twice, and with several nodes (redlock) the
// counter of one node says nothing about the others (reference §6.1, "Fix:
// fencing"; §4.3 RFencedLock).
func (c *client) incrToken(node sim.ProcID, timeout time.Duration, done func(ok bool)) {
	if c.incrArgv == nil {
		c.incrArgv = []string{"INCR", c.cfg.Lock.Key + ":token"}
		c.onTokenFn = c.onToken
	}
	c.tokenDone = done
	c.cmdTo(node, timeout, callback{fn: c.onTokenFn}, c.incrArgv)
}

// onToken handles INCR's reply (one token request at a time: attempts do
// not overlap).
func (c *client) onToken(v redis.Value, ok bool) {
	done := c.tokenDone
	c.tokenDone = nil
	if !ok || v.Kind != redis.KindInt {
		done(false)
		return
	}
	c.token, c.hasToken = v.Int, true
	done(true)
}

// node is the process the lock's commands go to: the lock's node, or for
// the Sentinel-monitored master the master as the client knows it now
// (discovery.go, follow.go): a release or an extension after a
// +switch-master goes to the new master, as go-redis' pool dials it.
func (s *single) node() sim.ProcID { return s.c.addr(s.cfg().Node) }
