package clients

import (
	"strconv"
	"time"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/nodes/redis/resp"
	"github.com/locksim/locksim/sim"
)

// quorumLock is Redlock over N independent masters: antirez's specification
// with redlock-rb's defaults (algorithm "redlock", reference §4.1) and
// go-redsync/redsync v4 (algorithm "redsync", reference §4.2).
type quorumLock struct {
	c          *client
	val        string
	validUntil int64 // reading of clk at which the validity ends
	// validity is the last validity computed (at the grant or an
	// extension), as the history records it; rule says how the drift
	// was computed (made at init).
	validity sim.Validity
	rule     string
	extend   timerRef
	gen      int // bumped at release: stale extension replies are ignored

	// Reused per attempt (attempts and releases never overlap): which
	// nodes granted the last attempt, the nodes an unlock goes to, the
	// script's KEYS, and the TTL in milliseconds.
	granted []bool
	idx     []int
	keys    []string
	ttlMs   string

	// Made once per lock value (argvs): the acquire command, the release
	// script's ARGV and its EVALSHA argv, carved out of the client's argv slab.
	// Immutable once sent (requests in flight share them).
	setArgv, valArgs, unlockArgv []string
	// The rounds in progress: an attempt's and an unlock's (an attempt's
	// failed unlock runs after its round; releases follow attempts).
	acq acquireRound
	unl unlockRound
}

func (q *quorumLock) init() {
	q.keys = []string{q.cfg().Key}
	q.rule = q.driftRule()
	q.ttlMs = ms(q.cfg().TTL)
	q.acq.q, q.unl.q = q, q
	q.acq.failedFn, q.acq.decideFn = q.acq.failed, q.acq.decide
}

// unlockScript is the release script: redsync's deleteScript answers -1
// when the key is gone (ErrLockAlreadyExpired, scripts.go:5-14).
func (q *quorumLock) unlockScript() *redis.Script {
	if q.redsync() {
		return scriptDeleteOrMissing
	}
	return scriptCompareAndDelete
}

// argvs builds the commands of the lock value q.val, in one piece of the
// client's argv slab.
func (q *quorumLock) argvs() {
	buf := q.c.argv(6 + 1 + 3 + len(q.keys) + 1)
	buf = q.appendSetArgs(buf)
	q.setArgv = buf[:len(buf):len(buf)]
	at := len(buf)
	buf = append(buf, q.val)
	q.valArgs = buf[at:len(buf):len(buf)]
	at = len(buf)
	buf = q.unlockScript().AppendEvalSHA(buf, q.keys, q.valArgs...)
	q.unlockArgv = buf[at:len(buf):len(buf)]
}

// cfg returns the lock's configuration (a pointer: the struct is large and
// read on every step).
func (q *quorumLock) cfg() *LockConfig { return &q.c.cfg.Lock }

func (q *quorumLock) redsync() bool { return q.cfg().Algorithm == Redsync }

func (q *quorumLock) value() string { return q.val }

func (q *quorumLock) receive(sim.ProcID, sim.Message) bool { return false }

func (q *quorumLock) fire(any) bool { return false }

func (q *quorumLock) giveUp() {}

func (q *quorumLock) retryDelay() time.Duration { return q.cfg().RetryDelay.Draw(q.c.env.Rand()) }

// clk is the clock elapsed time and validity are measured on: redsync reads
// Go's monotonic time (time.Now/Sub, reference §4.2); redlock-rb reads
// Time.now, the wall clock (redlock.rb:55-83), unless elapsed_clock says
// monotonic.
func (q *quorumLock) clk() sim.Clock {
	if q.redsync() || q.cfg().ElapsedClock == ClockMonotonic {
		return sim.Mono
	}
	return sim.Wall
}

// parallel reports whether the nodes are contacted all at once.
func (q *quorumLock) parallel() bool {
	return q.redsync() || q.cfg().Fanout == FanoutParallel
}

// tracksValidity reports whether the algorithm computes a validity and
// checks it (redsync always: now.Before(until); redlock unless
// validity_check is false).
func (q *quorumLock) tracksValidity() bool { return q.redsync() || q.cfg().ValidityCheck }

// drift is the clock-drift allowance.
func (q *quorumLock) drift() time.Duration {
	cfg := q.cfg()
	if q.redsync() {
		// time.Duration(int64(float64(m.expiry)*m.driftFactor)), with no
		// +2 ms term (mutex.go:75-134; removed in commit f80c13a).
		return time.Duration(int64(float64(cfg.TTL)*cfg.DriftFactor)) + cfg.DriftExtra
	}
	// drift = (ttl*@clock_drift_factor).to_i + 2, in milliseconds
	// (redlock.rb:55-83).
	return time.Duration(int64(float64(cfg.TTL.Milliseconds())*cfg.DriftFactor))*time.Millisecond + cfg.DriftExtra
}

