package usercode

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/sim"
)

// Lock is a team's lock as a scenario client runs it: the whole adapter a
// user writes around their library. The scenario's workload drives it
// (want, attempts, critical section on the resource with the token,
// release, think) and records the history as for locksim's own clients.
type Lock interface {
	// Obtain makes one attempt to take the lock. A nil *Held, or an error,
	// is a failed attempt; the scenario's lock block (tries, retry_delay)
	// decides whether and when the workload calls Obtain again. A library
	// with its own retries may use them too (then set tries: 1).
	Obtain(ctx context.Context) (*Held, error)
	// Release gives the lock back. Its error is logged into the trace.
	Release(ctx context.Context, h *Held) error
}

// Extender is the optional third step of a Lock: a lock whose code also
// has Extend gets it called by the workload while the lock is held, every
// extend_every of the scenario's lock block (on the client's monotonic
// clock, so a pause of the client delays it, as it delays a modelled
// client's extension), from the Obtain that returned h until the
// workload releases h. An error, or a nil error after which the code
// knows the lock is gone, says the extension failed: the workload ends
// the client's belief there (as Proc.Lost does) and extends no more. An
// Extend may still be in flight when the workload calls Release (a
// watchdog's last extension racing the release, as in a real service);
// its outcome is then ignored.
//
// Binding a library's extension is one method:
//
//	func (l *myLock) Extend(ctx context.Context, h *locksim.Held) error {
//		return l.lock.Refresh(ctx, l.ttl, nil)
//	}
type Extender interface {
	Extend(ctx context.Context, h *Held) error
}

// Held is a lock the code obtained.
type Held struct {
	_ struct{}

	// Token is the fencing token sent with every resource request of the
	// critical section when HasToken is set.
	Token    int64
	HasToken bool
	// Until is the validity the code computed (redsync's Mutex.Until),
	// zero when it computes none. The workload checks it before writing,
	// as a careful client does: past it, the client abandons the section.
	Until time.Time
	// UntilFunc, when set, is read instead of Until at each check, for a
	// validity that extensions move (redsync's Mutex.Until). It runs in
	// the simulation's loop and must not block.
	UntilFunc func() time.Time
	// Value is the lock's value, sent to a token-cas resource.
	Value string
	// Data is free for the code (the library's lock handle).
	Data any
}

// LimitNote is what every user client logs at its start, and the docs say:
// the limit of what the simulation controls in real code.
const LimitNote = "user code: its own time.Now and timers read the simulation's true time; clock faults of this client reach only Proc.Now and Proc.Mono"

// Proc is the process environment of one incarnation of a user client:
// its Redis clients on simulated connections, its clocks, its seeded
// random stream, its goroutines and its log. A restarted client gets a new
// Proc (and a new Lock from the factory).
type Proc struct {
	_  struct{}
	in *instance
}

// Name is the client's name in the scenario.
func (p *Proc) Name() string { return p.in.name }

// Context is cancelled when the client crashes or the run ends.
func (p *Proc) Context() context.Context {
	p.check("Context")
	return p.in.ctx
}

// LockParams are the scenario's lock parameters of this client.
type LockParams struct {
	Key        string
	Node       string   // a single-node lock's server
	Nodes      []string // a multi-node lock's servers
	TTL        time.Duration
	Tries      int
	RetryDelay sim.Range
	// Fencing is the scenario's fencing_token (incr, zxid, "" none).
	Fencing string
	// The redlock/redsync parameters (clients.LockConfig).
	DriftFactor   float64
	TimeoutFactor float64
	NodeTimeout   time.Duration
	SetNXOnExtend bool
	ExtendEvery   time.Duration
	// Sentinel discovery: when the lock's node is the master the
	// scenario's sentinels monitor, MasterName and Sentinels (process
	// names) say how to ask them (go-redis NewFailoverClient, with
	// FailoverOptions from Proc.FailoverOptions).
	MasterName string
	Sentinels  []string
	// Master is the process the sentinels monitor (one of Node, Nodes).
	Master string
}

