package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim"
	"github.com/locksim/locksim/record"
)

func init() {
	extraCommands = append(extraCommands, newDiffCmd)
}

func newDiffCmd() *cobra.Command {
	var traceA, traceB string
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two recorded runs: verdicts, trace hashes and the first diverging event",
		Long: `Compare two runs recorded by simrun run --out (give the folders) or
simrun run --json (give the result files). Prints the scenario and seed of
each, every verdict side by side, and whether the trace hashes agree; when
both traces are at hand (trace.jsonl beside each result, or --trace-a and
--trace-b) and they belong to their results, the first diverging event.

The runs agree when their verdicts and trace hashes are the same.`,
		Args: exactArgs(2, "A and B (result files or run folders)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return diffRuns(cmd.OutOrStdout(), args[0], args[1], traceA, traceB)
		},
	}
	cmd.Flags().StringVar(&traceA, "trace-a", "", "the trace of A (default: trace.jsonl beside A's result)")
	cmd.Flags().StringVar(&traceB, "trace-b", "", "the trace of B (default: trace.jsonl beside B's result)")
	return cmd
}

func loadRecordedRun(label, arg, traceFlag, traceIn string) (*locksim.RecordedRun, error) {
	path := arg
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		path = filepath.Join(arg, "result.json")
	}
	data, err := record.ReadFile(path)
	if err != nil {
		return nil, badInput("%s: %v", label, err)
	}
	r := &locksim.RecordedRun{Label: label, Path: path}
	if r.Rec, err = record.Read(path, data); err != nil {
		return nil, badInput("%s: %v", label, err)
	}
	if err := json.Unmarshal(data, &r.Fields); err != nil {
		return nil, badInput("%s: %s is not a simrun result: %v", label, path, err)
	}
	flag := traceFlag
	if traceIn == "" {
		traceIn, flag = filepath.Join(filepath.Dir(path), locksim.TraceFile), "trace"
		if !fileExists(traceIn) {
			r.Note = "no trace beside " + path
			return r, nil
		}
	}
	r.Trace, err = readTraceOf(r.Rec, path, flag, traceIn)
	if err != nil {
		if flag == traceFlag {
			return nil, err // a trace named on the command line must fit
		}
		r.Note = err.Error()
	}
	return r, nil
}

func diffRuns(w io.Writer, argA, argB, traceA, traceB string) error {
	a, err := loadRecordedRun("A", argA, "--trace-a", traceA)
	if err != nil {
		return err
	}
	b, err := loadRecordedRun("B", argB, "--trace-b", traceB)
	if err != nil {
		return err
	}
	differ := locksim.WriteDiff(w, a, b)
	if differ {
		return withCode(exitMismatch, nil)
	}
	return nil
}
