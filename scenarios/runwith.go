package scenarios

import "github.com/locksim/locksim/sim"

// RunWith builds the scenario's world with bopt, calls prepare on it (to
// install a driver of outside work, sim.Kernel.SetDriver), simulates it for
// the scenario's duration and judges it. The history is judged whole
// (opt.Stream is ignored). Package usercode runs user code through it.
func RunWith(s *Scenario, seed uint64, opt Options, bopt BuildOptions, prepare func(*World) error) (*Outcome, error) {
	bopt.KeepTrace = bopt.KeepTrace || opt.KeepTrace
	w, err := BuildWith(s, seed, bopt)
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
	if prepare != nil {
		if err := prepare(w); err != nil {
			return nil, err
		}
	}
	if err := w.Kernel.Run(sim.At(s.Duration)); err != nil {
		return nil, err
	}
	return Judge(s, w, seed, opt)
}
