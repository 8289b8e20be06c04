package scenarios

import (
	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/sim"
)

// BuildOptions tune BuildWith.
type BuildOptions struct {
	// KeepTrace keeps every trace event in memory.
	KeepTrace bool
	// Substitute, when set, may replace the process of a Redis node or a
	// sentinel by name: it returns the factory to use instead, or nil to
	// keep the model. Real mode puts gateways to real servers there.
	Substitute func(name string) func() sim.Process
	// SkipFaults leaves the fault schedule uninstalled (real mode maps it
	// onto real faults itself).
	SkipFaults bool
}

func (o BuildOptions) substitute(name string, model func() sim.Process) func() sim.Process {
	if o.Substitute != nil {
		if f := o.Substitute(name); f != nil {
			return f
		}
	}
	return model
}

// Judge checks the history of a world that has run (real mode runs it in
// real time) and builds the outcome as Run does. NB: it repeats the tail of
// Run; keep the two in step (better: Run calls Judge).
func Judge(s *Scenario, w *World, seed uint64, opt Options) *Outcome {
	h := w.Kernel.Finish()
	res := checker.Check(h, checker.Options{
		Timeout: opt.CheckTimeout,
		MaxWait: w.MaxWait,
		OutDir:  opt.OutDir,
	})
	o := &Outcome{
		Scenario:       s.Name,
		File:           s.File,
		Seed:           seed,
		TraceHash:      sim.HashString(w.Kernel.TraceHash()),
		Events:         int64(w.Kernel.TraceEvents()),
		VirtualTime:    s.Duration.String(),
		LockSafety:     res.LockSafety,
		ResourceSafety: res.ResourceSafety,
		Liveness:       res.Liveness,
		Violations:     res.Violations,
		Fencing:        res.Fencing,
		LivenessNote:   res.LivenessNote,
		LongestWaiter:  res.LongestWaitClient,
		History:        h,
		Trace:          w.Kernel.Trace(),
		Result:         res,
	}
	if o.Violations == nil {
		o.Violations = []checker.Violation{}
	}
	if res.LongestWaitClient != "" {
		o.LongestWait = res.LongestWait.String()
	}
	o.Expected, o.Matched, o.Inconclusive = judge(s.Expect, res)
	return o
}
