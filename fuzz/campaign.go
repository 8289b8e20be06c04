package fuzz

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// Config describes a campaign.
type Config struct {
	// Base is the scenario whose topology, clients and workload every run
	// keeps; its fault schedule is replaced.
	Base *scenarios.Scenario
	// Seed is the campaign seed (RunSeed).
	Seed uint64
	// Runs is the number of runs of the whole campaign; 0 means until the
	// context is done.
	Runs int
	// Shard selects the part of the campaign's runs this process does
	// (Shard.Range); the zero value and Whole mean all of them. A shard
	// needs a fixed Runs.
	Shard Shard
	// Workers run in parallel (runtime.NumCPU() when 0). The findings do
	// not depend on it.
	Workers int
	// Kinds are the fault kinds the generator may use (nil: every kind that
	// applies to the base, faults.Applicable).
	Kinds []string
	// MaxFaults bounds the faults of one schedule (faults.DefaultMaxFaults
	// when 0).
	MaxFaults int
	// Checks are the properties checked (nil: DefaultChecks of the base).
	Checks []string
	// Keep is how many findings of each kind get a scenario file and are
	// shrunk (DefaultKeep when 0).
	Keep int
	// CheckTimeout bounds each porcupine check (scenarios.Options).
	CheckTimeout time.Duration
	// Progress, when set, is called from Run's goroutine after each run
	// with the counts so far.
	Progress func(Progress)
}

// DefaultKeep is how many findings of each kind a campaign keeps by
// default for files and shrinking. locksim's choice: enough to see
// variety, few enough to read.
const DefaultKeep = 5

// Progress is a campaign's running count.
type Progress struct {
	Runs         int // runs finished
	Found        int // runs that violated a checked property
	Inconclusive int // runs whose checked verdict was unknown
}

// Result is what a campaign found.
type Result struct {
	Base string
	Seed uint64
	// Elapsed is the campaign's wall time, set by the caller that timed it
	// (simrun fuzz): JUnit's time attributes. Never part of a result's
	// determinism: it is written only to the JUnit file.
	Elapsed time.Duration `json:"-"`
	// Runs is the number of runs done: run numbers First..First+Runs-1.
	Runs  int
	First int
	// Planned is the number of runs the campaign (or shard) meant to do
	// (0: until stopped); Interrupted is set by the caller when a signal
	// stopped it early.
	Planned     int
	Interrupted bool
	Kinds       []string
	Checks      []string
	// Findings are the violating runs, in run order, numbered from 1.
	Findings []*Finding
	// Inconclusive are runs in which a checked verdict was unknown.
	Inconclusive []RunRef
	// Errors are runs that could not run: a generated schedule that failed
	// validation (a generator bug) or an internal error.
	Errors []RunError
	// Command is the campaign's command ("fuzz" when empty, "explore"):
	// it names the findings' files.
	Command string
	// Symmetry is the base's interchangeable processes (SymmetryOf):
	// findings whose signatures differ only by them group together. Nil:
	// none.
	Symmetry *Symmetry `json:"-"`
	// Props are more properties of the campaign for its JUnit report
	// (explore's schedules and order choices), after the common ones.
	Props []JUnitProp `json:"-"`
}

// JUnitProp is one property of a JUnit report.
type JUnitProp struct{ Name, Value string }

func (r *Result) command() string {
	if r.Command == "" {
		return "fuzz"
	}
	return r.Command
}

// RunRef names one run.
type RunRef struct {
	Run  int    `json:"run"`
	Seed uint64 `json:"seed"`
}

// RunError is a run that failed to run.
type RunError struct {
	RunRef
	Err string `json:"error"`
}

// Finding is one violating run.
type Finding struct {
	// Number is the finding's position in the campaign (1, 2, ...): its
	// file is finding-Number.yaml.
	Number int
	Run    int
	// Seed is the run seed: the simulation seed and the seed of its
	// schedule.
	Seed uint64
	// Kinds are the checked properties violated, in Properties order; the
	// first is the finding's kind.
	Kinds  []string
	Swarm  faults.Swarm
	Faults []faults.Spec
	// Verdicts of the run on the properties a campaign can check
	// (Properties).
	Verdicts checker.Verdicts
	// Explanation is the checker's explanation of the first violation of
	// the finding's kind.
	Explanation string
	// Kept is true for the first Config.Keep findings of each kind: they
	// get a file and are shrunk.
	Kept bool
	// File is where the finding was written ("" when not).
	File string
	// Shrunk is the shrunk schedule (nil when not shrunk).
	Shrunk *ShrinkResult
	// ShrunkFile is where the shrunk scenario was written.
	ShrunkFile string
}

// Kind is the finding's kind: the first property it violates.
func (f *Finding) Kind() string { return f.Kinds[0] }