// driftRule says how drift computes the allowance, in the words of an
// explanation: "the drift factor 0.01 × ttl + 2ms, as redlock-rb computes
// it".
func (q *quorumLock) driftRule() string {
	cfg := q.cfg()
	rule := "the drift factor " + strconv.FormatFloat(cfg.DriftFactor, 'g', -1, 64) + " × ttl"
	if cfg.DriftExtra > 0 {
		rule += " + " + cfg.DriftExtra.String()
	}
	// The defaults are the libraries' (config.go: redlockDriftExtra,
	// redsync's none).
	switch {
	case q.redsync() && cfg.DriftFactor == redsyncDriftFactor && cfg.DriftExtra == 0:
		return rule + ", as redsync computes it"
	case !q.redsync() && cfg.DriftFactor == redlockDriftFactor && cfg.DriftExtra == redlockDriftExtra:
		return rule + ", as redlock-rb computes it"
	}
	return rule + " (drift_factor, drift_extra)"
}

// grantValidity is the validity computed by the attempt that succeeded
// (client.acquired records it on the belief).
func (q *quorumLock) grantValidity() sim.Validity { return q.validity }

// computed records the terms of a validity computed from a round that
// began at the clock reading start and ended at now.
func (q *quorumLock) computed(start, now int64, extended bool) {
	q.validity = sim.Validity{TTL: q.cfg().TTL, Elapsed: time.Duration(now - start), Drift: q.drift(),
		Rule: q.rule, Checked: q.tracksValidity(), Extended: extended}
}

// nodeTimeout is the per-request timeout of an acquire round: the spec's
// per-node timeout for redlock; for redsync the whole parallel round shares
// one context deadline of expiry*timeoutFactor (mutex.go:75-134), and since
// every request of the round leaves at once, a per-request timeout of that
// length ends the round at the same instant.
//
// Simplification (redsync): with go-redis v9 and its default
// ContextTimeoutEnabled=false, a context deadline does not interrupt a
// command already sent (go-redis v9.23.0 redis.go:1892-1897); the socket
// read timeout (5 s) does. locksim models the round deadline redsync
// intends; set timeout_factor to 0.625 (5 s of an 8 s TTL) for the go-redis
// behaviour.
func (q *quorumLock) roundTimeout() time.Duration {
	cfg := q.cfg()
	if q.redsync() {
		return time.Duration(int64(float64(cfg.TTL) * cfg.TimeoutFactor))
	}
	return cfg.NodeTimeout
}

// appendSetArgs appends the acquire command for one node (6 strings).
func (q *quorumLock) appendSetArgs(dst []string) []string {
	cfg := q.cfg()
	if q.redsync() {
		// go-redis SetNX: "set k v px ms nx", or "ex s" when the expiry is a
		// whole number of seconds (go-redis v9 string_commands.go:616-633).
		if cfg.TTL%time.Second == 0 {
			return append(dst, "SET", cfg.Key, q.val, "EX", strconv.FormatInt(int64(cfg.TTL/time.Second), 10), "NX")
		}
		return append(dst, "SET", cfg.Key, q.val, "PX", q.ttlMs, "NX")
	}
	// lock_instance: SET resource val NX PX ttl (redlock.rb).
	return append(dst, "SET", cfg.Key, q.val, "NX", "PX", q.ttlMs)
}

// acquire makes one attempt: lock every node, count, compute the validity.
func (q *quorumLock) acquire(try int, done func(bool)) {
	c := q.c
	if try == 0 {
		// One value per lock() call, reused across its retries (redlock.rb
		// lock; redsync mutex.go:80).
		q.val = c.uniqueValue()
		q.argvs()
	}
	// Step 1: get the current time (reference §4.1).
	q.acq.start = c.read(q.clk())
	q.acq.timeout = q.roundTimeout()
	q.acq.then = done
	// Step 2: try every instance with the same key and value.
	c.fanoutRound(len(q.cfg().Nodes), q.parallel(), &q.acq)
}

// acquireRound is an attempt's round over the nodes.
type acquireRound struct {
	q        *quorumLock
	start    int64         // reading of clk at step 1
	timeout  time.Duration // of each request
	then     func(bool)    // the attempt's done
	n, first int           // grants, and the first node that granted (-1: none)
	failedFn func()        // then(false), made once
	decideFn func(bool)    // decide, made once
}

