package mysql

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// replWorld is a primary "db" with a replica "r" (read_only) and clients.
func replWorld(t *testing.T, clients ...string) (*world, sim.ProcID) {
	rc := DefaultConfig()
	rc.ReplicaOf, rc.ReadOnly = "db", true
	require.NoError(t, rc.Validate())
	var r sim.ProcID
	w := newWorldWith(t, DefaultConfig(), func(k *sim.Kernel) {
		r = k.Add("r", func() sim.Process { return New(rc) }, sim.ClockSpec{})
	}, clients...)
	w.Advance(10 * time.Millisecond)
	return w, r
}

func replica(w *world, r sim.ProcID) *Node { return w.K.Process(r).(*Node) }

// connectTo opens a connection from a client to another node.
func (w *world) connectTo(client string, node sim.ProcID) *tconn {
	w.T.Helper()
	saved := w.db
	w.db = node
	c := w.connect(client)
	w.db = saved
	c.node = node
	return c
}

func TestReplicationIsAsynchronous(t *testing.T) {
	w, r := replWorld(t, "c1", "c2")
	a := w.connect("c1")
	ok(t, a.do(Insert{Table: "locks", Key: "L", Value: "a"}))
	w.Advance(10 * time.Millisecond)
	assert.Equal(t, map[string]string{"L": "a"}, replica(w, r).Rows("locks"))

	// The replica refuses writes while read_only.
	b := w.connectTo("c2", r)
	ro := b.do(Insert{Table: "locks", Key: "M", Value: "b"})
	code(t, ErrOptionPreventsStatement, ro)
	assert.Equal(t, "The MariaDB server is running with the --read-only option so it cannot execute this statement", ro.Msg)

	// A commit acknowledged by the primary whose event never reaches the
	// replica is lost when the replica is promoted.
	p := w.K.Partition([][]sim.ProcID{{w.db}, {r}})
	ok(t, a.do(Delete{Table: "locks", Key: "L"}))
	ok(t, a.do(Insert{Table: "locks", Key: "L", Value: "a2"}))
	w.K.Crash(w.db, sim.CrashPower)
	w.K.Unpartition(p)
	w.clients["c2"].Env().Send(r, Promote{})
	w.Advance(10 * time.Millisecond)
	assert.Equal(t, map[string]string{"L": "a"}, replica(w, r).Rows("locks"), "the acknowledged re-lock was lost")
	ok(t, b.do(Insert{Table: "locks", Key: "M", Value: "b"}))
	code(t, ErrDupEntry, b.do(Insert{Table: "locks", Key: "L", Value: "b"}))

	// The promotion survives a restart: it does not replicate again.
	w.K.Crash(r, sim.CrashProcess)
	w.K.Restart(r)
	w.K.Restart(w.db)
	w.Advance(2 * time.Minute)
	assert.Equal(t, map[string]string{"L": "a", "M": "b"}, replica(w, r).Rows("locks"))
	assert.Equal(t, map[string]string{"L": "a2"}, w.node().Rows("locks"))
}

func TestReplicaCatchesUp(t *testing.T) {
	for _, tt := range []struct {
		name   string
		within time.Duration
		more   bool // another commit follows the lost one (the gap shows at once)
	}{
		{"a later event reveals the gap", time.Second, true},
		{"a heartbeat reveals the gap", 31 * time.Second, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, r := replWorld(t, "c1")
			a := w.connect("c1")
			ok(t, a.do(Insert{Table: "locks", Key: "A", Value: "1"}))
			p := w.K.Partition([][]sim.ProcID{{w.db}, {r}})
			ok(t, a.do(Insert{Table: "locks", Key: "B", Value: "2"}))
			w.K.Unpartition(p)
			if tt.more {
				ok(t, a.do(Insert{Table: "locks", Key: "C", Value: "3"}))
			}
			w.Advance(tt.within)
			assert.Equal(t, w.node().Rows("locks"), replica(w, r).Rows("locks"))
		})
	}
}

func TestReplicaReconnectsAfterSourceRestart(t *testing.T) {
	w, r := replWorld(t, "c1")
	a := w.connect("c1")
	ok(t, a.do(Insert{Table: "locks", Key: "A", Value: "1"}))
	w.K.Crash(w.db, sim.CrashProcess)
	w.Advance(time.Second)
	w.K.Restart(w.db)
	a = w.connect("c1")
	ok(t, a.do(Insert{Table: "locks", Key: "B", Value: "2"}))
	w.Advance(time.Second)
	assert.Equal(t, map[string]string{"A": "1"}, replica(w, r).Rows("locks"), "not reconnected yet")
	// slave_net_timeout (60 s) after the last message from the old source.
	w.Advance(61 * time.Second)
	assert.Equal(t, map[string]string{"A": "1", "B": "2"}, replica(w, r).Rows("locks"))
	// The replica's own crash loses nothing it applied (flush 1).
	w.K.Crash(r, sim.CrashPower)
	w.K.Restart(r)
	ok(t, a.do(Delete{Table: "locks", Key: "A"}))
	w.Advance(time.Second)
	assert.Equal(t, map[string]string{"B": "2"}, replica(w, r).Rows("locks"))
}
