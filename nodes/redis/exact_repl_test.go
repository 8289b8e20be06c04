package redis

// Exact mode of the replication suite: replication under a cut link and
// PSYNC (issue 17). Master and replicas run under one frozen, stepped wall
// clock (exact_test.go); the replica links of the real servers run through
// locksim's fault-injecting proxy (realmode/proxy), which holds the bytes
// of a cut link the way TCP retransmits them, and the model's through the
// kernel's partition of the same processes.
//
// What the frozen clock cannot step is what real Redis drives from its
// event loop in real time: replicationCron runs once a second
// (src/server.c serverCron, run_with_period(1000)), so a replica notices a
// timeout, reconnects and acknowledges in real time while the clock stands
// still. The harness therefore waits (on conditions, never on durations)
// for the real servers to reach the state the step names, after stepping
// both clocks by the step's settle time, which the model spends in virtual
// time. Timeouts themselves read the wall clock (R 7.2.4
// src/replication.c:3739, time(NULL)-master->lastinteraction >
// repl_timeout; :3818-3834 for the master's side, server.unixtime -
// repl_ack_time), so a sleep past repl-timeout is exact on both sides.
//
// The master PINGs its replicas every repl-ping-replica-period counted in
// replicationCron calls (R 7.2.4 src/replication.c:3768), that is in real
// time; each PING adds 14 bytes to master_repl_offset. Both sides run with
// the period at an hour so that the offsets compared are those of the
// commands alone.

import (
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/realmode/launch"
	"github.com/locksim/locksim/realmode/proxy"
	"github.com/locksim/locksim/sim"
)

// replStep is one step of a replication sequence.
type replStep struct {
	step
	// cut partitions the named processes from the others (both ways);
	// heal removes every cut.
	cut  []string
	heal bool
	// settle steps both clocks by this much, then waits until every
	// condition of until holds on the real servers.
	settle time.Duration
	until  []replCond
	// kill SIGKILLs (crashes) the node.
	kill bool
	// offset compares the node's INFO replication field offset (an offset)
	// relative to the base: the first such step with base set, which
	// must come first. The replicas were in sync before the sequence
	// starts on both sides, but the model's master PINGs its replica once
	// in its first replicationCron (the model's replica links at once,
	// connectMaster's simplification; a real replica links after the
	// master's first cron), so absolute offsets differ by that PING
	// (14 bytes); every byte fed after the base is compared.
	offset string
	base   bool
}

// offsetOf is an offset step of node's field.
func offsetOf(node int, field string) replStep {
	return replStep{step: step{node: node, args: []string{"INFO", "replication"}}, offset: field}
}

// infoInt reads an integer field of an INFO reply.
func infoInt(t *testing.T, v Value, field string) int64 {
	t.Helper()
	got, ok := infoMap(v.Str)[field]
	require.True(t, ok, "INFO has no %s:\n%s", field, v.Str)
	n, err := strconv.ParseInt(got, 10, 64)
	require.NoError(t, err)
	return n
}

// replCond is "node's INFO field equals want", or, with same, "node's
// field equals the field same names on node other".
type replCond struct {
	node  int
	field string
	want  string
	other int
	same  string
}

func infoIs(node int, field, want string) replCond {
	return replCond{node: node, field: field, want: want}
}

func infoSame(node int, field string, other int, same string) replCond {
	return replCond{node: node, field: field, other: other, same: same}
}

var infoLineRe = regexp.MustCompile(`(?m)^([a-z_0-9]+):(.*?)\r?$`)

func infoMap(s string) map[string]string {
	m := map[string]string{}
	for _, g := range infoLineRe.FindAllStringSubmatch(s, -1) {
		m[g[1]] = g[2]
	}
	return m
}

// replWorld is an exact world whose replicas reach their master through
// the proxy.
type replWorld struct {
	*exactWorld
	px    *proxy.Proxy
	names []string
	front map[string]string // process name -> the proxy's front
}

// replCfg is the configuration both sides share: the model's Config and
// the real server's extra lines.
func replCfg(backlog int64) (Config, []string) {
	c := DefaultConfig()
	c.ReplPingReplicaPeriod = time.Hour
	extra := []string{"repl-ping-replica-period 3600"}
	if backlog > 0 {
		c.ReplBacklogSize = backlog
		extra = append(extra, "repl-backlog-size "+strconv.FormatInt(backlog, 10))
	}
	return c, extra
}

