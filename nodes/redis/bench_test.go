package redis

import (
	"testing"
	"time"

	"github.com/locksim/locksim/sim"
)

// BenchmarkIdleMinute measures five idle nodes for 60 s of virtual time
// (serverCron at hz 10 and replicationCron): the fixed cost a Redlock
// scenario pays for its servers.
func BenchmarkIdleMinute(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		k := sim.New(sim.Config{Seed: uint64(i), Network: sim.NetConfig{Latency: sim.Fixed(time.Millisecond)}})
		for _, name := range []string{"A", "B", "C", "D", "E"} {
			k.Add(name, func() sim.Process { return New(DefaultConfig()) }, sim.ClockSpec{})
		}
		if err := k.Run(sim.At(60 * time.Second)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLockCycle measures SET NX PX plus the compare-and-delete script
// on one node, the hot path of a lock client.
func BenchmarkLockCycle(b *testing.B) {
	w := newWorld(b, 0, nodeSpec{name: "A", cfg: DefaultConfig()})
	w.do("A", ScriptCompareAndDelete.Eval([]string{"lock"}, "v")...)
	set := []string{"SET", "lock", "v", "NX", "PX", "10000"}
	del := ScriptCompareAndDelete.EvalSHA([]string{"lock"}, "v")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.do("A", set...)
		w.do("A", del...)
	}
}

// BenchmarkClusterIdleMinute measures what cluster mode costs: six nodes
// idle for 60 s of virtual time, as 3 masters with a replica each in a
// Redis Cluster (the bus: pings, pongs and clusterCron) and as the same
// six standalone nodes replicating (serverCron and replication only).
func BenchmarkClusterIdleMinute(b *testing.B) {
	names := []string{"n1", "n2", "n3", "n4", "n5", "n6"}
	members, err := CreateCluster(names, 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, cluster := range []bool{true, false} {
		name := "standalone"
		if cluster {
			name = "cluster"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var events int64
			for i := 0; i < b.N; i++ {
				k := sim.New(sim.Config{Seed: uint64(i), Network: sim.NetConfig{Latency: sim.Fixed(time.Millisecond)}})
				cc := DefaultClusterConfig()
				cc.Members = members
				cc.Prepare()
				for _, m := range members {
					cfg := DefaultConfig()
					if cluster {
						c := cc
						cfg.Cluster = &c
					} else {
						cfg.ReplicaOf = m.ReplicaOf
					}
					k.Add(m.Name, func() sim.Process { return New(cfg) }, sim.ClockSpec{})
				}
				if err := k.Run(sim.At(60 * time.Second)); err != nil {
					b.Fatal(err)
				}
				events += k.Events()
			}
			b.ReportMetric(float64(events)/float64(b.N), "events/op")
		})
	}
}
