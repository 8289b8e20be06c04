package clients

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// Counters without a lock (issue 13, the seeds' concurrent-competition
// section, as in a flash sale): the resource is a stock counter kept in Redis
// itself and many clients sell from it at once. A counter client makes
// Purchases purchases with one counter method, then reads the stock once;
// a counter loader SETs the declared stock before the clients start.
//
// The clients talk to Redis as go-redis does (the plumbing of the lock
// clients, plumbing.go): one request at a time, a read timeout after which
// the connection is closed and the next command dials anew, a request that
// fails at once when its connection ends (ConnEnded). They record one
// sim.CounterOp per purchase with client-side times: the first command sent
// and the final reply.

// CounterMethod is one way of selling from a stock counter, declared once:
// the scenario format validates method names against this list, and
// docs/guide/scenarios.md lists it.
type CounterMethod struct {
	// Name is the method's name in scenario files.
	Name string
	// What says what the method sends, in words.
	What string
	// Source is where the pattern comes from.
	Source string
	// Atomic is true when one purchase reads and decrements atomically
	// (the stock stays exact); false for the naive read-modify-write.
	Atomic bool
}

// Counter method names.
const (
	CounterGetSet = "get-set"
	CounterDecr   = "decr"
	CounterWatch  = "watch"
	CounterScript = "script"
)

// counterMethods is the one list of counter methods.
var counterMethods = []CounterMethod{
	{Name: CounterGetSet, What: "GET the stock; if it is > 0, SET it to the value read minus 1 (the naive read-modify-write: two commands, not atomic)",
		Source: "the seeds' concurrent-competition section (flash sale); Redis INCR documentation, \"Pattern: Counter\" (a GET then SET is not atomic)"},
	{Name: CounterDecr, What: "DECR the stock; sold iff the reply is >= 0 (a sold-out DECR leaves the stock negative: the key counts down past 0)",
		Source: "Redis INCR/DECR documentation (\"Pattern: Counter\", atomic increments); R 7.2.4 t_string.c:601-635 incrDecrCommand", Atomic: true},
	{Name: CounterWatch, What: "WATCH the stock, GET it; if > 0, MULTI, SET value-1, EXEC; a null EXEC reply (the key changed) retries, up to retries attempts; UNWATCH at the end of each attempt",
		Source: "Redis transactions documentation (\"Optimistic locking using check-and-set\"); go-redis v9 example_test.go ExampleClient_Watch (Watch, TxPipelined, TxFailedErr) and tx.go (Tx.Close sends UNWATCH)", Atomic: true},
	{Name: CounterScript, What: "one script (redis.ScriptStockDecrement): GET, and DECR only when tonumber of the stock is > 0; sold iff the reply is >= 0 (-1: sold out, nothing written); EVALSHA first, EVAL after NOSCRIPT",
		Source: "Redis EVAL documentation (scripts run atomically); go-redis v9 script.go Script.Run (EVALSHA, then EVAL on NOSCRIPT)", Atomic: true},
}

// CounterMethods returns the counter methods, in the order of the
// scenario guide's table.
func CounterMethods() []CounterMethod { return append([]CounterMethod(nil), counterMethods...) }

// LookupCounterMethod returns the method called name, or nil.
func LookupCounterMethod(name string) *CounterMethod {
	for i := range counterMethods {
		if counterMethods[i].Name == name {
			return &counterMethods[i]
		}
	}
	return nil
}