// newReplWorld starts a master and its replicas (names[0] is the master),
// each on a loopback address of its own, the replicas replicating through
// the master's front, and waits until every replica is in sync.
func newReplWorld(t *testing.T, backlog int64, names ...string) (*replWorld, []nodeSpec) {
	w := &replWorld{exactWorld: newExactWorld(t), px: proxy.New(), names: names, front: map[string]string{}}
	t.Cleanup(func() { _ = w.px.Close() })
	cfg, extra := replCfg(backlog)
	pool := launch.NewAddrPool()
	var specs []nodeSpec
	for i, name := range names {
		ip, err := pool.Next()
		require.NoError(t, err)
		require.NoError(t, w.px.Register(ip, name))
		o := launch.RedisOptions{Name: name, IP: ip, BindSourceAddr: ip, AnnounceIP: ip, ExtraConfig: extra}
		c := cfg
		if i > 0 {
			o.ReplicaOf = w.front[names[0]]
			c.ReplicaOf = names[0]
		}
		n := w.start(o)
		front, err := w.px.Listen(name, net.JoinHostPort(ip, "0"), n.srv.Addr())
		require.NoError(t, err)
		w.front[name] = front
		specs = append(specs, nodeSpec{name: name, cfg: c})
	}
	for i := 1; i < len(names); i++ {
		w.await(infoIs(i, "master_link_status", "up"), infoSame(i, "slave_repl_offset", 0, "master_repl_offset"))
	}
	return w, specs
}

// info reads a real server's INFO.
func (w *replWorld) info(node int) map[string]string {
	v := w.nodes[node].rs.do(w.t, []string{"INFO"})
	return infoMap(v.Str)
}

