package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim"
	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/internal/outdir"
	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/sim"
)

// openScenario resolves NAME|FILE through the facade, mapping every
// user error to exit 2.
func openScenario(arg string) (*locksim.Scenario, error) {
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return nil, badInput("%s is a directory, not a scenario file", arg)
	}
	s, err := locksim.Open(arg)
	if err != nil {
		return nil, scenarioError(err)
	}
	return s, nil
}

// openEdited is openScenario with run's --set edits applied.
func openEdited(arg string, sets []string) (*locksim.Scenario, error) {
	s, err := openScenario(arg)
	if err != nil || len(sets) == 0 {
		return s, err
	}
	if s, err = s.With(sets...); err != nil {
		return nil, badInput("--set %v", err)
	}
	return s, nil
}

// scenarioError maps an error loading a scenario to exit 2.
func scenarioError(err error) error {
	var nf *locksim.NotFoundError
	if errors.As(err, &nf) {
		return notFound(nf.Name)
	}
	return withCode(exitBadInput, err)
}

type runFlags struct {
	seed     uint64
	seedSet  bool
	jsonOut  bool
	traceOut string
	outDir   string
	determ   bool
	events   int
	sets     []string
	budget   budgetFlags
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run NAME|FILE|DIR...",
		Short: "Run scenarios and check their verdicts",
		Long: `Run a built-in scenario (see simrun list) or a scenario file, print the key
events, the verdicts with their explanation and the trace hash.

With several names, files or a directory (its *.yaml and *.yml files), run
each and print a summary table; --out DIR then writes one report folder per
scenario under DIR and DIR/index.html listing them, --json a JSON array.

With several scenarios, simrun exits with the worst of their codes.`,
		Args:              minArgs(1, "NAME|FILE|DIR"),
		ValidArgsFunction: completeScenarios,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.seedSet = cmd.Flags().Changed("seed")
			return runCommand(cmd.OutOrStdout(), cmd.ErrOrStderr(), args, f)
		},
	}
	cmd.Flags().Uint64Var(&f.seed, "seed", 0, "seed of the run (default: the scenario's seed)")
	cmd.Flags().BoolVar(&f.jsonOut, "json", false, "print one JSON object instead of the summary")
	cmd.Flags().StringVar(&f.traceOut, "trace", "", "write the full trace as JSON Lines to this file")
	cmd.Flags().StringVar(&f.outDir, "out", "", "write the report (result.json, trace, checker visualizations) into this folder")
	cmd.Flags().BoolVar(&f.determ, "check-determinism", false, "run twice and compare the traces event by event")
	cmd.Flags().IntVar(&f.events, "events", locksim.DefaultKeyEvents, "most key events the summary prints (0: all)")
	cmd.Flags().StringArrayVar(&f.sets, "set", nil, "PATH=VALUE: change one field of the scenario, a path as sweep's --param takes it (e.g. clients[0].lock.ttl=5s; repeatable)")
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

// minArgs is cobra.MinimumNArgs with a message that names the argument.
func minArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return badInput("%s needs %s (got %d arguments)\n\n%s", cmd.CommandPath(), what, len(args), cmd.UsageString())
		}
		return nil
	}
}

// runCommand runs one scenario (the detailed summary) or several (a table).
func runCommand(stdout, stderr io.Writer, args []string, f runFlags) error {
	if f.events < 0 {
		return badInput("--events must be 0 (all) or more, got %d", f.events)
	}
	if len(args) == 1 {
		if st, err := os.Stat(args[0]); err != nil || !st.IsDir() {
			return runScenario(stdout, stderr, args[0], f)
		}
	}
	return runMany(stdout, stderr, args, f)
}

// inputFile is the scenario file arg names, "" for a built-in.
func inputFile(arg string) string {
	if fileExists(arg) {
		return arg
	}
	return ""
}

