package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim/fuzz"
)

func init() { extraCommands = append(extraCommands, newFuzzCmd, newShrinkCmd) }

type fuzzFlags struct {
	runs      int
	dur       time.Duration
	seed      uint64
	workers   int
	kinds     string
	checks    string
	maxFaults int
	out       string
	keep      int
	jsonOut   bool
	junit     string
	shrink    bool
}

// defaultFuzzRuns is the number of runs when neither --runs nor --time is
// given.
const defaultFuzzRuns = 1000

func newFuzzCmd() *cobra.Command {
	var f fuzzFlags
	cmd := &cobra.Command{
		Use:   "fuzz NAME|FILE",
		Short: "Run random fault schedules against a scenario and report violations",
		Long: `Take a scenario as the base (its topology, clients and workload), replace
its fault schedule with random ones and report every run that violates a
checked property, grouped by kind, with the command that replays it.

Checked properties (--check overrides): the safety properties the base
expects to hold (fenced-baseline expects resource_safety holds: resource
violations are findings, lock violations are not); both safety properties
when the base expects none to hold. Liveness only with --check liveness.

Each run first draws which fault kinds are on and how often (swarm testing),
then the faults. Run seeds: run seed = splitmix64(campaign seed +
(run+1) * 0x9e3779b97f4a7c15); the run's simulation and schedule both derive
from it, so the findings do not depend on --workers.

Each finding is written to --out as finding-N.yaml: the base with the
generated faults and an expect block set to the observed violation, so
'simrun run DIR/finding-N.yaml' exits 0 while it reproduces. --shrink also
writes finding-N.shrunk.yaml (see simrun shrink).

Exit codes: 0 nothing found; 1 violations found; 2 bad input; 3 a run was
inconclusive (checker timeout) or failed.`,
		Args: exactArgs(1, "NAME|FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("runs") && !cmd.Flags().Changed("time") {
				f.runs = defaultFuzzRuns
			}
			return runFuzz(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.runs, "runs", 0, "number of runs (default 1000 unless --time is given; with --time: at most this many)")
	fl.DurationVar(&f.dur, "time", 0, "stop starting runs after this long (wall time), e.g. 30s")
	fl.Uint64Var(&f.seed, "seed", 1, "campaign seed (vary it in CI to explore new schedules)")
	fl.IntVar(&f.workers, "workers", 0, "parallel workers (default: all cores)")
	fl.StringVar(&f.kinds, "faults", "", "comma-separated fault kinds to generate (default: every kind that applies)")
	fl.StringVar(&f.checks, "check", "", "comma-separated properties to check: lock, resource, liveness (default: see above)")
	fl.IntVar(&f.maxFaults, "max-faults", 0, "most faults in one schedule (default 8)")
	fl.StringVar(&f.out, "out", "fuzz-findings", "folder for the finding files")
	fl.IntVar(&f.keep, "keep", fuzz.DefaultKeep, "findings of each kind to write (and shrink)")
	fl.BoolVar(&f.jsonOut, "json", false, "print one JSON object instead of the summary")
	fl.StringVar(&f.junit, "junit", "", "write a JUnit XML report to this file (each violating run a failing test case)")
	fl.BoolVar(&f.shrink, "shrink", false, "shrink each written finding to a minimal schedule")
	return cmd
}

func fuzzSplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func runFuzz(stdout, stderr io.Writer, arg string, f fuzzFlags) error {
	base, err := loadScenario(arg)
	if err != nil {
		return err
	}
	switch {
	case f.runs < 0:
		return badInput("--runs must not be negative, got %d", f.runs)
	case f.dur < 0:
		return badInput("--time must not be negative, got %s", f.dur)
	case f.runs == 0 && f.dur == 0:
		return badInput("--runs 0 needs --time (otherwise the campaign never ends)")
	case f.keep < 1:
		return badInput("--keep must be at least 1, got %d", f.keep)
	}
	cfg := fuzz.Config{Base: base, Seed: f.seed, Runs: f.runs, Workers: f.workers, MaxFaults: f.maxFaults, Keep: f.keep}
	if f.kinds != "" {
		cfg.Kinds = fuzzSplitList(f.kinds)
	}
	if f.checks != "" {
		if cfg.Checks, err = fuzz.ParseChecks(f.checks); err != nil {
			return badInput("--check: %v", err)
		}
	}
	if err := fuzz.Prepare(&cfg); err != nil {
		return badInput("%v", err)
	}
	ctx := context.Background()
	if f.dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.dur)
		defer cancel()
	}
	prog := newFuzzProgress(stderr)
	cfg.Progress = prog.update
	start := time.Now()
	res, err := fuzz.Run(ctx, cfg)
	prog.done()
	if err != nil {
		return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
	}
	elapsed := time.Since(start)
	rate := float64(res.Runs) / elapsed.Seconds()
	fmt.Fprintf(stderr, "%d runs in %.1fs: %.0f runs/s on %d workers (%.0f per worker), %d violating\n",
		res.Runs, elapsed.Seconds(), rate, cfg.Workers, rate/float64(cfg.Workers), len(res.Findings))
	if f.shrink && len(res.Findings) > 0 {
		fmt.Fprintln(stderr, "shrinking the written findings...")
		if err := fuzz.ShrinkFindings(context.Background(), base, res, cfg.Workers, fuzz.ShrinkOptions{}); err != nil {
			return withCode(exitInconclusive, fmt.Errorf("internal error while shrinking: %w", err))
		}
	}
	if err := fuzz.WriteFindings(f.out, base, res); err != nil {
		return withCode(exitBadInput, fmt.Errorf("--out: %w", err))
	}
	if f.junit != "" {
		if err := fuzzWriteJUnit(f.junit, res); err != nil {
			return withCode(exitBadInput, fmt.Errorf("--junit: %w", err))
		}
	}
	if f.jsonOut {
		if err := fuzz.WriteJSON(stdout, res); err != nil {
			return withCode(exitInconclusive, err)
		}
	} else {
		fuzz.WriteSummary(stdout, res)
	}
	switch {
	case len(res.Findings) > 0:
		return withCode(exitMismatch, nil)
	case len(res.Errors) > 0 || len(res.Inconclusive) > 0:
		return withCode(exitInconclusive, nil)
	}
	return nil
}

func fuzzWriteJUnit(path string, res *fuzz.Result) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fuzz.WriteJUnit(fh, res); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// fuzzProgress shows a campaign's count on a terminal's stderr, at most five
// times a second; it prints nothing when stderr is not a terminal (CI logs).
type fuzzProgress struct {
	w     io.Writer
	on    bool
	start time.Time
	last  time.Time
	shown bool
}

func newFuzzProgress(w io.Writer) *fuzzProgress {
	return &fuzzProgress{w: w, on: fuzzIsTerminal(w), start: time.Now()}
}

// fuzzIsTerminal reports whether w is a character device (golang.org/x/term is
// not in the module graph, so this is the os.ModeCharDevice test).
func fuzzIsTerminal(w io.Writer) bool {
	fh, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := fh.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p *fuzzProgress) update(c fuzz.Progress) {
	if !p.on {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last = now
	rate := float64(c.Runs) / now.Sub(p.start).Seconds()
	fmt.Fprintf(p.w, "\r%d runs, %.0f runs/s, %d violating   ", c.Runs, rate, c.Found)
	p.shown = true
}

func (p *fuzzProgress) done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
