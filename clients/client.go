package clients

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/nodes/storage"
	"github.com/locksim/locksim/sim"
)

// KindClient is the trace kind of a client's decisions that the history
// does not already record (a renewal cancelled, a validity check, a late
// reply ignored, a release that found the key gone).
const KindClient sim.Kind = "client"

// RefusedField is the field (sim.Str, not hashed) of a KindClient event
// in which the algorithm refused a grant its servers gave it (a majority
// granted, the validity check failed): its value names the check. The
// summary shows such an event as the reason a safety verdict holds.
const RefusedField = "refused"

// ReleaseFailedField is the field (sim.Str, not hashed) of a KindClient
// event in which a release did not remove the client's lock (the key was
// gone or held another value): the belief ended when the release was
// sent (sim.EndReleased), and this event says how it went. The summary
// shows it beside the release.
const ReleaseFailedField = "release_failed"

// releaseFailed are the fields of a failed release's event.
func releaseFailed() []sim.Attr { return []sim.Attr{sim.Str(ReleaseFailedField, "true")} }

// algorithm is one lock algorithm, driven by the client's workload loop.
// Each method runs inside one kernel step; continuations run in later steps.
type algorithm interface {
	// init runs when the process starts (and after every restart).
	init()
	// acquire makes one attempt (try counts from 0 within a want) and calls
	// done exactly once. On success it has set the client's fencing token.
	acquire(try int, done func(ok bool))
	// held starts what runs while the client holds the lock (extension,
	// renewal).
	held()
	// expired reports whether the validity the algorithm computed has
	// passed on its own clock; algorithms that compute none return false.
	expired() bool
	// release sends the release at once (the belief ends when it is sent),
	// stops extension, and calls done when the release completed.
	release(done func())
	// value is the lock's value, sent to the resource for token-cas.
	value() string
	// retryDelay is the wait before the next try.
	retryDelay() time.Duration
	// giveUp runs when a want ends without the lock (tries exhausted).
	giveUp()
	// receive handles a message that is not a reply to a client request
	// (ZooKeeper session traffic); it reports whether it did.
	receive(from sim.ProcID, msg sim.Message) bool
	// fire handles a timer the algorithm set itself (the ZooKeeper
	// session's); it reports whether it did.
	fire(tag any) bool
}

// validityAlgorithm is implemented by algorithms that compute a validity
// at the grant (Redlock, redsync): the history records it on the belief.
type validityAlgorithm interface {
	grantValidity() sim.Validity
}

// client is a lock client process: the workload loop around an algorithm.
type client struct {
	cfg  Config
	env  *sim.Env
	alg  algorithm
	lock string // the lock's name in the history

	nextID uint64
	calls  []pending // requests awaiting their replies
	seq    uint64
	timers []clientTimer // continuations of pending timers
	// tagFree holds the timer tags of timers that fired or were cancelled,
	// for reuse (see newTag).
	tagFree []*timerTag
	fanFree []*fan // fan-outs that finished, for reuse

	master        string // the discovered master's process name
	rediscovering bool
	sub           subscription      // the +switch-master subscription (follow.go)
	scanning      bool              // Redisson's sentinel scan is armed (follow.go)
	cls           []*clusterRouting // a cluster-aware client's routing per cluster (cluster.go)

	completed int  // cycles completed
	stopped   bool // the workload is done
	want      int  // open want id, -1 when none
	try       int  // tries made in the current want
	attempt   int  // current attempt id
	belief    int  // current belief id, -1 when none
	token     int64
	hasToken  bool
	section   int // current section id, -1 when none

	scratch []byte      // reused buffer for rendering trace texts
	addrs   []addrEntry // process ids of the names addr resolved

	// The critical section in progress (one at a time): the resource
	// process, the section id and the value read. The continuations of the
	// workload loop read them instead of capturing them in closures.
	secTo   sim.ProcID
	secID   int
	secRead int64
	// Continuations made once per client (method values allocate when
	// they are made; closures per step were a tenth of a Redlock cycle's
	// allocations, issue 15).
	startWantFn, nextTryFn, tryNowFn, holdFn, writeFn, releasedFn func()
	acquiredFn                                                    func(bool)
	onReadFn, onWriteFn                                           func(sim.Message, bool)
	// The fencing token request (incrToken): its argv, made once, its
	// continuation and the attempt's callback.
	incrArgv  []string
	onTokenFn func(redis.Value, bool)
	tokenDone func(bool)
	// Slabs that lock values and argvs are carved from (uniqueValue, argv).
	valueSlab []byte
	argvSlab  []string
}

