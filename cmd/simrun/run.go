package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

func newListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the built-in scenarios with their expected verdicts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cat, err := scenarios.Catalogue()
			if err != nil {
				return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
			}
			w := cmd.OutOrStdout()
			width := 0
			for _, s := range cat {
				if len(s.Name) > width {
					width = len(s.Name)
				}
			}
			for _, s := range cat {
				fmt.Fprintf(w, "%-*s  %s\n", width, s.Name, s.Title)
				fmt.Fprintf(w, "%-*s  expect: %s\n", width, "", expectText(s.Expect))
			}
			return nil
		},
	}
}

func expectText(e scenarios.Expect) string {
	var parts []string
	if e.LockSafety != "" {
		parts = append(parts, "lock "+e.LockSafety)
	}
	if e.ResourceSafety != "" {
		parts = append(parts, "resource "+e.ResourceSafety)
	}
	if e.Liveness != "" {
		l := "liveness " + e.Liveness
		if e.MaxWait > 0 {
			l += " (max wait " + e.MaxWait.String() + ")"
		}
		parts = append(parts, l)
	}
	if len(parts) == 0 {
		return "no violation"
	}
	return strings.Join(parts, ", ")
}

// loadScenario resolves NAME|FILE, mapping every user error to exit 2.
func loadScenario(arg string) (*scenarios.Scenario, error) {
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return nil, badInput("%s is a directory, not a scenario file", arg)
	}
	s, err := scenarios.Load(arg)
	if err != nil {
		return nil, withCode(exitBadInput, err)
	}
	return s, nil
}

type runFlags struct {
	seed     uint64
	seedSet  bool
	jsonOut  bool
	traceOut string
	outDir   string
	determ   bool
	budget   budgetFlags
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run NAME|FILE",
		Short: "Run a scenario and check its verdicts",
		Long: `Run a built-in scenario (see simrun list) or a scenario file, print the key
events, the verdicts with their explanation and the trace hash.

Exit codes: 0 the verdicts match the scenario's expect block (or no violation
when it expects nothing); 1 they do not; 2 bad input; 3 inconclusive.`,
		Args: exactArgs(1, "NAME|FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.seedSet = cmd.Flags().Changed("seed")
			return runScenario(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], f)
		},
	}
	cmd.Flags().Uint64Var(&f.seed, "seed", 0, "seed of the run (default: the scenario's seed)")
	cmd.Flags().BoolVar(&f.jsonOut, "json", false, "print one JSON object instead of the summary")
	cmd.Flags().StringVar(&f.traceOut, "trace", "", "write the full trace as JSON Lines to this file")
	cmd.Flags().StringVar(&f.outDir, "out", "", "write the report (result.json, trace, checker visualizations) into this folder")
	cmd.Flags().BoolVar(&f.determ, "check-determinism", false, "run twice and compare the traces event by event")
	addBudgetFlags(cmd, &f.budget)
	return cmd
}

// exactArgs is cobra.ExactArgs with a message that names the argument.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return badInput("%s needs %s (got %d arguments)\n\n%s", cmd.CommandPath(), what, len(args), cmd.UsageString())
		}
		return nil
	}
}

func runScenario(stdout, stderr io.Writer, arg string, f runFlags) error {
	s, err := loadScenario(arg)
	if err != nil {
		return err
	}
	seed := s.Seed
	if f.seedSet {
		seed = f.seed
	}
	opt := scenarios.Options{KeepTrace: true}
	if err := f.budget.apply(&opt); err != nil {
		return err
	}
	if f.outDir != "" {
		if err := os.MkdirAll(f.outDir, 0o755); err != nil {
			return withCode(exitBadInput, fmt.Errorf("--out: %w", err))
		}
		opt.OutDir = f.outDir
	}
	o, err := scenarios.Run(s, seed, opt)
	if err != nil {
		if berr := budgetError(err); berr != err {
			return berr
		}
		return withCode(exitInconclusive, fmt.Errorf("internal error running %s: %w", s.Name, err))
	}
	if f.determ {
		o2, err := scenarios.Run(s, seed, scenarios.Options{KeepTrace: true})
		if err != nil {
			return withCode(exitInconclusive, fmt.Errorf("internal error in the second run: %w", err))
		}
		if i := sim.FirstDivergence(o.Trace, o2.Trace); i >= 0 || o.TraceHash != o2.TraceHash {
			return withCode(exitMismatch, fmt.Errorf("determinism check failed: the two runs diverge at event #%d:\n  first:  %s\n  second: %s", i+1, eventAt(o.Trace, i), eventAt(o2.Trace, i)))
		}
		fmt.Fprintf(stderr, "determinism check: two runs, %d identical events, trace hash %s\n", len(o.Trace), o.TraceHash)
	}
	if f.traceOut != "" {
		if err := writeTrace(f.traceOut, o.Trace); err != nil {
			return withCode(exitBadInput, fmt.Errorf("--trace: %w", err))
		}
	}
	if f.outDir != "" {
		if err := writeReportFiles(f.outDir, o); err != nil {
			return withCode(exitBadInput, fmt.Errorf("--out: %w", err))
		}
	}
	if f.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(o); err != nil {
			return withCode(exitInconclusive, err)
		}
	} else {
		printSummary(stdout, s, o, f)
	}
	return outcomeCode(o)
}

