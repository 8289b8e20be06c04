package redis

// Exact mode of the differential suite. The real redis-server runs under
// locksim's clock library (realmode/clockshift) with its wall clock frozen;
// the harness steps it explicitly, exactly as the model's virtual time is
// stepped: every command gets its own millisecond of virtual time, a sleep
// step advances the frozen clock without sleeping, a jump step steps it.
// Since Redis reads the wall clock for everything a reply can depend on
// (key deadlines and PTTL through mstime(), src/server.c ustime/mstime and
// src/db.c keyIsExpired; WAIT timeouts through the blocked-client timeout
// table, src/timeout.c), both sides see the same instant for every command,
// whatever the machine's load, and every reply, PTTL included, is compared
// without tolerance.
//
// What stays in real time is what Redis drives from its monotonic clock:
// the event loop and serverCron (active expiry, save points). Active expiry
// removes keys whose deadline has passed, which no reply compared here can
// tell apart from lazy expiry (DBSIZE after a clock step would; the
// sequences do not ask it there). Save points depend on wall time elapsed
// since the last save; the sequences never step the clock past one.
//
// The server's clock is frozen at a fixed instant (exactBase), so the model
// runs are deterministic too.

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/realmode/clockshift"
	"github.com/locksim/locksim/realmode/launch"
	"github.com/locksim/locksim/sim"
)

// exactBase is the real servers' wall clock at virtual time 0: 2027-01-15.
const exactBase = int64(1_800_000_000_000) * int64(time.Millisecond)

// exactWorld is a set of real servers sharing one frozen wall clock.
type exactWorld struct {
	t     *testing.T
	dir   string // removed after the servers stop (see start)
	clock *clockshift.Control
	lib   string
	group *launch.Group
	nodes []*exactNode
}

type exactNode struct {
	srv *launch.Server
	rs  *realServer
}

// newExactWorld builds the clock library and a frozen clock; it fails under
// CI=true and skips loudly otherwise when redis-server or cc is missing.
func newExactWorld(t *testing.T) *exactWorld {
	t.Helper()
	redisServerPath(t)
	simtest.NeedBinaries(t, "the exact differential suite against real Redis builds its clock library with it", "apt-get install -y gcc", "cc")
	dir := t.TempDir()
	lib, err := clockshift.Build(dir)
	require.NoError(t, err)
	ctl, err := clockshift.NewControl(filepath.Join(dir, "clock"))
	require.NoError(t, err)
	ctl.Freeze(exactBase)
	w := &exactWorld{t: t, dir: dir, clock: ctl, lib: lib, group: launch.NewGroup()}
	t.Cleanup(func() {
		w.group.StopAll()
		_ = ctl.Close()
	})
	return w
}

// start starts a real server under the world's clock; opts.Dir defaults to
// a fresh directory under the world's.
func (w *exactWorld) start(opts launch.RedisOptions) *exactNode {
	w.t.Helper()
	if opts.Dir == "" {
		// NB: not t.TempDir(): cleanups run last-registered first, so a
		// directory made now would be removed before the servers stop
		// (newExactWorld's cleanup), failing the test with "directory not
		// empty" when a server writes there meanwhile.
		dir, err := os.MkdirTemp(w.dir, "redis")
		require.NoError(w.t, err)
		opts.Dir = dir
	}
	opts.Clock = &launch.Clock{Control: w.clock, Lib: w.lib}
	opts.ExtraConfig = append([]string{"enable-debug-command yes", "repl-diskless-sync-delay 0"}, opts.ExtraConfig...)
	srv, err := w.group.StartRedis(opts)
	require.NoError(w.t, err)
	n := &exactNode{srv: srv}
	n.connect(w.t)
	w.nodes = append(w.nodes, n)
	return n
}

func (n *exactNode) connect(t *testing.T) {
	if n.rs != nil {
		_ = n.rs.rdb.Close()
	}
	rdb := goredis.NewClient(&goredis.Options{Addr: n.srv.Addr(), Protocol: 2,
		MaxRetries: -1, DisableIdentity: true, PoolSize: 4})
	t.Cleanup(func() { _ = rdb.Close() })
	n.rs = &realServer{port: n.srv.Port(), rdb: rdb}
}

func exactJump(d time.Duration) step                  { return step{jump: d} }
func exactKill(node int) step                         { return step{node: node, crash: "kill"} }
func exactShutdown(node int) step                     { return step{node: node, crash: "shutdown"} }
func exactRestart(node int) step                      { return step{node: node, restart: true} }
func exactBlock(d time.Duration, args ...string) step { return step{args: args, block: d} }

var blockedRe = regexp.MustCompile(`(?m)^blocked_clients:(\d+)`)

// blocked returns how many clients are blocked on a real server.
func (n *exactNode) blocked(t *testing.T) int {
	info, err := n.rs.rdb.Info(context.Background(), "clients").Result()
	require.NoError(t, err)
	m := blockedRe.FindStringSubmatch(info)
	require.NotNil(t, m, "INFO clients has no blocked_clients")
	v, _ := strconv.Atoi(m[1])
	return v
}