// New returns a fresh client process for cfg (the kernel calls the factory
// again on restart: a restarted client starts its workload over). It panics
// on an invalid configuration: callers validate first (Config.Validate).
func New(cfg Config) sim.Process {
	if err := cfg.Validate(); err != nil {
		panic(fmt.Sprintf("clients: invalid config for %s: %v", cfg.Name, err))
	}
	c := &client{cfg: cfg, lock: cfg.Lock.Key, want: -1, belief: -1, section: -1}
	c.alg = Lookup(cfg.Lock.Algorithm).build(c)
	c.startWantFn, c.nextTryFn, c.tryNowFn = c.startWant, c.nextTry, c.tryNow
	c.holdFn, c.writeFn, c.releasedFn = c.holdDone, c.writeResource, c.released
	c.acquiredFn, c.onReadFn, c.onWriteFn = c.acquired, c.onRead, c.onWrite
	return c
}

// Init starts the process: the workload begins when the monotonic clock
// reaches Workload.Start.
func (c *client) Init(env *sim.Env) {
	c.env = env
	c.calls = nil
	c.timers = nil
	// Request ids start over: nothing sent to an earlier incarnation of
	// this process reaches it (its connections died with it).
	c.nextID = 0
	c.cls = nil
	if c.cfg.Discovery != nil {
		c.master = c.cfg.Discovery.Master
	}
	c.sub, c.scanning = subscription{}, false
	c.alg.init()
	c.seq++
	seq := c.seq
	tag := c.newTag(whatStart, seq)
	c.timers = append(c.timers, clientTimer{seq: seq, f: c.startWantFn, tag: tag})
	env.SetTimer(sim.Mono, int64(c.cfg.Workload.Start), tag)
}

// Receive handles replies and session traffic.
func (c *client) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	switch m := msg.(type) {
	case redis.Push:
		c.push(from, m)
	case *redis.Reply:
		// Pooled (resp/pool.go): recycled when Receive returns; complete
		// copies the Value out and keeps nothing of m.
		c.complete(m.ID, m.Value, nil)
	case redis.Reply:
		c.complete(m.ID, m.Value, nil)
	case *storage.ReadReply:
		// Pooled (storage/pool.go): recycled when Receive returns; the
		// request's callback copies what it needs (readReply).
		c.complete(m.ID, redis.Value{}, msg)
	case storage.ReadReply:
		c.complete(m.ID, redis.Value{}, msg)
	case *storage.WriteReply:
		c.complete(m.ID, redis.Value{}, msg)
	case storage.WriteReply:
		c.complete(m.ID, redis.Value{}, msg)
	case storage.SetLockReply:
		c.complete(m.ID, redis.Value{}, msg)
	default:
		if !c.alg.receive(from, msg) {
			env.Logf(KindClient, "ignored message %T", msg)
		}
	}
}

// ConnEnded fails at once the requests pending on a connection that ended:
// their read returns EOF or ECONNRESET instead of waiting for the timeout.
// The next command to that peer opens a new connection (go-redis dials on
// demand: redis.go:366-376, error.go:81-110). A cluster-aware go-redis
// client retries such a command in its ClusterClient loop (cluster.go
// clusterNetRetry). Simplification: a plain go-redis Client would also
// retry it up to MaxRetries = 3 times (error.go:41-72); the model reports
// the failure to the algorithm, whose own retry policy applies.
func (c *client) ConnEnded(env *sim.Env, peer sim.ProcID, why sim.ConnEnd) {
	if c.sub.live && peer == c.sub.to {
		c.subscriptionEnded()
	}
	c.failPending(peer, func(p pending) bool {
		return c.clusterNetRetry(p, why == sim.ConnTimedOut, "connection "+why.String())
	}, func(n int) {
		env.Logf(KindClient, "connection with %s %v: %d request(s) failed", env.NameOf(peer), why, n)
	})
	if o, ok := c.alg.(connObserver); ok {
		o.connEnded(peer, why)
	}
}

