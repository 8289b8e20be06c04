package redis

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/sim"
)

// TestInteractions runs the step files in testdata/interactions: each step
// drives a small world of Redis nodes and a probe client "c" and prints what
// happened, and the file holds the expected output under "----". After a
// model change, rewrite the files and review the diff:
//
//	go test ./nodes/redis -run TestInteractions -rewrite
//
// The grammar (one step a command; arguments are words, key=value or bare;
// an unknown command or a leftover argument fails at its file:line):
//
//	node NAME [replicaof=M] [aof=always|everysec|no] [wall=DUR]
//	    add a node (before the first other step); wall offsets its wall
//	    clock from true time. The first other step starts the world, whose
//	    network delivers every message after latency (world latency=DUR, a
//	    step before any node; 1ms by default).
//	info NODE FIELD...   print the fields of NODE's INFO reply.
//
// the steps of simtest.ConversationSteps (do, send, wait) with a node as
// the target and a Redis command as the request: a word @NAME stands for
// the source of the built-in script NAME (@compare-and-delete), and
// @sha:NAME for its SHA1, and is printed as written; and the shared steps
// of simtest.SharedSteps (advance, jump, pause, crash, restart, partition,
// cut, heal, events); events prints by default the node's key, persistence
// and replication events, the faults and the connection ends.
func TestInteractions(t *testing.T) {
	datadriven.Walk(t, "testdata/interactions", func(t *testing.T, path string) {
		h := &redisDD{t: t, latency: time.Millisecond}
		datadriven.RunTest(t, path, h.step)
	})
}

// defaultDDKinds are the events "events" prints unless told otherwise.
var defaultDDKinds = []sim.Kind{
	EventKeySet, EventKeyDel, EventKeyExpired, EventKeyEvicted, EventLoaded,
	EventPromoted, EventReplicaSync, EventReplicaLink, EventAOFFsync, EventRDBSave,
	sim.KindCrash, sim.KindRestart, sim.KindClockJump, sim.KindPartition, sim.KindHeal,
	sim.KindLinkFault, sim.KindConnEnd,
}

type redisDD struct {
	t       *testing.T
	latency time.Duration
	nodes   []nodeSpec
	w       *world
	steps   simtest.Steps
}

// world starts the world on the first step that needs it.
func (h *redisDD) world() *world {
	if h.w == nil {
		h.w = newWorld(h.t, h.latency, h.nodes...)
		h.steps = simtest.Steps{W: h.w.World, Kinds: defaultDDKinds}
	}
	return h.w
}

func (h *redisDD) step(t *testing.T, td *datadriven.TestData) string {
	a := simtest.NewArgs(t, td)
	switch td.Cmd {
	case "world":
		if h.w != nil || len(h.nodes) > 0 {
			a.Fatalf("must come before every node")
		}
		h.latency = a.Duration("latency", time.Millisecond)
		a.Done()
		return ""
	case "node":
		if h.w != nil {
			a.Fatalf("nodes must be added before the world starts")
		}
		n := nodeSpec{name: a.Pos("node name"), cfg: DefaultConfig()}
		n.cfg.ReplicaOf = a.String("replicaof", "")
		if p := a.OneOf("aof", "off", "off", "always", "everysec", "no"); p != "off" {
			n.cfg.AppendOnly, n.cfg.AppendFsync = true, FsyncPolicy(p)
		}
		n.clock.Offset = a.Duration("wall", 0)
		a.Done()
		h.nodes = append(h.nodes, n)
		return ""
	}
	w := h.world()
	conv := simtest.Conversation{W: w.World,
		Send: func(a *simtest.Args, node string, args []string) uint64 {
			h.steps.Known(a, node)
			return w.send(node, h.scripts(a, args)...)
		},
		Reply: simtest.ProbeReply(w.p, func(r Reply) string { return r.Value.String() }),
	}
	if out, ok := conv.Run(t, td, a); ok {
		return out
	}
	switch td.Cmd {
	case "info":
		node := a.Pos("node")
		fields := a.Rest()
		a.Done()
		h.steps.Known(a, node)
		if len(fields) == 0 {
			a.Fatalf("name the fields to print")
		}
		v := w.do(node, "INFO")
		lines := map[string]string{}
		for _, l := range strings.Split(v.Str, "\r\n") {
			if k, val, ok := strings.Cut(l, ":"); ok {
				lines[k] = val
			}
		}
		var b strings.Builder
		for _, f := range fields {
			val, ok := lines[f]
			if !ok {
				val = "(absent)"
			}
			fmt.Fprintf(&b, "%s:%s\n", f, val)
		}
		return b.String()
	}
	if out, ok := h.steps.Run(t, td, a); ok {
		return out
	}
	simtest.Unknown(t, td, append(append([]string{"world", "node", "info"}, simtest.ConversationSteps...), simtest.SharedSteps...)...)
	return ""
}

// scripts replaces @NAME by the built-in script's source and @sha:NAME by
// its SHA1.
func (h *redisDD) scripts(a *simtest.Args, args []string) []string {
	out := make([]string, len(args))
	for i, w := range args {
		out[i] = w
		name, ok := strings.CutPrefix(w, "@")
		if !ok {
			continue
		}
		sha := false
		if n, ok := strings.CutPrefix(name, "sha:"); ok {
			name, sha = n, true
		}
		found := false
		for _, s := range Scripts {
			if s.Name == name {
				found = true
				out[i] = s.Source
				if sha {
					out[i] = s.SHA
				}
			}
		}
		if !found {
			a.Fatalf("unknown script @%s (known: %s)", name, scriptNames())
		}
	}
	return out
}
