package fuzz

import (
	"context"
	"testing"

	"github.com/locksim/locksim/scenarios"
)

func benchCampaign(b *testing.B, name string, kinds []string, workers int) {
	base, err := scenarios.Builtin(name)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	res, err := Run(context.Background(), Config{Base: base, Seed: 1, Runs: b.N, Workers: workers, Kinds: kinds})
	if err != nil {
		b.Fatal(err)
	}
	if len(res.Errors) > 0 {
		b.Fatalf("run %d: %s", res.Errors[0].Run, res.Errors[0].Err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/float64(workers), "runs/s/worker")
}

// BenchmarkFuzzRedlockClockJump measures a campaign on redlock-clock-jump
// with every applicable fault kind (issue 7's target: 200 runs/s per core).
func BenchmarkFuzzRedlockClockJump(b *testing.B) {
	for _, w := range []int{1, 2} {
		b.Run(map[int]string{1: "W1", 2: "W2"}[w], func(b *testing.B) { benchCampaign(b, "redlock-clock-jump", nil, w) })
	}
}

// BenchmarkFuzzRedlockClockJumpOnly is the same campaign with clock jumps
// only (issue 7's "simrun fuzz redlock-clock-jump --faults clock-jump").
func BenchmarkFuzzRedlockClockJumpOnly(b *testing.B) {
	for _, w := range []int{1, 2} {
		b.Run(map[int]string{1: "W1", 2: "W2"}[w], func(b *testing.B) {
			benchCampaign(b, "redlock-clock-jump", []string{"clock-jump"}, w)
		})
	}
}

// BenchmarkFuzzFencedBaseline measures a campaign on fenced-baseline
// (three clients, 60 s, cycles until the end).
func BenchmarkFuzzFencedBaseline(b *testing.B) {
	benchCampaign(b, "fenced-baseline", []string{"partition", "drop", "delay", "pause"}, 1)
}

// BenchmarkFuzzCluster measures a campaign on a 3-master, 3-replica Redis
// Cluster scenario (issue 26's target: 300 runs/s per worker), and the
// same scenario's runs without faults, to show what the bus costs: every
// node pings the others at least every node_timeout/2 and one of them every
// second, and answers each ping.
func BenchmarkFuzzCluster(b *testing.B) {
	b.Run("failover-unreplicated", func(b *testing.B) { benchCampaign(b, "cluster-failover-unreplicated", nil, 1) })
	b.Run("minority-master", func(b *testing.B) { benchCampaign(b, "cluster-minority-master", nil, 1) })
}
