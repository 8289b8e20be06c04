package clients

import (
	"strconv"
	"time"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/nodes/redis/resp"
	"github.com/locksim/locksim/sim"
)

// timerWhat is what a client timer waits for, as the trace names it.
type timerWhat uint8

const (
	whatStart timerWhat = iota
	whatTimeout
	whatRetry
	whatThink
	whatHold
	whatWrite
	whatExtend
	whatRenew
	whatZKDeleteRetry
	whatClusterScan
	whatClusterRetry
	whatSentinelScan
)

// whatNames are the trace names of the timerWhat values.
var whatNames = [...]string{
	whatStart:         "start",
	whatTimeout:       "timeout",
	whatRetry:         "retry",
	whatThink:         "think",
	whatHold:          "hold",
	whatWrite:         "write",
	whatExtend:        "extend",
	whatRenew:         "renew",
	whatZKDeleteRetry: "zk-delete-retry",
	whatClusterScan:   "cluster-scan",
	whatClusterRetry:  "cluster-retry",
	whatSentinelScan:  "sentinel-scan",
}

// timerTag is the tag of every client timer: what the client waits for (for
// the trace) and a sequence number that finds the continuation (for a
// request timeout, the request id). Timer tags must be values that render
// deterministically, so continuations live in the client, not in the tag.
// NB: the kernel gets a *timerTag, taken from the client's free list and
// returned to it when the timer fires (Fire) or is cancelled: boxing a
// timerTag value into the kernel's `any` allocated once per timer, 14 of
// a Redlock cycle's 114 allocations (issue 15). The kernel drops its
// reference when the timer fires or is cancelled (freeTimer), and renders
// the tag for the trace before Fire, so reuse never shows in a trace.
type timerTag struct {
	what timerWhat
	seq  uint64
}

// AppendTrace renders the tag for the trace ("timeout 42").
func (t timerTag) AppendTrace(b []byte) []byte {
	return strconv.AppendUint(append(append(b, whatNames[t.what]...), ' '), t.seq, 10)
}

// timerRef identifies a pending client timer; the zero value is none.
type timerRef struct {
	id  sim.TimerID
	seq uint64
}

// callback is where the reply to a Redis command goes: a function, or slot
// idx of a fan-out. A fan-out's slots are not closures so that a round over
// N nodes allocates one fan, not N callbacks.
type callback struct {
	fn  func(v redis.Value, ok bool)
	fan *fan
	idx int
}

// call hands the reply (ok=false on timeout) to the callback.
func (cb callback) call(v redis.Value, ok bool) {
	if cb.fan != nil {
		cb.fan.reply(cb.idx, v, ok)
		return
	}
	cb.fn(v, ok)
}

// pending is a request awaiting its reply: a Redis command (rcb, and the
// script to resend with EVAL after NOSCRIPT) or another message (mcb).
type pending struct {
	id      uint64 // the request id the reply echoes
	timer   sim.TimerID
	tag     *timerTag // the timeout timer's tag
	to      sim.ProcID
	timeout time.Duration
	rcb     callback
	mcb     func(msg sim.Message, ok bool)
	script  *redis.Script
	keys    []string
	args    []string
	// argv and attempts: a cluster-aware client's command, kept to send
	// again after -MOVED, -ASK or a retryable error (cluster.go
	// clusterRedirect), and the attempts after the first so far.
	argv     []string
	attempts int
	// deadline (mono ns, 0: none) is the context deadline the request's
	// timeout stands for (redsync's acquire round): a cluster retry does
	// not outlive it (cluster.go clusterRetry).
	deadline int64
}

// isRedis reports whether the request is a Redis command.
func (p *pending) isRedis() bool { return p.rcb.fn != nil || p.rcb.fan != nil }

// clientTimer is the continuation of a pending client timer.
type clientTimer struct {
	seq uint64
	f   func()
	tag *timerTag
}

