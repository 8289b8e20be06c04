package usercode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/scenarios"
)

// Fuzzing fault schedules against user code: the generator, seeds,
// properties, shrinking and scenario files of simrun fuzz (package fuzz),
// with every run going through Run, so that a team's CI fuzzes its own
// lock on every change.

// FuzzOptions tune Fuzz and CheckSchedule.
type FuzzOptions struct {
	_ struct{}

	// Options bind the user code (Clients, HangAfter, CheckTimeout); their
	// Seed and KeepTrace are ignored (each run has its own seed).
	Options Options
	// Kinds are the fault kinds drawn (nil: every kind that applies to the
	// base, as simrun fuzz --faults).
	Kinds []string
	// Checks are the properties a run must not violate (checker kinds; nil:
	// fuzz.DefaultChecks of the base's expect block, as simrun fuzz).
	Checks []string
	// Runs is the number of schedules Fuzz tries (0: 100).
	Runs int
	// Seed is the campaign seed (0: 1): run n has seed fuzz.RunSeed(Seed,
	// n), as in simrun fuzz --seed.
	Seed uint64
	// MaxFaults bounds a schedule's faults (0: the generator's default).
	MaxFaults int
	// ShrinkRuns bounds the runs of the shrink (0: 300).
	ShrinkRuns int
	// SkipInherent skips a schedule whose violations are all inherent
	// (locksim's model of the algorithm the code implements violates the
	// same property on it too: Whose) and keeps searching for one that is
	// the code's own.
	SkipInherent bool
	// OutDir receives the finding's scenario file and its shrunk form
	// ("" : locksim-findings in the working directory, which is the test's
	// package directory under go test: keep it as a CI artifact).
	OutDir string
}

// Finding is a schedule under which user code violated a property.
type Finding struct {
	Kind string // the property violated (a checker kind)
	Run  int    // the campaign's run number (-1 from CheckSchedule)
	Seed uint64
	// File and ShrunkFile are the scenario files written: the schedule as
	// found, and shrunk (replay them with Run, or with simrun run FILE
	// --seed SEED for locksim's model of the clients).
	File, ShrunkFile string
	// Summary says what shrinking did; Explanation why the shrunk run
	// violates the property.
	Summary, Explanation string
	// Faults are the shrunk schedule's faults, as text.
	Faults []string
	// Whose says whether locksim's model of the algorithm the code
	// implements violates the property on the schedule as found too
	// (inherent) or not (the code's own bug).
	Whose *Whose
}

func (f *Finding) String() string {
	whose := ""
	if f.Whose != nil {
		whose = f.Whose.Text + "\n"
	}
	return fmt.Sprintf("%s violated at seed %d (run %d); %s: %s\n%sfaults: %s\nshrunk scenario: %s\n%s", f.Kind, f.Seed, f.Run, f.Summary, f.ShrunkFile, whose, strings.Join(f.Faults, "; "), f.ShrunkFile, f.Explanation)
}