// CounterMethodNames lists the method names, for error messages.
func CounterMethodNames() string {
	names := make([]string, len(counterMethods))
	for i, m := range counterMethods {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}

// Defaults of a counter client.
const (
	// DefaultCounterTimeout is go-redis v9.7.0's ReadTimeout (3 s,
	// options.go:181-188), after which a command fails and its connection
	// is closed (isBadConn, error.go:81-110).
	DefaultCounterTimeout = 3 * time.Second
	// DefaultCounterRetries is the number of WATCH attempts of one
	// purchase: go-redis' transaction example loops
	// "for i := 0; i < maxRetries; i++" with maxRetries = 1000
	// (example_test.go, ExampleClient_Watch).
	DefaultCounterRetries = 1000
	// DefaultCounterStart is when a counter client begins when the scenario
	// does not say: after the loader's SET of the stock (sent at 0s) has
	// had time to land.
	DefaultCounterStart = 100 * time.Millisecond
)

// CounterConfig configures a counter client.
type CounterConfig struct {
	// Name is the process name.
	Name string
	// Node is the Redis process that holds the stock; Key the stock's key.
	Node string
	Key  string
	// Method is a CounterMethod name.
	Method string
	// Purchases is how many purchases the client makes (at least 1).
	Purchases int
	// Start is when the first purchase begins, Think the time between two
	// purchases (client monotonic clock).
	Start time.Duration
	Think time.Duration
	// Timeout is the read timeout of one command (DefaultCounterTimeout).
	Timeout time.Duration
	// Retries is the number of attempts of one watch purchase
	// (DefaultCounterRetries).
	Retries int
	// Discovery is set when Node is the Sentinel-monitored master: the
	// client asks the sentinels for the master before each purchase and
	// after an error, as the lock clients do (discovery.go).
	Discovery *Discovery
	// Cluster is set when Node is a Redis Cluster node: the client routes
	// its commands by slot (cluster.go).
	Cluster *Cluster
}

// Validate reports the first bad field, naming it.
func (c CounterConfig) Validate() error {
	switch {
	case c.Name == "":
		return errors.New("name: must not be empty")
	case c.Node == "":
		return errors.New("node: must name the Redis server holding the stock")
	case c.Key == "":
		return errors.New("key: must not be empty")
	case LookupCounterMethod(c.Method) == nil:
		return fmt.Errorf("method: unknown counter method %q (known: %s)", c.Method, CounterMethodNames())
	case c.Purchases < 1:
		return fmt.Errorf("purchases: must be at least 1, got %d", c.Purchases)
	case c.Start < 0:
		return fmt.Errorf("start: must be >= 0, got %v", c.Start)
	case c.Think < 0:
		return fmt.Errorf("think: must be >= 0, got %v", c.Think)
	case c.Timeout <= 0:
		return fmt.Errorf("timeout: must be > 0, got %v", c.Timeout)
	case c.Retries < 1:
		return fmt.Errorf("retries: must be at least 1 (attempts of one purchase), got %d", c.Retries)
	}
	return nil
}

// WithDefaults fills the zero fields that have defaults.
func (c CounterConfig) WithDefaults() CounterConfig {
	if c.Timeout == 0 {
		c.Timeout = DefaultCounterTimeout
	}
	if c.Retries == 0 {
		c.Retries = DefaultCounterRetries
	}
	if c.Purchases == 0 {
		c.Purchases = 1
	}
	return c
}

// NewCounterClient returns a counter client process; it panics on an
// invalid configuration (Validate first).
func NewCounterClient(cfg CounterConfig) sim.Process {
	if err := cfg.Validate(); err != nil {
		panic(fmt.Sprintf("clients: invalid counter client %s: %v", cfg.Name, err))
	}
	return &counterClient{cfg: cfg}
}

// counterClient is the process. The embedded lock client supplies the
// go-redis plumbing (requests with timeouts, timers, master discovery); its
// lock workload is never started.
type counterClient struct {
	plumbing
	cfg  CounterConfig
	done int // purchases made
	op   int // the operation in progress, -1 if none
	over bool
}

// Init starts the purchases at Start (a restarted client starts over).
func (k *counterClient) Init(env *sim.Env) {
	k.c = &client{
		cfg: Config{Name: k.cfg.Name, Lock: LockConfig{Node: k.cfg.Node, NodeTimeout: k.cfg.Timeout}, Discovery: k.cfg.Discovery, Clusters: clustersOf(k.cfg.Cluster)},
		env: env, want: -1, belief: -1, section: -1,
	}
	if k.cfg.Discovery != nil {
		k.c.master = k.cfg.Discovery.Master
	}
	k.done, k.op, k.over = 0, -1, false
	k.c.after(k.cfg.Start, whatStart, k.next)
}

// next begins the next purchase, or the final read after the last one.
func (k *counterClient) next() {
	k.c.discover(func() {
		if k.done >= k.cfg.Purchases {
			k.finalRead()
			return
		}
		k.done++
		k.op = k.c.env.CounterBegin(sim.CounterPurchase, k.cfg.Method, k.c.master0(), k.cfg.Key)
		switch k.cfg.Method {
		case CounterGetSet:
			k.getSet()
		case CounterDecr:
			k.decr()
		case CounterWatch:
			k.watch()
		case CounterScript:
			k.script()
		}
	})
}

// master0 is the process the client's commands go to: the discovered
// master, or the node.
func (c *client) master0() string {
	if c.discovered(c.cfg.Lock.Node) {
		return c.master
	}
	return c.cfg.Lock.Node
}

// cmd sends one command to the stock's node.
func (k *counterClient) cmd(cb func(v redis.Value, ok bool), args ...string) {
	k.c.cmd(k.c.addr(k.cfg.Node), k.cfg.Timeout, cb, args...)
}

// end ends the operation in progress (why: no sale, or no outcome) and
// schedules the next purchase after Think.
func (k *counterClient) end(why string) {
	if op := k.c.env.CounterOp(k.op); op != nil {
		if op.Why == "" {
			op.Why = why
		}
		k.c.env.CounterEnd(k.op)
	}
	k.op = -1
	if k.over {
		return
	}
	k.c.after(k.cfg.Think, whatThink, k.next)
}

// failed ends the operation after a request failed (a timeout or the end of
// the connection), noting the error for master discovery.
func (k *counterClient) failed(what string) {
	k.c.noteError(k.cfg.Node)
	k.end(what + " failed (timeout or connection lost)")
}

// observe records a GET reply in the operation: the stock value, or a
// missing key (0). It reports false (and ends the operation) for a reply
// that is no integer.
func (k *counterClient) observe(v redis.Value) (int64, bool) {
	op := k.c.env.CounterOp(k.op)
	switch {
	case v.IsNil():
		op.Observed, op.HasObserved, op.Missing = 0, true, true
		return 0, true
	case v.Kind == redis.KindBulk:
		n, err := strconv.ParseInt(v.Str, 10, 64)
		if err == nil {
			op.Observed, op.HasObserved, op.Missing = n, true, false
			return n, true
		}
	}
	k.end("GET answered " + v.String())
	return 0, false
}

// getSet is the naive read-modify-write: GET, and if > 0, SET value-1.
func (k *counterClient) getSet() {
	k.cmd(func(v redis.Value, ok bool) {
		if !ok {
			k.failed("GET")
			return
		}
		n, ok := k.observe(v)
		if !ok {
			return
		}
		if n <= 0 {
			k.end("sold out")
			return
		}
		k.write(func(v redis.Value) bool { return v.IsOK() }, "SET", k.cfg.Key, strconv.FormatInt(n-1, 10))
	}, "GET", k.cfg.Key)
}

// write sends the purchase's write; sold says whether its reply is a sale.
func (k *counterClient) write(sold func(redis.Value) bool, args ...string) {
	k.c.env.CounterOp(k.op).Wrote = true
	k.cmd(func(v redis.Value, ok bool) {
		if !ok {
			k.failed(args[0])
			return
		}
		op := k.c.env.CounterOp(k.op)
		op.Known = true
		if v.IsErr() {
			k.c.noteError(k.cfg.Node)
			k.end(args[0] + " answered " + v.String())
			return
		}
		op.Sold = sold(v)
		k.end("")
	}, args...)
}

// decr is DECR: sold iff the reply is >= 0.
func (k *counterClient) decr() {
	k.write(func(v redis.Value) bool {
		if v.Kind != redis.KindInt {
			return false
		}
		op := k.c.env.CounterOp(k.op)
		op.Observed, op.HasObserved = v.Int, true
		if v.Int < 0 {
			op.Why = "sold out"
		}
		return v.Int >= 0
	}, "DECR", k.cfg.Key)
}

// script runs the stock script: sold iff the reply is >= 0.
func (k *counterClient) script() {
	k.c.env.CounterOp(k.op).Wrote = true
	keys := []string{k.cfg.Key}
	k.c.evalsha(k.c.addr(k.cfg.Node), k.cfg.Timeout, &redis.ScriptStockDecrement, keys, nil, func(v redis.Value, ok bool) {
		if !ok {
			k.failed("EVALSHA")
			return
		}
		op := k.c.env.CounterOp(k.op)
		op.Known = true
		if v.Kind != redis.KindInt {
			k.c.noteError(k.cfg.Node)
			k.end("the script answered " + v.String())
			return
		}
		op.Observed, op.HasObserved = v.Int, true
		op.Sold = v.Int >= 0
		if !op.Sold {
			k.end("sold out")
			return
		}
		k.end("")
	})
}

// watch is the optimistic transaction: WATCH, GET, MULTI, SET value-1,
// EXEC, then UNWATCH (go-redis' Tx.Close); a null EXEC retries.
func (k *counterClient) watch() {
	op := k.c.env.CounterOp(k.op)
	op.Wrote, op.Known = false, false
	k.cmd(func(v redis.Value, ok bool) {
		if !ok {
			k.failed("WATCH")
			return
		}
		if v.IsErr() {
			k.c.noteError(k.cfg.Node)
			k.end("WATCH answered " + v.String())
			return
		}
		k.cmd(func(v redis.Value, ok bool) {
			if !ok {
				k.failed("GET")
				return
			}
			n, ok := k.observe(v)
			if !ok {
				return
			}
			if n <= 0 {
				k.unwatch(func() { k.end("sold out") })
				return
			}
			k.exec(n)
		}, "GET", k.cfg.Key)
	}, "WATCH", k.cfg.Key)
}

// exec sends MULTI, SET value-1 and EXEC in one go (go-redis' TxPipelined
// writes them as one pipeline) and judges EXEC's reply.
func (k *counterClient) exec(n int64) {
	ignore := func(redis.Value, bool) {}
	k.cmd(ignore, "MULTI")
	k.cmd(ignore, "SET", k.cfg.Key, strconv.FormatInt(n-1, 10))
	k.c.env.CounterOp(k.op).Wrote = true
	k.cmd(func(v redis.Value, ok bool) {
		if !ok {
			k.failed("EXEC")
			return
		}
		op := k.c.env.CounterOp(k.op)
		switch {
		case v.IsNil():
			// The stock changed since WATCH: the transaction did nothing
			// (TxFailedErr); try again.
			op.Wrote = false
			op.Conflicts++
			k.unwatch(func() {
				if op := k.c.env.CounterOp(k.op); op != nil && op.Attempts < k.cfg.Retries {
					op.Attempts++
					k.watch()
					return
				}
				k.end(fmt.Sprintf("gave up after %d attempts (TxFailedErr)", k.cfg.Retries))
			})
		case v.Kind == redis.KindArray && len(v.Array) == 1 && v.Array[0].IsOK():
			op.Known, op.Sold = true, true
			k.unwatch(func() { k.end("") })
		default:
			// EXECABORT (READONLY or OOM at queue time): nothing ran; a
			// run-time error in the SET: nothing was written either.
			op.Known = true
			k.c.noteError(k.cfg.Node)
			k.unwatch(func() { k.end("EXEC answered " + v.String()) })
		}
	}, "EXEC")
}

// unwatch sends UNWATCH and goes on when it answered or failed (go-redis'
// Tx.Close ignores its error).
func (k *counterClient) unwatch(then func()) {
	k.cmd(func(redis.Value, bool) { then() }, "UNWATCH")
}

// finalRead reads the stock once after the last purchase.
func (k *counterClient) finalRead() {
	k.over = true
	k.op = k.c.env.CounterBegin(sim.CounterRead, "", k.c.master0(), k.cfg.Key)
	k.cmd(func(v redis.Value, ok bool) {
		if !ok {
			k.end("GET failed (timeout or connection lost)")
			return
		}
		if _, ok := k.observe(v); ok {
			k.end("")
		}
		k.c.env.Logf(KindClient, "counter: %d purchases done", k.done)
	}, "GET", k.cfg.Key)
}

// CounterLoaderConfig configures the loader of a stock counter: at 0s it
// SETs Key to Stock on Node, once per run (a restarted loader does not load
// again: the stock is declared once).
type CounterLoaderConfig struct {
	Name    string
	Node    string
	Key     string
	Stock   int64
	Timeout time.Duration
	// Cluster: Node is a Redis Cluster node (CounterConfig.Cluster).
	Cluster *Cluster
}

// NewCounterLoader returns a factory of the loader process: every
// incarnation shares whether the stock was loaded.
func NewCounterLoader(cfg CounterLoaderConfig) func() sim.Process {
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultCounterTimeout
	}
	loaded := new(bool)
	return func() sim.Process { return &counterLoader{cfg: cfg, loaded: loaded} }
}

