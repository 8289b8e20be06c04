package redis

// Differential tests of transactions and counters (MULTI, EXEC, DISCARD,
// WATCH, UNWATCH, INCR, DECR, INCRBY, DECRBY) against a real redis-server,
// in the exact mode of exact_test.go: the server's wall clock is frozen
// with realmode/clockshift and stepped exactly as the model's virtual time
// (every command gets its own millisecond, a pause steps the clock without
// sleeping), so the comparison is exact and does not depend on the
// machine's load. Transactions belong to a connection, so each simulated
// client here is one go-redis client with a pool of one connection on the
// real side and one process on the model side; the steps of all clients
// run one after another, the model replaying each at its virtual instant,
// never before the previous step's reply.

import (
	"context"
	"math/rand"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/realmode/launch"
	"github.com/locksim/locksim/sim"
)

// txStep is a command of one client, or a sleep.
type txStep struct {
	client int
	args   []string
	sleep  time.Duration
}

func by(client int, args ...string) txStep { return txStep{client: client, args: args} }
func pause(d time.Duration) txStep         { return txStep{sleep: d} }

type txPlayed struct {
	txStep
	at   time.Duration
	real Value
}

// runRealTx plays the steps on the world's one real server, one
// connection per client, stepping the frozen clock: each command runs at
// its own millisecond of virtual time, a pause advances the clock.
func runRealTx(t *testing.T, w *exactWorld, clients int, steps []txStep) []txPlayed {
	n := w.nodes[0]
	conns := make([]*goredis.Client, clients)
	for i := range conns {
		conns[i] = goredis.NewClient(&goredis.Options{Addr: n.srv.Addr(), Protocol: 2,
			MaxRetries: -1, DisableIdentity: true, PoolSize: 1})
		c := conns[i]
		t.Cleanup(func() { _ = c.Close() })
		require.NoError(t, c.Ping(context.Background()).Err())
	}
	var v time.Duration
	set := func() { w.clock.Freeze(exactBase + int64(v)) }
	set()
	var out []txPlayed
	for _, s := range steps {
		if s.sleep > 0 {
			v += s.sleep
			set()
			continue
		}
		v += time.Millisecond
		set()
		ia := make([]any, len(s.args))
		for i, a := range s.args {
			ia[i] = a
		}
		res, err := conns[s.client].Do(context.Background(), ia...).Result()
		out = append(out, txPlayed{txStep: s, at: v, real: fromGoRedis(t, res, err)})
	}
	return out
}

// txDriver plays the recorded steps on the model: one process per client,
// sharing the schedule.
type txDriver struct {
	plays   []txPlayed
	envs    []*sim.Env
	target  sim.ProcID
	replies []Value
	got     []bool
	due     []bool
	sent    int
}

type txClientProc struct {
	d  *txDriver
	id int
}

func (c *txClientProc) Init(env *sim.Env) {
	c.d.envs[c.id] = env
	if c.id == 0 {
		for i, p := range c.d.plays {
			env.SetTimer(sim.Mono, int64(p.at), i)
		}
	}
}

func (c *txClientProc) Fire(env *sim.Env, tag any) {
	c.d.due[tag.(int)] = true
	c.d.pump()
}

func (c *txClientProc) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	if r, ok := msg.(Reply); ok {
		c.d.replies[r.ID-1], c.d.got[r.ID-1] = r.Value, true
		c.d.pump()
	}
}

// pump sends every due step whose predecessor was answered, from the
// process of the step's client.
func (d *txDriver) pump() {
	for d.sent < len(d.plays) && d.due[d.sent] && (d.sent == 0 || d.got[d.sent-1]) {
		p := d.plays[d.sent]
		d.sent++
		d.envs[p.client].Send(d.target, Request{ID: uint64(d.sent), Args: p.args})
	}
}