// Lock returns the scenario's lock parameters of this client.
func (p *Proc) Lock() LockParams {
	l := p.in.cfg.Lock
	lp := LockParams{Key: l.Key, Node: l.Node, Nodes: append([]string(nil), l.Nodes...), TTL: l.TTL, Tries: l.Tries, RetryDelay: l.RetryDelay, Fencing: l.FencingToken,
		DriftFactor: l.DriftFactor, TimeoutFactor: l.TimeoutFactor, NodeTimeout: l.NodeTimeout, SetNXOnExtend: l.SetNXOnExtend, ExtendEvery: l.ExtendEvery}
	if d := p.in.cfg.Discovery; d != nil {
		lp.MasterName = d.MasterName
		if lp.MasterName == "" {
			lp.MasterName = "mymaster"
		}
		lp.Sentinels = append([]string(nil), d.Sentinels...)
		lp.Master = d.Master
	}
	return lp
}

// Lost tells the workload that the code learnt it lost the lock it holds
// (an extension failed): the client's belief ends there, as a modelled
// client's does, and its critical section is abandoned before the write.
func (p *Proc) Lost(why string) {
	p.check("Lost")
	p.in.ctrl(func(in *instance) { in.lost(why) })
}

// FailoverOptions returns go-redis failover options for the scenario's
// sentinels (LockParams.MasterName and Sentinels), with what RedisOptions
// sets for determinism. go-redis asks a sentinel for the master's address
// (SENTINEL get-master-addr-by-name) and the simulated dialer maps the
// name it answers to the process.
func (p *Proc) FailoverOptions() *goredis.FailoverOptions {
	l := p.Lock()
	o := p.RedisOptions(l.Master)
	// One sentinel address, the first: with several, go-redis v9.23.0's
	// sentinelFailover.MasterAddr asks them from parallel goroutines that
	// meet in a sync.Once (sentinel.go:1062-1086), and a goroutine waiting
	// on a mutex held by one that waits for a reply is not durably blocked:
	// the simulation could not tell it from a hang. go-redis asks for the
	// other sentinels itself (SENTINEL sentinels) and keeps the one that
	// answered.
	var addrs []string
	if len(l.Sentinels) > 0 {
		addrs = []string{l.Sentinels[0] + ":26379"}
	}
	return &goredis.FailoverOptions{
		MasterName:            l.MasterName,
		SentinelAddrs:         addrs,
		Dialer:                o.Dialer,
		MaxRetries:            o.MaxRetries,
		PoolSize:              o.PoolSize,
		Protocol:              o.Protocol,
		DisableIdentity:       o.DisableIdentity,
		ContextTimeoutEnabled: o.ContextTimeoutEnabled,
	}
}

// Failover returns a go-redis failover client of the scenario's sentinels
// (FailoverOptions), closed when the client crashes or the run ends.
func (p *Proc) Failover() *goredis.Client {
	c := goredis.NewFailoverClient(p.FailoverOptions())
	p.OnClose(c.Close)
	return c
}

// Dial opens a simulated connection to a server of the scenario; addr is
// "name:port" or "name" (the port is ignored). It is what
// RedisOptions puts in go-redis' Options.Dialer.
func (p *Proc) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	p.check("Dial")
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return p.in.dial(addr)
}

// RedisOptions returns go-redis options for a client of the Redis node
// named node, with what determinism needs (reference
// user-code-and-cluster.md §4): the simulated Dialer; MaxRetries -1 (go-redis
// retries with a backoff drawn from the global math/rand); PoolSize 1 (its
// default, 10 x GOMAXPROCS, would make runs depend on GOMAXPROCS, and one
// connection per server keeps dials in order); Protocol 2 (the node
// answers HELLO with an error, and go-redis falls back to RESP2 anyway);
// DisableIdentity (no CLIENT SETINFO); maintenance notifications off;
// ContextTimeoutEnabled (a lock
// call's context deadline bounds its commands, as the libraries expect).
// Change them at your own risk: a background goroutine of go-redis
// (client-side caching, maintenance notifications) would escape the
// simulation's ordering.
func (p *Proc) RedisOptions(node string) *goredis.Options {
	p.check("RedisOptions")
	if why := p.in.w.notRedis(node); why != "" {
		// A user's mistake (a misspelt node, a memcached or MySQL server):
		// said at once, as a panic the run reports with the client and
		// the time, rather than as go-redis dial errors on every retry
		// (or RESP sent to a server of another protocol).
		panic(fmt.Sprintf("locksim: Proc.Redis(%q): %s", node, why))
	}
	return &goredis.Options{
		Addr:                  node + ":6379",
		Dialer:                p.Dial,
		MaxRetries:            -1,
		PoolSize:              1,
		Protocol:              2,
		DisableIdentity:       true,
		ContextTimeoutEnabled: true,
		// Maintenance notifications resolve the address through DNS at
		// NewClient (maintnotifications/config.go:489) and listen for
		// RESP3 pushes: off.
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}
}