func runScenario(stdout, stderr io.Writer, arg string, f runFlags) error {
	s, err := openEdited(arg, f.sets)
	if err != nil {
		return err
	}
	// Every output is checked before the run, so a long run does not end
	// in "cannot write" and never overwrites its own scenario.
	if f.traceOut != "" {
		if err := outdir.CheckOutputFile(f.traceOut, inputFile(arg)); err != nil {
			return badInput("--trace: %v", err)
		}
	}
	g := outdir.NewGuard(stderr)
	defer g.Stop()
	var out *outdir.Dir
	if f.outDir != "" {
		if out, err = claimRunOut(f.outDir, fmt.Sprintf("simrun run %s", s.Name())); err != nil {
			return badInput("--out: %v", err)
		}
		defer out.Close()
		g.Track(out)
		if in := inputFile(arg); in != "" && out.Holds(in, locksim.ReportNames()) {
			return badInput("--out: %s would overwrite the scenario %s", out.Path(), in)
		}
	}
	// --trace alone streams the trace to its (staged) file as the run
	// goes; --out and --check-determinism need it in memory.
	var stream *outdir.TraceStream
	if f.traceOut != "" && out == nil && !f.determ {
		if stream, err = g.StageTraceStream(f.traceOut); err != nil {
			return badInput("--trace: %v", err)
		}
		defer stream.Close()
	}
	r, err := runOnce(s, f, out != nil, stream.Sink())
	if err != nil {
		g.Abort()
		return err
	}
	if note := r.DeterminismNote(); note != "" {
		fmt.Fprintln(stderr, note)
	}
	if stream != nil {
		if err := stream.Finish(g); err != nil {
			return badInput("--trace: %v", err)
		}
	} else if err := writeRunOutputs(g, r, f.traceOut, out); err != nil {
		return err
	}
	if f.jsonOut {
		if err := r.WriteJSON(stdout); err != nil {
			return withCode(exitInconclusive, err)
		}
	} else {
		r.WriteSummary(stdout, traceWhere(f))
	}
	return outcomeCode(r.Record())
}

// traceWhere says where the full trace of a run is, for the summary.
func traceWhere(f runFlags) string {
	switch {
	case f.traceOut != "":
		return f.traceOut
	case f.outDir != "":
		return filepath.Join(f.outDir, locksim.TraceFile)
	}
	return "--trace FILE or --out DIR"
}

// runOnce runs s through the facade with f's seed, budgets and checks,
// keeping porcupine's pages (when visualize: --out) and the trace when
// something reads it (--trace, --out, --check-determinism); otherwise only
// the key events the summary prints are kept as the run goes, so that a
// long run's memory is its history, not its trace (issue 15). A non-nil
// stream receives every event as it happens (--trace streamed to its
// file).
func runOnce(s *locksim.Scenario, f runFlags, visualize bool, stream func(*sim.Event)) (*locksim.Result, error) {
	opt := locksim.Options{
		Seed:             f.seed,
		KeepTrace:        visualize || (f.traceOut != "" && stream == nil),
		CheckDeterminism: f.determ,
		KeyEvents:        f.events,
		OnEvent:          stream,
	}
	if f.events == 0 {
		opt.KeyEvents = -1 // --events 0: all of them
	}
	if !f.seedSet {
		opt.Seed = 0 // the scenario's own
	}
	opt.SeedZero = f.seedSet && f.seed == 0
	if err := f.budget.apply(&opt); err != nil {
		return nil, err
	}
	r, err := locksim.Run(s, opt)
	var re *locksim.RunError
	var de *locksim.DeterminismError
	switch {
	case errors.As(err, &de):
		return nil, withCode(exitMismatch, err)
	case errors.As(err, &re):
		if berr := budgetError(re.Err); berr != re.Err {
			return nil, berr
		}
		return nil, withCode(exitInconclusive, fmt.Errorf("internal error running %s: %w", re.Scenario, re.Err))
	case err != nil:
		return nil, withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
	}
	return r, nil
}

// writeRunOutputs writes --trace and the --out report, all staged and
// committed together (see outputGuard).
func writeRunOutputs(g *outdir.Guard, r *locksim.Result, traceOut string, out *outdir.Dir) error {
	if traceOut == "" && out == nil {
		return nil
	}
	fail := func(flag string, err error) error {
		g.Abort()
		return badInput("%s: %v", flag, err)
	}
	if traceOut != "" {
		td, err := outdir.PrepareParent(traceOut)
		if err != nil {
			return fail("--trace", err)
		}
		defer td.Close()
		g.Track(td)
		if err := g.StageTrace(td, filepath.Base(traceOut), r.Record().Trace); err != nil {
			return fail("--trace", err)
		}
	}
	if out == nil {
		return g.Commit(nil)
	}
	files, err := r.ReportFiles()
	if err != nil {
		g.Abort()
		return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
	}
	if err := g.StageTrace(out, locksim.TraceFile, r.Record().Trace); err != nil {
		return fail("--out", err)
	}
	for _, file := range files {
		if err := g.StageBytes(out, file.Name, file.Data); err != nil {
			return fail("--out", err)
		}
	}
	if err := g.Commit(func() error { return out.RemoveStale(locksim.ReportNames()...) }); err != nil {
		return badInput("--out: %v", err)
	}
	return nil
}

// claimRunOut claims path for a run's report, written by what; a folder
// holding a campaign's results is refused (a run's report beside a
// campaign's findings would be a mix of two outputs).
func claimRunOut(path, what string) (*outdir.Dir, error) {
	if fileExists(filepath.Join(path, fuzz.ManifestFile)) {
		return nil, fmt.Errorf("%s holds a campaign's results (%s): give another folder", path, fuzz.ManifestFile)
	}
	return outdir.Claim(path, what)
}