// runModelTx replays the recorded steps on a model node whose wall clock
// reads exactBase at virtual time 0, as the real server's frozen clock did.
func runModelTx(t *testing.T, cfg Config, clients int, plays []txPlayed) []Value {
	k := sim.New(sim.Config{Seed: 7, Network: sim.NetConfig{Latency: sim.Fixed(0)}})
	off := time.Duration(exactBase - sim.Epoch)
	d := &txDriver{plays: plays, envs: make([]*sim.Env, clients), replies: make([]Value, len(plays)),
		got: make([]bool, len(plays)), due: make([]bool, len(plays))}
	d.target = k.Add("A", func() sim.Process { return New(cfg) }, sim.ClockSpec{Offset: off})
	for i := 0; i < clients; i++ {
		p := &txClientProc{d: d, id: i}
		k.Add("c"+strconv.Itoa(i), func() sim.Process { return p }, sim.ClockSpec{})
	}
	var last time.Duration
	if len(plays) > 0 {
		last = plays[len(plays)-1].at
	}
	require.NoError(t, k.Run(sim.At(last+10*time.Second)))
	for i := range plays {
		require.True(t, d.got[i], "model gave no reply to client %d %v", plays[i].client, plays[i].args)
	}
	return d.replies
}

// checkTx runs the steps on a fresh real server under a frozen clock and
// on the model, and reports every difference; it returns the number of
// differences.
func checkTx(t *testing.T, cfg Config, clients int, steps []txStep) int {
	t.Helper()
	w := newExactWorld(t)
	w.start(launch.RedisOptions{Name: "A"})
	plays := runRealTx(t, w, clients, steps)
	model := runModelTx(t, cfg, clients, plays)
	bad := 0
	for i, p := range plays {
		if !same(model[i], p.real, 0) {
			bad++
			t.Errorf("step %d at %v, client %d: %q\n\treal:  %v\n\tmodel: %v", i, p.at.Round(time.Millisecond), p.client, p.args, p.real, model[i])
		}
	}
	return bad
}

