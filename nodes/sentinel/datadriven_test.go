package sentinel

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// TestInteractions runs the step files in testdata/interactions against a
// deployment of simulated Redis nodes (package redis: master A, replicas B,
// C, ...) watched by sentinels S1..Sn, with a probe client "c" that asks
// questions. Each step prints what happened; the file holds the expected
// output under "----". After a model change, rewrite and review:
//
//	go test ./nodes/sentinel -run TestInteractions -rewrite
//
// The grammar (an unknown command or a leftover argument fails at its
// file:line):
//
//	deploy [replicas=N] [sentinels=N] [quorum=N] [down-after=DUR]
//	       [failover-timeout=DUR] [seed=N]
//	    build the deployment (once, first): master A and N replicas (2)
//	    named B, C, ...; N sentinels (3); the sentinel defaults of
//	    DefaultConfig except where given. Messages take 1 to 3 ms, drawn
//	    from the kernel's seeded randomness (seed 1).
//	ask SENTINEL...      SENTINEL get-master-addr-by-name of each sentinel.
//	role NODE...         the role line of each node's INFO (and its master).
//	sentinel-state S     the master S believes in, its epoch and TILT.
//
// and the shared steps of simtest.SharedSteps (advance, pause, crash,
// restart, partition, heal, events ...). events prints by default the
// sentinels' published events (+sdown, +odown, +vote-for-leader, +elected-
// leader, +switch-master, +convert-to-slave ...), the nodes' promotions and
// the faults.
func TestInteractions(t *testing.T) {
	datadriven.Walk(t, "testdata/interactions", func(t *testing.T, path string) {
		h := &sentinelDD{}
		datadriven.RunTest(t, path, h.step)
	})
}

var sentinelDDKinds = []sim.Kind{
	KindSDown, KindSDownEnd, KindODown, KindODownEnd, KindNewEpoch, KindVote, KindElected,
	KindFailoverStart, KindSelectedReplica, KindPromotedReplica, KindReconfReplica,
	KindReconfDone, KindFailoverEnd, KindFailoverAbort, KindSwitchMaster,
	KindConvertToReplica, KindFixReplicaConfig, KindTilt, KindTiltEnd, KindReboot,
	redis.EventPromoted, sim.KindCrash, sim.KindRestart, sim.KindPause, sim.KindResume,
	sim.KindPartition, sim.KindHeal, sim.KindClockJump,
}

type sentinelDD struct {
	w     *world
	cfg   Config
	p     *simtest.Probe[redis.Reply]
	steps simtest.Steps
}

func (h *sentinelDD) step(t *testing.T, td *datadriven.TestData) string {
	a := simtest.NewArgs(t, td)
	if td.Cmd == "deploy" {
		if h.w != nil {
			a.Fatalf("the deployment is already built")
		}
		h.deploy(t, a)
		return ""
	}
	if h.w == nil {
		a.Fatalf("deploy must come first")
	}
	if out, ok := h.steps.Run(t, td, a); ok {
		return out
	}
	var b strings.Builder
	switch td.Cmd {
	case "ask":
		names := a.Rest()
		a.Done()
		if len(names) == 0 {
			a.Fatalf("name the sentinels to ask")
		}
		for _, s := range names {
			fmt.Fprintf(&b, "%s: %s\n", s, h.query(a, s, "SENTINEL", "get-master-addr-by-name", h.cfg.MasterName))
		}
	case "role":
		names := a.Rest()
		a.Done()
		if len(names) == 0 {
			a.Fatalf("name the nodes")
		}
		for _, n := range names {
			v := h.query(a, n, "INFO", "replication")
			if v.Kind != redis.KindBulk {
				fmt.Fprintf(&b, "%s: %s\n", n, v)
				continue
			}
			fields := map[string]string{}
			for _, l := range strings.Split(v.Str, "\r\n") {
				if k, x, ok := strings.Cut(l, ":"); ok {
					fields[k] = x
				}
			}
			fmt.Fprintf(&b, "%s: %s", n, fields["role"])
			if m := fields["master_host"]; m != "" {
				fmt.Fprintf(&b, " of %s (link %s)", m, fields["master_link_status"])
			}
			b.WriteString("\n")
		}
	case "sentinel-state":
		name := a.Pos("sentinel")
		a.Done()
		id := h.steps.Known(a, name)
		if h.w.K.Crashed(id) {
			return name + ": (crashed)\n"
		}
		st, ok := h.w.K.Process(id).(*Sentinel)
		if !ok {
			a.Fatalf("%s is not a sentinel", name)
		}
		fmt.Fprintf(&b, "%s: master %s epoch %d tilt %v\n", name, st.MasterAddr(), st.Epoch(), st.Tilted())
	default:
		simtest.Unknown(t, td, append([]string{"deploy", "ask", "role", "sentinel-state"}, simtest.SharedSteps...)...)
	}
	return b.String()
}

func (h *sentinelDD) deploy(t *testing.T, a *simtest.Args) {
	replicas := a.Int("replicas", 2)
	n := a.Int("sentinels", 3)
	cfg := DefaultConfig()
	cfg.Quorum = a.Int("quorum", cfg.Quorum)
	cfg.DownAfter = a.Duration("down-after", cfg.DownAfter)
	cfg.FailoverTimeout = a.Duration("failover-timeout", cfg.FailoverTimeout)
	seed := uint64(a.Int("seed", 1))
	a.Done()
	if replicas < 0 || replicas > 20 || n < 1 || n > 9 {
		a.Fatalf("replicas must be 0..20 and sentinels 1..9")
	}
	nodes := []redisNode{{name: "A"}}
	for i := 0; i < replicas; i++ {
		nodes = append(nodes, redisNode{name: string(rune('B' + i))})
	}
	h.w = newRedisWorld(t, seed, cfg, nodes, n)
	h.cfg = cfg
	h.cfg.Master = "A"
	h.p = simtest.NewProbe(func(r redis.Reply) uint64 { return r.ID })
	simtest.AddProbe(h.w.World, "c", h.p)
	h.w.Start()
	h.steps = simtest.Steps{W: h.w.World, Kinds: sentinelDDKinds}
}

// query asks a process and waits up to 5 s for the answer; a crashed or
// unreachable process answers nothing, which prints as "(no reply)".
func (h *sentinelDD) query(a *simtest.Args, name string, args ...string) redis.Value {
	id := h.steps.Known(a, name)
	if h.w.K.Crashed(id) {
		return redis.Status("(crashed)")
	}
	req := h.p.Send(id, func(n uint64) sim.Message { return redis.Request{ID: n, Args: args} })
	arr, ok := simtest.Wait(h.w.World, h.p, req, 5*time.Second)
	if !ok {
		return redis.Status("(no reply within 5s)")
	}
	return arr.Reply.Value
}
