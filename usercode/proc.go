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
func (p *Proc) Context() context.Context { return p.in.ctx }

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
}

// Lock returns the scenario's lock parameters of this client.
func (p *Proc) Lock() LockParams {
	l := p.in.cfg.Lock
	return LockParams{Key: l.Key, Node: l.Node, Nodes: append([]string(nil), l.Nodes...), TTL: l.TTL, Tries: l.Tries, RetryDelay: l.RetryDelay, Fencing: l.FencingToken}
}

// Dial opens a simulated connection to a server of the scenario; addr is
// "name:port" or "name" (the port is ignored). It is what
// RedisOptions puts in go-redis' Options.Dialer.
func (p *Proc) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
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

// Sleep waits d of virtual time (time.Sleep does the same inside the
// simulation).
func (p *Proc) Sleep(d time.Duration) { time.Sleep(d) }

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
	in := p.in
	go func() {
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
	text := fmt.Sprintf(format, args...)
	p.in.ctrl(func(in *instance) { in.env.Log(KindUser, text) })
}

// KindUser is the trace kind of Proc.Logf lines.
const KindUser sim.Kind = "user"

var _ = clients.KindClient