func TestConformanceTransactions(t *testing.T) {
	cases := []struct {
		name  string
		steps []txStep
	}{
		{"counters", []txStep{
			by(0, "INCRBY", "n", "5"), by(0, "DECRBY", "n", "7"), by(0, "DECR", "n"), by(0, "INCR", "n"), by(0, "GET", "n"),
			by(0, "INCRBY", "n", "x"), by(0, "INCRBY", "n", "1.5"), by(0, "DECRBY", "n", "-9223372036854775808"),
			by(0, "DECRBY", "n", "9223372036854775807"), by(0, "DECRBY", "n", "9223372036854775807"),
			by(0, "SET", "n", "9223372036854775806"), by(0, "INCRBY", "n", "1"), by(0, "INCRBY", "n", "1"),
			by(0, "SET", "n", "-9223372036854775807"), by(0, "DECR", "n"), by(0, "DECR", "n"), by(0, "DECRBY", "m", "-3"),
			by(0, "SET", "s", "abc"), by(0, "INCRBY", "s", "1"), by(0, "DECR", "s"), by(0, "HSET", "h", "f", "1"),
			by(0, "INCRBY", "h", "1"), by(0, "DECRBY", "h", "1"), by(0, "DECR", "h"), by(0, "INCRBY", "n"), by(0, "DECRBY"),
			by(0, "DECR", "a", "b"), by(0, "SET", "t", "10", "PX", "100000"), by(0, "INCRBY", "t", "5"), by(0, "PTTL", "t"),
		}},
		{"multi-exec-errors", []txStep{
			by(0, "EXEC"), by(0, "DISCARD"), by(0, "MULTI"), by(0, "MULTI"), by(0, "WATCH", "k"), by(0, "SET", "k", "1"),
			by(0, "INCRBY", "k", "2"), by(0, "GET", "k"), by(0, "EXEC"), by(0, "EXEC"), by(0, "MULTI"), by(0, "SET", "k", "x"),
			by(0, "DISCARD"), by(0, "GET", "k"), by(0, "MULTI"), by(0, "NOSUCH", "a"), by(0, "SET", "k", "y"), by(0, "EXEC"),
			by(0, "GET", "k"), by(0, "MULTI"), by(0, "SET", "k"), by(0, "EXEC"), by(0, "MULTI"), by(0, "SET", "k", "abc"),
			by(0, "INCR", "k"), by(0, "SET", "k2", "z"), by(0, "HSET", "k", "f", "v"), by(0, "EXEC"), by(0, "GET", "k2"),
			by(0, "MULTI"), by(0, "EXEC"), by(0, "WATCH"), by(0, "UNWATCH", "x"), by(0, "UNWATCH"),
			by(0, "MULTI"), by(0, "PING"), by(0, "EXISTS", "k"), by(0, "DEL", "k", "k2"), by(0, "EXEC"),
		}},
		{"watch-conflicts", []txStep{
			// Another client writes a watched key: EXEC answers nil.
			by(0, "SET", "stock", "10"), by(0, "WATCH", "stock"), by(0, "GET", "stock"), by(1, "DECR", "stock"),
			by(0, "MULTI"), by(0, "SET", "stock", "9"), by(0, "EXEC"), by(0, "GET", "stock"),
			// No conflict: EXEC runs.
			by(0, "WATCH", "stock"), by(0, "MULTI"), by(0, "DECRBY", "stock", "2"), by(0, "EXEC"),
			// The watcher's own write also dirties its watch.
			by(0, "WATCH", "stock"), by(0, "SET", "stock", "1"), by(0, "MULTI"), by(0, "INCR", "stock"), by(0, "EXEC"),
			// UNWATCH forgets; DISCARD unwatches.
			by(0, "WATCH", "stock"), by(1, "INCR", "stock"), by(0, "UNWATCH"), by(0, "MULTI"), by(0, "INCR", "stock"), by(0, "EXEC"),
			by(0, "WATCH", "stock"), by(0, "MULTI"), by(0, "DISCARD"), by(1, "INCR", "stock"), by(0, "MULTI"), by(0, "INCR", "stock"), by(0, "EXEC"),
			// DEL, EXPIRE, a failed SET NX, a missing key created, FLUSHALL.
			by(0, "WATCH", "stock"), by(1, "DEL", "stock"), by(0, "MULTI"), by(0, "GET", "stock"), by(0, "EXEC"),
			by(0, "WATCH", "nokey"), by(1, "SET", "nokey", "1", "NX"), by(0, "MULTI"), by(0, "GET", "nokey"), by(0, "EXEC"),
			by(0, "WATCH", "nokey"), by(1, "SET", "nokey", "2", "NX"), by(0, "MULTI"), by(0, "GET", "nokey"), by(0, "EXEC"),
			by(0, "WATCH", "nokey"), by(1, "PEXPIRE", "nokey", "100000"), by(0, "MULTI"), by(0, "GET", "nokey"), by(0, "EXEC"),
			by(0, "WATCH", "a", "b", "a"), by(1, "HSET", "b", "f", "v"), by(0, "MULTI"), by(0, "GET", "a"), by(0, "EXEC"),
			by(0, "WATCH", "nokey"), by(1, "FLUSHALL"), by(0, "MULTI"), by(0, "PING"), by(0, "EXEC"),
			by(0, "WATCH", "gone"), by(1, "FLUSHALL"), by(0, "MULTI"), by(0, "PING"), by(0, "EXEC"),
			by(0, "WATCH", "h"), by(1, "HINCRBY", "h", "f", "1"), by(0, "MULTI"), by(0, "PING"), by(0, "EXEC"),
			// Both clients in MULTI: the first EXEC dirties the second.
			by(0, "SET", "c", "0"), by(0, "WATCH", "c"), by(1, "WATCH", "c"), by(0, "MULTI"), by(1, "MULTI"),
			by(0, "INCR", "c"), by(1, "INCR", "c"), by(0, "EXEC"), by(1, "EXEC"), by(0, "GET", "c"),
			// WATCH while dirty is a no-op until UNWATCH/EXEC.
			by(0, "WATCH", "c"), by(1, "INCR", "c"), by(0, "WATCH", "d"), by(0, "MULTI"), by(0, "PING"), by(0, "EXEC"),
		}},
		{"watch-and-expiry", []txStep{
			// A watched key that expires before EXEC fails it, deleted or not
			// (no active expiry: only EXEC's check or a lazy deletion sees it).
			by(0, "DEBUG", "SET-ACTIVE-EXPIRE", "0"), by(0, "SET", "lock", "v", "PX", "100"), by(0, "WATCH", "lock"), pause(200 * time.Millisecond),
			by(0, "MULTI"), by(0, "PING"), by(0, "EXEC"),
			by(0, "SET", "lock", "v", "PX", "100"), by(0, "WATCH", "lock"), pause(200 * time.Millisecond),
			by(1, "GET", "lock"), by(0, "MULTI"), by(0, "PING"), by(0, "EXEC"),
			// A key already expired when watched: its deletion is no change.
			by(0, "SET", "old", "v", "PX", "50"), pause(150 * time.Millisecond),
			by(0, "WATCH", "old"), by(1, "GET", "old"), by(0, "MULTI"), by(0, "PING"), by(0, "EXEC"),
			by(0, "SET", "old", "v", "PX", "50"), pause(150 * time.Millisecond),
			by(0, "WATCH", "old"), by(1, "SET", "old", "new"), by(0, "MULTI"), by(0, "PING"), by(0, "EXEC"),
			by(0, "DEBUG", "SET-ACTIVE-EXPIRE", "1"),
			// The active expiry cycle deletes a watched key: a conflict.
			by(0, "SET", "lock", "v", "PX", "100"), by(0, "WATCH", "lock"), pause(300 * time.Millisecond),
			by(1, "EXISTS", "lock"), by(0, "MULTI"), by(0, "PING"), by(0, "EXEC"),
			// A watched key with a distant deadline is not a conflict.
			by(0, "SET", "far", "v", "PX", "100000"), by(0, "WATCH", "far"), by(0, "MULTI"), by(0, "GET", "far"), by(0, "EXEC"),
		}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			checkTx(t, DefaultConfig(), 2, tt.steps)
		})
	}
}

