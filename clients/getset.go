package clients

import (
	"strconv"
	"time"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// getSet is the pre-2.6.12 timestamp lock of the Redis SETNX documentation
// ("Design pattern: Locking with SETNX", "Handling deadlocks in the above
// locking algorithm"): the key holds the time at which the lock expires on
// the holder's clock, and every client compares it with its own clock. The
// stored value has no TTL (SETNX takes none; GETSET clears one). A client
// whose clock runs ahead sees a live lock as expired and takes it over.
//
// Simplification: the recipe stores Unix seconds plus one; locksim stores
// Unix milliseconds, so that sub-second timeouts can be studied; the
// comparisons are the same.
type getSet struct {
	noExtras
	c   *client
	exp int64 // the expiry this client stored, in its wall milliseconds
}

func (g *getSet) cfg() LockConfig { return g.c.cfg.Lock }

func (g *getSet) value() string { return strconv.FormatInt(g.exp, 10) }

func (g *getSet) retryDelay() time.Duration { return g.cfg().RetryDelay.Draw(g.c.env.Rand()) }

func (g *getSet) receive(sim.ProcID, sim.Message) bool { return false }

// now is the client's wall clock in Unix milliseconds.
func (g *getSet) now() int64 { return g.c.env.WallMs() }

// expired reports whether the stored expiry has passed on the client's
// clock: the careful holder checks it before it writes.
func (g *getSet) expired() bool { return g.now() >= g.exp }

// acquire: SETNX key <now+timeout>; when that fails, GET; if the stored
// time has passed on this client's clock, GETSET key <now+timeout>, and win
// only if GETSET returned the value the GET read (another client that won
// the same race would have replaced it). The page's own test is that the
// old value "is still an expired time stamp"; equality with the value read
// is the seeds' stricter form and differs only when two takeovers race.
func (g *getSet) acquire(_ int, done func(bool)) {
	c := g.c
	key, nt := g.cfg().Key, g.cfg().NodeTimeout
	done = c.tokenThen(func() sim.ProcID { return g.node() }, done, func() {
		c.cmd(g.node(), nt, func(redis.Value, bool) {}, "DEL", key)
	})
	newExp := func() string {
		g.exp = g.now() + g.cfg().LockTimeout.Milliseconds()
		return strconv.FormatInt(g.exp, 10)
	}
	c.cmd(g.node(), nt, func(v redis.Value, ok bool) {
		if ok && v.Kind == redis.KindInt && v.Int == 1 {
			done(true)
			return
		}
		if !ok || v.IsErr() {
			c.env.Logf(KindClient, "SETNX %s: %v", key, v)
			done(false)
			return
		}
		c.cmd(g.node(), nt, func(v redis.Value, ok bool) {
			if !ok || v.Kind != redis.KindBulk {
				// Deleted meanwhile (or an error): try again later.
				done(false)
				return
			}
			read := v.Str
			stored, err := strconv.ParseInt(read, 10, 64)
			if err == nil && stored > g.now() {
				// Held, and not expired on this client's clock.
				done(false)
				return
			}
			c.env.Logf(KindClient, "lock %s expired on our clock (stored %s); GETSET", key, read)
			c.cmd(g.node(), nt, func(v redis.Value, ok bool) {
				if ok && v.Kind == redis.KindBulk && v.Str == read {
					done(true)
					return
				}
				c.env.Logf(KindClient, "GETSET %s returned %v, not %s: another client was faster", key, v, read)
				done(false)
			}, "GETSET", key, newExp())
		}, "GET", key)
	}, "SETNX", key, newExp())
}

// release: DEL only if the lock has not expired on the client's clock (the
// SETNX page: "a client holding a lock should always check the timeout
// didn't expire before unlocking the key with DEL"). The check and the DEL
// are not atomic.
func (g *getSet) release(done func()) {
	c := g.c
	if g.expired() {
		c.env.LogfAttrs(KindClient, releaseFailed(), "release: lock expired on our clock; no DEL")
		done()
		return
	}
	c.cmd(g.node(), g.cfg().NodeTimeout, func(redis.Value, bool) { done() }, "DEL", g.cfg().Key)
}

// node is the process the lock's commands go to: the lock's node, or for
// the Sentinel-monitored master the master as the client knows it now
// (discovery.go, follow.go): a release or an extension after a
// +switch-master goes to the new master, as go-redis' pool dials it.
func (g *getSet) node() sim.ProcID { return g.c.addr(g.cfg().Node) }
