package fuzz

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// target is a base scenario of FuzzSchedules with the faults it is fuzzed
// with and the property that must hold under them.
type target struct {
	base   *scenarios.Scenario
	kinds  []string
	checks []string
}

// fuzzTargets are FuzzSchedules' bases, chosen by the fuzzer's first
// argument (modulo their number):
//
//  0. fenced-baseline under every fault kind: INCR tokens on a Redis that
//     fsyncs every write and a marking resource keep the resource safe
//     whatever happens to the lock.
//  1. testdata/redlock-aof-always.yaml under crashes, restarts,
//     partitions, heals, drops and delays (no clock faults, no pauses):
//     Redlock over five fsync-always masters keeps the lock safe.
func fuzzTargets(tb testing.TB) []target {
	tb.Helper()
	fenced, err := scenarios.Builtin("fenced-baseline")
	if err != nil {
		tb.Fatal(err)
	}
	redlock, err := scenarios.Load(filepath.Join("testdata", "redlock-aof-always.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	return []target{
		{base: fenced, kinds: nil, checks: []string{checker.KindResourceSafety}},
		{base: redlock, kinds: []string{"crash", "restart", "partition", "heal", "drop", "delay"}, checks: []string{checker.KindLockSafety}},
	}
}

// checkSchedule decodes data into a fault schedule for tg's base, runs it
// at seed and returns an error naming the violation, with the scenario
// file that reproduces it.
func checkSchedule(tg target, seed uint64, data []byte) error {
	w := WorldOf(tg.base)
	specs := faults.Generate(faults.NewByteSource(data), w, faults.GenOptions{Kinds: tg.kinds})
	s, err := tg.base.WithFaults(specs)
	if err != nil {
		return fmt.Errorf("generator bug: the decoded schedule does not validate: %v\nschedule: %v", err, specStrings(specs))
	}
	o, err := scenarios.Run(s, seed, scenarios.Options{})
	if err != nil {
		return fmt.Errorf("internal error: %v", err)
	}
	violated, _ := Violated(o, tg.checks)
	if len(violated) == 0 {
		return nil
	}
	v, err := Variant(tg.base, specs, violated, seed, "FuzzSchedules finding on "+tg.base.Name, "go test -fuzz FuzzSchedules ./fuzz/")
	if err != nil {
		return fmt.Errorf("%s violated, and the finding does not render: %v", violated[0], err)
	}
	file, _ := FileBytes(v, []string{explanation(o, violated[0])})
	return fmt.Errorf("%s: %s violated at seed %d under this schedule; save it as a scenario file and replay with simrun run FILE:\n%s", tg.base.Name, violated[0], seed, file)
}

// FuzzSchedules decodes the fuzzer's bytes into a fault schedule
// (faults.Generate over a faults.ByteSource) for one of fuzzTargets'
// bases and fails when the property that base must keep is violated. Its
// seed corpus (below and testdata/fuzz/FuzzSchedules) runs in plain go
// test; CI also runs it briefly:
//
//	go test -run '^$' -fuzz '^FuzzSchedules$' -fuzztime 5s ./fuzz/
func FuzzSchedules(f *testing.F) {
	ts := fuzzTargets(f)
	f.Add(uint8(0), uint64(1), []byte{})
	f.Add(uint8(1), uint64(1), []byte{})
	// Hand-picked draws: all kinds on, weight 4 each, 8 faults, half
	// triggered.
	f.Add(uint8(0), uint64(7), []byte{0, 3, 0, 3, 0, 3, 0, 3, 0, 3, 0, 3, 0, 3, 0, 3, 0, 3, 7, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add(uint8(1), uint64(7), []byte{0, 3, 0, 3, 0, 3, 0, 3, 0, 3, 0, 3, 7, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Fuzz(func(t *testing.T, which uint8, seed uint64, data []byte) {
		if err := checkSchedule(ts[int(which)%len(ts)], seed, data); err != nil {
			t.Fatal(err)
		}
	})
}

// TestFuzzCorpusPresent keeps the committed corpus from disappearing.
func TestFuzzCorpusPresent(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "fuzz", "FuzzSchedules"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 3 {
		t.Fatalf("testdata/fuzz/FuzzSchedules holds %d seeds, want at least 3", len(entries))
	}
}

// TestCheckScheduleCatchesViolation shows that the fuzz target can fail:
// fencing-mark's INCR counter lives on a Redis without persistence, so a
// crash hands out the same token twice and the marking resource accepts a
// lost update.
func TestCheckScheduleCatchesViolation(t *testing.T) {
	base, err := scenarios.Builtin("fencing-mark")
	if err != nil {
		t.Fatal(err)
	}
	tg := target{base: base, kinds: []string{"crash", "pause"}, checks: []string{checker.KindResourceSafety}}
	r := sim.NewRand(1, "catch")
	for i := 0; i < 500; i++ {
		data := make([]byte, 64)
		for j := range data {
			data[j] = byte(r.Uint64())
		}
		err := checkSchedule(tg, uint64(i), data)
		if err == nil {
			continue
		}
		msg := err.Error()
		for _, want := range []string{"fencing-mark: resource-safety violated at seed", "simrun run FILE", "kind: crash", "resource_safety: violated"} {
			if !strings.Contains(msg, want) {
				t.Errorf("the failure message lacks %q:\n%s", want, msg)
			}
		}
		return
	}
	t.Fatal("no violation in 500 schedules: the target cannot fail")
}
