package clients

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/nodes/memcached"
	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// KindFiller is the trace kind of a cache filler's notes (its writes
// failing or succeeding again, its end).
const KindFiller sim.Kind = "filler"

// Node kinds a cache filler writes to.
const (
	FillRedis     = NodeRedis
	FillMemcached = NodeMemcached
)

// FillerConfig configures a cache filler: the "cache workload" of the
// eviction stories, an application using the same server as a cache. Every
// Every, from Start, it writes a new key Prefix<n> with a value of
// ValueSize bytes: "SET key value [PX ttl]" to Redis, "set key 0 exptime
// value" to memcached. It never reads and never deletes.
type FillerConfig struct {
	// Name is the process name.
	Name string
	// Node is the server process; Kind says what it is (redis or
	// memcached).
	Node string
	Kind string
	// Start is when the first write goes (client monotonic clock).
	Start time.Duration
	// Every is the time between writes: the rate.
	Every time.Duration
	// Count is how many keys to write; 0 means until the end of the run.
	Count int
	// ValueSize is each value's size in bytes.
	ValueSize int
	// TTL is each key's time to live; 0 means none (for memcached, whole
	// seconds up to 30 days).
	TTL time.Duration
	// Prefix starts every key; "" means "cache:".
	Prefix string
}

// fillerMaxValue bounds ValueSize: memcached's default item size limit
// (-I 1 MB, memcached.c:240) and far below Redis' 512 MB string limit.
const fillerMaxValue = memcached.DefaultItemSizeMax

// Validate reports the first bad field, naming it.
func (f FillerConfig) Validate() error {
	switch {
	case f.Name == "":
		return errors.New("name: must not be empty")
	case f.Node == "":
		return errors.New("node: must name the cache's server process")
	case f.Kind != FillRedis && f.Kind != FillMemcached:
		return fmt.Errorf("kind: %q is not a cache (allowed: %s, %s)", f.Kind, FillRedis, FillMemcached)
	case f.Start < 0:
		return fmt.Errorf("start: must be >= 0, got %v", f.Start)
	case f.Every <= 0:
		return fmt.Errorf("every: must be > 0, got %v", f.Every)
	case f.Count < 0:
		return fmt.Errorf("count: must be >= 0 (0 = until the end), got %d", f.Count)
	case f.ValueSize < 1 || f.ValueSize > fillerMaxValue:
		return fmt.Errorf("value_size: must be from 1 to %d bytes, got %d", fillerMaxValue, f.ValueSize)
	case f.TTL < 0:
		return fmt.Errorf("ttl: must be >= 0 (0 = none), got %v", f.TTL)
	case f.Kind == FillMemcached && (f.TTL%time.Second != 0 || f.TTL > memcached.RealtimeMaxDelta*time.Second):
		return fmt.Errorf("ttl: %v must be whole seconds up to 30 days for memcached (REALTIME_MAXDELTA)", f.TTL)
	case f.Kind == FillRedis && f.TTL%time.Millisecond != 0:
		return fmt.Errorf("ttl: %v must be whole milliseconds for Redis (PX)", f.TTL)
	}
	return nil
}

// NewFiller returns a cache filler process; it panics on an invalid
// configuration (Validate first).
func NewFiller(cfg FillerConfig) sim.Process {
	if err := cfg.Validate(); err != nil {
		panic(fmt.Sprintf("clients: invalid filler %s: %v", cfg.Name, err))
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "cache:"
	}
	return &filler{cfg: cfg, value: strings.Repeat("x", cfg.ValueSize)}
}

// filler is the cache filler process. It sends without waiting for
// replies (a cache writer does not block on them) and notes in the trace
// when its writes start failing and when they succeed again.
type filler struct {
	cfg     FillerConfig
	value   string
	env     *sim.Env
	node    sim.ProcID
	n       int // keys written
	failing bool
	errs    int
}

// fillTick is the filler's timer tag: the number of the next write.
type fillTick struct{ n int }

// AppendTrace renders the tag ("fill 12").
func (t fillTick) AppendTrace(b []byte) []byte {
	return strconv.AppendInt(append(b, "fill "...), int64(t.n), 10)
}

// Init starts the writes at Start (a restarted filler starts over with
// key 0, overwriting).
func (f *filler) Init(env *sim.Env) {
	f.env = env
	f.n, f.failing, f.errs = 0, false, 0
	id, ok := env.Lookup(f.cfg.Node)
	if !ok {
		panic("clients: unknown process " + f.cfg.Node + " (the scenario layer checks process names)")
	}
	f.node = id
	env.SetTimer(sim.Mono, int64(f.cfg.Start), fillTick{n: 0})
}

// Fire writes one key and arms the next write.
func (f *filler) Fire(env *sim.Env, tag any) {
	t, ok := tag.(fillTick)
	if !ok || t.n != f.n {
		return
	}
	key := f.cfg.Prefix + strconv.Itoa(f.n)
	f.n++
	id := uint64(f.n)
	if f.cfg.Kind == FillRedis {
		args := []string{"SET", key, f.value}
		if f.cfg.TTL > 0 {
			args = append(args, "PX", ms(f.cfg.TTL))
		}
		env.Send(f.node, redis.Request{ID: id, Args: args})
	} else {
		env.Send(f.node, memcached.Request{ID: id, Cmd: memcached.CmdSet, Key: key, Exptime: int64(f.cfg.TTL / time.Second), Value: f.value})
	}
	if f.cfg.Count > 0 && f.n >= f.cfg.Count {
		env.Logf(KindFiller, "wrote %d keys; done", f.n)
		return
	}
	env.After(sim.Mono, f.cfg.Every, fillTick{n: f.n})
}

// Receive notes failures: the first error after successes and the first
// success after errors.
func (f *filler) Receive(env *sim.Env, _ sim.ProcID, msg sim.Message) {
	var failed bool
	var text string
	switch r := msg.(type) {
	case redis.Reply:
		failed, text = r.Value.IsErr(), r.Value.String()
	case memcached.Reply:
		failed, text = r.IsError(), r.Status
	default:
		return
	}
	switch {
	case failed && !f.failing:
		f.failing = true
		f.errs++
		env.Logf(KindFiller, "write refused: %s", text)
	case failed:
		f.errs++
	case f.failing:
		f.failing = false
		env.Logf(KindFiller, "writes succeed again after %d refused", f.errs)
		f.errs = 0
	}
}
