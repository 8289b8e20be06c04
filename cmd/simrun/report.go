package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim"
	"github.com/locksim/locksim/internal/bounded"
	"github.com/locksim/locksim/internal/outdir"
	"github.com/locksim/locksim/record"
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
from the recorded result (which carries the scenario's text, names and
initial clocks) and its trace (trace.jsonl beside the result, or --trace);
the simulation is not run again and the scenario file is not needed.`,
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
	if _, err := os.Stat(path); err != nil {
		return withCode(exitBadInput, fmt.Errorf("RESULT.json: %w", err))
	}
	rec, err := readRecord(path)
	if err != nil {
		return err
	}
	if !rec.Described() {
		// A result of an older simrun: its report needs its scenario.
		if _, err := recordedScenario(rec, ""); err != nil {
			return err
		}
	}
	resultDir := filepath.Dir(path)
	flag := "--trace"
	if traceIn == "" {
		traceIn, flag = filepath.Join(resultDir, locksim.TraceFile), "trace"
		if !fileExists(traceIn) {
			return withCode(exitBadInput, fmt.Errorf("%s: no trace beside the result (trace.jsonl); write one with simrun run --out, or name it with --trace", path))
		}
	}
	trace, err := readTraceOf(rec, path, flag, traceIn)
	if err != nil {
		return err
	}
	pages, err := locksim.ReadPages(rec, resultDir)
	if err != nil {
		return withCode(exitBadInput, err)
	}
	files, err := locksim.RenderReport(rec, trace, pages)
	if err != nil {
		return recordError(path, err)
	}
	if outDir == "" {
		outDir = resultDir
	}
	g := outdir.NewGuard(stderr)
	defer g.Stop()
	out, err := outdir.Claim(outDir, fmt.Sprintf("simrun report of %s seed %d", rec.Scenario, rec.Seed))
	if err != nil {
		return badInput("--out: %v", err)
	}
	defer out.Close()
	g.Track(out)
	for _, f := range files {
		if err := g.StageBytes(out, f.Name, f.Data); err != nil {
			g.Abort()
			return badInput("--out: %v", err)
		}
	}
	// result.json and trace.jsonl are kept in place (the report reads them).
	if err := g.Commit(func() error { return out.RemoveStale(locksim.ReportNames()[2:]...) }); err != nil {
		return badInput("--out: %v", err)
	}
	fmt.Fprintf(w, "report of %s seed %d written to %s (index.html, timeline.png/svg, clocks.png/svg)\n", rec.Scenario, rec.Seed, outDir)
	return nil
}

// recordError maps an error of reading a result back: a result of an
// older simrun whose scenario cannot be had is bad input, anything else
// internal.
func recordError(path string, err error) error {
	var nf *locksim.NotFoundError
	var le *locksim.LegacyError
	switch {
	case errors.As(err, &nf):
		return notFound(nf.Name)
	case errors.As(err, &le):
		return badInput("%s: %v", path, err)
	}
	return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
}

// readTraceOf reads the trace file at path for the result rec (read from
// resultPath) and checks that it belongs to it: a trace that is missing,
// not JSON Lines, empty, of another scenario or another seed is bad input,
// named with flag.
func readTraceOf(rec *record.Run, resultPath, flag, path string) ([]sim.Event, error) {
	fh, err := bounded.Open(path, "a trace file")
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
	err = locksim.CheckTrace(rec, trace)
	var nf *locksim.NotFoundError
	var le *locksim.LegacyError
	var tm *locksim.TraceMismatchError
	switch {
	case err == nil:
		return trace, nil
	case errors.As(err, &nf):
		return nil, notFound(nf.Name)
	case errors.As(err, &le):
		return nil, badInput("%s: %v", resultPath, err)
	case errors.As(err, &tm):
		return nil, badInput("%s %s does not belong to %s: %v, the result (scenario %s, seed %d) records trace hash %s over %d events", flag, path, resultPath, err, rec.Scenario, rec.Seed, short(rec.TraceHash), rec.Events)
	}
	return nil, badInput("%s %s does not belong to %s (scenario %s): %v", flag, path, resultPath, rec.Scenario, err)
}

// short abbreviates a trace hash for messages.
func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "..."
	}
	return h
}
