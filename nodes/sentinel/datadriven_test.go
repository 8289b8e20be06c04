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
//	    describe the deployment (once, first; it is built at the first
//	    other step, with the defaults when no deploy step came): master A
//	    and N replicas (2) named B, C, ...; N sentinels (3); the sentinel
//	    defaults of DefaultConfig except where given. Messages take 1 to 3 ms, drawn
//	    from the kernel's seeded randomness (seed 1).
//	ask SENTINEL...      SENTINEL get-master-addr-by-name of each sentinel.
//	role NODE...         the role line of each node's INFO (and its master).
//	sentinel-state S     the master S believes in, its epoch and TILT.
//	subscribe S CHANNEL...
//	    the probe SUBSCRIBEs to S's channels and prints the reply (the
//	    first channel's confirmation; the others come as pushes).
//	pushes               the pushes the probe got since the last pushes
//	    step: arrival time, sender, subscription id and value.
//
// and the shared steps of simtest.SharedSteps (advance, pause, crash,
// restart, partition, heal, events ...). events prints by default the
// sentinels' published events (+sdown, +odown, +vote-for-leader, +elected-
// leader, +switch-master, +convert-to-slave ...), the nodes' promotions and
// the faults.
func TestInteractions(t *testing.T) {
	simtest.RunInteractions(t, "testdata/interactions", func(*testing.T) simtest.Model {
		return &sentinelDD{replicas: 2, sentinels: 3, seed: 1, cfg: DefaultConfig()}
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
	deployed                  bool
	replicas, sentinels, seed int
	w                         *world
	cfg                       Config
	p                         *simtest.Probe[redis.Reply]
	pushes                    []string
	steps                     simtest.Steps
}

func (h *sentinelDD) SetupSteps() []string { return []string{"deploy"} }
func (h *sentinelDD) Steps() []string {
	return []string{"ask", "role", "sentinel-state", "subscribe", "pushes"}
}

func (h *sentinelDD) Step(a *simtest.Args, td *datadriven.TestData) string {
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
	case "subscribe":
		name := a.Pos("sentinel")
		chans := a.Rest()
		a.Done()
		fmt.Fprintf(&b, "%s: %s\n", name, h.query(a, name, append([]string{"SUBSCRIBE"}, chans...)...))
	case "pushes":
		a.Done()
		for _, p := range h.pushes {
			b.WriteString(p + "\n")
		}
		h.pushes = nil
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
	}
	return b.String()
}

// Setup reads the deploy step.
func (h *sentinelDD) Setup(a *simtest.Args, td *datadriven.TestData) {
	if h.deployed {
		a.Fatalf("the deployment is already described")
	}
	h.deployed = true
	h.replicas = a.Int("replicas", h.replicas)
	h.sentinels = a.Int("sentinels", h.sentinels)
	h.cfg.Quorum = a.Int("quorum", h.cfg.Quorum)
	h.cfg.DownAfter = a.Duration("down-after", h.cfg.DownAfter)
	h.cfg.FailoverTimeout = a.Duration("failover-timeout", h.cfg.FailoverTimeout)
	h.seed = a.Int("seed", h.seed)
	a.Done()
	if h.replicas < 0 || h.replicas > 20 || h.sentinels < 1 || h.sentinels > 9 {
		a.Fatalf("replicas must be 0..20 and sentinels 1..9")
	}
}

// Start builds the deployment.
func (h *sentinelDD) Start(t testing.TB) (*simtest.Steps, *simtest.Conversation) {
	nodes := []redisNode{{name: "A"}}
	for i := 0; i < h.replicas; i++ {
		nodes = append(nodes, redisNode{name: string(rune('B' + i))})
	}
	h.w = newRedisWorld(t, uint64(h.seed), h.cfg, nodes, h.sentinels)
	h.cfg.Master = "A"
	h.p = simtest.NewProbe(func(r redis.Reply) uint64 { return r.ID })
	h.p.Other = func(env *sim.Env, from sim.ProcID, msg sim.Message) {
		if m, ok := msg.(redis.Push); ok {
			h.pushes = append(h.pushes, fmt.Sprintf("%v %s: %s", h.w.K.Now(), env.NameOf(from), m.AppendTrace(nil)))
		}
	}
	simtest.AddProbe(h.w.World, "c", h.p)
	h.w.Start()
	h.steps = simtest.Steps{W: h.w.World, Kinds: sentinelDDKinds}
	return &h.steps, nil
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