// genTx draws a random two-client sequence of counter and transaction
// commands over a few keys, with no deadline that can pass during the run.
func genTx(rng *rand.Rand, n int) []txStep {
	keys := []string{"stock", "k", "h"}
	key := func() string { return keys[rng.Intn(len(keys))] }
	num := func() string {
		switch rng.Intn(8) {
		case 0:
			return "x"
		case 1:
			return "9223372036854775807"
		case 2:
			return "-9223372036854775808"
		}
		return strconv.Itoa(rng.Intn(21) - 10)
	}
	var out []txStep
	for len(out) < n {
		c := rng.Intn(2)
		var a []string
		switch r := rng.Intn(24); {
		case r < 2:
			a = []string{"WATCH", key()}
			if rng.Intn(3) == 0 {
				a = append(a, key())
			}
		case r < 3:
			a = []string{"UNWATCH"}
		case r < 6:
			a = []string{"MULTI"}
		case r < 9:
			a = []string{"EXEC"}
		case r < 10:
			a = []string{"DISCARD"}
		case r < 12:
			a = []string{"INCR", key()}
		case r < 13:
			a = []string{"DECR", key()}
		case r < 15:
			a = []string{"INCRBY", key(), num()}
		case r < 16:
			a = []string{"DECRBY", key(), num()}
		case r < 18:
			a = []string{"SET", key(), num()}
			if rng.Intn(3) == 0 {
				a = append(a, "PX", "100000")
			}
		case r < 19:
			a = []string{"GET", key()}
		case r < 20:
			a = []string{"DEL", key()}
		case r < 21:
			a = []string{"HSET", key(), "f", "1"}
		case r < 22:
			a = []string{"NOSUCH"}
		case r < 23:
			a = []string{"INCRBY", key()}
		default:
			a = []string{"PEXPIRE", key(), "100000"}
		}
		out = append(out, by(c, a...))
	}
	return out
}

func TestConformanceTransactionsRandom(t *testing.T) {
	for seed := int64(1); seed <= 10; seed++ {
		t.Run("seed="+strconv.FormatInt(seed, 10), func(t *testing.T) {
			steps := genTx(rand.New(rand.NewSource(seed)), 200)
			checkTx(t, DefaultConfig(), 2, steps)
		})
	}
}
