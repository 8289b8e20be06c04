package reports

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// MatrixCell is one algorithm under one fault family.
type MatrixCell struct {
	// NA is true when the family does not apply to the algorithm's world
	// (a Sentinel failover without Sentinel).
	NA     bool
	Counts Counts
	// Replay replays the cell's first run that violated lock or resource
	// safety ("" when none did).
	Replay string
}

// Matrix is the result of simrun matrix: the violation rates of
// algorithms (rows) under random fault schedules of each family (columns).
type Matrix struct {
	Rows  []string
	Cols  []string
	Cells [][]MatrixCell // [row][col]
	// Runs is the number of random schedules per cell; Seed the base seed.
	Runs int
	Seed uint64
	// Notes explain the rows and columns (one line each), for the tables.
	Notes []string
}

// MatrixImage draws two heatmaps: the lock-safety and the resource-safety
// violation rates, algorithms by fault family.
func MatrixImage(m *Matrix) (Image, error) {
	var maps []*heatmap
	for _, v := range []Verdict{LockSafety, ResourceSafety} {
		h := &heatmap{title: "P(" + v.String() + ")", rows: m.Rows, cols: m.Cols, xLabel: "fault family", yLabel: ""}
		for _, row := range m.Cells {
			var hr []heatCell
			for _, c := range row {
				if c.NA {
					hr = append(hr, heatCell{p: math.NaN(), lines: []string{"n/a"}})
					continue
				}
				p, lo, hi := c.Counts.Rate(v)
				k, n := c.Counts.Of(v)
				// The sample size and the 95% Wilson interval, so that the
				// picture alone says how sure each rate is.
				hr = append(hr, heatCell{p: p, lines: []string{pct(p), fmt.Sprintf("%d/%d", k, n), fmt.Sprintf("[%.0f–%.0f%%]", 100*lo, 100*hi)}})
			}
			h.cells = append(h.cells, hr)
		}
		maps = append(maps, h)
	}
	title := fmt.Sprintf("Which lock? Violation rate over %d random fault schedules per cell (seed %d; counts and 95%% Wilson intervals)", m.Runs, m.Seed)
	return heatmapsImage(title, maps, "n/a: the family does not apply to that world")
}

func pct(p float64) string {
	if math.IsNaN(p) {
		return "n/a"
	}
	return strconv.FormatFloat(100*p, 'f', 0, 64) + "%"
}

func rateText(c Counts, v Verdict) string {
	p, lo, hi := c.Rate(v)
	if math.IsNaN(p) {
		return "n/a"
	}
	k, n := c.Of(v)
	return fmt.Sprintf("%s (%d/%d, 95%% CI %.0f–%.0f%%)", pct(p), k, n, 100*lo, 100*hi)
}

// CSV renders one line per cell with the raw counts and intervals.
func (m *Matrix) CSV() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(append([]string{"algorithm", "family", "runs", "lock_violated", "lock_unknown", "lock_p", "lock_lo", "lock_hi",
		"resource_violated", "resource_unknown", "resource_p", "resource_lo", "resource_hi", "replay"}, numberHead...))
	for i, row := range m.Cells {
		for j, c := range row {
			if c.NA {
				w.Write(append([]string{m.Rows[i], m.Cols[j], "0", "", "", "", "", "", "", "", "", "", "", "n/a"}, Numbers{}.cols()...))
				continue
			}
			rec := []string{m.Rows[i], m.Cols[j], strconv.Itoa(c.Counts.Runs),
				strconv.Itoa(c.Counts.LockViolated), strconv.Itoa(c.Counts.LockUnknown)}
			rec = append(rec, rateCols(c.Counts, LockSafety)...)
			rec = append(rec, strconv.Itoa(c.Counts.ResourceViolated), strconv.Itoa(c.Counts.ResourceUnknown))
			rec = append(rec, rateCols(c.Counts, ResourceSafety)...)
			rec = append(rec, c.Replay)
			rec = append(rec, c.Counts.Numbers.cols()...)
			w.Write(rec)
		}
	}
	w.Flush()
	return b.Bytes()
}

// Markdown renders the two rates as tables ("lock / resource" per cell).
func (m *Matrix) Markdown() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Lock and resource safety under random faults\n\n")
	fmt.Fprintf(&b, "%d random fault schedules per cell, base seed %d. Each cell: lock-safety violation rate / resource-safety violation rate.\n\n", m.Runs, m.Seed)
	b.WriteString("| algorithm |")
	for _, c := range m.Cols {
		b.WriteString(" " + c + " |")
	}
	b.WriteString("\n|---|")
	for range m.Cols {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for i, row := range m.Cells {
		b.WriteString("| " + m.Rows[i] + " |")
		for _, c := range row {
			if c.NA {
				b.WriteString(" n/a |")
				continue
			}
			lp, _, _ := c.Counts.Rate(LockSafety)
			rp, _, _ := c.Counts.Rate(ResourceSafety)
			b.WriteString(" " + pct(lp) + " / " + pct(rp) + " |")
		}
		b.WriteString("\n")
	}
	if len(m.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range m.Notes {
			b.WriteString("- " + n + "\n")
		}
	}
	b.WriteString("\nReplays of the first violating run of each cell are in matrix.csv.\n")
	return b.Bytes()
}

