package locksim

import (
	"os"
	"runtime"
	"testing"
)

// BenchmarkRunRedlockCycles measures fault-free Redlock lock cycles through
// Run with the options simrun run gives it (no trace kept: the history
// streamed to the checker, the summary's key events only): the figure a
// user of the command line gets, where scenarios' BenchmarkRedlockCycles
// measures the simulation and the checker alone (issue 28: the command
// once spent as much again building every trace event to drop it). Its
// metrics are lock cycles per second of CPU and allocations per cycle.
//
//	go test . -run '^$' -bench RunRedlockCycles -benchtime 3x -cpu 1
func BenchmarkRunRedlockCycles(b *testing.B) {
	data, err := os.ReadFile("scenarios/testdata/bench/redlock-cycles.yaml")
	if err != nil {
		b.Fatal(err)
	}
	s, err := Parse("scenarios/testdata/bench/redlock-cycles.yaml", data)
	if err != nil {
		b.Fatal(err)
	}
	var cycles int
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := Run(s, Options{Seed: uint64(i + 1), KeyEvents: DefaultKeyEvents})
		if err != nil {
			b.Fatal(err)
		}
		if !r.Matched {
			b.Fatalf("seed %d: verdicts %v do not match", i+1, r.Verdicts)
		}
		cycles += r.Record().Stats.Grants
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(cycles)/b.Elapsed().Seconds(), "cycles/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(cycles), "allocs/cycle")
	b.ReportMetric(float64(cycles)/float64(b.N), "cycles/run")
}
