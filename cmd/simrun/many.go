package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/locksim/locksim"
	"github.com/locksim/locksim/internal/exit"
	"github.com/locksim/locksim/internal/outdir"
	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/reports"
)

// runMany runs several scenarios and prints one line each. Every scenario
// is loaded, and every output checked, before the first run.
func runMany(stdout, stderr io.Writer, args []string, f runFlags) error {
	if f.traceOut != "" {
		return badInput("--trace names one file: use --out DIR with several scenarios (one report folder each)")
	}
	args, err := locksim.ExpandArgs(args)
	if err != nil {
		return withCode(exitBadInput, err)
	}
	type item struct {
		arg string
		s   *locksim.Scenario
		out *outdir.Dir
		sub string
	}
	var items []item
	for _, a := range args {
		s, err := openEdited(a, f.sets)
		if err != nil {
			return err
		}
		items = append(items, item{arg: a, s: s})
	}
	g := outdir.NewGuard(stderr)
	defer g.Stop()
	if f.outDir != "" {
		seen := map[string]int{}
		for i := range items {
			sub := items[i].s.Name()
			if seen[sub]++; seen[sub] > 1 {
				sub = fmt.Sprintf("%s-%d", sub, seen[sub])
			}
			d, err := claimRunOut(filepath.Join(f.outDir, sub), "simrun run "+items[i].s.Name())
			if err != nil {
				return badInput("--out: %v", err)
			}
			defer d.Close()
			g.Track(d)
			items[i].out, items[i].sub = d, sub
		}
	}
	type row struct {
		arg  string
		o    *record.Run
		code int
		err  string
	}
	var rows []row
	var outcomes []*record.Run
	var index []reports.IndexEntry
	worst := exitOK
	for _, it := range items {
		res, err := runOnce(it.s, f, it.out != nil, nil)
		var o *record.Run
		if err == nil {
			o = res.Record()
			if note := res.DeterminismNote(); note != "" {
				fmt.Fprintln(stderr, it.arg+": "+note)
			}
		}
		r := row{arg: it.arg, o: o}
		if err == nil && it.out != nil {
			err = writeRunOutputs(g, res, "", it.out)
		}
		if err == nil {
			err = outcomeCode(o)
		}
		r.code = exitCodeOf(err)
		if err != nil && err.Error() != "" {
			r.err = err.Error()
		}
		worst = max(worst, r.code)
		rows = append(rows, r)
		index = append(index, reports.IndexEntry{Dir: it.sub, Arg: it.arg, Run: o, Error: firstLine(r.err), Exit: r.code})
		if o != nil {
			outcomes = append(outcomes, o)
		}
	}
	if f.outDir != "" {
		if err := reports.WriteRunIndex(f.outDir, index); err != nil {
			return withCode(exitInconclusive, err)
		}
	}
	if f.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(outcomes); err != nil {
			return withCode(exitInconclusive, err)
		}
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		props := locksim.Properties()
		head, none := "SCENARIO\tSEED\t", ""
		for _, p := range props {
			head += strings.ToUpper(p.About().Short) + "\t"
			none += "-\t"
		}
		fmt.Fprintln(tw, head+"RESULT\tEXIT")
		matched := 0
		for _, r := range rows {
			if r.o == nil {
				fmt.Fprintf(tw, "%s\t-\t%s%s\t%d\n", r.arg, none, firstLine(r.err), r.code)
				continue
			}
			result := "matched"
			switch {
			case r.o.Inconclusive:
				result = "INCONCLUSIVE"
			case !r.o.Matched:
				result = "MISMATCH"
			default:
				matched++
			}
			if r.err != "" {
				result += ": " + firstLine(r.err)
			}
			verdicts := ""
			for _, p := range props {
				verdicts += string(r.o.Verdicts.Of(p.About().Name)) + "\t"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s%s\t%d\n", r.o.Arg(), r.o.Seed, verdicts, result, r.code)
		}
		tw.Flush()
		fmt.Fprintf(stdout, "\n%d of %d scenarios matched their expected verdicts\n", matched, len(rows))
	}
	if worst == exitOK {
		return nil
	}
	return withCode(worst, nil)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// exitCodeOf is the exit code an error of a command stands for.
var exitCodeOf = exit.CodeOf