// failPending fails at once every request pending to peer (its callback
// gets ok=false) that retried does not send again, after logging how many
// were pending with note (when there are any).
func (c *client) failPending(peer sim.ProcID, retried func(p pending) bool, note func(n int)) {
	var failed []pending
	kept := c.calls[:0]
	for _, p := range c.calls {
		if p.to == peer {
			failed = append(failed, p)
		} else {
			kept = append(kept, p)
		}
	}
	for i := len(kept); i < len(c.calls); i++ {
		c.calls[i] = pending{}
	}
	c.calls = kept
	if len(failed) > 0 {
		note(len(failed))
	}
	for _, p := range failed {
		c.cancelRequest(&p)
		if retried(p) {
			continue
		}
		if p.isRedis() {
			p.rcb.call(redis.Value{}, false)
		} else {
			p.mcb(nil, false)
		}
	}
}

// connObserver is implemented by algorithms that track a connection of
// their own (the ZooKeeper session).
type connObserver interface {
	connEnded(peer sim.ProcID, why sim.ConnEnd)
}

// fireTimer runs the continuation of one of the plumbing's own timers
// and reports whether tag was one.
func (c *client) fireTimer(tag any) bool {
	t, ok := tag.(*timerTag)
	if !ok {
		return false
	}
	tv := *t
	c.tagFree = append(c.tagFree, t) // the kernel is done with it
	c.fire(tv)
	return true
}

// Fire runs a timer's continuation.
func (c *client) Fire(env *sim.Env, tag any) {
	if c.fireTimer(tag) {
		return
	}
	if !c.alg.fire(tag) {
		env.Logf(KindClient, "ignored timer %T", tag)
	}
}

// ---- the workload loop ----

// startWant begins wanting the lock.
func (c *client) startWant() {
	if c.stopped {
		return
	}
	c.want = c.env.WantBegin(c.lock)
	c.try = 0
	c.nextTry()
}

// nextTry makes one acquire attempt (after asking the sentinels for the
// master, when the lock uses discovery; Redisson asks once, then polls:
// follow.go).
func (c *client) nextTry() {
	if c.polls() {
		c.firstScan(c.tryNowFn)
		return
	}
	c.discover(c.tryNowFn)
}

// tryNow begins the attempt.
func (c *client) tryNow() {
	c.attempt = c.env.AttemptBegin(c.lock)
	c.token, c.hasToken = 0, false
	try := c.try
	c.try++
	c.alg.acquire(try, c.acquiredFn)
}

// acquired ends an attempt.
func (c *client) acquired(ok bool) {
	c.env.AttemptEnd(c.attempt, ok)
	if ok {
		c.belief = c.env.BeliefBegin(c.lock, c.attempt, c.token, c.hasToken)
		if v, ok := c.alg.(validityAlgorithm); ok {
			c.env.BeliefValidity(c.belief, v.grantValidity())
		}
		c.env.WantEnd(c.want, true, "")
		c.want = -1
		c.alg.held()
		c.use()
		return
	}
	if t := c.cfg.Lock.Tries; t == 0 || c.try < t {
		c.after(c.alg.retryDelay(), whatRetry, c.nextTryFn)
		return
	}
	c.env.WantEnd(c.want, false, "gave-up")
	c.want = -1
	c.alg.giveUp()
	c.after(c.cfg.Workload.Think, whatThink, c.startWantFn)
}

// lost ends the belief because the client learned that it lost the lock
// (an extension failed, the session expired).
func (c *client) lost(why string) {
	if c.believes() {
		c.env.Logf(KindClient, "lock lost: %s", why)
		c.env.BeliefEnd(c.belief, sim.EndLost)
	}
}

// believes reports whether the client still believes it holds the lock.
func (c *client) believes() bool { return c.belief >= 0 && c.env.Believes(c.belief) }

