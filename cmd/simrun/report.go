package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/outdir"
	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

func init() {
	extraCommands = append(extraCommands, newReportCmd, newSweepCmd, newMatrixCmd)
}

func newReportCmd() *cobra.Command {
	var outDir, traceIn string
	cmd := &cobra.Command{
		Use:   "report RESULT.json --out DIR",
		Short: "Draw the report of a recorded run (timeline, clocks, index.html) without re-running it",
		Long: `Draw the report of a run recorded by simrun run --out: timeline.png/svg,
clocks.png/svg and a self-contained index.html. The report is reconstructed
from the recorded result, its trace (trace.jsonl beside the result, or
--trace) and the scenario's names and initial clocks (the built-in scenario
or the file named in the result); the simulation is not run again.`,
		Args: exactArgs(1, "RESULT.json"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return reportCmd(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], traceIn, outDir)
		},
	}
	cmd.Flags().StringVar(&outDir, "out", "", "folder to write the report into (default: the result's folder)")
	cmd.Flags().StringVar(&traceIn, "trace", "", "the recorded trace (default: trace.jsonl beside the result)")
	return cmd
}

func reportCmd(w, stderr io.Writer, path, traceIn, outDir string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return withCode(exitBadInput, fmt.Errorf("RESULT.json: %w", err))
	}
	var rec scenarios.Outcome
	if err := json.Unmarshal(data, &rec); err != nil {
		return withCode(exitBadInput, fmt.Errorf("%s: not a simrun result: %v", path, err))
	}
	if rec.Scenario == "" || rec.TraceHash == "" {
		return withCode(exitBadInput, fmt.Errorf("%s: not a simrun result (no scenario or trace_hash)", path))
	}
	res := rec
	s, err := scenarioOfResult(rec.Scenario, rec.File)
	if err != nil {
		return err
	}
	resultDir := filepath.Dir(path)
	flag := "--trace"
	if traceIn == "" {
		traceIn, flag = filepath.Join(resultDir, "trace.jsonl"), "trace"
		if !fileExists(traceIn) {
			return withCode(exitBadInput, fmt.Errorf("%s: no trace beside the result (trace.jsonl); write one with simrun run --out, or name it with --trace", path))
		}
	}
	trace, err := readTraceOf(&rec, s, path, flag, traceIn)
	if err != nil {
		return err
	}
	if outDir == "" {
		outDir = resultDir
	}
	g := newOutputGuard(stderr)
	defer g.stop()
	out, err := outdir.Prepare(outDir)
	if err != nil {
		return badInput("--out: %v", err)
	}
	defer out.Close()
	g.track(out)
	// Porcupine's visualizations come with the result: copied along when
	// the result says their property was violated (a page of another run
	// left in the folder is not this result's).
	var vis []string
	for _, v := range []struct {
		file    string
		verdict string
	}{{"lock.html", string(rec.Verdicts.Of(checker.LockSafety))}, {"resource.html", string(rec.Verdicts.Of(checker.ResourceSafety))}} {
		src := filepath.Join(resultDir, v.file)
		if v.verdict != "violated" || !fileExists(src) {
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			return withCode(exitBadInput, err)
		}
		if err := g.stageBytes(out, v.file, b); err != nil {
			g.abort()
			return badInput("--out: %v", err)
		}
		vis = append(vis, v.file)
	}
	if err := stageRunReport(g, out, s, res, trace, vis); err != nil {
		g.abort()
		return err
	}
	// result.json and trace.jsonl are kept in place (the report reads them).
	stale := []string{"index.html", "timeline.png", "timeline.svg", "clocks.png", "clocks.svg", "lock.html", "resource.html"}
	if err := g.commit(func() error { return out.RemoveStale(stale...) }); err != nil {
		return badInput("--out: %v", err)
	}
	fmt.Fprintf(w, "report of %s seed %d written to %s (index.html, timeline.png/svg, clocks.png/svg)\n", rec.Scenario, rec.Seed, outDir)
	return nil
}

// readTraceOf reads the trace file at path for the result rec (read from
// resultPath) and checks that it belongs to it: a trace that is missing,
// not JSON Lines, empty, of another scenario or another seed is bad input,
// named with flag.
func readTraceOf(rec *scenarios.Outcome, s *scenarios.Scenario, resultPath, flag, path string) ([]sim.Event, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, badInput("%s: %v", flag, err)
	}
	trace, err := sim.ReadJSONL(fh)
	fh.Close()
	if err != nil {
		return nil, badInput("%s %s: not a simrun trace: %v", flag, path, err)
	}
	if len(trace) == 0 {
		return nil, badInput("%s %s: the trace is empty", flag, path)
	}
	w, err := scenarios.Build(s, rec.Seed, false)
	if err != nil {
		return nil, badInput("%s: %v", resultPath, err)
	}
	h, err := sim.HashEvents(trace, w.Kernel.Lookup)
	if err != nil {
		return nil, badInput("%s %s does not belong to %s (scenario %s): %v", flag, path, resultPath, rec.Scenario, err)
	}
	if got := sim.HashString(h); got != rec.TraceHash {
		return nil, badInput("%s %s does not belong to %s: its %d events hash to %s, the result (scenario %s, seed %d) records trace hash %s over %d events", flag, path, resultPath, len(trace), short(got), rec.Scenario, rec.Seed, short(rec.TraceHash), rec.Events)
	}
	return trace, nil
}

// short abbreviates a trace hash for messages.
func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "..."
	}
	return h
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// scenarioOfResult finds the scenario a result names: the built-in by name
// for catalogue scenarios, otherwise the file.
func scenarioOfResult(name, file string) (*scenarios.Scenario, error) {
	arg := file
	if arg == "" || strings.HasPrefix(arg, "catalogue/") {
		arg = name
	}
	return loadScenario(arg)
}

// replayArg is how a command line names a scenario: built-ins by name,
// files by path.
func replayArg(s *scenarios.Scenario) string {
	if s.File == "" || strings.HasPrefix(s.File, "catalogue/") {
		return s.Name
	}
	return s.File
}

// stageRunReport draws the report of one run and stages its files in d:
// the one code path for simrun run --out and simrun report, so that both
// write the same bytes. vis names porcupine's pages that go with it.
func stageRunReport(g *outputGuard, d *outdir.Dir, s *scenarios.Scenario, res reports.Result, trace []sim.Event, vis []string) error {
	setup, err := reportSetup(s)
	if err != nil {
		return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
	}
	run := &reports.Run{
		Setup:          setup,
		Result:         res,
		Trace:          trace,
		Command:        fmt.Sprintf("simrun run %s --seed %d", shellQuote(replayArg(s)), res.Seed),
		Visualizations: vis,
	}
	files, err := reports.RenderRun(run)
	if err != nil {
		return withCode(exitInconclusive, fmt.Errorf("writing the report: %w", err))
	}
	for _, name := range reports.RunFiles {
		if err := g.stageBytes(d, name, files[name]); err != nil {
			return badInput("--out: %v", err)
		}
	}
	return nil
}

// shellQuote quotes a word for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// reportSetup extracts what a report needs from a scenario (reports.SetupOf).
func reportSetup(s *scenarios.Scenario) (reports.Setup, error) { return reports.SetupOf(s) }
