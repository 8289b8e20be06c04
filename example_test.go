package locksim_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/locksim/locksim"
)

// Run a built-in scenario: Kleppmann's clock jump on one of five Redlock
// nodes lets two clients hold the lock at once.
func Example() {
	s, err := locksim.Builtin("redlock-clock-jump")
	if err != nil {
		log.Fatal(err)
	}
	res, err := locksim.Run(s, locksim.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("lock safety:", res.LockSafety)
	fmt.Println("matched the expected verdicts:", res.Matched)
	// Output:
	// lock safety: violated
	// matched the expected verdicts: true
}

// Parse a scenario from YAML, as a test of your own lock settings might:
// a 30s pause of the holder outlasts its 10s lease.
func ExampleParse() {
	s, err := locksim.Parse("pause.yaml", []byte(`
name: my-pause
duration: 60s
redis:
  - name: A
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 10s}
    workload: {start: 0s, cycles: 1, hold: 1s}
  - name: c2
    lock: {algorithm: redis-single, node: A, ttl: 10s}
    workload: {start: 1s, cycles: 1, hold: 2s}
faults:
  - {on: {event: acquired, client: c1}, after: 100ms, kind: pause, node: c1, for: 30s}
`))
	if err != nil {
		log.Fatal(err)
	}
	res, err := locksim.Run(s, locksim.Options{Seed: 3})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.LockSafety, res.ResourceSafety)
	// Output: violated violated
}

// Build a scenario from Go values (here a map; structs with yaml tags work
// too), and write its report as simrun run --out would.
func ExampleFromValues() {
	client := func(name string, start string) map[string]any {
		return map[string]any{
			"name":     name,
			"lock":     map[string]any{"algorithm": "redis-single", "node": "A", "ttl": "10s"},
			"workload": map[string]any{"start": start, "cycles": 1, "hold": "1s"},
		}
	}
	s, err := locksim.FromValues("turns", map[string]any{
		"name":     "turns",
		"duration": "10s",
		"redis":    []any{map[string]any{"name": "A"}},
		"clients":  []any{client("c1", "0s"), client("c2", "0s")},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := locksim.Run(s, locksim.Options{KeepTrace: true})
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "locksim-report-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := res.WriteReport(dir); err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.LockSafety, res.ResourceSafety)
	// Output: holds holds
}

// Every property's verdict, in the order the outputs name them: the list
// grows when the checker gains a property, without a change here.
func ExampleResult_verdicts() {
	s, err := locksim.Builtin("single-gc-pause-fenced")
	if err != nil {
		log.Fatal(err)
	}
	res, err := locksim.Run(s, locksim.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, j := range res.Verdicts {
		fmt.Printf("%s: %s\n", j.Property, j.Verdict)
	}
	fmt.Println("token order alone:", res.Verdicts.Of("token_order"))
	// Output:
	// lock_safety: violated
	// resource_safety: holds
	// liveness: not-judged
	// token_order: holds
	// token order alone: holds
}

// A run's report folder is enough to replay it: result.json carries the
// scenario it ran, so neither the scenario file nor the directory it was
// run from is needed.
func ExampleReplay() {
	s, err := locksim.Builtin("single-gc-pause")
	if err != nil {
		log.Fatal(err)
	}
	res, err := locksim.Run(s, locksim.Options{KeepTrace: true})
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "locksim-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := res.WriteReport(dir); err != nil {
		log.Fatal(err)
	}

	rec, err := locksim.ReadRecord(dir + "/result.json")
	if err != nil {
		log.Fatal(err)
	}
	again, err := locksim.Replay(rec, nil, locksim.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("the same run:", again.TraceHash == rec.TraceHash)
	// Output:
	// the same run: true
}

// Read a violation as data: its property, the clients involved and when
// (true time from the run's start), beside the expectation the run was
// judged against.
func ExampleResult_violations() {
	s, err := locksim.Builtin("redlock-clock-jump")
	if err != nil {
		log.Fatal(err)
	}
	res, err := locksim.Run(s, locksim.Options{})
	if err != nil {
		log.Fatal(err)
	}
	v := res.Violations[0]
	fmt.Println(v.Property, v.Clients, v.Windows[0].Start.Round(time.Millisecond), "to", v.Windows[0].End.Round(time.Millisecond))
	fmt.Println("expected lock_safety:", res.Expected["lock_safety"])
	// Output:
	// lock_safety [c1 c2] 1.109s to 5.121s
	// expected lock_safety: violated
}

// Give a long run a deadline: RunContext stops it cleanly once the
// context is done, with an error that wraps the context's.
func ExampleRunContext() {
	s, err := locksim.Builtin("fenced-baseline")
	if err != nil {
		log.Fatal(err)
	}
	s, err = s.With("duration=24h")
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = locksim.RunContext(ctx, s, locksim.Options{})
	fmt.Println(errors.Is(err, context.DeadlineExceeded))
	// Output: true
}