// resourceTimeout bounds one request to the resource.
func (c *client) resourceTimeout() time.Duration {
	if t := c.cfg.Workload.Timeout; t > 0 {
		return t
	}
	return DefaultResourceTimeout
}

// use runs the critical section: read, hold, check, write (or, without a
// resource, hold and check).
func (c *client) use() {
	if c.cfg.Resource == "" {
		c.after(c.cfg.Workload.Hold, whatHold, c.holdFn)
		return
	}
	to, ok := c.env.Lookup(c.cfg.Resource)
	if !ok {
		panic("clients: unknown resource process " + c.cfg.Resource)
	}
	c.section = c.env.SectionBegin(c.lock, c.belief, c.token, c.hasToken)
	c.secTo, c.secID = to, c.section
	if c.cfg.ResourceFencing != storage.FencingTokenCAS {
		c.readResource()
		return
	}
	// antirez's check-and-set: first set the resource's current-lock field
	// to the lock's value, then read-modify-write (reference §6.2, point 3).
	sec := c.secID
	id := c.newID()
	c.request(to, id, storage.SetLockReq{ID: id, Section: sec, LockValue: c.alg.value()}, c.resourceTimeout(), func(_ sim.Message, ok bool) {
		if !ok {
			c.env.LogfAttrs(KindClient, []sim.Attr{sim.Int64("section", int64(sec)), sim.Str("abandoned", "set-lock timed out")}, "section %d: set-lock timed out; abandoned", sec)
			c.release()
			return
		}
		c.readResource()
	})
}

// readResource sends the section's read.
func (c *client) readResource() {
	id := c.newID()
	c.requestPooled(c.secTo, id, storage.NewReadReq(storage.ReadReq{ID: id, Section: c.secID, Token: c.token, HasToken: c.hasToken, LockValue: c.alg.value()}), c.resourceTimeout(), c.onReadFn)
}

// onRead handles the read's reply: hold, then check and write.
func (c *client) onRead(m sim.Message, ok bool) {
	sec := c.secID
	if !ok {
		c.env.LogfAttrs(KindClient, []sim.Attr{sim.Int64("section", int64(sec)), sim.Str("abandoned", "read timed out")}, "section %d: read timed out; abandoned", sec)
		c.release()
		return
	}
	r := readReply(m)
	if !r.OK {
		c.env.LogfAttrs(KindClient, []sim.Attr{sim.Int64("section", int64(sec)), sim.Str("abandoned", "read rejected")}, "section %d: read rejected (%s); abandoned", sec, r.Err)
		c.release()
		return
	}
	c.secRead = r.Value
	c.after(c.cfg.Workload.Hold, whatHold, c.holdFn)
}

// holdDone ends the hold: without a resource, check and release; with one,
// check and write.
func (c *client) holdDone() {
	if c.cfg.Resource == "" {
		if c.check() {
			c.release()
		}
		return
	}
	c.checkThenWrite()
}

// check is the careful client's check before it writes: it reports whether
// the client may go on. A client that learned it lost the lock stops; an
// algorithm that computed a validity checks it on its own clock and, when it
// has passed, ends the belief (EndExpired).
func (c *client) check() bool {
	if !c.believes() {
		c.env.LogAttrs(KindClient, "no longer holds the lock; section abandoned", sim.Str("abandoned", "lock lost"))
		c.release()
		return false
	}
	if c.alg.expired() {
		c.env.LogAttrs(KindClient, "validity passed on the client's clock; section abandoned", sim.Str("abandoned", "validity passed"))
		c.env.BeliefEnd(c.belief, sim.EndExpired)
		c.release()
		return false
	}
	return true
}

// checkThenWrite checks, then writes the value read plus one in a separate
// kernel step (a zero-length timer), so that a pause can fall between the
// check and the write (Kleppmann's S1). The write step does not check
// again.
func (c *client) checkThenWrite() {
	if !c.check() {
		return
	}
	c.after(0, whatWrite, c.writeFn)
}

// writeResource sends the section's write.
func (c *client) writeResource() {
	sec, value := c.secID, c.secRead
	c.env.SectionWriteSent(sec, value+1)
	id := c.newID()
	c.requestPooled(c.secTo, id, storage.NewWriteReq(storage.WriteReq{ID: id, Section: sec, Value: value + 1, Token: c.token, HasToken: c.hasToken, LockValue: c.alg.value()}), c.resourceTimeout(), c.onWriteFn)
}

