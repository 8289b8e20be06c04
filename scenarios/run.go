package scenarios

import (
	"errors"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/sim"
)

// Options tune a run.
type Options struct {
	// KeepTrace keeps every event (for summaries, JSONL export and
	// divergence reports). The trace hash is computed either way.
	KeepTrace bool
	// CheckTimeout bounds each porcupine check (checker.DefaultTimeout if 0).
	CheckTimeout time.Duration
	// Visualize draws porcupine's visualization of illegal histories into
	// Outcome.Pages (checker.Options.Visualize).
	Visualize bool
	// Describe fills in the record's description of the run (Describe):
	// what a result.json needs to be read back alone.
	Describe bool
	// TraceSink receives every trace event as it happens (to stream the
	// trace to disk on a long run without keeping it).
	TraceSink func(*sim.Event)
	// TraceFilter, when set, chooses by kind the events TraceSink receives
	// (sim.Config.TraceFilter): the others are never built as events.
	TraceFilter func(sim.Kind) bool
	// TraceBorrow lends TraceSink the events (sim.Config.TraceBorrow): an
	// event and its text and fields are valid only during the call.
	TraceBorrow bool
	// MaxEvents is the run's event budget (sim.DefaultMaxEvents if 0).
	MaxEvents int64
	// MaxMemory is the run's memory budget in bytes (sim.DefaultMaxMemory()
	// if 0; negative turns it off). It bounds the heap of the whole
	// process: runs in parallel share it.
	MaxMemory int64
	// MaxWork is the run's work budget in bytes of event content
	// (sim.Config.MaxWork: 0, sim.DefaultMaxWork; negative, none).
	MaxWork int64
	// Stop, when set, is asked every few thousand events whether to stop
	// the run (sim.Kernel.SetStop): a non-nil error stops it with a
	// *sim.ErrStopped wrapping that error. It never changes a run that it
	// does not stop.
	Stop func() error
	// Stream hands the history to the checker in pieces as the run goes,
	// so that a long run's memory is the piece in progress, not the whole
	// history (issue 15; checker.Stream). Outcome.History is then nil when
	// the run was long enough for pieces to be forgotten; a run that
	// violates a property after that is made a second time, keeping its
	// history whole, to explain the violation. Ignored with Visualize,
	// whose pages need the whole history.
	Stream bool
}

// budgets returns the event and memory budgets of opt with defaults.
func (opt Options) budgets() (events, memory int64) {
	events, memory = opt.MaxEvents, opt.MaxMemory
	if events <= 0 {
		events = sim.DefaultMaxEvents
	}
	switch {
	case memory == 0:
		memory = sim.DefaultMaxMemory()
	case memory < 0:
		memory = 0
	}
	return events, memory
}

// Outcome is the result of one run: its record (record.Run, the JSON of
// simrun's result.json), plus the history and (optionally) the trace.
type Outcome = record.Run

// Run builds the scenario's world with the given seed, simulates it for the
// scenario's duration and checks the history.
func Run(s *Scenario, seed uint64, opt Options) (*Outcome, error) {
	o, err := run(s, seed, opt)
	var nw *checker.NeedWhole
	if errors.As(err, &nw) {
		// Deterministic: the same run again, its history kept whole. The
		// trace sink saw every event the first time.
		opt.Stream, opt.TraceSink, opt.TraceFilter = false, nil, nil
		o, err = run(s, seed, opt)
		if o != nil {
			o.Rerun = true
		}
	}
	return o, err
}

func run(s *Scenario, seed uint64, opt Options) (*Outcome, error) {
	w, err := Build(s, seed, opt.KeepTrace)
	if err != nil {
		return nil, err
	}
	w.Kernel.SetBudgets(opt.budgets())
	w.Kernel.SetWork(opt.MaxWork)
	w.Kernel.SetStop(opt.Stop)
	if opt.TraceSink != nil {
		w.Kernel.SetTraceSink(opt.TraceSink)
		w.Kernel.SetTraceFilter(opt.TraceFilter)
		w.Kernel.SetTraceBorrow(opt.TraceBorrow)
	}
	if opt.Stream && !opt.Visualize {
		startStream(s, w, opt)
	}
	if err := w.Kernel.Run(sim.At(s.Duration)); err != nil {
		return nil, err
	}
	return Judge(s, w, seed, opt)
}

// judge compares verdicts with expectations. With no expectation at all, a
// run matches when no property is violated.
func judge(e Expect, got checker.Verdicts) (map[string]string, bool, bool) {
	exp := map[string]string{}
	matched, inconclusive := true, false
	for _, j := range got {
		want := e.Of(j.Property)
		if want == "" {
			continue
		}
		exp[j.Property] = string(want)
		if j.Verdict == checker.Unknown {
			inconclusive = true
		}
		if j.Verdict != want {
			matched = false
		}
	}
	if len(exp) == 0 {
		for _, j := range got {
			if j.Verdict == checker.Violated {
				matched = false
			}
			if j.Verdict == checker.Unknown {
				inconclusive = true
			}
		}
	}
	return exp, matched, inconclusive
}