// runExact plays the steps on the world's real servers, stepping the frozen
// clock, and records the virtual instant of every command and action.
func runExact(t *testing.T, w *exactWorld, steps []step) []played {
	t.Helper()
	var v, off time.Duration
	set := func() { w.clock.Freeze(exactBase + int64(v+off)) }
	set()
	var out []played
	for _, s := range steps {
		if s.sleep > 0 {
			v += s.sleep
			set()
			continue
		}
		if s.await != nil {
			for i := 0; !s.await(); i++ {
				require.Less(t, i, 3000, "waited 30 s for %s", s.awaitWhat)
				time.Sleep(10 * time.Millisecond)
			}
			continue
		}
		v += time.Millisecond
		set()
		p := played{step: s, at: v}
		switch {
		case s.jump != 0:
			off += s.jump
			set()
			out = append(out, p)
			continue
		case s.crash == "kill":
			require.NoError(t, w.nodes[s.node].srv.Kill())
			out = append(out, p)
			continue
		case s.crash == "shutdown":
			require.NoError(t, w.nodes[s.node].srv.Shutdown())
			out = append(out, p)
			continue
		case s.crash != "":
			t.Fatalf("bad crash %q", s.crash)
		case s.restart:
			n := w.nodes[s.node]
			require.NoError(t, n.srv.Restart())
			n.connect(t)
			out = append(out, p)
			continue
		}
		n := w.nodes[s.node]
		p.args = resolveArgs(s.args, time.Unix(0, exactBase+int64(v+off)))
		if s.block == 0 {
			p.real = n.rs.do(t, p.args)
		} else {
			// Step the clock only once the server has blocked the client
			// (its timeout is computed from the clock when it blocks).
			before := n.blocked(t)
			done := make(chan Value, 1)
			go func() { done <- n.rs.do(t, p.args) }()
			for i := 0; n.blocked(t) <= before; i++ {
				require.Less(t, i, 5000, "%q never blocked", p.args)
				select {
				case r := <-done:
					t.Fatalf("%q was expected to block and replied %v", p.args, r)
				default:
				}
				time.Sleep(time.Millisecond)
			}
			// A blocked client times out once its deadline is strictly
			// before the clock (src/timeout.c checkBlockedClientTimeout:
			// timeout < now), checked when the event loop next wakes, at
			// the latest on the next serverCron tick.
			v += s.block + time.Millisecond
			set()
			select {
			case p.real = <-done:
			case <-time.After(time.Minute):
				t.Fatalf("%q did not time out on the real server after the clock stepped by %v", p.args, s.block+time.Millisecond)
			}
		}
		if s.margs != nil {
			p.args = resolveArgs(s.margs, time.Unix(0, exactBase+int64(v+off)))
		}
		out = append(out, p)
	}
	return out
}

// runModelExact replays the recorded commands and actions on simulated
// nodes whose wall clocks read exactBase at virtual time 0; each command is
// sent at its recorded instant (later only if the previous reply came
// later, which the comparison then shows).
func runModelExact(t *testing.T, nodes []nodeSpec, plays []played) []Value {
	t.Helper()
	w := simtest.NewWorld(t, 0, simtest.Options{Seed: 7})
	k := w.K
	off := time.Duration(exactBase - sim.Epoch)
	var ids []sim.ProcID
	for _, n := range nodes {
		cfg := n.cfg
		cfg.ReplDisklessSyncDelay = 0 // as the real servers' repl-diskless-sync-delay 0 (exactWorld.start)
		ids = append(ids, w.Add(n.name, func() sim.Process { return New(cfg) }, sim.ClockSpec{Offset: off}))
	}
	p := newProbe()
	simtest.AddProbe(w, "client", p)
	w.Start()
	out := make([]Value, len(plays))
	for i, pl := range plays {
		if at := sim.At(pl.at); k.Now() < at {
			w.RunTo(at)
		}
		switch {
		case pl.jump != 0:
			for _, id := range ids {
				k.JumpWall(id, pl.jump)
			}
			continue
		case pl.crash == "kill":
			k.Crash(ids[pl.node], sim.CrashProcess)
			continue
		case pl.crash == "shutdown":
			k.Crash(ids[pl.node], sim.CrashClean)
			continue
		case pl.restart:
			k.Restart(ids[pl.node])
			continue
		}
		args := pl.args
		id := p.Send(ids[pl.node], func(id uint64) sim.Message { return Request{ID: id, Args: args} })
		a, ok := simtest.Wait(w, p, id, time.Minute)
		require.True(t, ok, "model gave no reply to %q", pl.args)
		out[i] = a.Reply.Value
	}
	return out
}

// exactMismatches compares without tolerance: the clocks agree exactly.
func exactMismatches(plays []played, model []Value) []string {
	exact := make([]played, len(plays))
	for i, p := range plays {
		p.tol = 0
		if p.args == nil { // an action: nothing to compare
			p.skip = true
		}
		exact[i] = p
	}
	return mismatches(exact, model)
}

// checkExact runs a sequence on a fresh world's servers and on the model.
func checkExact(t *testing.T, w *exactWorld, nodes []nodeSpec, steps []step) {
	t.Helper()
	plays := runExact(t, w, steps)
	model := runModelExact(t, nodes, plays)
	for _, m := range exactMismatches(plays, model) {
		t.Error(m)
	}
}
