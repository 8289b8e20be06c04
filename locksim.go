// Package locksim runs locksim scenarios from Go: the supported, stable API
// for using the simulator in your own tests and tools.
//
// A scenario comes from YAML (Parse, Load), from the built-in catalogue
// (Builtin) or from Go values (FromValues); Run simulates it and checks the
// history; the Result carries the verdicts, each violation (its
// property, lock, clients, true-time windows and explanation), the
// expectation it was judged against, the liveness note, the run's numbers
// (Stats: grants, latency, when the lock stood free while someone waited)
// and the trace hash, and can write the same report that simrun run --out
// writes.
//
//	s, err := locksim.Builtin("redlock-clock-jump")
//	...
//	res, err := locksim.Run(s, locksim.Options{Seed: 7})
//	...
//	if res.LockSafety == locksim.Violated { ... }
//
// RunContext stops a run when its context is done (a deadline for a long
// run, a cancel from a test harness); Options.MaxEvents and MaxMemory
// bound what a run may spend.
//
// A run's record (Result.Record, the JSON of result.json) describes what
// ran: ReadRecord reads it back, Replay runs it again, CheckTrace checks a
// recorded trace against it and RenderReport draws its report, without
// the scenario file.
//
// The file format is documented in docs/guide/scenarios.md and docs/reference.
// Runs are deterministic: the same scenario and seed give the same trace,
// event for event, whatever the machine or the number of goroutines.
//
// Stability: the names in this package keep their meaning; structs carry an
// unexported field so that they are written as keyed literals and can grow.
// The packages below it (scenarios, sim, checker, reports, ...) are the
// implementation and may change.
package locksim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/outdir"
	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// Verdict is the outcome of one property: Holds, Violated, Unknown (the
// checker ran out of time), NotJudged (liveness with no fault-free window
// long enough to judge) or NotUsed (token order when no write carried a
// fencing token; lock safety when no client takes a lock, as in the stock
// counter stories, whose resource safety judges the counter). It is the
// checker's verdict type itself.
type Verdict = checker.Verdict

// Verdicts is the verdict of each property the checker judges, in the
// order every output names them: Of(name) returns one
// (res.Verdicts.Of("token_order")).
type Verdicts = checker.Verdicts

// Judged is one property's verdict in Verdicts: the property's name
// ("lock_safety") and its verdict.
type Judged = checker.Judged

// Stats are a run's numbers beside its verdicts (Result.Stats).
type Stats = checker.Stats

// Availability says when each lock stood free while a client waited for
// it (Result.Stats.Availability): the unavailable time per bin of the run,
// a bounded number of bins per lock; LockAvailability is one lock's strip.
type (
	Availability     = checker.Availability
	LockAvailability = checker.LockAvailability
)

// Verdicts.
const (
	Holds     Verdict = checker.Holds
	Violated  Verdict = checker.Violated
	Unknown   Verdict = checker.Unknown
	NotJudged Verdict = checker.NotJudged
	NotUsed   Verdict = checker.NotUsed
)

// Property is a property the checker judges (checker.Property): its name,
// title and short column heading come with it.
type Property = checker.Property

// Properties returns the judged properties in registry order: the order of
// verdicts everywhere.
func Properties() []Property { return checker.Properties() }

// Scenario is a parsed and validated scenario, ready to run any number of
// times (a Scenario is not modified by Run and may be shared).
type Scenario struct {
	s *scenarios.Scenario
}

// Name returns the scenario's name.
func (s *Scenario) Name() string { return s.s.Name }

// Title returns the scenario's title ("" when it has none).
func (s *Scenario) Title() string { return s.s.Title }

// Warnings are what parsing found legal but unsafe to read naively, one
// sentence each naming file:line (a Redlock client's fencing token taken
// from one node); every run's Result and record carry them too.
func (s *Scenario) Warnings() []string { return append([]string(nil), s.s.Warnings...) }

// Seed returns the scenario's own seed (its seed field, 1 by default).
func (s *Scenario) Seed() uint64 { return s.s.Seed }

// Duration returns the virtual time the scenario simulates.
func (s *Scenario) Duration() time.Duration { return s.s.Duration }

// YAML returns the scenario as a YAML document (aliases expanded).
func (s *Scenario) YAML() ([]byte, error) { return s.s.Marshal() }

// Parse reads a scenario from YAML. file names the source in error
// messages ("file:line: field: problem"); every problem found is reported.
func Parse(file string, data []byte) (*Scenario, error) {
	s, err := scenarios.Parse(file, data)
	if err != nil {
		return nil, err
	}
	return &Scenario{s: s}, nil
}

