package scenarios

import "testing"

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