func (o *FuzzOptions) prepare(base *scenarios.Scenario) error {
	cfg := fuzz.Config{Base: base, Kinds: o.Kinds, Checks: o.Checks, MaxFaults: o.MaxFaults, Runs: o.Runs}
	if err := fuzz.Prepare(&cfg); err != nil {
		return err
	}
	o.Kinds, o.Checks, o.MaxFaults = cfg.Kinds, cfg.Checks, cfg.MaxFaults
	if o.Runs <= 0 {
		o.Runs = 100
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.ShrinkRuns <= 0 {
		o.ShrinkRuns = 300
	}
	if o.OutDir == "" {
		o.OutDir = "locksim-findings"
	}
	return checkClients(base, o.Options.Clients)
}

// Fuzz runs opt.Runs random fault schedules against the user code on the
// base scenario's world (its faults replaced) and stops at the first run
// that violates a checked property: it shrinks that schedule and writes
// both scenario files. It returns nil when no run violated anything.
func Fuzz(t *testing.T, base *scenarios.Scenario, opt FuzzOptions) (*Finding, error) {
	if err := opt.prepare(base); err != nil {
		return nil, err
	}
	w := fuzz.WorldOf(base)
	for run := 0; run < opt.Runs; run++ {
		seed := fuzz.RunSeed(opt.Seed, run)
		_, specs := fuzz.ScheduleWith(w, seed, faults.GenOptions{Kinds: opt.Kinds, MaxFaults: opt.MaxFaults})
		specs = actingFaults(specs, opt.Options)
		f, err := check(t, base, specs, seed, opt)
		if err != nil || f != nil {
			if f != nil {
				f.Run = run
			}
			return f, err
		}
	}
	return nil, nil
}

// CheckSchedule decodes data into a fault schedule (faults.Generate over a
// faults.ByteSource, as the FuzzSchedules target of package fuzz), runs it
// against the user code at seed and, when it violates a checked property,
// shrinks it and writes the scenario files. Call it from the function of a
// native fuzz target (go test -fuzz):
//
//	f.Fuzz(func(t *testing.T, seed uint64, data []byte) {
//		if fd, err := usercode.CheckSchedule(t, base, seed, data, opt); err != nil || fd != nil {
//			t.Fatal(fd, err)
//		}
//	})
func CheckSchedule(t *testing.T, base *scenarios.Scenario, seed uint64, data []byte, opt FuzzOptions) (*Finding, error) {
	if err := opt.prepare(base); err != nil {
		return nil, err
	}
	specs := faults.Generate(faults.NewByteSource(data), fuzz.WorldOf(base), faults.GenOptions{Kinds: opt.Kinds, MaxFaults: opt.MaxFaults})
	specs = actingFaults(specs, opt.Options)
	f, err := check(t, base, specs, seed, opt)
	if f != nil {
		f.Run = -1
	}
	return f, err
}

// check runs one schedule and, on a violation, shrinks it and writes it.
func check(t *testing.T, base *scenarios.Scenario, specs []faults.Spec, seed uint64, opt FuzzOptions) (*Finding, error) {
	s, err := base.WithFaults(specs)
	if err != nil {
		return nil, fmt.Errorf("usercode fuzz: the schedule does not validate: %v", err)
	}
	runner := func(s *scenarios.Scenario, seed uint64) (*scenarios.Outcome, error) {
		o := opt.Options
		o.Seed, o.KeepTrace = seed, false
		return Run(t, s, o)
	}
	o, err := runner(s, seed)
	if err != nil {
		return nil, err
	}
	violated, _ := fuzz.Violated(o, opt.Checks)
	if len(violated) == 0 {
		return nil, nil
	}
	kind := violated[0]
	var who *Whose
	for _, k := range violated {
		w, err := whose(s, seed, k, opt.Options, o)
		if err != nil {
			return nil, err
		}
		if !w.Inherent || !opt.SkipInherent {
			kind, who = k, w
			break
		}
	}
	if who == nil {
		t.Logf("locksim: seed %d: skipped an inherent finding (%s): locksim's model of the algorithm violates it too", seed, strings.Join(violated, ", "))
		return nil, nil
	}
	found, err := fuzz.Variant(base, specs, violated, seed, "user-code fuzz finding on "+base.Name, "usercode.Fuzz")
	if err != nil {
		return nil, err
	}
	f := &Finding{Kind: kind, Seed: seed, Whose: who}
	if err := os.MkdirAll(opt.OutDir, 0o755); err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%s-seed-%d", base.Name, seed)
	f.File = filepath.Join(opt.OutDir, name+".yaml")
	data, err := fuzz.FileBytes(found, []string{fmt.Sprintf("%s violated by user code at seed %d.", kind, seed)})
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(f.File, data, 0o644); err != nil {
		return nil, err
	}
	shrinkRun := runner
	if !who.Inherent {
		// Keep the shrunk schedule the code's own: a candidate on which
		// the model violates the property too counts as not violating.
		shrinkRun = func(c *scenarios.Scenario, seed uint64) (*scenarios.Outcome, error) {
			o, err := runner(c, seed)
			if err != nil || fuzz.Verdict(o, kind) != checker.Violated {
				return o, err
			}
			w, err := whose(c, seed, kind, opt.Options, o)
			if err != nil {
				return nil, err
			}
			if w.Inherent {
				setVerdict(o, kind, checker.Holds)
			}
			return o, nil
		}
	}
	sr, err := fuzz.Shrink(found, seed, fuzz.ShrinkOptions{Kind: kind, MaxRuns: opt.ShrinkRuns, CheckTimeout: opt.Options.CheckTimeout, Run: shrinkRun})
	if err != nil {
		return nil, err
	}
	shrunk, err := fuzz.ShrunkScenario(sr, "user-code fuzz finding on "+base.Name+", shrunk", "usercode.Fuzz")
	if err != nil {
		return nil, err
	}
	data, err = fuzz.FileBytes(shrunk, sr.Header())
	if err != nil {
		return nil, err
	}
	f.ShrunkFile = filepath.Join(opt.OutDir, name+".shrunk.yaml")
	if err := os.WriteFile(f.ShrunkFile, data, 0o644); err != nil {
		return nil, err
	}
	f.Summary = sr.Summary()
	for _, sp := range sr.After {
		f.Faults = append(f.Faults, sp.String())
	}
	if sr.Outcome != nil {
		// The explanation of the property found violated: the first
		// violation listed may be another property's.
		f.Explanation = explanationOf(sr.Outcome, kind)
	}
	return f, nil
}

// setVerdict sets the verdict of the property of kind in o.
func setVerdict(o *scenarios.Outcome, kind string, v checker.Verdict) {
	for _, p := range checker.Properties() {
		if a := p.About(); a.Kind == kind {
			for i := range o.Verdicts {
				if o.Verdicts[i].Property == a.Name {
					o.Verdicts[i].Verdict = v
				}
			}
		}
	}
}
