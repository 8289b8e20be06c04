package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim"
	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/sim"
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

Exit codes: 0 the runs agree (same verdicts, same trace hash); 1 they
differ; 2 bad input.`,
		Args: exactArgs(2, "A and B (result files or run folders)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return diffRuns(cmd.OutOrStdout(), args[0], args[1], traceA, traceB)
		},
	}
	cmd.Flags().StringVar(&traceA, "trace-a", "", "the trace of A (default: trace.jsonl beside A's result)")
	cmd.Flags().StringVar(&traceB, "trace-b", "", "the trace of B (default: trace.jsonl beside B's result)")
	return cmd
}

// recordedRun is one side of a diff.
type recordedRun struct {
	label  string
	path   string // the result file
	rec    *record.Run
	fields map[string]any // every top-level field, for verdicts added later
	trace  []sim.Event
	note   string // why there is no trace
}

func loadRecordedRun(label, arg, traceFlag, traceIn string) (*recordedRun, error) {
	path := arg
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		path = filepath.Join(arg, "result.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, badInput("%s: %v", label, err)
	}
	r := &recordedRun{label: label, path: path}
	if r.rec, err = record.Read(path, data); err != nil {
		return nil, badInput("%s: %v", label, err)
	}
	if err := json.Unmarshal(data, &r.fields); err != nil {
		return nil, badInput("%s: %s is not a simrun result: %v", label, path, err)
	}
	flag := traceFlag
	if traceIn == "" {
		traceIn, flag = filepath.Join(filepath.Dir(path), locksim.TraceFile), "trace"
		if !fileExists(traceIn) {
			r.note = "no trace beside " + path
			return r, nil
		}
	}
	r.trace, err = readTraceOf(r.rec, path, flag, traceIn)
	if err != nil {
		if flag == traceFlag {
			return nil, err // a trace named on the command line must fit
		}
		r.note = err.Error()
	}
	return r, nil
}

// verdictKeys are the result fields that hold verdicts: the checker's
// properties in registry order first, then any other whose value is a
// verdict (a result written by a build with another property), sorted.
func verdictKeys(a, b map[string]any) []string {
	var keys []string
	fixed := map[string]bool{}
	for _, p := range locksim.Properties() {
		keys = append(keys, p.About().Name)
		fixed[p.About().Name] = true
	}
	var extra []string
	seen := map[string]bool{}
	for _, m := range []map[string]any{a, b} {
		for k, v := range m {
			s, ok := v.(string)
			if !ok || fixed[k] || seen[k] {
				continue
			}
			switch locksim.Verdict(s) {
			case locksim.Holds, locksim.Violated, locksim.Unknown, locksim.NotJudged:
				seen[k] = true
				extra = append(extra, k)
			}
		}
	}
	sort.Strings(extra)
	return append(keys, extra...)
}

func field(m map[string]any, k string) string {
	v, ok := m[k]
	if !ok || v == nil {
		return "-"
	}
	return fmt.Sprint(v)
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
	differ := false
	for _, r := range []*recordedRun{a, b} {
		fmt.Fprintf(w, "%s: %s seed %d, %d events, trace hash %s (%s)\n", r.label, r.rec.Arg(), r.rec.Seed, r.rec.Events, short(r.rec.TraceHash), r.path)
	}
	switch ha, hb := a.rec.ScenarioSHA256, b.rec.ScenarioSHA256; {
	case a.rec.Scenario != b.rec.Scenario || a.rec.File != b.rec.File:
		fmt.Fprintln(w, "different scenarios")
		differ = true
	case ha != "" && hb != "" && ha != hb:
		// The same name, but the scenario changed between the runs.
		fmt.Fprintf(w, "different scenarios: the scenario changed between the runs (sha256 %s, %s)\n", short(ha), short(hb))
		differ = true
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\tA\tB\t")
	for _, k := range append(verdictKeys(a.fields, b.fields), "matched", "inconclusive") {
		va, vb := field(a.fields, k), field(b.fields, k)
		mark := ""
		if va != vb {
			mark, differ = "DIFFERS", true
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", strings.ReplaceAll(k, "_", " "), va, vb, mark)
	}
	tw.Flush()
	fmt.Fprintln(w)
	if a.rec.TraceHash == b.rec.TraceHash {
		fmt.Fprintf(w, "same trace hash %s: the runs are identical event by event\n", a.rec.TraceHash)
	} else {
		differ = true
		fmt.Fprintln(w, "the trace hashes differ")
		switch {
		case a.trace != nil && b.trace != nil:
			i := sim.FirstDivergence(a.trace, b.trace)
			fmt.Fprintf(w, "first diverging event #%d:\n  A: %s\n  B: %s\n", i+1, locksim.EventText(a.trace, i), locksim.EventText(b.trace, i))
		default:
			for _, r := range []*recordedRun{a, b} {
				if r.trace == nil {
					fmt.Fprintf(w, "no event comparison: %s: %s (give --trace-%s)\n", r.label, r.note, strings.ToLower(r.label))
				}
			}
		}
	}
	if differ {
		return withCode(exitMismatch, nil)
	}
	return nil
}
