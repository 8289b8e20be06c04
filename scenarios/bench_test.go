package scenarios

import (
	"os"
	"runtime"
	"testing"

	"github.com/locksim/locksim/checker"
)

func BenchmarkRedlockClockJump(b *testing.B) {
	s, err := Builtin("redlock-clock-jump")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Run(s, uint64(i), Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
}

// BenchmarkRedlockCycles measures fault-free Redlock lock cycles end to
// end, checker included: the simulated side of issue 15's comparison with
// cmd/redis-baseline (the same cycle on five real redis-servers; the
// simulated cycle also reads and writes the resource). Its metrics are
// lock cycles per second of CPU and heap allocations per cycle.
//
//	go test ./scenarios -run '^$' -bench RedlockCycles -benchtime 3x
//	go run ./cmd/redis-baseline --cycles 20000
func BenchmarkRedlockCycles(b *testing.B) {
	data, err := os.ReadFile("testdata/bench/redlock-cycles.yaml")
	if err != nil {
		b.Fatal(err)
	}
	s, err := Parse("testdata/bench/redlock-cycles.yaml", data)
	if err != nil {
		b.Fatal(err)
	}
	var cycles int
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o, err := Run(s, uint64(i+1), Options{})
		if err != nil {
			b.Fatal(err)
		}
		if !o.Matched {
			b.Fatalf("seed %d: verdicts %s/%s do not match", i+1, o.Verdicts.Of(checker.LockSafety), o.Verdicts.Of(checker.ResourceSafety))
		}
		cycles += len(o.History.Beliefs)
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(cycles)/b.Elapsed().Seconds(), "cycles/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(cycles), "allocs/cycle")
	b.ReportMetric(float64(cycles)/float64(b.N), "cycles/run")
}