// newTag returns a timer tag {what, seq}, reused when one is free.
func (c *client) newTag(what timerWhat, seq uint64) *timerTag {
	var t *timerTag
	if n := len(c.tagFree); n > 0 {
		t = c.tagFree[n-1]
		c.tagFree = c.tagFree[:n-1]
	} else {
		t = new(timerTag)
	}
	*t = timerTag{what: what, seq: seq}
	return t
}

// cancelTimer cancels timer id and reuses its tag if it was still pending
// (if not, it fired and Fire took the tag back).
func (c *client) cancelTimer(id sim.TimerID, tag *timerTag) {
	if c.env.Cancel(id) && tag != nil {
		c.tagFree = append(c.tagFree, tag)
	}
}

// cancelRequest cancels the timeout timer of request p.
func (c *client) cancelRequest(p *pending) { c.cancelTimer(p.timer, p.tag) }

// after runs f when the client's monotonic clock has advanced by d. Every
// wait of a client (timeouts, hold, think, retry delays, renewal periods)
// is measured on the monotonic clock: Go timers, Ruby's sleep and Netty's
// HashedWheelTimer all are (reference §8.1: "its renewal timer uses mono").
func (c *client) after(d time.Duration, what timerWhat, f func()) timerRef {
	c.seq++
	tag := c.newTag(what, c.seq)
	c.timers = append(c.timers, clientTimer{seq: c.seq, f: f, tag: tag})
	id := c.env.After(sim.Mono, d, tag)
	return timerRef{id: id, seq: c.seq}
}

// takeTimer removes the continuation of timer seq and returns it (nil if
// it fired or was cancelled). NB: a client has a handful of timers and
// requests pending at a time, so a slice scanned linearly beats a map.
func (c *client) takeTimer(seq uint64) func() {
	f, _ := c.takeTimerTag(seq)
	return f
}

// takeTimerTag is takeTimer that also returns the timer's tag.
func (c *client) takeTimerTag(seq uint64) (func(), *timerTag) {
	for i := range c.timers {
		if c.timers[i].seq == seq {
			f, tag := c.timers[i].f, c.timers[i].tag
			last := len(c.timers) - 1
			c.timers[i] = c.timers[last]
			c.timers[last] = clientTimer{}
			c.timers = c.timers[:last]
			return f, tag
		}
	}
	return nil, nil
}

// takeCall removes the pending request id and returns it.
func (c *client) takeCall(id uint64) (pending, bool) {
	for i := range c.calls {
		if c.calls[i].id == id {
			p := c.calls[i]
			last := len(c.calls) - 1
			if i != last {
				// Moving a pending costs write barriers while the
				// collector runs; the usual call is the last one.
				c.calls[i] = c.calls[last]
			}
			c.calls[last] = pending{}
			c.calls = c.calls[:last]
			return p, true
		}
	}
	return pending{}, false
}

// cancel stops a timer (a no-op for the zero timerRef or a timer that fired).
func (c *client) cancel(r *timerRef) {
	if r.seq == 0 {
		return
	}
	if f, tag := c.takeTimerTag(r.seq); f != nil {
		c.cancelTimer(r.id, tag)
	}
	*r = timerRef{}
}

// fire runs the continuation of a timer, or times a request out: its
// callback gets ok=false, and a late reply is ignored by its id.
func (c *client) fire(t timerTag) {
	if t.what == whatTimeout {
		p, ok := c.takeCall(t.seq)
		if !ok {
			return
		}
		if p.isRedis() && c.cfg.Lock.Algorithm != Redisson {
			// go-redis counts a timed-out connection as bad and closes it
			// (isBadConn, error.go:81-110; releaseConn, redis.go:366-376):
			// the late reply never arrives, the next command dials anew.
			// Redisson (Netty) keeps its connection after a timeout.
			c.env.Close(p.to)
			if c.sub.live && p.to == c.sub.to {
				c.subscriptionEnded() // the same kernel connection (follow.go)
			}
		}
		if c.clusterNetRetry(p, true, "timed out") {
			return
		}
		if p.isRedis() {
			p.rcb.call(redis.Value{}, false)
		} else {
			p.mcb(nil, false)
		}
		return
	}
	if f := c.takeTimer(t.seq); f != nil {
		f()
	}
}