// Redis returns a go-redis client of the Redis node named node (with
// RedisOptions), closed when the client crashes or the run ends.
func (p *Proc) Redis(node string) *goredis.Client {
	c := goredis.NewClient(p.RedisOptions(node))
	p.OnClose(c.Close)
	return c
}

// OnClose registers f to run when the client crashes or the run ends (to
// close clients the code made itself).
func (p *Proc) OnClose(f func() error) {
	p.in.mu.Lock()
	p.in.closers = append(p.in.closers, f)
	p.in.mu.Unlock()
}

// Now reads the client's wall clock, as the kernel keeps it for every
// process (sim.Epoch, 2026-01-01 UTC, at the start, plus this process's
// offset, drift and clock jumps: the scenario's clock faults). A library's
// own time.Now reads the bubble's clock instead, which starts at
// 2000-01-01 UTC and never jumps (LimitNote).
func (p *Proc) Now() time.Time {
	in := p.in
	return time.Unix(0, in.w.k.ReadClockAt(in.id, sim.Wall, in.w.nowT())).UTC()
}

// Mono reads the client's monotonic clock (drift applies, jumps do not).
func (p *Proc) Mono() time.Duration {
	in := p.in
	return time.Duration(in.w.k.ReadClockAt(in.id, sim.Mono, in.w.nowT()))
}

// After returns a channel closed when d has passed on the client's
// monotonic clock, as a timer of the client process: a pause of the client
// delays it past the resume, as it delays a modelled client's timers. A
// library's own timers (time.Sleep, time.After, context deadlines) run on
// the simulation's true time instead and fire during a pause (LimitNote):
// loops of the code's own, such as a watchdog that extends the lock, should
// wait with After or Sleep. The channel is never closed after a crash
// (select on Proc.Context too).
func (p *Proc) After(d time.Duration) <-chan struct{} {
	p.check("After")
	ch := make(chan struct{})
	p.in.ctrl(func(in *instance) { in.env.After(sim.Mono, d, sleepTag{ch}) })
	return ch
}

// Sleep waits d on the client's monotonic clock (After), or until the
// client crashes or the run ends.
func (p *Proc) Sleep(d time.Duration) {
	select {
	case <-p.After(d):
	case <-p.in.ctx.Done():
	}
}

// sleepTag is the timer of After.
type sleepTag struct{ ch chan struct{} }

func (sleepTag) AppendTrace(b []byte) []byte { return append(b, "user-code after"...) }

// Rand returns a new random stream seeded by the run's seed, the client's
// name, its incarnation and how many streams it asked for before: hand it
// to the library's options (redsync's WithGenValueFunc, redislock's Token)
// instead of crypto/rand or the global math/rand, which differ from run to
// run. A stream is not safe for concurrent use.
func (p *Proc) Rand() *rand.Rand {
	p.in.mu.Lock()
	p.in.rands++
	n := p.in.rands
	p.in.mu.Unlock()
	r := sim.NewRand(p.in.w.k.Seed(), fmt.Sprintf("usercode/%s/%d/%d", p.in.name, p.in.inc, n))
	return rand.New(rand.NewPCG(r.Uint64(), r.Uint64()))
}

// Go runs f in a goroutine of the simulation (a watchdog, a renewal loop);
// its context is Proc.Context. A panic in f stops the run with the client,
// the virtual time and the panic.
func (p *Proc) Go(f func(ctx context.Context)) {
	p.check("Go")
	in := p.in
	end := in.w.busyEnter(fmt.Sprintf("client %s: a goroutine of Proc.Go, started at virtual time %v", in.name, time.Duration(in.w.nowT())))
	go func() {
		defer end()
		defer func() {
			if v := recover(); v != nil {
				in.w.fail(in.recovered("a goroutine of Proc.Go", v))
			}
		}()
		f(in.ctx)
	}()
}

// Logf writes a line into the run's trace, as an event of the client at
// the virtual time it was written.
func (p *Proc) Logf(format string, args ...any) {
	p.check("Logf")
	text := fmt.Sprintf(format, args...)
	p.in.ctrl(func(in *instance) { in.env.Log(KindUser, text) })
}

// KindUser is the trace kind of Proc.Logf lines.
const KindUser sim.Kind = "user"

var _ = clients.KindClient