type counterLoader struct {
	plumbing
	cfg    CounterLoaderConfig
	loaded *bool
	op     int
}

// Init sends the SET once per run.
func (l *counterLoader) Init(env *sim.Env) {
	l.c = &client{cfg: Config{Name: l.cfg.Name, Lock: LockConfig{Node: l.cfg.Node, NodeTimeout: l.cfg.Timeout}, Clusters: clustersOf(l.cfg.Cluster)}, env: env, want: -1, belief: -1, section: -1}
	if *l.loaded {
		return
	}
	*l.loaded = true
	l.op = env.CounterBegin(sim.CounterLoad, "", l.cfg.Node, l.cfg.Key)
	op := env.CounterOp(l.op)
	op.Observed, op.HasObserved, op.Wrote = l.cfg.Stock, true, true
	l.c.cmd(l.c.addr(l.cfg.Node), l.cfg.Timeout, func(v redis.Value, ok bool) {
		op := env.CounterOp(l.op)
		switch {
		case !ok:
			op.Why = "SET failed (timeout or connection lost)"
		case v.IsErr():
			op.Known, op.Why = true, "SET answered "+v.String()
		default:
			op.Known = true
		}
		env.CounterEnd(l.op)
	}, "SET", l.cfg.Key, strconv.FormatInt(l.cfg.Stock, 10))
}

