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
//	node NAME [replicaof=M] [aof=always|everysec|no] [wall=DUR] [diskless_delay=DUR]
//	    add a node (before the first other step); wall offsets its wall
//	    clock from true time; diskless_delay is its
//	    repl-diskless-sync-delay (default 5s). The first other step starts the world, whose
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
	simtest.RunInteractions(t, "testdata/interactions", func(*testing.T) simtest.Model {
		return &redisDD{latency: time.Millisecond}
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
	latency time.Duration
	nodes   []nodeSpec
	w       *world
	steps   simtest.Steps
}

func (h *redisDD) SetupSteps() []string { return []string{"world", "node"} }
func (h *redisDD) Steps() []string      { return []string{"info"} }

func (h *redisDD) Setup(a *simtest.Args, td *datadriven.TestData) {
	switch td.Cmd {
	case "world":
		if len(h.nodes) > 0 {
			a.Fatalf("must come before every node")
		}
		h.latency = a.Duration("latency", time.Millisecond)
		a.Done()
	case "node":
		n := nodeSpec{name: a.Pos("node name"), cfg: DefaultConfig()}
		n.cfg.ReplicaOf = a.String("replicaof", "")
		if p := a.OneOf("aof", "off", "off", "always", "everysec", "no"); p != "off" {
			n.cfg.AppendOnly, n.cfg.AppendFsync = true, FsyncPolicy(p)
		}
		n.clock.Offset = a.Duration("wall", 0)
		n.cfg.ReplDisklessSyncDelay = a.Duration("diskless_delay", n.cfg.ReplDisklessSyncDelay)
		a.Done()
		h.nodes = append(h.nodes, n)
	}
}

func (h *redisDD) Start(t testing.TB) (*simtest.Steps, *simtest.Conversation) {
	h.w = newWorld(t, h.latency, h.nodes...)
	h.steps = simtest.Steps{W: h.w.World, Kinds: defaultDDKinds}
	return &h.steps, &simtest.Conversation{W: h.w.World,
		Send: func(a *simtest.Args, node string, args []string) uint64 {
			h.steps.Known(a, node)
			return h.w.send(node, h.scripts(a, args)...)
		},
		Reply: simtest.ProbeReply(h.w.p, func(r Reply) string { return r.Value.String() }),
	}
}

func (h *redisDD) Step(a *simtest.Args, td *datadriven.TestData) string {
	w := h.w
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
