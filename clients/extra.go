package clients

import (
	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// noValue is the Redis value complete takes for a reply of another kind.
var noValue redis.Value

// noExtras is embedded by issue 13's algorithms: they receive only replies
// and set no timers of their own.
type noExtras struct{}

func (noExtras) giveUp()       {}
func (noExtras) fire(any) bool { return false }
func (noExtras) expired() bool { return false }
func (noExtras) init()         {}
func (noExtras) held()         {}
func (noExtras) value() string { return "" }

// tokenThen wraps an attempt's done for fencing_token incr on a Redis lock
// node: after a successful acquire it obtains the token (INCR <key>:token
// on node, as the single-instance family does, incrToken) before reporting
// success; when the INCR fails it gives the lock back and fails the
// attempt. Without a token it returns done.
func (c *client) tokenThen(node func() sim.ProcID, done func(bool), giveBack func()) func(bool) {
	if c.cfg.Lock.FencingToken != FencingIncr {
		return done
	}
	return func(ok bool) {
		if !ok {
			done(false)
			return
		}
		c.incrToken(node(), c.cfg.Lock.NodeTimeout, func(ok bool) {
			if !ok {
				c.noteError(c.cfg.Lock.Node)
				giveBack()
			}
			done(ok)
		})
	}
}
