package locksim

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/sim"
)

// RecordedRun is one side of simrun diff: a recorded result and, when at
// hand, its trace.
type RecordedRun struct {
	Label  string
	Path   string // the result file
	Rec    *record.Run
	Fields map[string]any // every top-level field, for verdicts added later
	Trace  []sim.Event
	Note   string // why there is no trace
}

// WriteDiff prints simrun diff's comparison of a and b: the scenario and
// seed of each, every verdict side by side, whether the trace hashes agree
// and, when both traces are at hand, the first diverging event. It reports
// whether the runs differ.
func WriteDiff(w io.Writer, a, b *RecordedRun) bool {
	differ := false
	for _, r := range []*RecordedRun{a, b} {
		fmt.Fprintf(w, "%s: %s seed %d, %d events, trace hash %s (%s)\n", r.Label, r.Rec.Arg(), r.Rec.Seed, r.Rec.Events, short(r.Rec.TraceHash), r.Path)
	}
	switch ha, hb := a.Rec.ScenarioSHA256, b.Rec.ScenarioSHA256; {
	case a.Rec.Scenario != b.Rec.Scenario || a.Rec.File != b.Rec.File:
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
	for _, k := range append(verdictKeys(a.Fields, b.Fields), "matched", "inconclusive") {
		va, vb := field(a.Fields, k), field(b.Fields, k)
		mark := ""
		if va != vb {
			mark, differ = "DIFFERS", true
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", strings.ReplaceAll(k, "_", " "), va, vb, mark)
	}
	tw.Flush()
	fmt.Fprintln(w)
	if a.Rec.TraceHash == b.Rec.TraceHash {
		fmt.Fprintf(w, "same trace hash %s: the runs are identical event by event\n", a.Rec.TraceHash)
	} else {
		differ = true
		fmt.Fprintln(w, "the trace hashes differ")
		switch {
		case a.Trace != nil && b.Trace != nil:
			i := sim.FirstDivergence(a.Trace, b.Trace)
			fmt.Fprint(w, DivergenceText(a.Trace, b.Trace, i, "A", "B"))
		default:
			for _, r := range []*RecordedRun{a, b} {
				if r.Trace == nil {
					fmt.Fprintf(w, "no event comparison: %s: %s (give --trace-%s)\n", r.Label, r.Note, strings.ToLower(r.Label))
				}
			}
		}
	}
	return differ
}

// verdictKeys are the result fields that hold verdicts: the checker's
// properties in registry order first, then any other whose value is a
// verdict (a result written by a build with another property), sorted.
func verdictKeys(a, b map[string]any) []string {
	var keys []string
	fixed := map[string]bool{}
	for _, p := range Properties() {
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
			switch Verdict(s) {
			case Holds, Violated, Unknown, NotJudged:
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
