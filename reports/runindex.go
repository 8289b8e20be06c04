package reports

import (
	"bytes"
	"html/template"
	"path/filepath"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/outdir"
	"github.com/locksim/locksim/record"
)

// IndexEntry is one scenario of a combined index (simrun run A B C --out
// DIR): the folder its report went to, under the index's folder, and its
// record; Run is nil when the run could not happen (Error says why).
type IndexEntry struct {
	// Dir is the report's folder, relative to the index (the scenario's
	// name, or name-2 for a second run of the same name).
	Dir string
	// Arg is the scenario as given on the command line.
	Arg string
	Run *record.Run
	// Error is the first line of the run's error, and Exit its exit code.
	Error string
	Exit  int
}

// RunIndexFile is the combined index's file name.
const RunIndexFile = "index.html"

// WriteRunIndex writes the combined index of several runs' reports into
// dir (atomically, as every report file): dir/index.html.
func WriteRunIndex(dir string, entries []IndexEntry) error {
	page, err := RunIndexHTML(entries)
	if err != nil {
		return err
	}
	return outdir.WriteFileAtomic(filepath.Join(dir, RunIndexFile), page)
}

type indexVerdict struct {
	Verdict  checker.Verdict
	Expected string
	Status   string // "ok", "mismatch" or ""
}

type indexRow struct {
	IndexEntry
	Link     string
	Verdicts []indexVerdict
	Result   string
	Class    string
	Grants   string
	Latency  string
	Unavail  string
	Vacuous  []string
}

type indexData struct {
	Props   []string
	Rows    []indexRow
	Matched int
}

var runIndex = template.Must(template.New("runindex").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>locksim: {{len .Rows}} scenarios</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; margin: 1.5em auto; max-width: 1400px; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; }
table { border-collapse: collapse; }
td, th { padding: 2px 10px; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; }
tr:nth-child(even) td { background: #f6f6f6; }
.violated, .mismatch, .error { color: #b00; font-weight: bold; }
.holds, .ok { color: #060; }
.vacuous { color: #a60; }
.muted { color: #777; }
</style>
</head>
<body>
<h1>{{len .Rows}} scenarios, {{.Matched}} matched their expected verdicts</h1>
<p class="muted">One report folder per scenario; the verdicts with the expected one in brackets (red: a mismatch), then the run's numbers: grants, the median acquisition latency and the time the lock stood free while someone waited.</p>
<table>
<tr><th>scenario</th><th class="num">seed</th>{{range .Props}}<th>{{.}}</th>{{end}}<th>result</th><th class="num">grants</th><th class="num">latency p50</th><th class="num">unavailable</th><th class="num">exit</th></tr>
{{range .Rows}}<tr>{{if .Run}}<td><a href="{{.Link}}">{{.Run.Scenario}}</a>{{with .Run.Setup}}{{with .Title}}<br><span class="muted">{{.}}</span>{{end}}{{end}}{{range .Vacuous}}<br><span class="vacuous">vacuous: {{.}}</span>{{end}}</td><td class="num">{{.Run.Seed}}</td>{{range .Verdicts}}<td class="{{.Verdict}}">{{.Verdict}}{{if .Expected}} <span class="{{.Status}}">({{.Expected}})</span>{{end}}</td>{{end}}<td class="{{.Class}}">{{.Result}}</td><td class="num">{{.Grants}}</td><td class="num">{{.Latency}}</td><td class="num">{{.Unavail}}</td>{{else}}<td>{{.Arg}}</td><td class="num">-</td>{{range $.Props}}<td>-</td>{{end}}<td class="error">{{.Error}}</td><td></td><td></td><td></td>{{end}}<td class="num">{{.Exit}}</td></tr>
{{end}}</table>
</body>
</html>
`))

// RunIndexHTML renders the combined index of several runs: per scenario
// a link to its report, its verdicts beside the expected ones, whether
// they matched, its numbers (grants, median acquisition latency,
// unavailable time) and its exit code.
func RunIndexHTML(entries []IndexEntry) ([]byte, error) {
	var d indexData
	props := checker.Properties()
	for _, p := range props {
		d.Props = append(d.Props, p.About().Title)
	}
	for _, e := range entries {
		r := indexRow{IndexEntry: e, Link: e.Dir + "/" + RunIndexFile}
		if o := e.Run; o != nil {
			for _, p := range props {
				name := p.About().Name
				v := indexVerdict{Verdict: o.Verdicts.Of(name), Expected: o.Expected[name]}
				if v.Expected != "" {
					v.Status = "ok"
					if string(v.Verdict) != v.Expected {
						v.Status = "mismatch"
					}
				}
				r.Verdicts = append(r.Verdicts, v)
			}
			r.Result, r.Class = "matched", "ok"
			switch {
			case o.Inconclusive:
				r.Result, r.Class = "INCONCLUSIVE", "mismatch"
			case !o.Matched:
				r.Result, r.Class = "MISMATCH", "mismatch"
			default:
				d.Matched++
			}
			if e.Error != "" {
				r.Result += ": " + e.Error
			}
			r.Vacuous = o.Vacuous
			r.Grants, r.Latency, r.Unavail = "-", "-", "-"
			if st := o.Stats; st != nil {
				r.Grants = itoa(st.Grants)
				if st.Latency.Count > 0 {
					r.Latency = st.Latency.P50.Round(time.Microsecond).String()
				}
				r.Unavail = st.Unavailable.Round(time.Microsecond).String()
			}
		}
		d.Rows = append(d.Rows, r)
	}
	var b bytes.Buffer
	if err := runIndex.Execute(&b, d); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func itoa(n int) string {
	if n < 0 {
		return "-" + uitoa(uint64(-n))
	}
	return uitoa(uint64(n))
}
