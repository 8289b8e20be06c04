package reports

import (
	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/sim"
)

// Role says what a server lane stands for; each process kind declares its
// own (record.Role).
type Role = record.Role

// Server is one non-client process of the scenario (record.Server).
type Server = record.Server

// Clock is a process's initial clock state (record.Clock).
type Clock = record.Clock

// Setup is what a report needs to know of the scenario beyond the trace:
// names, roles, lock keys and initial clocks. The run's record carries it
// (record.Run.ReportSetup): a report never reads the scenario.
type Setup = record.Setup

// Result is the recorded outcome of the run: its record (record.Run, the
// JSON of simrun's result.json; a report shows its verdicts, violations and
// trace hash).
type Result = record.Run

// Run is everything a run's report is made of.
type Run struct {
	Setup  Setup
	Result Result
	// Trace is the full trace of the run (simrun run --out's trace.jsonl).
	Trace []sim.Event
	// End is the true time at which the run stopped (the scenario's
	// duration when zero).
	End sim.Time
	// Command reproduces the run, e.g. "simrun run redlock-clock-jump --seed 1".
	Command string
	// Visualizations are porcupine's HTML files beside index.html
	// (lock.html, resource.html) to link.
	Visualizations []string
}

func (r *Run) end() sim.Time {
	if r.End > 0 {
		return r.End
	}
	if r.Setup.Duration > 0 {
		return sim.Time(r.Setup.Duration)
	}
	if n := len(r.Trace); n > 0 {
		return r.Trace[n-1].At
	}
	return 0
}