var matrixPage = template.Must(template.New("matrix").Funcs(template.FuncMap{
	"rate": rateText,
	"lock": func() Verdict { return LockSafety },
	"res":  func() Verdict { return ResourceSafety },
	"bg": func(c MatrixCell, v Verdict) template.CSS {
		if c.NA {
			return "background:#eee"
		}
		p, _, _ := c.Counts.Rate(v)
		col := heatColour(p)
		fg := "#222"
		if p > 0.6 {
			fg = "#fff"
		}
		return template.CSS(fmt.Sprintf("background:#%02x%02x%02x;color:%s", col.R, col.G, col.B, fg))
	},
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>locksim matrix: which lock should we use?</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; margin: 1.5em auto; max-width: 1500px; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin-bottom: 1.5em; }
td, th { padding: 4px 8px; border: 1px solid #fff; text-align: center; font-size: 0.9em; }
th { background: #f0f0f0; }
td.name { text-align: left; background: #f6f6f6; }
.scroll { overflow-x: auto; }
.fit img { max-width: 100%; height: auto; }
code { font-family: "Liberation Mono", "Courier New", monospace; font-size: 0.85em; }
</style>
</head>
<body>
<h1>Which lock should we use?</h1>
<p>Violation rates of lock safety and resource safety over {{.M.Runs}} random fault schedules per cell (base seed {{.M.Seed}}), with 95% Wilson intervals.</p>
<div class="fit"><a href="matrix.png" title="the image at full size"><img src="{{.Image}}" alt="matrix heatmap"></a></div>
{{range $vi, $v := .Verdicts}}
<h2>{{$v}}</h2>
<div class="scroll"><table>
<tr><th>algorithm</th>{{range $.M.Cols}}<th>{{.}}</th>{{end}}</tr>
{{range $i, $row := $.M.Cells}}<tr><td class="name">{{index $.M.Rows $i}}</td>{{range $row}}<td style="{{bg . $v}}">{{if .NA}}n/a{{else}}{{rate .Counts $v}}{{end}}</td>{{end}}</tr>
{{end}}</table></div>
{{end}}
<h2>Numbers</h2>
<p>Per cell, over its runs: the grants per run, the median of the runs' median acquisition latencies (p50) and the mean time per run the lock stood free while a client waited for it (free); the same as matrix.csv's last three columns.</p>
<div class="scroll"><table>
<tr><th>algorithm</th>{{range $.M.Cols}}<th>{{.}}</th>{{end}}</tr>
{{range $i, $row := $.M.Cells}}<tr><td class="name">{{index $.M.Rows $i}}</td>{{range $row}}<td>{{if .NA}}n/a{{else}}{{range $k, $l := .Counts.Numbers.Lines}}{{if $k}}<br>{{end}}{{$l}}{{else}}-{{end}}{{end}}</td>{{end}}</tr>
{{end}}</table></div>
<h2>Replay</h2>
<div class="scroll"><table>
<tr><th>algorithm</th><th>family</th><th>first violating run</th></tr>
{{range $i, $row := .M.Cells}}{{range $j, $c := $row}}{{if $c.Replay}}<tr><td class="name">{{index $.M.Rows $i}}</td><td>{{index $.M.Cols $j}}</td><td><code>{{$c.Replay}}</code></td></tr>
{{end}}{{end}}{{end}}</table></div>
{{if .M.Notes}}<h2>Notes</h2><ul>{{range .M.Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
</body>
</html>
`))

// HTML renders a self-contained page with the heatmap (its SVG inline as a
// data URI) and both tables.
func (m *Matrix) HTML(svg []byte) ([]byte, error) {
	var b bytes.Buffer
	err := matrixPage.Execute(&b, struct {
		M        *Matrix
		Image    template.URL
		Verdicts []Verdict
	}{m, svgURI(svg), []Verdict{LockSafety, ResourceSafety}})
	return b.Bytes(), err
}

// MatrixSummary is a short text table for a terminal.
func (m *Matrix) Summary() string {
	var b strings.Builder
	width := 0
	for _, r := range m.Rows {
		width = max(width, len(r))
	}
	fmt.Fprintf(&b, "%-*s", width, "lock / resource")
	for _, c := range m.Cols {
		fmt.Fprintf(&b, "  %-13s", c)
	}
	b.WriteByte('\n')
	for i, row := range m.Cells {
		fmt.Fprintf(&b, "%-*s", width, m.Rows[i])
		for _, c := range row {
			cell := "n/a"
			if !c.NA {
				lp, _, _ := c.Counts.Rate(LockSafety)
				rp, _, _ := c.Counts.Rate(ResourceSafety)
				cell = pct(lp) + " / " + pct(rp)
			}
			fmt.Fprintf(&b, "  %-13s", cell)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
