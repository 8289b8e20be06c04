package clients

import (
	"fmt"
	"strconv"
	"time"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// GetSetParams are redis-getset's parameters.
type GetSetParams struct {
	Common
	// Timeout is the lock timeout the client adds to its own wall clock to
	// form the stored expiry time. Parameter "timeout".
	Timeout time.Duration
}

// getsetTimeout is redis-getset's default lock timeout. locksim default:
// the SETNX page's recipe leaves it to the application; 30 s is the
// distlock page's TTL that redis-single uses (reference §4.1).
const getsetTimeout = 30 * time.Second

// DefaultGetSetParams returns redis-getset's defaults.
func DefaultGetSetParams() GetSetParams {
	return GetSetParams{Common: defaultCommon(), Timeout: getsetTimeout}
}

// Validate reports the first bad parameter, naming it.
func (p GetSetParams) Validate() error {
	if err := p.Common.validate(); err != nil {
		return err
	}
	if p.Timeout < time.Millisecond {
		return fmt.Errorf("timeout: must be at least 1ms, got %v", p.Timeout)
	}
	return nil
}

// NewGetSet returns a redis-getset client; it panics on an invalid
// configuration (ValidateGetSet first).
func NewGetSet(cfg Config, p GetSetParams) sim.Process {
	return newExtra(cfg, RedisGetSet, p.Common, p.Validate, func(c *client) algorithm { return &getSet{c: c, p: p} })
}

// ValidateGetSet checks a redis-getset client's configuration.
func ValidateGetSet(cfg Config, p GetSetParams) error {
	return validateExtra(cfg, p.Common, p.Validate)
}

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
	c    *client
	p    GetSetParams
	node sim.ProcID
	exp  int64 // the expiry this client stored, in its wall milliseconds
}

func (g *getSet) value() string { return strconv.FormatInt(g.exp, 10) }

func (g *getSet) retryDelay() time.Duration { return g.p.RetryDelay.Draw(g.c.env.Rand()) }

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
	g.node = c.addr(g.p.Node)
	key, nt := g.p.Key, g.p.NodeTimeout
	newExp := func() string {
		g.exp = g.now() + g.p.Timeout.Milliseconds()
		return strconv.FormatInt(g.exp, 10)
	}
	c.cmd(g.node, nt, func(v redis.Value, ok bool) {
		if ok && v.Kind == redis.KindInt && v.Int == 1 {
			done(true)
			return
		}
		if !ok || v.IsErr() {
			c.env.Logf(KindClient, "SETNX %s: %v", key, v)
			done(false)
			return
		}
		c.cmd(g.node, nt, func(v redis.Value, ok bool) {
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
			c.cmd(g.node, nt, func(v redis.Value, ok bool) {
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
		c.env.Logf(KindClient, "release: lock expired on our clock; no DEL")
		done()
		return
	}
	c.cmd(g.node, g.p.NodeTimeout, func(redis.Value, bool) { done() }, "DEL", g.p.Key)
}