func outcomeCode(o *scenarios.Outcome) error {
	switch {
	case o.Inconclusive:
		return withCode(exitInconclusive, nil)
	case !o.Matched:
		return withCode(exitMismatch, nil)
	}
	return nil
}

func eventAt(tr []sim.Event, i int) string {
	if i < 0 || i >= len(tr) {
		return "(no event: the trace ended)"
	}
	e := tr[i]
	return fmt.Sprintf("#%d %s %s %s %s %s", e.Seq, e.At, e.Kind, e.Proc, e.Peer, e.Text)
}

func writeTrace(path string, tr []sim.Event) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := sim.WriteJSONL(fh, tr); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// writeReportFiles writes result.json and trace.jsonl into dir, and the
// report drawn from them (index.html, timeline and clocks figures), as
// simrun report would from the recorded files.
func writeReportFiles(dir string, o *scenarios.Outcome) error {
	data, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "result.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	if err := writeTrace(filepath.Join(dir, "trace.jsonl"), o.Trace); err != nil {
		return err
	}
	s, err := scenarioOfResult(o.Scenario, o.File)
	if err != nil {
		return err
	}
	res, err := resultOf(o)
	if err != nil {
		return err
	}
	return writeRunReport(dir, s, res, o.Trace)
}

// keyKinds are the trace kinds a summary shows.
var keyKinds = map[sim.Kind]bool{
	sim.KindAcquired: true, sim.KindReleased: true, sim.KindLockLost: true,
	sim.KindFault: true, sim.KindCrash: true, sim.KindRestart: true,
	"key-expired": true, "resource-applied": true, "resource-rejected": true,
	"promoted": true, "switch-master": true, "session-expired": true, "loaded": true,
}

func printSummary(w io.Writer, s *scenarios.Scenario, o *scenarios.Outcome, f runFlags) {
	if s.Title != "" {
		fmt.Fprintf(w, "%s: %s\n", s.Name, s.Title)
	} else {
		fmt.Fprintln(w, s.Name)
	}
	if s.Source != "" {
		fmt.Fprintf(w, "source: %s\n", s.Source)
	}
	fmt.Fprintf(w, "seed %d, %s of virtual time, %d events\n\n", o.Seed, o.VirtualTime, o.Events)
	fmt.Fprintln(w, "key events:")
	for _, e := range o.Trace {
		if !keyKinds[e.Kind] || (e.Kind == "loaded" && e.At == 0) {
			continue
		}
		fmt.Fprintf(w, "  %10s  %-6s %-16s %s\n", e.At, e.Proc, e.Kind, e.Text)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "verdicts:")
	line := func(name string, got checker.Verdict, want string) {
		mark := ""
		if want != "" {
			if string(got) == want {
				mark = fmt.Sprintf("(expected %s: ok)", want)
			} else {
				mark = fmt.Sprintf("(expected %s: MISMATCH)", want)
			}
		}
		fmt.Fprintf(w, "  %-16s %-10s %s\n", name, got, mark)
	}
	line("lock safety", o.LockSafety, s.Expect.LockSafety)
	line("resource safety", o.ResourceSafety, s.Expect.ResourceSafety)
	line("liveness", o.Liveness, s.Expect.Liveness)
	if len(o.Violations) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "explanation:")
		for _, v := range o.Violations {
			fmt.Fprintf(w, "  - %s\n", v.Explanation)
		}
	}
	if o.Fencing != "" {
		fmt.Fprintf(w, "  fencing: %s\n", o.Fencing)
	}
	if o.LivenessNote != "" {
		fmt.Fprintf(w, "  liveness: %s\n", o.LivenessNote)
	}
	fmt.Fprintf(w, "\ntrace hash %s\n", o.TraceHash)
	verdict := "MATCHED the expected verdicts"
	if !o.Matched {
		verdict = "did NOT match the expected verdicts"
	}
	if o.Inconclusive {
		verdict = "INCONCLUSIVE (the checker timed out)"
	}
	fmt.Fprintf(w, "%s (replay: simrun run %s --seed %d)\n", verdict, scenarioArg(s.File, s.Name), o.Seed)
}