// await waits until every condition holds on the real servers; the bound
// only fails a test whose servers never get there.
func (w *replWorld) await(conds ...replCond) {
	w.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var bad []string
		infos := map[int]map[string]string{}
		get := func(n int) map[string]string {
			if infos[n] == nil {
				infos[n] = w.info(n)
			}
			return infos[n]
		}
		for _, c := range conds {
			got := get(c.node)[c.field]
			want := c.want
			if c.same != "" {
				want = get(c.other)[c.same]
			}
			if got != want {
				bad = append(bad, w.names[c.node]+" "+c.field+"="+got+" (want "+want+")")
			}
		}
		if len(bad) == 0 {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("the real servers never reached the state: %s", strings.Join(bad, ", "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runRepl plays the steps on the real servers and returns what each
// command replied, with the virtual instant of every step.
func (w *replWorld) runRepl(steps []replStep) []played {
	t := w.t
	t.Helper()
	var v time.Duration
	var base int64
	set := func() { w.clock.Freeze(exactBase + int64(v)) }
	set()
	var out []played
	for _, s := range steps {
		v += time.Millisecond
		set()
		p := played{step: s.step, at: v}
		switch {
		case s.cut != nil:
			var rest []string
			for _, n := range w.names {
				if !contains(s.cut, n) {
					rest = append(rest, n)
				}
			}
			w.px.Partition([][]string{s.cut, rest})
		case s.heal:
			w.px.Heal()
		case s.kill:
			require.NoError(t, w.nodes[s.node].srv.Kill())
		case s.settle > 0 || s.until != nil:
			v += s.settle
			set()
			w.await(s.until...)
		case s.sleep > 0:
			v += s.sleep
			set()
		default:
			n := w.nodes[s.node]
			args := s.args
			if len(args) > 0 && strings.EqualFold(args[0], "REPLICAOF") && len(args) == 2 {
				// REPLICAOF <name>: the real server gets the name's front.
				host, port, err := net.SplitHostPort(w.front[args[1]])
				require.NoError(t, err)
				p.margs = []string{"REPLICAOF", args[1], strconv.Itoa(ListenPort)}
				args = []string{"REPLICAOF", host, port}
			}
			p.args = args
			p.real = n.rs.do(t, args)
			if p.margs != nil {
				p.args = p.margs
			}
			if s.offset != "" {
				off := infoInt(t, p.real, s.offset)
				if s.base {
					base = off
				}
				p.real = Int(off - base)
			}
		}
		out = append(out, p)
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// runReplModel replays the recorded steps on the model: the same commands
// at the same virtual instants, the kernel partitioning what the proxy
// cut.
func runReplModel(t *testing.T, nodes []nodeSpec, steps []replStep, plays []played) []Value {
	t.Helper()
	w := simtest.NewWorld(t, 0, simtest.Options{Seed: 7})
	k := w.K
	off := time.Duration(exactBase - sim.Epoch)
	ids := map[string]sim.ProcID{}
	var order []sim.ProcID
	for _, n := range nodes {
		cfg := n.cfg
		cfg.ReplDisklessSyncDelay = 0 // as the real servers' repl-diskless-sync-delay 0 (exactWorld.start)
		id := w.Add(n.name, func() sim.Process { return New(cfg) }, sim.ClockSpec{Offset: off})
		ids[n.name] = id
		order = append(order, id)
	}
	p := newProbe()
	simtest.AddProbe(w, "client", p)
	w.Start()
	// The real replicas were in sync before the sequence started; the
	// model's sync in the first virtual second.
	w.RunTo(0)
	out := make([]Value, len(plays))
	var base int64
	for i, pl := range plays {
		s := steps[i]
		at := sim.At(pl.at)
		if k.Now() < at {
			w.RunTo(at)
		}
		switch {
		case s.cut != nil:
			var in, rest []sim.ProcID
			for _, n := range nodes {
				if contains(s.cut, n.name) {
					in = append(in, ids[n.name])
				} else {
					rest = append(rest, ids[n.name])
				}
			}
			k.Partition([][]sim.ProcID{in, rest})
			continue
		case s.heal:
			k.Heal()
			continue
		case s.kill:
			k.Crash(order[s.node], sim.CrashProcess)
			continue
		case s.settle > 0 || s.until != nil:
			w.RunTo(at + sim.At(s.settle))
			continue
		case s.sleep > 0:
			continue
		}
		args := pl.args
		id := p.Send(order[s.node], func(id uint64) sim.Message { return Request{ID: id, Args: args} })
		a, ok := simtest.Wait(w, p, id, time.Minute)
		require.True(t, ok, "model gave no reply to %q", pl.args)
		out[i] = a.Reply.Value
		if s.offset != "" {
			off := infoInt(t, out[i], s.offset)
			if s.base {
				base = off
			}
			out[i] = Int(off - base)
		}
	}
	// LOCKSIM_REPL_TRACE=1 logs the model's trace (debugging a difference).
	if os.Getenv("LOCKSIM_REPL_TRACE") != "" {
		for _, e := range k.Trace() {
			if !strings.Contains(e.Text, "REPLCONF ACK") && !strings.Contains(e.Text, "retransmit") {
				t.Logf("%v %v %s %s", e.At, e.Kind, e.Proc, e.Text)
			}
		}
	}
	return out
}

// checkRepl runs a replication sequence on both sides and compares every
// reply exactly.
func checkRepl(t *testing.T, w *replWorld, nodes []nodeSpec, steps []replStep) {
	t.Helper()
	// The model's replicas need their first sync, which the real ones had
	// before the sequence: both clocks step by a second first.
	steps = append([]replStep{{settle: time.Second}, w.baseStep()}, steps...)
	plays := w.runRepl(steps)
	model := runReplModel(t, nodes, steps, plays)
	for _, m := range exactMismatches(plays, model) {
		t.Error(m)
	}
}

func rs(s step) replStep { return replStep{step: s} }

// baseStep takes the master's offset as the base of offset steps.
func (w *replWorld) baseStep() replStep {
	s := offsetOf(0, "master_repl_offset")
	s.base = true
	return s
}

// inSync waits until every replica's link is up at the master's offset.
func inSync(settle time.Duration, master int, replicas ...int) replStep {
	s := replStep{settle: settle}
	for _, r := range replicas {
		s.until = append(s.until, infoIs(r, "master_link_status", "up"), infoSame(r, "slave_repl_offset", master, "master_repl_offset"))
	}
	return s
}

// replState compares what a resync leaves behind: the master's counters
// and offset, the replica's link and offset.
func replState(m, r int) []replStep {
	return []replStep{
		rs(infoField(m, "stats", "sync_full")), rs(infoField(m, "stats", "sync_partial_ok")),
		rs(infoField(m, "stats", "sync_partial_err")), offsetOf(m, "master_repl_offset"),
		rs(infoField(m, "replication", "connected_slaves")),
		rs(infoField(r, "replication", "master_link_status")), offsetOf(r, "slave_repl_offset"),
	}
}

// TestConformanceReplicationCut: writes made while the replica link is cut
// reach the replica after the heal; a cut shorter than repl-timeout needs
// no resync at all (the held bytes flow, as TCP retransmits them), a longer
// one ends the link on both sides and the replica continues with PSYNC from
// the backlog when it covers the gap (sync_partial_ok), else with a full
// resync (sync_partial_err and sync_full).
func TestConformanceReplicationCut(t *testing.T) {
	const M, R = 0, 1
	big := strings.Repeat("x", 20000)
	tests := []struct {
		name    string
		backlog int64
		cut     time.Duration // how long the link stays cut
		writes  []replStep    // on M during the cut
	}{
		{name: "short cut, no resync", cut: 5 * time.Second,
			writes: []replStep{rs(on(M, "SET", "b", "2")), rs(on(M, "INCR", "n")), rs(on(M, "SET", "lock", "c1", "PX", "100000"))}},
		{name: "past repl-timeout, partial resync", cut: 61 * time.Second,
			writes: []replStep{rs(on(M, "SET", "b", "2")), rs(on(M, "INCR", "n")), rs(on(M, "SET", "lock", "c1", "PX", "100000"))}},
		{name: "past repl-timeout, backlog too small, full resync", backlog: 16 * 1024, cut: 61 * time.Second,
			writes: []replStep{rs(on(M, "SET", "b", "2")), rs(on(M, "SET", "big1", big)), rs(on(M, "SET", "big2", big)),
				rs(on(M, "SET", "big3", big)), rs(on(M, "SET", "big4", big)), rs(on(M, "INCR", "n"))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, nodes := newReplWorld(t, tt.backlog, "M", "R")
			steps := []replStep{
				rs(on(M, "DEBUG", "SET-ACTIVE-EXPIRE", "0")), rs(on(R, "DEBUG", "SET-ACTIVE-EXPIRE", "0")),
				rs(on(M, "SET", "a", "1")), inSync(time.Second, M, R), rs(on(R, "GET", "a")),
				{cut: []string{"R"}},
			}
			steps = append(steps, tt.writes...)
			steps = append(steps, rs(on(R, "GET", "b")), rs(on(R, "EXISTS", "n")), rs(on(M, "DBSIZE")))
			if tt.cut > 60*time.Second {
				// Both ends time the link out (replica: "MASTER timeout",
				// master: "Disconnecting timedout replica").
				steps = append(steps, replStep{settle: tt.cut, until: []replCond{
					infoIs(R, "master_link_status", "down"), infoIs(M, "connected_slaves", "0")}},
					rs(infoField(R, "replication", "master_link_status")), rs(infoField(M, "replication", "connected_slaves")),
					rs(on(M, "SET", "c", "3")))
			} else {
				steps = append(steps, rs(sleep(tt.cut)), rs(infoField(R, "replication", "master_link_status")),
					rs(on(R, "GET", "b")))
			}
			steps = append(steps, replStep{heal: true}, inSync(2*time.Second, M, R),
				rs(on(R, "GET", "a")), rs(on(R, "GET", "b")), rs(on(R, "GET", "c")), rs(on(R, "GET", "n")),
				rs(on(R, "GET", "lock")), rs(on(R, "PTTL", "lock")), rs(on(R, "EXISTS", "big4")), rs(on(R, "DBSIZE")))
			steps = append(steps, replState(M, R)...)
			checkRepl(t, w, nodes, steps)
		})
	}
}

// TestConformanceReplicationPromoted: a replica of a failed master
// continues from the promoted replica with a partial resync, since the
// promoted one keeps the old replication id as its second id (R 7.2.4
// src/replication.c:740-788, masterTryPartialResynchronization, and
// shiftReplicationId when it is promoted).
func TestConformanceReplicationPromoted(t *testing.T) {
	const M, R1, R2 = 0, 1, 2
	w, nodes := newReplWorld(t, 0, "M", "R1", "R2")
	steps := []replStep{
		rs(on(M, "SET", "a", "1")), rs(on(M, "SET", "lock", "c1", "PX", "100000")), rs(on(M, "INCR", "n")),
		inSync(time.Second, M, R1, R2),
		{step: step{node: M}, kill: true},
		rs(on(R1, "REPLICAOF", "NO", "ONE")), rs(on(R1, "SET", "after", "x")),
		rs(on(R2, "REPLICAOF", "R1")), inSync(2*time.Second, R1, R2),
		rs(on(R2, "GET", "a")), rs(on(R2, "GET", "lock")), rs(on(R2, "PTTL", "lock")), rs(on(R2, "GET", "n")),
		rs(on(R2, "GET", "after")), rs(on(R2, "DBSIZE")),
		rs(infoField(R1, "replication", "role")), rs(infoField(R2, "replication", "role")),
	}
	steps = append(steps, replState(R1, R2)...)
	checkRepl(t, w, nodes, steps)
}
