package scenarios

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/sim"
)

// BenchmarkContendedPeakHeap runs the contended worlds of issue 28 as
// simrun run does (the history streamed to the checker, only the key
// kinds of the trace built) and reports the peak live heap, sampled every
// 4096 grants after a collection: two clients taking turns (hold 1s,
// think 1s: turns-day, 24 hours) and three that always contend
// (contend-forever, hold 0s, think 0s: 10 minutes). The target is that
// it does not grow with the run's length: LOCKSIM_TURNS and
// LOCKSIM_CONTEND set the virtual times (1000h and 1h take about 35 s of
// CPU each). The peak RSS of the whole process, which docs/design/performance.md quotes,
// is /usr/bin/time -v of simrun run on the same files.
//
//	go test ./scenarios -run '^$' -bench ContendedPeakHeap -benchtime 1x
//	LOCKSIM_TURNS=1000h LOCKSIM_CONTEND=1h go test ./scenarios -run '^$' -bench ContendedPeakHeap -benchtime 1x -timeout 30m
func BenchmarkContendedPeakHeap(b *testing.B) {
	for _, w := range []struct {
		name, file, env string
		dur             time.Duration
	}{
		{"turns", "testdata/bench/turns-day.yaml", "LOCKSIM_TURNS", 24 * time.Hour},
		{"three", "../cmd/simrun/testdata/contend-forever.yaml", "LOCKSIM_CONTEND", 10 * time.Minute},
	} {
		b.Run(w.name, func(b *testing.B) {
			data, err := os.ReadFile(w.file)
			if err != nil {
				b.Fatal(err)
			}
			s, err := Parse(w.file, data)
			if err != nil {
				b.Fatal(err)
			}
			s.Duration = w.dur
			if v := os.Getenv(w.env); v != "" {
				if s.Duration, err = time.ParseDuration(v); err != nil {
					b.Fatalf("%s: %v", w.env, err)
				}
			}
			var peak uint64
			var pieces, grants int
			for i := 0; i < b.N; i++ {
				n := 0
				sample := func(*sim.Event) {
					if n++; n&(1<<12-1) == 0 {
						var m runtime.MemStats
						runtime.GC()
						runtime.ReadMemStats(&m)
						peak = max(peak, m.HeapAlloc)
					}
				}
				// Only grants reach the sink (simrun's summary takes the
				// key kinds: grants, releases, faults ...).
				keep := func(k sim.Kind) bool { return k == sim.KindAcquired }
				o, err := Run(s, 1, Options{Stream: true, TraceSink: sample, TraceFilter: keep, MaxMemory: -1, MaxEvents: 1 << 40})
				if err != nil {
					b.Fatal(err)
				}
				if o.Verdicts.Of(checker.LockSafety) != checker.Holds {
					b.Fatalf("lock safety %s", o.Verdicts.Of(checker.LockSafety))
				}
				pieces = o.Pieces
				if o.Stats != nil {
					grants = o.Stats.Grants
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-live-MB")
			b.ReportMetric(float64(pieces), "pieces")
			b.ReportMetric(float64(grants), "grants")
		})
	}
}
