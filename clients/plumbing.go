package clients

import (
	"strconv"
	"time"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// timerTag is the tag of every client timer: what the client waits for (for
// the trace) and a sequence number that finds the continuation (for a
// request timeout, the request id). Timer tags must be values that render
// deterministically, so continuations live in the client, not in the tag.
type timerTag struct {
	what string
	seq  uint64
}

// whatTimeout marks a request's timeout timer.
const whatTimeout = "timeout"

// AppendTrace renders the tag for the trace.
func (t timerTag) AppendTrace(b []byte) []byte {
	return strconv.AppendUint(append(append(b, t.what...), ' '), t.seq, 10)
}

// timerRef identifies a pending client timer; the zero value is none.
type timerRef struct {
	id  sim.TimerID
	seq uint64
}

// pending is a request awaiting its reply: a Redis command (rcb, and the
// script to resend with EVAL after NOSCRIPT) or another message (mcb).
type pending struct {
	timer   sim.TimerID
	to      sim.ProcID
	timeout time.Duration
	rcb     func(v redis.Value, ok bool)
	mcb     func(msg sim.Message, ok bool)
	script  *redis.Script
	keys    []string
	args    []string
}

// after runs f when the client's monotonic clock has advanced by d. Every
// wait of a client (timeouts, hold, think, retry delays, renewal periods)
// is measured on the monotonic clock: Go timers, Ruby's sleep and Netty's
// HashedWheelTimer all are (reference §8.1: "its renewal timer uses mono").
func (c *client) after(d time.Duration, what string, f func()) timerRef {
	c.seq++
	c.timers[c.seq] = f
	id := c.env.After(sim.Mono, d, timerTag{what: what, seq: c.seq})
	return timerRef{id: id, seq: c.seq}
}

// cancel stops a timer (a no-op for the zero timerRef or a timer that fired).
func (c *client) cancel(r *timerRef) {
	if r.seq == 0 {
		return
	}
	if _, ok := c.timers[r.seq]; ok {
		delete(c.timers, r.seq)
		c.env.Cancel(r.id)
	}
	*r = timerRef{}
}

// fire runs the continuation of a timer, or times a request out: its
// callback gets ok=false, and a late reply is ignored by its id.
func (c *client) fire(t timerTag) {
	if t.what == whatTimeout {
		p, ok := c.calls[t.seq]
		if !ok {
			return
		}
		delete(c.calls, t.seq)
		if p.rcb != nil {
			p.rcb(redis.Value{}, false)
		} else {
			p.mcb(nil, false)
		}
		return
	}
	f, ok := c.timers[t.seq]
	if !ok {
		return
	}
	delete(c.timers, t.seq)
	f()
}

// newID returns a fresh request id.
func (c *client) newID() uint64 {
	c.nextID++
	return c.nextID
}

// send sends msg (whose ID is id) as request p, with p's timeout.
func (c *client) send(id uint64, msg sim.Message, p pending) {
	p.timer = c.env.After(sim.Mono, p.timeout, timerTag{what: whatTimeout, seq: id})
	c.calls[id] = p
	c.env.Send(p.to, msg)
}

// request sends msg (whose ID is id) and calls cb with the reply, or with
// ok=false when timeout passes first.
func (c *client) request(to sim.ProcID, id uint64, msg sim.Message, timeout time.Duration, cb func(msg sim.Message, ok bool)) {
	c.send(id, msg, pending{to: to, timeout: timeout, mcb: cb})
}

// complete hands a reply to its waiting request.
func (c *client) complete(id uint64, msg sim.Message) {
	p, ok := c.calls[id]
	if !ok {
		c.env.Logf(KindClient, "ignored late reply %d", id)
		return
	}
	delete(c.calls, id)
	c.env.Cancel(p.timer)
	if p.rcb == nil {
		p.mcb(msg, true)
		return
	}
	v := msg.(redis.Reply).Value
	if p.script != nil && redis.IsNoScript(v) {
		// EVALSHA first, and EVAL with the source after NOSCRIPT (go-redis
		// Script.Run; redsync's goredis adapter, goredis.go Eval).
		id := c.newID()
		s := p.script
		p.script = nil
		c.send(id, redis.Request{ID: id, Args: s.Eval(p.keys, p.args...)}, p)
		return
	}
	p.rcb(v, true)
}

// cmd sends one Redis command to the process to and calls cb with its reply
// (ok=false on timeout).
func (c *client) cmd(to sim.ProcID, timeout time.Duration, cb func(v redis.Value, ok bool), args ...string) {
	id := c.newID()
	c.send(id, redis.Request{ID: id, Args: args}, pending{to: to, timeout: timeout, rcb: cb})
}

// evalsha runs a script the way the clients' drivers do: EVALSHA first,
// and EVAL with the source if the server answers NOSCRIPT.
func (c *client) evalsha(to sim.ProcID, timeout time.Duration, s *redis.Script, keys, args []string, cb func(v redis.Value, ok bool)) {
	id := c.newID()
	c.send(id, redis.Request{ID: id, Args: s.EvalSHA(keys, args...)}, pending{to: to, timeout: timeout, rcb: cb, script: s, keys: keys, args: args})
}

// reply is one node's answer in a fan-out; OK is false on timeout.
type reply struct {
	Value redis.Value
	OK    bool
}

// fanout sends one request per node, one after the other (each waiting for
// the previous reply or timeout) or all at once, and calls done with every
// node's answer once all have answered or timed out. issue(i, cb) sends the
// request for node i.
func (c *client) fanout(n int, parallel bool, issue func(i int, cb func(redis.Value, bool)), done func([]reply)) {
	res := make([]reply, n)
	if n == 0 {
		done(res)
		return
	}
	if parallel {
		left := n
		for i := 0; i < n; i++ {
			i := i
			issue(i, func(v redis.Value, ok bool) {
				res[i] = reply{Value: v, OK: ok}
				if left--; left == 0 {
					done(res)
				}
			})
		}
		return
	}
	var next func(i int)
	next = func(i int) {
		if i == n {
			done(res)
			return
		}
		issue(i, func(v redis.Value, ok bool) {
			res[i] = reply{Value: v, OK: ok}
			next(i + 1)
		})
	}
	next(0)
}

// ms renders a duration as whole milliseconds for PX, PEXPIRE and scripts.
func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