// replyOf returns a Redis reply in either of its forms: the pooled
// *redis.Reply that answers the plumbing's pooled requests (resp/pool.go;
// copied here, since it is recycled when Receive returns) or a value.
func replyOf(msg sim.Message) (redis.Reply, bool) {
	switch m := msg.(type) {
	case *redis.Reply:
		return *m, true
	case redis.Reply:
		return m, true
	}
	return redis.Reply{}, false
}

// plumbing is the Receive, Fire and ConnEnded of a process that talks to
// Redis only through a client's plumbing (the counter clients and their
// loader): replies complete their requests, timers run their
// continuations, a connection's end fails what is pending on it.
type plumbing struct{ c *client }

// Receive hands replies to the plumbing.
func (p plumbing) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	if r, ok := replyOf(msg); ok {
		p.c.complete(r.ID, r.Value, nil)
		return
	}
	if m, ok := msg.(redis.Push); ok {
		p.c.push(from, m)
		return
	}
	env.Logf(KindClient, "ignored message %T", msg)
}

// Fire runs a timer's continuation.
func (p plumbing) Fire(env *sim.Env, tag any) {
	if !p.c.fireTimer(tag) {
		env.Logf(KindClient, "ignored timer %T", tag)
	}
}

// ConnEnded fails the requests pending on the connection.
func (p plumbing) ConnEnded(env *sim.Env, peer sim.ProcID, why sim.ConnEnd) {
	p.c.ConnEnded(env, peer, why)
}

// clustersOf is a counter's one cluster as a client's list (nil: none).
func clustersOf(cl *Cluster) []*Cluster {
	if cl == nil {
		return nil
	}
	return []*Cluster{cl}
}