// newID returns a fresh request id.
func (c *client) newID() uint64 {
	c.nextID++
	return c.nextID
}

// send sends msg (whose ID is id) as request p, with p's timeout.
func (c *client) send(id uint64, msg sim.Message, p pending) {
	c.track(id, p)
	c.env.Send(p.to, msg)
}

// sendPooled is send for a pooled message (sim.Env.SendPooled).
func (c *client) sendPooled(id uint64, msg sim.Recycler, p pending) {
	if len(c.cfg.Clusters) > 0 && p.isRedis() && !c.routeCluster(id, msg, &p) {
		return
	}
	c.track(id, p)
	c.env.SendPooled(p.to, msg)
}

// track records request p (whose ID is id) and starts its timeout.
func (c *client) track(id uint64, p pending) {
	p.id = id
	p.tag = c.newTag(whatTimeout, id)
	p.timer = c.env.After(sim.Mono, p.timeout, p.tag)
	c.calls = append(c.calls, p)
}

// request sends msg (whose ID is id) and calls cb with the reply, or with
// ok=false when timeout passes first.
func (c *client) request(to sim.ProcID, id uint64, msg sim.Message, timeout time.Duration, cb func(msg sim.Message, ok bool)) {
	c.send(id, msg, pending{to: to, timeout: timeout, mcb: cb})
}

// requestPooled is request for a pooled message.
func (c *client) requestPooled(to sim.ProcID, id uint64, msg sim.Recycler, timeout time.Duration, cb func(msg sim.Message, ok bool)) {
	c.sendPooled(id, msg, pending{to: to, timeout: timeout, mcb: cb})
}

// complete hands a reply to its waiting request: v for a Redis reply,
// msg (as received, so that it is not boxed again) for any other.
func (c *client) complete(id uint64, v redis.Value, msg sim.Message) {
	if id != 0 && id == c.sub.id {
		return // the SUBSCRIBE's first confirmation (follow.go)
	}
	p, ok := c.takeCall(id)
	if !ok {
		c.env.Logf(KindClient, "ignored late reply %d", id)
		return
	}
	c.cancelRequest(&p)
	if !p.isRedis() {
		p.mcb(msg, true)
		return
	}
	if len(c.cfg.Clusters) > 0 && c.clusterRedirect(p, v) {
		return
	}
	if p.script != nil && redis.IsNoScript(v) {
		// EVALSHA first, and EVAL with the source after NOSCRIPT (go-redis
		// Script.Run; redsync's goredis adapter, goredis.go Eval).
		id := c.newID()
		s := p.script
		p.script = nil
		c.sendPooled(id, resp.NewRequest(id, s.Eval(p.keys, p.args...)), p)
		return
	}
	p.rcb.call(v, true)
}

// cmd sends one Redis command to the process to and calls cb with its reply
// (ok=false on timeout).
func (c *client) cmd(to sim.ProcID, timeout time.Duration, cb func(v redis.Value, ok bool), args ...string) {
	c.cmdTo(to, timeout, callback{fn: cb}, args)
}

// cmdTo is cmd with any callback. The request carries args itself: callers
// may share one argv among the requests of a round (nobody mutates it).
// Redis commands go out as pooled *Request (resp.NewRequest), which a node
// answers with a pooled *Reply: no allocation per send (issue 15).
func (c *client) cmdTo(to sim.ProcID, timeout time.Duration, cb callback, args []string) {
	id := c.newID()
	c.sendPooled(id, resp.NewRequest(id, args), pending{to: to, timeout: timeout, rcb: cb})
}