func (r *acquireRound) issue(i int, cb callback) {
	q, c := r.q, r.q.c
	if !q.redsync() {
		c.cmdTo(c.addr(q.cfg().Nodes[i]), r.timeout, cb, q.setArgv)
		return
	}
	// The round's timeout is its context deadline: a cluster client's
	// retry does not outlive it (cluster.go clusterRetry).
	id := c.newID()
	c.sendPooled(id, resp.NewRequest(id, q.setArgv), pending{to: c.addr(q.cfg().Nodes[i]), timeout: r.timeout, rcb: cb, deadline: c.env.Mono() + int64(r.timeout)})
}

func (r *acquireRound) done(res []reply) {
	q, c, nodes := r.q, r.q.c, r.q.cfg().Nodes
	q.granted = append(q.granted[:0], make([]bool, len(nodes))...)
	granted := q.granted
	r.n, r.first = 0, -1
	for i, x := range res {
		if x.OK && x.Value.IsOK() {
			granted[i] = true
			r.n++
			if r.first < 0 {
				r.first = i
			}
		} else if !x.OK || x.Value.IsErr() {
			c.noteError(nodes[i])
		}
	}
	if q.cfg().FencingToken == FencingIncr && r.n >= q.cfg().quorum() {
		// NB: not safe (Kleppmann, reference §6.1): the counter lives on
		// one node, the first that granted the lock; another node's
		// counter, or this one after a failover, may go backwards.
		c.incrToken(c.addr(nodes[r.first]), r.timeout, r.decideFn)
		return
	}
	r.decide(true)
}

// decide is steps 3 to 5 of the attempt.
func (r *acquireRound) decide(tokenOK bool) {
	q, c, cfg := r.q, r.q.c, r.q.cfg()
	n, nodes := r.n, cfg.Nodes
	// Step 3: elapsed = now - start; validity = ttl - elapsed -
	// drift; success iff a majority and validity > 0.
	now := c.read(q.clk())
	q.validUntil = r.start + int64(cfg.TTL) - int64(q.drift())
	validity := time.Duration(q.validUntil - now)
	q.computed(r.start, now, false)
	ok := tokenOK && n >= cfg.quorum() && (validity > 0 || !q.tracksValidity())
	verdict := "failed"
	if ok {
		verdict = "acquired"
	}
	// "%d/%d nodes, validity %v: %s", rendered with appends (once
	// per attempt).
	b := strconv.AppendInt(c.scratch[:0], int64(n), 10)
	b = strconv.AppendInt(append(b, '/'), int64(len(nodes)), 10)
	b = append(append(append(append(b, " nodes, validity "...), validity.String()...), ": "...), verdict...)
	if !ok && tokenOK && n >= cfg.quorum() {
		// A majority granted the lock and the validity check refused it:
		// the event that decides a run such as antirez's step 3 (a pause
		// with the replies in flight). The field (not hashed) marks it
		// for the summary, which explains the verdicts with it.
		c.env.LogBytesAttrs(KindClient, b, sim.Str(RefusedField, "validity"))
		c.scratch = b[:0]
	} else {
		c.logBytes(b)
	}
	if ok {
		r.then(true)
		return
	}
	// Step 5: on failure unlock all instances, "even the instances
	// it believed it was not able to lock" (reference §4.1), or only
	// the granted ones with release=acquired.
	q.unlock(q.granted, q.roundTimeout(), r.failedFn)
}

// failed ends the attempt as failed, after its unlock.
func (r *acquireRound) failed() { r.then(false) }

// unlock runs the release script on the nodes (only on the granted ones
// when release=acquired after a failed attempt; granted nil means all).
func (q *quorumLock) unlock(granted []bool, timeout time.Duration, done func()) {
	cfg := q.cfg()
	idx := q.idx[:0]
	for i := range cfg.Nodes {
		if granted == nil || q.redsync() || cfg.Release == ReleaseAll || granted[i] {
			idx = append(idx, i)
		}
	}
	q.idx = idx
	// One argv for the round (argvs): every node gets the same command.
	q.unl.granted, q.unl.timeout, q.unl.then = granted, timeout, done
	q.c.fanoutRound(len(idx), q.parallel(), &q.unl)
}

// unlockRound is an unlock's round over the nodes q.idx.
type unlockRound struct {
	q       *quorumLock
	granted []bool
	timeout time.Duration
	then    func()
}