func outcomeCode(o *record.Run) error {
	switch {
	case o.Inconclusive:
		return withCode(exitInconclusive, nil)
	case !o.Matched:
		return withCode(exitMismatch, nil)
	}
	return nil
}

func newReplayCmd() *cobra.Command {
	var traceIn string
	cmd := &cobra.Command{
		Use:   "replay RESULT.json [NAME|FILE]",
		Short: "Re-run the scenario and seed of a recorded result and check the trace hash",
		Long: `Re-run the scenario and seed recorded in a JSON result (simrun run --json or
--out) and compare the trace hash. The result carries the scenario it ran,
so replay works from any directory without the scenario file. A mismatch
exits 1 and, when the recorded trace is available (--trace, or trace.jsonl
beside the result), names the first diverging event.

With NAME|FILE, replay that scenario instead, after checking that it is the
one the result recorded: when it is not, replay says "the scenario changed"
and exits 1 without running it.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 2 {
				return nil
			}
			return exactArgs(1, "RESULT.json")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return replay(cmd.OutOrStdout(), args[0], append(args[1:], "")[0], traceIn)
		},
	}
	cmd.Flags().StringVar(&traceIn, "trace", "", "the recorded trace (JSON Lines) to compare event by event")
	return cmd
}

// readRecord reads a result file for a command, every error exit 2.
func readRecord(path string) (*record.Run, error) {
	rec, err := locksim.ReadRecord(path)
	if err != nil {
		return nil, withCode(exitBadInput, err)
	}
	return rec, nil
}

// recordedScenario is the scenario a result ran, or the one arg names
// when it is that scenario.
func recordedScenario(rec *record.Run, arg string) (*locksim.Scenario, error) {
	if arg == "" {
		if rec.ScenarioText == "" {
			return openScenario(rec.Arg()) // a result of an older simrun
		}
		s, err := locksim.RecordedScenario(rec)
		if err != nil {
			return nil, withCode(exitBadInput, err)
		}
		return s, nil
	}
	s, err := openScenario(arg)
	if err != nil {
		return nil, err
	}
	var changed *locksim.ScenarioChangedError
	if err := locksim.SameScenario(rec, s); errors.As(err, &changed) {
		return nil, withCode(exitMismatch, err)
	} else if err != nil {
		return nil, withCode(exitBadInput, err)
	}
	return s, nil
}

func replay(w io.Writer, path, arg, traceIn string) error {
	rec, err := readRecord(path)
	if err != nil {
		return err
	}
	s, err := recordedScenario(rec, arg)
	if err != nil {
		return err
	}
	// A trace named on the command line must be the result's, whatever the
	// replay finds: checked first.
	var recorded []sim.Event
	if traceIn != "" {
		if recorded, err = readTraceOf(rec, path, "--trace", traceIn); err != nil {
			return err
		}
	}
	r, err := locksim.Replay(rec, s, locksim.Options{})
	if err != nil {
		return withCode(exitInconclusive, err)
	}
	if r.TraceHash == rec.TraceHash {
		// The same events; the verdicts and the rest of the record must
		// be the replay's too (an edited result replayed as "matches").
		diffs, err := locksim.RecordDifferences(rec, r.Record())
		if err != nil {
			return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
		}
		if len(diffs) == 0 {
			fmt.Fprintf(w, "replay of %s seed %d: trace hash %s matches, and so do the verdicts and the run record\n", rec.Scenario, rec.Seed, r.TraceHash)
			return nil
		}
		fmt.Fprintf(w, "replay of %s seed %d: trace hash %s matches, but the result differs from its replay in %d field(s) (edited, or written by another build):\n", rec.Scenario, rec.Seed, r.TraceHash, len(diffs))
		for _, d := range diffs {
			fmt.Fprintf(w, "  %s\n", d)
		}
		return withCode(exitMismatch, errors.New("recorded result mismatch"))
	}
	fmt.Fprintf(w, "replay of %s seed %d: trace hash %s differs from the recorded %s\n", rec.Scenario, rec.Seed, r.TraceHash, rec.TraceHash)
	if traceIn == "" {
		if p := filepath.Join(filepath.Dir(path), locksim.TraceFile); fileExists(p) {
			if recorded, err = readTraceOf(rec, path, "trace", p); err != nil {
				fmt.Fprintf(w, "no event comparison: %v\n", err)
			}
		}
	}
	if recorded != nil {
		now := r.Record().Trace
		if i := sim.FirstDivergence(recorded, now); i >= 0 {
			fmt.Fprint(w, locksim.DivergenceText(recorded, now, i, "recorded", "now"))
		}
	}
	return withCode(exitMismatch, errors.New("trace hash mismatch"))
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