// evalsha runs a script the way the clients' drivers do: EVALSHA first,
// and EVAL with the source if the server answers NOSCRIPT.
func (c *client) evalsha(to sim.ProcID, timeout time.Duration, s *redis.Script, keys, args []string, cb func(v redis.Value, ok bool)) {
	c.evalshaTo(to, timeout, s, s.EvalSHA(keys, args...), keys, args, callback{fn: cb})
}

// evalshaTo is evalsha with any callback and a prebuilt EVALSHA argv (a
// round over several nodes builds it once).
func (c *client) evalshaTo(to sim.ProcID, timeout time.Duration, s *redis.Script, argv, keys, args []string, cb callback) {
	id := c.newID()
	c.sendPooled(id, resp.NewRequest(id, argv), pending{to: to, timeout: timeout, rcb: cb, script: s, keys: keys, args: args})
}

// reply is one node's answer in a fan-out; OK is false on timeout.
type reply struct {
	Value redis.Value
	OK    bool
}

// fan is one fan-out round in progress.
type fan struct {
	c        *client
	res      []reply
	left     int // parallel: answers still awaited
	parallel bool
	issue    func(i int, cb callback)
	done     func([]reply)
	round    round    // instead of issue and done (fanoutRound)
	buf      [5]reply // res for up to five nodes, without a second allocation
}

// round is a fan-out round kept in a struct its algorithm reuses, instead
// of two closures made per round (issue 15): issue sends the request for
// node i, done gets every node's answer (and must not keep the slice).
type round interface {
	issue(i int, cb callback)
	done(res []reply)
}

func (f *fan) issueAt(i int, cb callback) {
	if f.round != nil {
		f.round.issue(i, cb)
		return
	}
	f.issue(i, cb)
}

// finish hands every answer to done, then returns the fan to the client's
// free list: every request of the round has answered, so no callback
// refers to it any more, and done callbacks read the answers before they
// return (they must not keep the slice).
func (f *fan) finish() {
	if f.round != nil {
		f.round.done(f.res)
	} else {
		f.done(f.res)
	}
	c := f.c
	*f = fan{}
	c.fanFree = append(c.fanFree, f)
}

// reply records node i's answer and goes on: in parallel, done after the
// last answer; in sequence, the next node's request (or done).
func (f *fan) reply(i int, v redis.Value, ok bool) {
	f.res[i] = reply{Value: v, OK: ok}
	if f.parallel {
		if f.left--; f.left == 0 {
			f.finish()
		}
		return
	}
	if i+1 == len(f.res) {
		f.finish()
		return
	}
	f.issueAt(i+1, callback{fan: f, idx: i + 1})
}

// fanout sends one request per node, one after the other (each waiting for
// the previous reply or timeout) or all at once, and calls done with every
// node's answer once all have answered or timed out. issue(i, cb) sends the
// request for node i.
func (c *client) fanout(n int, parallel bool, issue func(i int, cb callback), done func([]reply)) {
	c.startFan(fan{c: c, left: n, parallel: parallel, issue: issue, done: done})
}

// fanoutRound is fanout with a round's methods for issue and done.
func (c *client) fanoutRound(n int, parallel bool, r round) {
	c.startFan(fan{c: c, left: n, parallel: parallel, round: r})
}

// startFan starts the fan-out described by init (its res left out).
func (c *client) startFan(init fan) {
	var f *fan
	if k := len(c.fanFree); k > 0 {
		f = c.fanFree[k-1]
		c.fanFree = c.fanFree[:k-1]
	} else {
		f = new(fan)
	}
	*f = init
	n, parallel := f.left, f.parallel
	if n <= len(f.buf) {
		f.res = f.buf[:n]
	} else {
		f.res = make([]reply, n)
	}
	if n == 0 {
		f.finish()
		return
	}
	if parallel {
		for i := 0; i < n; i++ {
			f.issueAt(i, callback{fan: f, idx: i})
		}
		return
	}
	f.issueAt(0, callback{fan: f, idx: 0})
}

// ms renders a duration as whole milliseconds for PX, PEXPIRE and scripts.
func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
