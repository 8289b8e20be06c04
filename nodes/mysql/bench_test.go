package mysql

import (
	"testing"
	"time"

	"github.com/locksim/locksim/sim"
)

// locker is a client process that locks and unlocks one lock-table row in a
// loop (autocommit INSERT, then DELETE), one statement at a time.
type locker struct {
	db     sim.ProcID
	conn   ConnID
	next   uint64
	cycles int
}

func (l *locker) Init(env *sim.Env) { env.Send(l.db, Connect{ID: 1}) }

func (l *locker) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	r := msg.(Reply)
	if l.conn == 0 {
		l.conn = r.Conn
	}
	l.next++
	var s Stmt = Insert{Table: "locks", Key: "L", Value: "me"}
	if l.next%2 == 0 {
		s = Delete{Table: "locks", Key: "L"}
	} else if l.next > 1 {
		l.cycles++
	}
	env.Send(l.db, Request{ID: l.next, Conn: l.conn, Stmt: s})
}

func (l *locker) Fire(env *sim.Env, tag any) {}

// BenchmarkLockCycle measures INSERT/DELETE lock cycles of two competing
// clients on one row through the kernel (virtual latency 1 ms).
func BenchmarkLockCycle(b *testing.B) {
	k := sim.New(sim.Config{Seed: 1, Network: sim.NetConfig{Latency: sim.Fixed(time.Millisecond)}})
	db := k.Add("db", func() sim.Process { return New(DefaultConfig()) }, sim.ClockSpec{})
	ls := []*locker{{db: db}, {db: db}}
	for i, l := range ls {
		l := l
		k.Add([]string{"c1", "c2"}[i], func() sim.Process { return l }, sim.ClockSpec{})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for ls[0].cycles+ls[1].cycles < b.N {
		if err := k.Run(k.Now().Add(100 * time.Millisecond)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(k.Events())/float64(b.N), "events/cycle")
}
