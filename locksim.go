// Package locksim runs locksim scenarios from Go: the supported, stable API
// for using the simulator in your own tests and tools.
//
// A scenario comes from YAML (Parse, Load), from the built-in catalogue
// (Builtin) or from Go values (FromValues); Run simulates it and checks the
// history; the Result carries the verdicts, the explanation of each
// violation and the trace hash, and can write the same report that
// simrun run --out writes.
//
//	s, err := locksim.Builtin("redlock-clock-jump")
//	...
//	res, err := locksim.Run(s, locksim.Options{Seed: 7})
//	...
//	if res.LockSafety == locksim.Violated { ... }
//
// The file format is documented in docs/scenario-format.md and the README.
// Runs are deterministic: the same scenario and seed give the same trace,
// event for event, whatever the machine or the number of goroutines.
//
// Stability: the names in this package keep their meaning; structs carry an
// unexported field so that they are written as keyed literals and can grow.
// The packages below it (scenarios, sim, checker, reports, ...) are the
// implementation and may change.
package locksim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/outdir"
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

// Verdicts.
const (
	Holds     Verdict = checker.Holds
	Violated  Verdict = checker.Violated
	Unknown   Verdict = checker.Unknown
	NotJudged Verdict = checker.NotJudged
	NotUsed   Verdict = checker.NotUsed
)

// Scenario is a parsed and validated scenario, ready to run any number of
// times (a Scenario is not modified by Run and may be shared).
type Scenario struct {
	s *scenarios.Scenario
}

// Name returns the scenario's name.
func (s *Scenario) Name() string { return s.s.Name }

// Title returns the scenario's title ("" when it has none).
func (s *Scenario) Title() string { return s.s.Title }

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
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
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
// NB: write durations as strings ("10s"): a time.Duration encodes as an
// integer of nanoseconds, which the reader refuses for want of a unit.
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

	// Seed is the run's seed; 0 means the scenario's own seed.
	Seed uint64
	// CheckTimeout bounds each linearizability check (0: the checker's
	// default). A check that runs out of time gives the verdict Unknown.
	CheckTimeout time.Duration
	// KeepTrace keeps every event of the run, and porcupine's pages of an
	// illegal history, for Result.WriteTrace and Result.WriteReport. The
	// trace hash is computed either way.
	KeepTrace bool
}

// Result is what one run found.
type Result struct {
	_ struct{}

	Scenario  string
	Seed      uint64
	TraceHash string // SHA-256 of the trace, hex: equal hashes, equal runs
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
	// Matched is true when the verdicts match the scenario's expect block
	// (or nothing is violated when it expects nothing).
	Matched bool
	// Inconclusive is true when a verdict that mattered is Unknown.
	Inconclusive bool

	s     *scenarios.Scenario
	o     *scenarios.Outcome
	pages map[string][]byte // porcupine's visualizations, by file name
}