// RunSeed is the seed of run number run (0, 1, ...) of a campaign: the
// (run+1)-th output of SplitMix64 started at the campaign seed, that is
// mix(campaign + (run+1) × 0x9e3779b97f4a7c15) with SplitMix64's finaliser
// mix (Steele, Lea and Flood 2014; the constants of Vigna's splitmix64.c).
// It depends on nothing else, so any worker and any shard may do any run.
//
// It is the one seed derivation of simrun fuzz, sweep and matrix: each
// numbers its runs 0..total-1 (sweep: point × seeds + r; matrix: see
// MatrixRun) and seeds run n with RunSeed(campaign seed, n).
func RunSeed(campaign uint64, run int) uint64 {
	z := campaign + uint64(run+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// scheduleStream names the random stream of a run's schedule, derived from
// the run seed (the simulation's streams use their own names).
const scheduleStream = "fuzz-schedule"

// Schedule returns the swarm flags and fault schedule of the run with seed
// seed: what every campaign run and every replay of it uses.
func Schedule(w faults.GenWorld, seed uint64, kinds []string, maxFaults int) (faults.Swarm, []faults.Spec) {
	return ScheduleWith(w, seed, faults.GenOptions{Kinds: kinds, MaxFaults: maxFaults})
}

// ScheduleWith is Schedule with every generator option: the one schedule
// generator of simrun fuzz and simrun matrix.
func ScheduleWith(w faults.GenWorld, seed uint64, opts faults.GenOptions) (faults.Swarm, []faults.Spec) {
	r := sim.NewRand(seed, scheduleStream)
	sw := faults.DrawSwarm(r, w, opts)
	return sw, sw.Generate(r, w)
}

// Prepare fills a config's defaults and checks it; the error names what
// was wrong (a kind that does not apply to the base, a bad count).
func Prepare(cfg *Config) error {
	if cfg.Base == nil {
		return fmt.Errorf("no base scenario")
	}
	w := WorldOf(cfg.Base)
	if err := faults.CheckWorld(w); err != nil {
		return fmt.Errorf("%s: %v", cfg.Base.Name, err)
	}
	if cfg.Kinds == nil {
		cfg.Kinds = faults.Applicable(w)
	}
	if err := faults.CheckKinds(cfg.Kinds, w); err != nil {
		return fmt.Errorf("--faults: %v", err)
	}
	if cfg.Checks == nil {
		cfg.Checks = DefaultChecks(cfg.Base.Expect)
	}
	if len(cfg.Checks) == 0 {
		return fmt.Errorf("--check: no property to check")
	}
	if cfg.Runs < 0 {
		return fmt.Errorf("--runs must not be negative, got %d", cfg.Runs)
	}
	if cfg.Workers < 0 {
		return fmt.Errorf("--workers must be at least 1, got %d", cfg.Workers)
	}
	if cfg.Workers == 0 {
		cfg.Workers = runtime.NumCPU()
	}
	if cfg.Shard.N == 0 {
		cfg.Shard = Whole
	}
	if cfg.Shard.N > 1 && cfg.Runs == 0 {
		return fmt.Errorf("--shard needs a fixed --runs (a shard of a campaign without an end has no runs of its own)")
	}
	if cfg.Shard.K < 0 || cfg.Shard.K >= cfg.Shard.N {
		return fmt.Errorf("--shard %s: K must be from 0 to %d", cfg.Shard, cfg.Shard.N-1)
	}
	if cfg.Keep <= 0 {
		cfg.Keep = DefaultKeep
	}
	if cfg.MaxFaults < 0 {
		return fmt.Errorf("--max-faults must not be negative, got %d", cfg.MaxFaults)
	}
	if cfg.MaxFaults > faults.MaxFaultsLimit {
		return fmt.Errorf("--max-faults must be at most %d, got %d (a finding holds its schedule, and a larger one could not be read back)", faults.MaxFaultsLimit, cfg.MaxFaults)
	}
	if cfg.MaxFaults == 0 {
		cfg.MaxFaults = faults.DefaultMaxFaults
	}
	return nil
}

// runResult is one finished run.
type runResult struct {
	run          int
	seed         uint64
	finding      *Finding
	inconclusive bool
	err          error
}

// Run runs a campaign, or its shard cfg.Shard: cfg.Runs runs, or until
// ctx is done when cfg.Runs is 0 (or sooner: the runs already started
// finish, so the runs done are always a prefix of the planned ones). The
// result is the same for any number of workers, and the results of the
// shards of a campaign, joined by Merge, are the result of the whole.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := Prepare(&cfg); err != nil {
		return nil, err
	}
	w := WorldOf(cfg.Base)
	first, end := 0, -1
	if cfg.Runs > 0 {
		first, end = cfg.Shard.Range(cfg.Runs)
	}
	res := &Result{Base: cfg.Base.Name, Seed: cfg.Seed, Kinds: cfg.Kinds, Checks: cfg.Checks, First: first, Symmetry: SymmetryOf(cfg.Base)}
	if end >= 0 {
		res.Planned = end - first
	}
	var p Progress
	res.Runs = Each(ctx, first, end, cfg.Workers, func(run int) runResult { return runOne(cfg, w, run) },
		func(_ int, r runResult) {
			p.Runs++
			switch {
			case r.err != nil:
				res.Errors = append(res.Errors, RunError{RunRef{r.run, r.seed}, r.err.Error()})
			case r.finding != nil:
				p.Found++
				res.Findings = append(res.Findings, r.finding)
			case r.inconclusive:
				p.Inconclusive++
				res.Inconclusive = append(res.Inconclusive, RunRef{r.run, r.seed})
			}
			if cfg.Progress != nil {
				cfg.Progress(p)
			}
		})
	Number(res, cfg.Keep)
	return res, nil
}

