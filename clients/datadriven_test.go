package clients

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/nodes/storage"
	"github.com/locksim/locksim/nodes/zookeeper"
	"github.com/locksim/locksim/sim"
)

// TestInteractions runs the step files in testdata/interactions: lock
// clients of each algorithm against simulated servers and the resource "S",
// with faults injected between steps. Each step prints what happened (the
// lock events a verdict is made of); the file holds the expected output
// under "----". After a model change, rewrite and review:
//
//	go test ./clients -run TestInteractions -rewrite
//
// The grammar (an unknown command, parameter or leftover argument fails at
// its file:line). Setup steps, before the world starts:
//
//	redis NAME [replicaof=M]        a Redis node (defaults).
//	zookeeper NAME                  a ZooKeeper service (defaults).
//	storage [fencing=none|...]      the resource "S" (storage.Config.Fencing).
//	client NAME algorithm=ALG [start=DUR] [cycles=N] [hold=DUR] [think=DUR]
//	       [timeout=DUR] [lock.PARAM=VALUE ...]
//	    a lock client with the algorithm's defaults (DefaultLockConfig), its
//	    parameters set by name as a scenario sets them (LockConfig.Set);
//	    unless set, node is the first Redis node (or the ZooKeeper service)
//	    and nodes all Redis nodes, in the order declared. The workload runs
//	    cycles (1) of acquire, hold (100ms) with a read and a write of S,
//	    release, think (100ms), and after giving up an acquire thinks and
//	    tries again; timeout bounds each request to the resource (the
//	    default DefaultResourceTimeout).
//
// Then the shared steps of simtest.SharedSteps (advance, pause, crash,
// restart, partition, cut, heal, jump, events; events prints by default
// the lock and resource events, the servers' key, znode and session events
// and the faults), and
//
//	check
//	    end the run (no step may follow) and print each client's beliefs
//	    (from, to, why they ended), each critical section's write outcome,
//	    and the checker's lock-safety and resource-safety verdicts.
func TestInteractions(t *testing.T) {
	simtest.RunInteractions(t, "testdata/interactions", func(t *testing.T) simtest.Model {
		return &clientsDD{w: newWorld(t)}
	})
}

var clientsDDKinds = []sim.Kind{
	sim.KindAcquireStart, sim.KindAcquired, sim.KindAcquireFailed, sim.KindReleased, sim.KindLockLost,
	storage.KindApplied, storage.KindRejected,
	redis.EventKeySet, redis.EventKeyDel, redis.EventKeyExpired, redis.EventPromoted,
	zookeeper.KindSessionOpen, zookeeper.KindSessionExpired, zookeeper.KindSessionClosed,
	zookeeper.KindZnodeCreated, zookeeper.KindZnodeDeleted,
	sim.KindCrash, sim.KindRestart, sim.KindPause, sim.KindResume, sim.KindClockJump,
	sim.KindPartition, sim.KindHeal, sim.KindLinkFault,
}

type clientsDD struct {
	w        *world
	finished bool
	redis    []string
	zk       string
	storage  bool
	steps    simtest.Steps
}

func (h *clientsDD) SetupSteps() []string { return []string{"redis", "zookeeper", "storage", "client"} }
func (h *clientsDD) Steps() []string      { return []string{"check"} }

// Start adds the resource S (without fencing) unless a storage step did.
func (h *clientsDD) Start(testing.TB) (*simtest.Steps, *simtest.Conversation) {
	if !h.storage {
		h.w.storage(storage.FencingNone)
	}
	h.w.Start()
	h.steps = simtest.Steps{W: h.w.World, Kinds: clientsDDKinds}
	return &h.steps, nil
}

// Step is check: it ends the run and prints the verdicts.
func (h *clientsDD) Step(a *simtest.Args, td *datadriven.TestData) string {
	if h.finished {
		a.Fatalf("the run ended at the check step; nothing may follow it")
	}
	a.Done()
	h.finished = true
	h.steps.Ended = "the run ended at the check step; nothing may follow it"
	hist := h.w.K.Finish()
	var b strings.Builder
	for _, x := range hist.Beliefs {
		fmt.Fprintf(&b, "belief %s %q from %s to %s (%s)", x.Client, x.Lock, x.Start, x.End, x.Reason)
		if x.HasToken {
			fmt.Fprintf(&b, " token %d", x.Token)
		}
		b.WriteString("\n")
	}
	for _, s := range hist.Sections {
		fmt.Fprintf(&b, "section %s", s.Client)
		if s.Read {
			fmt.Fprintf(&b, " read %d", s.ReadValue)
		}
		switch {
		case s.Written:
			fmt.Fprintf(&b, " wrote %d: %s", s.WriteValue, s.Outcome)
		default:
			b.WriteString(" wrote nothing")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "lock-safety: %s\n", checker.CheckLock(hist, time.Minute))
	fmt.Fprintf(&b, "resource-safety: %s\n", checker.CheckResource(hist, time.Minute))
	return b.String()
}

func (h *clientsDD) Setup(a *simtest.Args, td *datadriven.TestData) {
	switch td.Cmd {
	case "redis":
		name := a.Pos("node name")
		of := a.String("replicaof", "")
		a.Done()
		if of == "" {
			h.w.redis(name)
		} else {
			h.w.replica(name, of)
		}
		h.redis = append(h.redis, name)
	case "zookeeper":
		h.zk = a.Pos("service name")
		a.Done()
		h.w.zookeeper(h.zk)
	case "storage":
		f := a.String("fencing", storage.FencingNone)
		a.Done()
		h.w.storage(f)
		h.storage = true
	case "client":
		name := a.Pos("client name")
		alg := a.Required("algorithm")
		lc, err := DefaultLockConfig(alg)
		if err != nil {
			a.Fatalf("%v", err)
		}
		switch {
		case alg == ZooKeeper:
			lc.Node = h.zk
		case lc.Accepts("nodes"):
			lc.Nodes = append([]string(nil), h.redis...)
		case len(h.redis) > 0:
			lc.Node = h.redis[0]
		}
		wl := Workload{
			Start:   a.Duration("start", 0),
			Cycles:  a.Int("cycles", 1),
			Hold:    a.Duration("hold", 100*time.Millisecond),
			Think:   a.Duration("think", 100*time.Millisecond),
			Timeout: a.Duration("timeout", 0),
		}
		for _, arg := range a.Keys() {
			param, ok := strings.CutPrefix(arg, "lock.")
			if !ok {
				continue
			}
			if err := lc.Set(param, a.String(arg, "")); err != nil {
				a.Fatalf("%v", err)
			}
		}
		a.Done()
		cfg := Config{Name: name, Lock: lc, Workload: wl, Resource: "S"}
		if err := cfg.Validate(); err != nil {
			a.Fatalf("%v", err)
		}
		h.w.client(cfg)
	}
}