func (r *unlockRound) issue(j int, cb callback) {
	q := r.q
	q.c.evalshaTo(q.c.addr(q.cfg().Nodes[q.idx[j]]), r.timeout, q.unlockScript(), q.unlockArgv, q.keys, q.valArgs, cb)
}

func (r *unlockRound) done(res []reply) {
	q, c, cfg := r.q, r.q.c, r.q.cfg()
	for j, x := range res {
		if x.OK && x.Value.Kind == redis.KindInt && x.Value.Int <= 0 && r.granted == nil {
			// "release on %s: %v (...)"; %v of a Value is its String,
			// which is its AppendTrace.
			b := append(append(c.scratch[:0], "release on "...), cfg.Nodes[q.idx[j]]...)
			b = x.Value.AppendTrace(append(b, ": "...))
			c.logBytes(append(b, " (the key was gone or not ours)"...))
		}
	}
	then := r.then
	r.granted, r.then = nil, nil
	then()
}

// expired checks the validity computed at acquisition (or the last
// extension) on the client's own clock.
func (q *quorumLock) expired() bool {
	return q.tracksValidity() && q.c.read(q.clk()) >= q.validUntil
}

// held starts the extension timer.
func (q *quorumLock) held() {
	if q.cfg().ExtendEvery > 0 {
		q.scheduleExtend()
	}
}

// scheduleExtend arms the next extension.
//
// redlock: the spec's extension runs the touch script on all instances and
// counts "only if it was able to extend the lock into the majority of
// instances, and within the validity time" (reference §4.1). locksim reads
// that as: the client first checks its current validity (if it has passed,
// the belief ends as expired, as at any check) and then needs a majority
// and a positive validity recomputed from the extension's start.
//
// redsync: Extend (mutex.go:158-173) runs touchScript (or
// touchWithSetNXScript with WithSetNXOnExtend) on all pools, needs a
// quorum and recomputes until = now + expiry - elapsed - drift, which must
// lie in the future. It does not check that the old until had passed, so
// with SetNXOnExtend it silently re-acquires a lock that expired
// (reference §4.2).
func (q *quorumLock) scheduleExtend() {
	c, cfg := q.c, q.cfg()
	gen := q.gen
	q.extend = c.after(cfg.ExtendEvery, whatExtend, func() {
		q.extend = timerRef{}
		if !c.believes() {
			return
		}
		if !q.redsync() && q.expired() {
			c.env.Logf(KindClient, "extend: validity already passed")
			c.env.BeliefEnd(c.belief, sim.EndExpired)
			return
		}
		s := scriptTouch
		if q.redsync() && cfg.SetNXOnExtend {
			s = scriptTouchSetNX
		}
		start := c.read(q.clk())
		keys, args := q.keys, []string{q.val, q.ttlMs}
		argv := s.EvalSHA(keys, args...)
		c.fanout(len(cfg.Nodes), q.parallel(), func(i int, cb callback) {
			c.evalshaTo(c.addr(cfg.Nodes[i]), cfg.NodeTimeout, s, argv, keys, args, cb)
		}, func(res []reply) {
			if gen != q.gen {
				return
			}
			n := 0
			for i, r := range res {
				// status != int64(0) counts (redsync mutex.go touch).
				if r.OK && r.Value.Kind == redis.KindInt && r.Value.Int != 0 {
					n++
				} else if !r.OK || r.Value.IsErr() {
					c.noteError(cfg.Nodes[i])
				}
			}
			now := c.read(q.clk())
			until := start + int64(cfg.TTL) - int64(q.drift())
			if n >= cfg.quorum() && (!q.tracksValidity() || now < until) {
				q.validUntil = until
				q.computed(start, now, true)
				c.env.BeliefValidity(c.belief, q.validity)
				c.env.Logf(KindClient, "extended on %d/%d nodes, validity %v", n, len(cfg.Nodes), time.Duration(until-now))
				q.scheduleExtend()
				return
			}
			c.lost("extend reached " + strconv.Itoa(n) + "/" + strconv.Itoa(len(cfg.Nodes)) + " nodes")
		})
	})
}

// release unlocks every node: redlock-rb's unlock runs the script on all
// servers (redlock.rb unlock); redsync's Unlock on all pools in parallel
// with the caller's context, so only the command timeout bounds it
// (mutex.go:142-150).
func (q *quorumLock) release(done func()) {
	q.c.cancel(&q.extend)
	q.gen++
	q.unlock(nil, q.cfg().NodeTimeout, done)
}