// scenarioArg is the NAME|FILE argument that loads a scenario again: its
// name for a built-in (its File, "catalogue/NAME.yaml", names no file a
// user has), its file otherwise.
func scenarioArg(file, name string) string {
	if file == "" || strings.HasPrefix(file, "catalogue/") {
		return name
	}
	return file
}

func newReplayCmd() *cobra.Command {
	var traceIn string
	cmd := &cobra.Command{
		Use:   "replay RESULT.json",
		Short: "Re-run the scenario and seed of a recorded result and check the trace hash",
		Long: `Re-run the scenario and seed recorded in a JSON result (simrun run --json or
--out) and compare the trace hash. A mismatch exits 1 and, when the recorded
trace is available (--trace, or trace.jsonl beside the result), names the
first diverging event.`,
		Args: exactArgs(1, "RESULT.json"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return replay(cmd.OutOrStdout(), args[0], traceIn)
		},
	}
	cmd.Flags().StringVar(&traceIn, "trace", "", "the recorded trace (JSON Lines) to compare event by event")
	return cmd
}

func replay(w io.Writer, path, traceIn string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return withCode(exitBadInput, err)
	}
	var rec scenarios.Outcome
	if err := json.Unmarshal(data, &rec); err != nil {
		return withCode(exitBadInput, fmt.Errorf("%s: not a simrun result: %v", path, err))
	}
	if rec.Scenario == "" || rec.TraceHash == "" {
		return withCode(exitBadInput, fmt.Errorf("%s: not a simrun result (no scenario or trace_hash)", path))
	}
	s, err := loadScenario(scenarioArg(rec.File, rec.Scenario))
	if err != nil {
		return err
	}
	o, err := scenarios.Run(s, rec.Seed, scenarios.Options{KeepTrace: true})
	if err != nil {
		return withCode(exitInconclusive, err)
	}
	if o.TraceHash == rec.TraceHash {
		fmt.Fprintf(w, "replay of %s seed %d: trace hash %s matches\n", rec.Scenario, rec.Seed, o.TraceHash)
		return nil
	}
	fmt.Fprintf(w, "replay of %s seed %d: trace hash %s differs from the recorded %s\n", rec.Scenario, rec.Seed, o.TraceHash, rec.TraceHash)
	if traceIn == "" {
		if p := filepath.Join(filepath.Dir(path), "trace.jsonl"); fileExists(p) {
			traceIn = p
		}
	}
	if traceIn != "" {
		fh, err := os.Open(traceIn)
		if err != nil {
			return withCode(exitBadInput, err)
		}
		old, err := sim.ReadJSONL(fh)
		fh.Close()
		if err != nil {
			return withCode(exitBadInput, fmt.Errorf("%s: %w", traceIn, err))
		}
		if i := sim.FirstDivergence(old, o.Trace); i >= 0 {
			fmt.Fprintf(w, "first diverging event #%d:\n  recorded: %s\n  now:      %s\n", i+1, eventAt(old, i), eventAt(o.Trace, i))
		} else {
			fmt.Fprintf(w, "the recorded trace %s and this run agree on all %d events: the recorded trace hash does not belong to that trace\n", traceIn, len(old))
		}
	}
	return withCode(exitMismatch, errors.New("trace hash mismatch"))
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
