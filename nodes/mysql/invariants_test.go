package mysql

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// checkInvariants verifies the lock manager's invariants between events:
// granted locks of different transactions never conflict, a changed row is
// locked exclusively by the transaction that changed it, every waiter waits
// for someone, a waiting transaction is its connection's running statement,
// and (with deadlock detection) no cycle survives.
func checkInvariants(n *Node) error {
	for _, tc := range n.cfg.Tables {
		tab := n.tables[tc.Name]
		keys := make([]string, 0, len(tab.rows))
		for k := range tab.rows {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			e := tab.rows[k]
			for i, a := range e.locks {
				if a.trx.conn.closed {
					return fmt.Errorf("%s: lock of trx %d of a closed connection", k, a.trx.id)
				}
				for _, b := range e.locks[i+1:] {
					if a.granted && b.granted && a.trx != b.trx && (conflicts(a.mode, b.mode) || conflicts(b.mode, a.mode)) {
						return fmt.Errorf("%s: trx %d %v and trx %d %v both granted", k, a.trx.id, a.mode, b.trx.id, b.mode)
					}
				}
				if !a.granted {
					if a.trx.waiting != a {
						return fmt.Errorf("%s: waiting request of trx %d is not its wait", k, a.trx.id)
					}
					if e.grantable(a) {
						return fmt.Errorf("%s: trx %d waits for nobody", k, a.trx.id)
					}
				}
			}
			if e.dirty != nil {
				held := false
				for _, r := range e.locks {
					held = held || r.trx == e.dirty && r.granted && r.mode == modeX
				}
				if !held {
					return fmt.Errorf("%s: changed by trx %d without its X lock", k, e.dirty.id)
				}
			}
		}
	}
	for _, id := range n.Conns() {
		c := n.conns[id]
		if c.trx != nil && c.trx.conn != c {
			return fmt.Errorf("conn %d: trx of another connection", id)
		}
		waiting := c.trx != nil && c.trx.waiting != nil
		if waiting != (c.busy != nil) {
			return fmt.Errorf("conn %d: waiting %v but busy %v", id, waiting, c.busy != nil)
		}
		if waiting && n.cfg.DeadlockDetect && findCycle(c.trx) != nil {
			return fmt.Errorf("conn %d: trx %d is in a deadlock nobody broke", id, c.trx.id)
		}
	}
	return nil
}

// TestRandomWorkloadInvariants runs random statements from four clients
// (one connection each, reopened when lost; one statement outstanding at a
// time, as real clients) and checks the invariants after every event.
func TestRandomWorkloadInvariants(t *testing.T) {
	for seed := uint64(1); seed <= 16; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.LockWaitTimeout = 2 * time.Second
			cfg.WaitTimeout = 20 * time.Second
			cfg.DeadlockDetect = seed%4 != 0
			names := []string{"c1", "c2", "c3", "c4"}
			rc := cfg
			rc.ReplicaOf, rc.ReadOnly = "db", true
			var rep sim.ProcID
			w := newWorldWith(t, cfg, func(k *sim.Kernel) {
				rep = k.Add("r", func() sim.Process { return New(rc) }, sim.ClockSpec{})
			}, names...)
			rnd := sim.NewRand(seed, "mysql-invariants")
			conns := map[string]*tconn{}
			outstanding := map[string]uint64{}
			keys := []string{"a", "b", "c"}
			w.K.Observe(func(ev sim.ObservedEvent) {
				// Deliveries and timers are traced before the handler runs,
				// so the node is between two handlers there.
				if ev.Kind != sim.KindDeliver && ev.Kind != sim.KindTimer {
					return
				}
				if n := w.node(); n != nil {
					if err := checkInvariants(n); err != nil {
						tr := w.K.Trace()
						from := len(tr) - 40
						if from < 0 {
							from = 0
						}
						for _, e := range tr[from:] {
							t.Logf("%v %s %s %s %s", e.At, e.Kind, e.Proc, e.Peer, e.Text)
						}
						t.Log(dumpLocks(n))
						t.Fatalf("seed %d at %v: %v", seed, w.K.Now(), err)
					}
				}
			})
			for i := 0; i < 2000; i++ {
				name := names[rnd.Intn(len(names))]
				c := conns[name]
				if _, closed := w.clients[name].closed[connID(c)]; c == nil || closed {
					conns[name] = w.connect(name)
					delete(outstanding, name)
					continue
				}
				if id, busy := outstanding[name]; busy {
					if r, got := c.reply(id); got {
						delete(outstanding, name)
						if r.Code == ErrServerGone {
							conns[name] = nil
						}
					} else if rnd.Chance(0.05) {
						w.clients[name].Env().Send(w.db, Hangup{Conn: c.id})
						conns[name] = nil
						delete(outstanding, name)
					}
					w.Advance(rnd.Between(time.Millisecond, 300*time.Millisecond))
					continue
				}
				k := keys[rnd.Intn(len(keys))]
				var s Stmt
				switch rnd.Intn(12) {
				case 0:
					s = Begin{}
				case 1:
					s = Commit{}
				case 2:
					s = Rollback{}
				case 3, 4:
					s = Insert{Table: "locks", Key: k, Value: name}
				case 5:
					s = Delete{Table: "locks", Key: k}
				case 6:
					s = Update{Table: "locks", Key: k, Value: name}
				case 7, 8:
					s = SelectForUpdate{Table: "locks", Key: k}
				case 9:
					s = Select{Table: "locks", Key: k}
				case 10:
					s = SetSession{Var: VarAutocommit, Value: int64(rnd.Intn(2))}
				case 11:
					other := conns[names[rnd.Intn(len(names))]]
					s = Kill{Target: connID(other), Query: rnd.Chance(0.5)}
				}
				outstanding[name] = c.send(s)
				w.Advance(rnd.Between(time.Millisecond, 300*time.Millisecond))
			}
			// The replica converges on the primary once the stream is quiet.
			w.Advance(time.Minute)
			require.Equal(t, w.node().Rows("locks"), w.K.Process(rep).(*Node).Rows("locks"))
			if seed == 3 {
				w.K.Crash(w.db, sim.CrashPower)
				w.Advance(time.Second)
				w.K.Restart(w.db)
				w.Advance(time.Second)
				require.NoError(t, checkInvariants(w.node()))
			}
		})
	}
}

func connID(c *tconn) ConnID {
	if c == nil {
		return 0
	}
	return c.id
}

func dumpLocks(n *Node) string {
	out := ""
	for _, tc := range n.cfg.Tables {
		tab := n.tables[tc.Name]
		keys := make([]string, 0, len(tab.rows))
		for k := range tab.rows {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			e := tab.rows[k]
			out += fmt.Sprintf("\n%s.%s exist=%v dirty=%v:", tc.Name, k, e.exist, e.dirty != nil)
			for _, r := range e.locks {
				out += fmt.Sprintf(" trx%d/%v/%v", r.trx.id, r.mode, r.granted)
			}
		}
	}
	return out
}