// Number sorts a result's findings, inconclusive runs and errors by run,
// numbers the findings from 1 in run order and marks the first keep of
// each kind as kept: what Run does at its end, and Merge after joining
// shards.
func Number(res *Result, keep int) {
	if keep <= 0 {
		keep = DefaultKeep
	}
	sort.Slice(res.Findings, func(i, j int) bool { return res.Findings[i].Run < res.Findings[j].Run })
	sort.Slice(res.Inconclusive, func(i, j int) bool { return res.Inconclusive[i].Run < res.Inconclusive[j].Run })
	sort.Slice(res.Errors, func(i, j int) bool { return res.Errors[i].Run < res.Errors[j].Run })
	kept := map[string]int{}
	for i, f := range res.Findings {
		f.Number = i + 1
		f.Kept = false
		if kept[f.Kind()] < keep {
			kept[f.Kind()]++
			f.Kept = true
		}
	}
}

// RunErrorOf says why a run ended without an outcome: a budget stopped it
// (the kernel's message names the budget and how to raise it), or
// something that is locksim's fault (issue 33: a memory-budget stop was
// shown as "internal error").
func RunErrorOf(err error) error {
	var be *sim.ErrBudget
	var me *sim.ErrMemory
	var we *sim.ErrWork
	if errors.As(err, &be) || errors.As(err, &me) || errors.As(err, &we) {
		return fmt.Errorf("run stopped: %v", err)
	}
	return fmt.Errorf("internal error: %v", err)
}

// runOne generates and runs one schedule.
func runOne(cfg Config, w faults.GenWorld, run int) runResult {
	seed := RunSeed(cfg.Seed, run)
	rr := runResult{run: run, seed: seed}
	sw, specs := Schedule(w, seed, cfg.Kinds, cfg.MaxFaults)
	s, err := cfg.Base.WithFaults(specs)
	if err != nil {
		rr.err = fmt.Errorf("generated schedule failed validation (a generator bug): %v", err)
		return rr
	}
	// The history goes to the checker in pieces (issue 15): a fuzz run
	// keeps no more of it than the checker needs.
	o, err := scenarios.Run(s, seed, scenarios.Options{CheckTimeout: cfg.CheckTimeout, Stream: true})
	if err != nil {
		rr.err = RunErrorOf(err)
		return rr
	}
	return rr.judge(o, cfg.Checks, Finding{Run: run, Seed: seed, Swarm: sw, Faults: specs})
}

// judge records a run's outcome in rr: a finding f, completed with the
// properties the checks found violated, the verdicts and the explanation
// of the first violation; or, when none is violated, whether a check was
// inconclusive. Fuzz runs and explore schedules are judged alike.
func (rr runResult) judge(o *scenarios.Outcome, checks []string, f Finding) runResult {
	violated, inconclusive := Violated(o, checks)
	if len(violated) == 0 {
		rr.inconclusive = inconclusive
		return rr
	}
	f.Kinds = violated
	f.Verdicts = fuzzVerdicts(o.Verdicts)
	f.Explanation = explanation(o, violated[0])
	rr.finding = &f
	return rr
}

// explanation returns the checker's words on the first violation of kind.
func explanation(o *scenarios.Outcome, kind string) string {
	for _, v := range o.Violations {
		if v.Kind == kind {
			return v.Explanation
		}
	}
	return ""
}

// ByKind counts findings per kind (a finding counts under its first kind).
func (r *Result) ByKind() map[string]int {
	out := map[string]int{}
	for _, f := range r.Findings {
		out[f.Kind()]++
	}
	return out
}
