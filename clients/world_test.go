package clients

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/nodes/storage"
	"github.com/locksim/locksim/nodes/zookeeper"
	"github.com/locksim/locksim/sim"
)

// world is a small simulated world for the tests on the shared harness
// (internal/simtest): a kernel with a fixed 1 ms latency, servers, a
// storage node "S" and clients.
type world struct{ *simtest.World }

func newWorld(t *testing.T) *world { return &world{simtest.NewWorld(t, time.Millisecond)} }

func (w *world) redis(names ...string) {
	for _, n := range names {
		cfg := redis.DefaultConfig()
		w.Add(n, func() sim.Process { return redis.New(cfg) }, sim.ClockSpec{})
	}
}

func (w *world) replica(name, of string) {
	cfg := redis.DefaultConfig()
	cfg.ReplicaOf = of
	w.Add(name, func() sim.Process { return redis.New(cfg) }, sim.ClockSpec{})
}

func (w *world) zookeeper(name string) {
	cfg := zookeeper.DefaultConfig()
	w.Add(name, func() sim.Process { return zookeeper.New(cfg) }, sim.ClockSpec{})
}

func (w *world) storage(fencing string) {
	cfg := storage.Config{Fencing: fencing}
	w.Add("S", func() sim.Process { return storage.New(cfg) }, sim.ClockSpec{})
}

func (w *world) client(cfg Config) sim.ProcID {
	w.T.Helper()
	require.NoError(w.T, cfg.Validate())
	return w.Add(cfg.Name, func() sim.Process { return New(cfg) }, sim.ClockSpec{})
}

func (w *world) run(d time.Duration) *sim.History {
	w.T.Helper()
	require.NoError(w.T, w.K.Run(sim.At(d)))
	h := w.K.Finish()
	if os.Getenv("CLIENTS_TRACE") != "" {
		w.T.Log("\n" + w.dumpTrace())
	}
	return h
}

// dumpTrace renders the trace (for failure messages).
func (w *world) dumpTrace() string {
	var b strings.Builder
	for _, e := range w.K.Trace() {
		if e.Kind == sim.KindTimer && !strings.HasPrefix(e.Proc, "c") {
			continue
		}
		switch e.Kind {
		case sim.KindSend, sim.KindDeliver, sim.KindTimer, sim.KindFault, sim.KindStart, KindClient, sim.KindAcquired, sim.KindReleased, sim.KindLockLost, sim.KindAcquireFailed, sim.KindPause, sim.KindResume, sim.KindCrash, sim.KindDrop:
			fmt.Fprintf(&b, "%s %s %s>%s %s\n", e.At, e.Kind, e.Proc, e.Peer, e.Text)
		}
	}
	return b.String()
}

// lockConfig returns the defaults of algorithm with f applied.
func lockConfig(t testing.TB, algorithm string, f func(*LockConfig)) LockConfig {
	t.Helper()
	c, err := DefaultLockConfig(algorithm)
	require.NoError(t, err)
	if f != nil {
		f(&c)
	}
	return c
}

// beliefs returns client's beliefs in order.
func beliefs(h *sim.History, client string) []sim.Belief {
	var out []sim.Belief
	for _, b := range h.Beliefs {
		if b.Client == client {
			out = append(out, b)
		}
	}
	return out
}

// sections returns client's sections in order.
func sections(h *sim.History, client string) []sim.Section {
	var out []sim.Section
	for _, s := range h.Sections {
		if s.Client == client {
			out = append(out, s)
		}
	}
	return out
}

// overlap is two beliefs of different clients that overlap in true time.
type overlap struct{ a, b sim.Belief }

// overlaps lists the pairs of beliefs of different clients that overlap.
func overlaps(h *sim.History) []overlap {
	var out []overlap
	for i, a := range h.Beliefs {
		for _, b := range h.Beliefs[i+1:] {
			if a.Client != b.Client && a.Start < b.End && b.Start < a.End {
				out = append(out, overlap{a, b})
			}
		}
	}
	return out
}

// overlapsWith reports whether belief b overlaps a belief of another client.
func overlapsWith(h *sim.History, b sim.Belief) bool {
	for _, o := range overlaps(h) {
		if o.a.ID == b.ID || o.b.ID == b.ID {
			return true
		}
	}
	return false
}

// lostUpdate reports whether two accepted sections read the same value.
func lostUpdate(h *sim.History) bool {
	seen := map[int64]bool{}
	for _, s := range h.Sections {
		if s.Outcome != sim.WriteAccepted {
			continue
		}
		if seen[s.ReadValue] {
			return true
		}
		seen[s.ReadValue] = true
	}
	return false
}

// wants returns client's wants in order.
func wants(h *sim.History, client string) []sim.Want {
	var out []sim.Want
	for _, x := range h.Wants {
		if x.Client == client {
			out = append(out, x)
		}
	}
	return out
}