// onWrite handles the write's reply (or its timeout) and releases.
func (c *client) onWrite(m sim.Message, ok bool) {
	sec := c.secID
	if ok {
		c.env.SectionResult(sec)
		if r := writeReply(m); !r.OK {
			c.env.Logf(KindClient, "section %d: write rejected (%s)", sec, r.Err)
		}
	} else {
		c.env.Logf(KindClient, "section %d: write timed out", sec)
	}
	c.release()
}

// release ends the belief (the release is being sent) and runs the
// algorithm's release; the cycle is complete when it finishes.
func (c *client) release() {
	if c.believes() {
		c.env.BeliefEnd(c.belief, sim.EndReleased)
	}
	c.belief, c.section = -1, -1
	c.alg.release(c.releasedFn)
}

// released completes the cycle.
func (c *client) released() {
	c.completed++
	if n := c.cfg.Workload.Cycles; n > 0 && c.completed >= n {
		c.stopped = true
		c.env.Logf(KindClient, "workload done after %d cycles", c.completed)
		return
	}
	c.after(c.cfg.Workload.Think, whatThink, c.startWantFn)
}

// readReply copies a storage read reply out of its message, pooled or not.
func readReply(m sim.Message) storage.ReadReply {
	if p, ok := m.(*storage.ReadReply); ok {
		return *p
	}
	return m.(storage.ReadReply)
}

// writeReply copies a storage write reply out of its message, pooled or not.
func writeReply(m sim.Message) storage.WriteReply {
	if p, ok := m.(*storage.WriteReply); ok {
		return *p
	}
	return m.(storage.WriteReply)
}

// uniqueValue draws a lock value unique to this acquire: the distlock page
// asks for "20 bytes from /dev/urandom"; locksim draws 64 bits from the
// client's seeded stream and prefixes the client's name for the trace.
// NB: the string's bytes are carved out of a slab the client fills and
// never rewrites (valueSlab), one allocation per many values (issue 15).
func (c *client) uniqueValue() string {
	// fmt's "%s:%016x", rendered with appends.
	const digits = "0123456789abcdef"
	v := c.env.Rand().Uint64()
	var hex [16]byte
	for i := len(hex) - 1; i >= 0; i-- {
		hex[i] = digits[v&0xf]
		v >>= 4
	}
	n := len(c.cfg.Name) + 1 + len(hex)
	if cap(c.valueSlab)-len(c.valueSlab) < n {
		c.valueSlab = make([]byte, 0, max(min(2*cap(c.valueSlab), slabBytes), 4*n))
	}
	at := len(c.valueSlab)
	c.valueSlab = append(append(append(c.valueSlab, c.cfg.Name...), ':'), hex[:]...)
	return unsafe.String(&c.valueSlab[at], n)
}

// argv returns an empty argv with room for n strings, carved out of a slab
// of argvs (argvSlab): argvs are made per lock value, and requests in
// flight share them, so they are never rewritten; a new slab replaces a
// full one, and the old one lives as long as an argv carved from it.
func (c *client) argv(n int) []string {
	if cap(c.argvSlab)-len(c.argvSlab) < n {
		c.argvSlab = make([]string, 0, max(min(2*cap(c.argvSlab), slabStrings), 4*n))
	}
	at := len(c.argvSlab)
	c.argvSlab = c.argvSlab[:at+n]
	return c.argvSlab[at : at : at+n]
}

// Largest slab sizes: a few dozen lock values per allocation. Slabs start
// at four values and double up to these, so that a client of a short run
// does not hold a large slab.
const (
	slabBytes   = 1024
	slabStrings = 256
)

// logBytes records a client event whose text b was rendered into
// c.scratch, and keeps the (possibly grown) buffer for the next one.
func (c *client) logBytes(b []byte) {
	c.env.LogBytes(KindClient, b)
	c.scratch = b[:0]
}

// read returns a reading of clock k.
func (c *client) read(k sim.Clock) int64 { return c.env.Read(k) }