// Run simulates the scenario and checks its history. An error means the
// run could not happen (an internal error); a violation is not an error.
func Run(s *Scenario, opt Options) (*Result, error) {
	if s == nil || s.s == nil {
		return nil, errors.New("locksim.Run: nil scenario")
	}
	seed := s.s.Seed
	if opt.Seed != 0 {
		seed = opt.Seed
	}
	// Without KeepTrace nothing reads the whole history: it goes to the
	// checker in pieces as the run goes (issue 15).
	sopt := scenarios.Options{KeepTrace: opt.KeepTrace, CheckTimeout: opt.CheckTimeout, Stream: !opt.KeepTrace}
	if opt.KeepTrace {
		// The checker writes its pages into a private folder; they are
		// kept in memory for WriteReport.
		tmp, err := os.MkdirTemp("", "locksim-vis-")
		if err != nil {
			return nil, fmt.Errorf("locksim.Run: %w", err)
		}
		defer os.RemoveAll(tmp)
		sopt.OutDir = tmp
	}
	o, err := scenarios.Run(s.s, seed, sopt)
	if err != nil {
		return nil, fmt.Errorf("locksim.Run %s: %w", s.s.Name, err)
	}
	pages := map[string][]byte{}
	if sopt.OutDir != "" {
		for _, v := range visualizations {
			if b, err := os.ReadFile(filepath.Join(sopt.OutDir, v)); err == nil {
				pages[v] = b
			}
		}
	}
	r := &Result{
		Scenario:     o.Scenario,
		Seed:         o.Seed,
		TraceHash:    o.TraceHash,
		Events:       o.Events,
		Matched:      o.Matched,
		Inconclusive: o.Inconclusive,
		s:            s.s,
		o:            o,
		pages:        pages,
	}
	r.setVerdicts(o.Verdicts)
	for _, v := range o.Violations {
		r.Explanations = append(r.Explanations, v.Explanation)
	}
	return r, nil
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

// visualizations are porcupine's pages a run may have, in report order.
var visualizations = []string{"lock.html", "resource.html"}

// errNoTrace is returned by what needs the events of a run without them.
var errNoTrace = errors.New("the run kept no trace: run with Options{KeepTrace: true}")

// WriteTrace writes the run's events as JSON Lines (the format of
// simrun run --trace).
func (r *Result) WriteTrace(w io.Writer) error {
	if r.o.Trace == nil {
		return errNoTrace
	}
	return sim.WriteJSONL(w, r.o.Trace)
}

// WriteJSON writes the result as simrun run --json prints it (result.json).
func (r *Result) WriteJSON(w io.Writer) error {
	data, err := r.jsonBytes()
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

func (r *Result) jsonBytes() ([]byte, error) {
	data, err := jsonIndent(r.o)
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// WriteReport writes the run's report into dir, as simrun run --out does:
// result.json, trace.jsonl, timeline.png/svg, clocks.png/svg, index.html
// and, for a violated safety property, porcupine's page of the illegal
// history (lock.html, resource.html). Files are written atomically, never
// through a symlink, and report files of an earlier run in dir are
// removed. The run must have kept its trace (Options.KeepTrace).
func (r *Result) WriteReport(dir string) error {
	if r.o.Trace == nil {
		return errNoTrace
	}
	setup, err := reports.SetupOf(r.s)
	if err != nil {
		return err
	}
	data, err := r.jsonBytes()
	if err != nil {
		return err
	}
	var vis []string
	for _, v := range visualizations {
		if _, ok := r.pages[v]; ok {
			vis = append(vis, v)
		}
	}
	files, err := reports.RenderRun(&reports.Run{
		Setup:          setup,
		Result:         *r.o,
		Trace:          r.o.Trace,
		Command:        fmt.Sprintf("simrun run %s --seed %d", r.replayArg(), r.Seed),
		Visualizations: vis,
	})
	if err != nil {
		return err
	}
	d, err := outdir.Prepare(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.WriteFile("result.json", data); err != nil {
		return err
	}
	f, err := d.Create("trace.jsonl")
	if err != nil {
		return err
	}
	if err := sim.WriteJSONL(f, r.o.Trace); err != nil {
		f.Abort()
		return err
	}
	if err := f.Commit(); err != nil {
		return err
	}
	for _, v := range vis {
		if err := d.WriteFile(v, r.pages[v]); err != nil {
			return err
		}
	}
	for _, name := range reports.RunFiles {
		if err := d.WriteFile(name, files[name]); err != nil {
			return err
		}
	}
	return d.RemoveStale(visualizations...)
}

// replayArg is how simrun names the scenario: a built-in by name, a file
// by path.
func (r *Result) replayArg() string {
	if f := r.s.File; f != "" && !isCatalogue(f) {
		return f
	}
	return r.s.Name
}

func isCatalogue(file string) bool {
	return len(file) > len("catalogue/") && file[:len("catalogue/")] == "catalogue/"
}

func jsonIndent(v any) ([]byte, error) { return json.MarshalIndent(v, "", "  ") }