// Load reads a scenario file.
func Load(path string) (*Scenario, error) {
	data, err := scenarios.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// NotFoundError is Open's error for an argument that is neither a
// built-in scenario's name nor a file.
type NotFoundError = scenarios.NotFoundError

// Open reads the scenario a command line names: a file when arg names
// one, else the built-in of that name (a *NotFoundError when there is
// none).
func Open(arg string) (*Scenario, error) {
	s, err := scenarios.Load(arg)
	if err != nil {
		return nil, err
	}
	return &Scenario{s: s}, nil
}

// Arg is the NAME|FILE argument that names the scenario on a command line
// (record.ScenarioArg): its name for a built-in, its file otherwise.
func (s *Scenario) Arg() string { return record.ScenarioArg(s.s.File, s.s.Name) }

// With returns a copy of s with fields changed, each edit "PATH=VALUE"
// with PATH a field path as simrun sweep's --param takes it
// ("clients[0].lock.ttl=5s", "faults[1].by=-3s"), applied in order and
// validated as a file would be (simrun run --set). The copy's runs record
// the edited scenario text and the edits, so they replay as they ran.
func (s *Scenario) With(edits ...string) (*Scenario, error) {
	e, err := s.s.WithSets(edits)
	if err != nil {
		return nil, err
	}
	return &Scenario{s: e}, nil
}

// Builtin returns the built-in scenario with the given name (BuiltinNames
// lists them; simrun list describes them).
func Builtin(name string) (*Scenario, error) {
	s, err := scenarios.Builtin(name)
	if err != nil {
		return nil, err
	}
	return &Scenario{s: s}, nil
}

// BuiltinNames returns the names of the built-in scenarios, sorted.
func BuiltinNames() []string { return scenarios.BuiltinNames() }

// FromValues builds a scenario from Go values: v is anything that encodes
// to the YAML of a scenario file with gopkg.in/yaml.v3 (a map[string]any,
// or structs with yaml tags). It is read exactly as a file would be, so the
// same fields, defaults and checks apply; file names it in error messages.
// Durations may be time.Duration values (yaml.v3 encodes them as "10s")
// or strings ("10s", "50ms..250ms"); a bare integer is refused for want of
// a unit.
func FromValues(file string, v any) (*Scenario, error) {
	data, err := yaml.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return Parse(file, data)
}

// Options tune a run. The zero value runs the scenario with its own seed.
type Options struct {
	_ struct{}

	// Seed is the run's seed; 0 means the scenario's own seed, unless
	// SeedZero is set (then the seed is 0).
	Seed     uint64
	SeedZero bool
	// CheckTimeout bounds each linearizability check (0: the checker's
	// default). A check that runs out of time gives the verdict Unknown.
	CheckTimeout time.Duration
	// KeepTrace keeps every event of the run, and porcupine's pages of an
	// illegal history, for Result.WriteTrace and Result.WriteReport. The
	// trace hash is computed either way.
	KeepTrace bool
	// MaxEvents is the run's event budget and MaxMemory its memory budget
	// in bytes (0: the kernel's defaults; a negative MaxMemory turns it
	// off). A run that outgrows one stops with a *sim.ErrBudget or
	// *sim.ErrMemory error.
	MaxEvents int64
	MaxMemory int64
	// MaxWork is the run's work budget in bytes of event content
	// (sim.Config.MaxWork: 0, the default; negative, none): a run past it
	// stops with a *sim.ErrWork error.
	MaxWork int64
	// CheckDeterminism runs the scenario a second time and compares the
	// two traces event by event: a difference is a *DeterminismError.
	CheckDeterminism bool
	// KeyEvents bounds the key events Result keeps for WriteSummary: the
	// first three quarters and the last quarter of them (0:
	// DefaultKeyEvents; negative: all).
	KeyEvents int
	// OnEvent receives every trace event as it happens (to stream the
	// trace to disk on a long run without keeping it).
	OnEvent func(*sim.Event)
}

// Result is what one run found.
type Result struct {
	_ struct{}

	Scenario  string
	Seed      uint64
	TraceHash string // 256-bit hash of the trace, hex: equal hashes, equal runs
	Events    int64  // number of trace events

	// Verdicts holds the verdict of every property, in output order; the
	// four fields after it are copies of its entries, kept for
	// compatibility.
	Verdicts Verdicts

	LockSafety     Verdict
	ResourceSafety Verdict
	Liveness       Verdict
	// TokenOrder is the fencing-order verdict: the resource never accepted
	// a lower token after a higher one, nor one token from two grants.
	TokenOrder Verdict
	// Explanations says in words why each violation happened, in order.
	Explanations []string
	// Violations are the same violations, structured: the property, the
	// lock, the clients involved and the true-time windows of each, with
	// its explanation (Explanations[i] is Violations[i].Explanation).
	Violations []Violation
	// ViolationsOmitted counts the violations beyond those listed (the
	// checker keeps the first checker.MaxViolations).
	ViolationsOmitted int
	// Expected is the scenario's expectation as the run was judged
	// against it: by property name ("lock_safety"), the verdict expected;
	// "min_grants" the grants the story needs; empty when the scenario
	// expects nothing (then a run matches when nothing is violated).
	Expected map[string]string
	// LivenessNote says how liveness was judged, or why it was not (no
	// fault-free window, nobody waited, a bound longer than the run).
	LivenessNote string
	// Matched is true when the verdicts match the scenario's expect block
	// (or nothing is violated when it expects nothing).
	Matched bool
	// Inconclusive is true when a verdict that mattered is Unknown.
	Inconclusive bool
	// Stats are the run's numbers beside the verdicts: grants and
	// completed critical sections per client, acquire attempts and
	// failures, acquisition latency, the time the lock stood free while
	// someone waited and when (Stats.Availability, the report's
	// availability strip), the resource's accepted and rejected writes,
	// the stock counters' sales and lost updates.
	Stats Stats
	// Vacuous says, one sentence each, where a verdict had little or
	// nothing to judge (a safety property not used for want of a grant,
	// fewer grants than the scenario's expect.min_grants): read a holds
	// beside such a note as saying nothing.
	Vacuous []string
	// Warnings are the scenario's parse-time warnings (Scenario.Warnings).
	Warnings []string

	rec  *record.Run
	keys *keyEvents
	// determinism is the number of events two runs agreed on
	// (Options.CheckDeterminism), -1 when not checked.
	determinism int
}

// Violation is one violation of a property in a run.
type Violation struct {
	// Property is the name of the property violated ("lock_safety",
	// Properties()).
	Property string
	// Lock is the lock (and protected resource) concerned.
	Lock string
	// Clients are the clients involved, in the order the explanation
	// names them.
	Clients []string
	// Windows are the true-time spans of the violation (from the run's
	// start): the overlap of two beliefs, the section whose read went
	// stale, the excessive wait.
	Windows []Window
	// Explanation tells what happened in one or two sentences.
	Explanation string
}

// Window is a span of true time, from the run's start.
type Window struct {
	Start, End time.Duration
}

// RunError is Run's error for a run that could not happen: the scenario's
// name and why (a budget stop is a *sim.ErrBudget or *sim.ErrMemory
// inside).
type RunError struct {
	Scenario string
	Err      error
}

func (e *RunError) Error() string { return fmt.Sprintf("locksim.Run %s: %v", e.Scenario, e.Err) }
func (e *RunError) Unwrap() error { return e.Err }

// DeterminismError is the error of Options.CheckDeterminism when the two
// runs differ: the first diverging event of each (Index counts from 0).
type DeterminismError struct {
	Index         int
	First, Second string
}

func (e *DeterminismError) Error() string {
	return fmt.Sprintf("determinism check failed: the two runs diverge at event #%d:\n  first:  %s\n  second: %s", e.Index+1, e.First, e.Second)
}

// Run simulates the scenario and checks its history. An error means the
// run could not happen (an internal error, a budget, a failed determinism
// check); a violation is not an error.
func Run(s *Scenario, opt Options) (*Result, error) {
	return RunContext(context.Background(), s, opt)
}

// RunContext is Run that stops when ctx is done: the simulation asks ctx
// every few thousand events (a run it does not stop is the same run,
// event for event) and, once ctx is cancelled or past its deadline, ends
// with a *RunError that wraps a *sim.ErrStopped and ctx.Err()
// (errors.Is(err, context.Canceled) holds).
func RunContext(ctx context.Context, s *Scenario, opt Options) (*Result, error) {
	if ctx == nil {
		return nil, errors.New("locksim.RunContext: nil context")
	}
	if s == nil || s.s == nil {
		return nil, errors.New("locksim.Run: nil scenario")
	}
	if err := ctx.Err(); err != nil {
		return nil, &RunError{Scenario: s.s.Name, Err: err}
	}
	var stop func() error
	if ctx.Done() != nil {
		stop = ctx.Err
	}
	seed := s.s.Seed
	if opt.Seed != 0 || opt.SeedZero {
		seed = opt.Seed
	}
	keys := newKeyEvents(opt.KeyEvents)
	keep := opt.KeepTrace || opt.CheckDeterminism
	// Without KeepTrace nothing reads the whole history: it goes to the
	// checker in pieces as the run goes (issue 15), and only the key
	// events of the summary are kept of the trace.
	sopt := scenarios.Options{
		KeepTrace:    keep,
		CheckTimeout: opt.CheckTimeout,
		Visualize:    opt.KeepTrace,
		Stream:       !opt.KeepTrace,
		Describe:     true,
		MaxEvents:    opt.MaxEvents,
		MaxMemory:    opt.MaxMemory,
		MaxWork:      opt.MaxWork,
		Stop:         stop,
	}
	switch {
	case !keep && opt.OnEvent != nil:
		sopt.TraceSink = func(e *sim.Event) {
			keys.add(e)
			opt.OnEvent(e)
		}
	case !keep:
		// Only the key kinds reach the summary: the kernel builds no
		// other event (issue 28: building every event to drop most of
		// them doubled simrun run's CPU time).
		sopt.TraceSink, sopt.TraceFilter = keys.add, isKeyKind
		sopt.TraceBorrow = true // keys.add copies the few it keeps
	default:
		sopt.TraceSink = opt.OnEvent
	}
	o, err := scenarios.Run(s.s, seed, sopt)
	if err != nil {
		return nil, &RunError{Scenario: s.s.Name, Err: err}
	}
	if keep {
		for i := range o.Trace {
			keys.add(&o.Trace[i])
		}
	}
	r := resultOf(o, keys)
	if opt.CheckDeterminism {
		o2, err := scenarios.Run(s.s, seed, scenarios.Options{KeepTrace: true, MaxEvents: opt.MaxEvents, MaxMemory: opt.MaxMemory, MaxWork: opt.MaxWork, Stop: stop})
		if err != nil {
			return nil, &RunError{Scenario: s.s.Name, Err: fmt.Errorf("the second run: %w", err)}
		}
		if i := sim.FirstDivergence(o.Trace, o2.Trace); i >= 0 || o.TraceHash != o2.TraceHash {
			first, second := EventTexts(o.Trace, o2.Trace, i)
			return nil, &DeterminismError{Index: i, First: first, Second: second}
		}
		r.determinism = len(o.Trace)
		if !opt.KeepTrace {
			o.Trace = nil
		}
	}
	return r, nil
}

// resultOf is the Result of a record.
func resultOf(o *record.Run, keys *keyEvents) *Result {
	r := &Result{
		Scenario:     o.Scenario,
		Seed:         o.Seed,
		TraceHash:    o.TraceHash,
		Events:       o.Events,
		Matched:      o.Matched,
		Inconclusive: o.Inconclusive,
		rec:          o,
		keys:         keys,
		determinism:  -1,
	}
	r.setVerdicts(o.Verdicts)
	if o.Stats != nil {
		r.Stats = *o.Stats
	}
	r.Vacuous = o.Vacuous
	r.Warnings = o.Warnings
	r.ViolationsOmitted = o.ViolationsOmitted
	r.LivenessNote = o.LivenessNote
	if len(o.Expected) > 0 {
		r.Expected = make(map[string]string, len(o.Expected))
		for k, v := range o.Expected {
			r.Expected[k] = v
		}
	}
	for _, v := range o.Violations {
		r.Explanations = append(r.Explanations, v.Explanation)
		fv := Violation{Property: propertyOfKind(v.Kind), Lock: v.Lock, Clients: append([]string(nil), v.Clients...), Explanation: v.Explanation}
		for _, w := range v.Windows {
			fv.Windows = append(fv.Windows, Window{Start: w.Start.Duration(), End: w.End.Duration()})
		}
		r.Violations = append(r.Violations, fv)
	}
	return r
}

// propertyOfKind is the name of the registered property whose violations
// are of kind k (k itself when none is).
func propertyOfKind(k string) string {
	for _, p := range checker.Properties() {
		if p.About().Kind == k {
			return p.About().Name
		}
	}
	return k
}

// ResultOf wraps the record of a run made elsewhere (real mode) as a
// Result, its key events taken from its trace.
func ResultOf(o *record.Run, keyEvents int) *Result {
	keys := newKeyEvents(keyEvents)
	for i := range o.Trace {
		keys.add(&o.Trace[i])
	}
	return resultOf(o, keys)
}

// Record is the run's record: what result.json holds, with the run's
// trace and porcupine's pages when kept.
func (r *Result) Record() *record.Run { return r.rec }

// DeterminismNote says what Options.CheckDeterminism found ("" when the
// check was not asked for).
func (r *Result) DeterminismNote() string {
	if r.determinism < 0 {
		return ""
	}
	return fmt.Sprintf("determinism check: two runs, %d identical events, trace hash %s", r.determinism, r.TraceHash)
}

// setVerdicts records the run's verdicts, and their copies in the named
// fields kept for compatibility.
func (r *Result) setVerdicts(vs Verdicts) {
	r.Verdicts = vs
	r.LockSafety = vs.Of(checker.LockSafety)
	r.ResourceSafety = vs.Of(checker.ResourceSafety)
	r.Liveness = vs.Of(checker.Liveness)
	r.TokenOrder = vs.Of(checker.TokenOrder)
}

// errNoTrace is returned by what needs the events of a run without them.
var errNoTrace = errors.New("the run kept no trace: run with Options{KeepTrace: true}")

// WriteTrace writes the run's events as JSON Lines (the format of
// simrun run --trace).
func (r *Result) WriteTrace(w io.Writer) error {
	if r.rec.Trace == nil {
		return errNoTrace
	}
	return sim.WriteJSONL(w, r.rec.Trace)
}

// WriteJSON writes the result as simrun run --json prints it (result.json).
func (r *Result) WriteJSON(w io.Writer) error {
	data, err := r.rec.JSON()
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// File is one file of a run's report: its name in the report folder and
// its bytes.
type File struct {
	Name string
	Data []byte
}

// TraceFile is the name of the trace in a report folder; the report's
// other files are ReportFiles'.
const TraceFile = "trace.jsonl"

// ReportNames are the names of every file a run's report folder may hold:
// what WriteReport and simrun remove of an earlier run when this run did
// not write it.
func ReportNames() []string {
	names := append([]string{"result.json", TraceFile}, reports.RunFiles...)
	return append(names, checker.PageNames...)
}

// ReportFiles are the files of the run's report but its trace (which
// WriteTrace writes): result.json, porcupine's pages of a violated safety
// property (lock.html, resource.html), index.html and the images.
func (r *Result) ReportFiles() ([]File, error) {
	if r.rec.Trace == nil {
		return nil, errNoTrace
	}
	data, err := r.rec.JSON()
	if err != nil {
		return nil, err
	}
	files, err := RenderReport(r.rec, r.rec.Trace, r.rec.Pages)
	if err != nil {
		return nil, err
	}
	return append([]File{{Name: "result.json", Data: data}}, files...), nil
}

// RenderReport draws the report of a recorded run from its record, its
// trace and porcupine's pages: the pages, then index.html and the images
// (reports.RunFiles). The one code path of simrun run --out, simrun
// report and WriteReport, so that they write the same bytes.
func RenderReport(rec *record.Run, trace []sim.Event, pages []checker.Page) ([]File, error) {
	setup, err := reportSetup(rec)
	if err != nil {
		return nil, err
	}
	var out []File
	var vis []string
	for _, name := range checker.PageNames {
		if b := checker.PageOf(pages, name); b != nil {
			out = append(out, File{Name: name, Data: b})
			vis = append(vis, name)
		}
	}
	files, err := reports.RenderRun(&reports.Run{
		Setup:          setup,
		Result:         *rec,
		Trace:          trace,
		Command:        fmt.Sprintf("simrun run %s --seed %d", rec.ReplayArgs(), rec.Seed),
		Visualizations: vis,
	})
	if err != nil {
		return nil, fmt.Errorf("writing the report: %w", err)
	}
	for _, name := range reports.RunFiles {
		out = append(out, File{Name: name, Data: files[name]})
	}
	return out, nil
}

// WriteReport writes the run's report into dir, as simrun run --out does:
// result.json, trace.jsonl, timeline.png/svg, clocks.png/svg, index.html
// and, for a violated safety property, porcupine's page of the illegal
// history (lock.html, resource.html). Files are written atomically, never
// through a symlink, and report files of an earlier run in dir are
// removed. The run must have kept its trace (Options.KeepTrace).
func (r *Result) WriteReport(dir string) error {
	files, err := r.ReportFiles()
	if err != nil {
		return err
	}
	d, err := outdir.Prepare(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	f, err := d.Create(TraceFile)
	if err != nil {
		return err
	}
	if err := r.WriteTrace(f); err != nil {
		f.Abort()
		return err
	}
	if err := f.Commit(); err != nil {
		return err
	}
	for _, file := range files {
		if err := d.WriteFile(file.Name, file.Data); err != nil {
			return err
		}
	}
	return d.RemoveStale(ReportNames()...)
}
