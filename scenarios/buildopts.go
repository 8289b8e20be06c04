package scenarios

import (
	"fmt"
	"strconv"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/clients"
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
	// Client, when set, may replace a lock client's process by name: given
	// the client's validated configuration it returns the factory to use
	// instead, or nil to keep the model. Package usercode binds user code
	// to a client there (issue 24).
	Client func(name string, cfg clients.Config) func() sim.Process
}

func (o BuildOptions) substitute(name string, model func() sim.Process) func() sim.Process {
	if o.Substitute != nil {
		if f := o.Substitute(name); f != nil {
			return f
		}
	}
	return model
}

// Judge checks the history of a world that has run (Run runs it in
// virtual time, real mode in real time) and builds the outcome: the one
// place where a run is judged, so both modes are judged alike. An error
// means the history broke an invariant the checker relies on (an internal
// error, exit 3).
//
// When the history went to a stream (Options.Stream), the stream judges it;
// a *checker.NeedWhole error then means the run must be made again keeping
// the whole history (Run does so), and Outcome.History is nil when the
// stream forgot pieces.
func Judge(s *Scenario, w *World, seed uint64, opt Options) (*Outcome, error) {
	h := w.Kernel.Finish()
	var res checker.Result
	if w.stream != nil {
		var err error
		if res, h, err = w.stream.Result(); err != nil {
			return nil, err
		}
	} else {
		res = checker.Check(h, checkOptions(s, w, opt))
	}
	if res.HistoryErr != nil {
		return nil, fmt.Errorf("seed %d: %w", seed, res.HistoryErr)
	}
	o := &Outcome{
		Scenario:          s.Name,
		File:              s.File,
		Sets:              s.Sets,
		Seed:              seed,
		TraceHash:         sim.HashString(w.Kernel.TraceHash()),
		Events:            int64(w.Kernel.TraceEvents()),
		VirtualTime:       s.Duration.String(),
		Verdicts:          res.Verdicts,
		Violations:        res.Violations,
		ViolationsOmitted: res.ViolationsOmitted,
		Fencing:           res.Fencing,
		LivenessNote:      res.LivenessNote,
		LongestWaiter:     res.LongestWaitClient,
		History:           h,
		Trace:             w.Kernel.Trace(),
		Result:            res,
		Pages:             res.Pages,
	}
	if w.stream != nil {
		o.Pieces = w.stream.Pieces()
	}
	if o.Violations == nil {
		o.Violations = []checker.Violation{}
	}
	if res.LongestWaitClient != "" {
		o.LongestWait = res.LongestWait.String()
	}
	o.Expected, o.Matched, o.Inconclusive = judge(s.Expect, res.Verdicts)
	o.Warnings = append([]string(nil), s.Warnings...)
	stats := res.Stats
	o.Stats = &stats
	o.Vacuous = append([]string(nil), res.Vacuous...)
	if w := s.Expect.LivenessWindow; w != nil {
		o.Expected[ExpectLivenessWindow] = "after " + w.Name() + " within " + w.Within.String()
	}
	if s.Expect.MinGrants > 0 {
		o.Expected[ExpectMinGrants] = strconv.Itoa(s.Expect.MinGrants)
		if stats.Grants < s.Expect.MinGrants {
			o.Matched = false
			o.Vacuous = append(o.Vacuous, fmt.Sprintf("%d grants, fewer than the %d the story needs (expect.min_grants): its verdicts are vacuous", stats.Grants, s.Expect.MinGrants))
		}
	}
	if opt.Describe {
		if err := Describe(s, w, o); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// checkOptions are the checker's options for a run of s in w.
func checkOptions(s *Scenario, w *World, opt Options) checker.Options {
	return checker.Options{
		Timeout:     opt.CheckTimeout,
		MaxWait:     w.MaxWait,
		Settle:      w.Settle,
		Window:      s.Expect.LivenessWindow,
		NetworkLoss: s.Network.Loss,
		Visualize:   opt.Visualize,
	}
}

// Streaming (Options.Stream): the kernel hands the history over in pieces
// of at least streamPiece records, and the checker keeps up to
// streamRetain records before it forgets pieces (tests lower both).
var (
	streamPiece  = 1024
	streamRetain = checker.DefaultRetain
)

// startStream makes w's kernel hand its history to a checker stream.
func startStream(s *Scenario, w *World, opt Options) {
	w.stream = checker.NewStream(checkOptions(s, w, opt), streamRetain)
	w.Kernel.SetHistorySink(w.stream, streamPiece)
}
