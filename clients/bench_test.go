package clients

import (
	"testing"
	"time"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/nodes/storage"
	"github.com/locksim/locksim/sim"
)

// BenchmarkRedlock5Nodes3Clients runs DESIGN.md's throughput scenario: a
// five-node Redlock with three clients for 60 s of virtual time (target: at
// least 200 runs per second per core).
func BenchmarkRedlock5Nodes3Clients(b *testing.B) {
	nodes := []string{"A", "B", "C", "D", "E"}
	lc, err := DefaultLockConfig(Redlock)
	if err != nil {
		b.Fatal(err)
	}
	lc.Nodes = nodes
	rc := redis.DefaultConfig()
	sc := storage.DefaultConfig()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		k := sim.New(sim.Config{Seed: uint64(i), Network: sim.NetConfig{Latency: sim.Range{Lo: time.Millisecond, Hi: 3 * time.Millisecond}}})
		for _, n := range nodes {
			k.Add(n, func() sim.Process { return redis.New(rc) }, sim.ClockSpec{})
		}
		k.Add("S", func() sim.Process { return storage.New(sc) }, sim.ClockSpec{})
		for _, c := range []string{"c1", "c2", "c3"} {
			cfg := Config{Name: c, Lock: lc, Resource: "S", Workload: Workload{Hold: 200 * time.Millisecond, Think: 100 * time.Millisecond}}
			k.Add(c, func() sim.Process { return New(cfg) }, sim.ClockSpec{})
		}
		if err := k.Run(sim.At(60 * time.Second)); err != nil {
			b.Fatal(err)
		}
		k.Finish()
	}
}
