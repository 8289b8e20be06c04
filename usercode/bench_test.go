package usercode

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// The cost of a lock cycle in user code against locksim's model of the
// same lock (issue 24's target: at most 5x). One client takes a
// redis-single lock on one node and releases it, benchCycles times, with
// no resource, no hold and no think; the user code is ownLock (SET NX PX
// through go-redis, release by script).
const benchCycles = 200

const benchYAML = `
name: bench-cycle
duration: 3s
network: {latency: 1ms}
redis: [{name: A}]
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 10s}
    workload: {start: 0s, cycles: 200, hold: 1ms}
`

func benchScenario(b *testing.B) *scenarios.Scenario {
	s, err := scenarios.Parse("bench.yaml", []byte(benchYAML))
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func BenchmarkCycleModel(b *testing.B) {
	s := benchScenario(b)
	b.ReportAllocs()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := scenarios.Run(s, uint64(i+1), scenarios.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*benchCycles), "ns/cycle")
}

// BenchmarkCycleUserCode runs in a test made by testing.RunTests: Go gives
// synctest bubbles to tests only, and a benchmark is not one.
func BenchmarkCycleUserCode(b *testing.B) {
	s := benchScenario(b)
	b.ReportAllocs()
	var elapsed time.Duration
	var failure error
	ok := testing.RunTests(func(string, string) (bool, error) { return true, nil }, []testing.InternalTest{{
		Name: "BenchmarkCycleUserCode",
		F: func(t *testing.T) {
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, err := Run(t, s, Options{Seed: uint64(i + 1), Clients: map[string]func(*Proc) Lock{"c1": newOwnLock}}); err != nil {
					failure = err
					return
				}
			}
			elapsed = time.Since(start)
		},
	}})
	if !ok || failure != nil {
		b.Fatal("the user-code run failed:", failure)
	}
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*benchCycles), "ns/cycle")
}

// TestBenchScenarioCompletes: the benchmark's run is long enough for its
// cycles, in the model and in user code (else ns/cycle would lie).
func TestBenchScenarioCompletes(t *testing.T) {
	s, err := scenarios.Parse("bench.yaml", []byte(benchYAML))
	if err != nil {
		t.Fatal(err)
	}
	done := func(tr []sim.Event) bool {
		for _, e := range tr {
			if e.Proc == "c1" && strings.Contains(e.Text, "workload done after 200 cycles") {
				return true
			}
		}
		return false
	}
	m, err := scenarios.Run(s, 1, scenarios.Options{KeepTrace: true})
	if err != nil {
		t.Fatal(err)
	}
	u, err := Run(t, s, Options{KeepTrace: true, Clients: map[string]func(*Proc) Lock{"c1": newOwnLock}})
	if err != nil {
		t.Fatal(err)
	}
	if !done(m.Trace) || !done(u.Trace) {
		t.Fatalf("the benchmark's 3s run does not complete its cycles (model %v, user code %v)", done(m.Trace), done(u.Trace))
	}
}
