package reports

import (
	"bytes"
	"encoding/base64"
	"html/template"

	"github.com/locksim/locksim/internal/outdir"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/sim"
)

// keyKinds are the trace kinds the key-event table shows (as simrun run's
// summary does).
var keyKinds = map[sim.Kind]bool{
	sim.KindAcquired: true, sim.KindReleased: true, sim.KindLockLost: true,
	sim.KindFault: true, sim.KindCrash: true, sim.KindRestart: true,
	"key-expired": true, "resource-applied": true, "resource-rejected": true,
	"promoted": true, "switch-master": true, "session-expired": true, "loaded": true,
}

// KeyEvents returns the events a reader follows a run by: acquisitions,
// releases and losses, faults, crashes and restarts, expiries, the
// resource's decisions, promotions and session expiries.
func KeyEvents(trace []sim.Event) []sim.Event {
	var out []sim.Event
	for _, e := range trace {
		if !keyKinds[e.Kind] || (e.Kind == "loaded" && e.At == 0) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// RunFiles are the files of a run's report, in the order they are written:
// index.html, which links the others, last.
var RunFiles = []string{"timeline.png", "timeline.svg", "clocks.png", "clocks.svg", "index.html"}

// WriteRun writes a run's report into dir: timeline.png, timeline.svg,
// clocks.png, clocks.svg and index.html, each atomically (outdir), never
// through a symlink planted in dir.
func WriteRun(dir string, run *Run) error {
	files, err := RenderRun(run)
	if err != nil {
		return err
	}
	d, err := outdir.Prepare(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	for _, name := range RunFiles {
		if err := d.WriteFile(name, files[name]); err != nil {
			return err
		}
	}
	return nil
}

// RenderRun renders a run's report files in memory, by file name.
func RenderRun(run *Run) (map[string][]byte, error) {
	tl, err := BuildTimeline(run)
	if err != nil {
		return nil, err
	}
	title := run.Setup.Name
	if run.Setup.Title != "" {
		title += ": " + run.Setup.Title
	}
	title += "  (seed " + uitoa(run.Result.Seed) + ")"
	if tl.View < tl.End {
		title += "  [first " + tl.View.Duration().String() + " of " + tl.End.Duration().String() + ": nothing drawn changes later]"
	}
	timeline, err := TimelineImage(tl, title)
	if err != nil {
		return nil, err
	}
	hs, err := Clocks(run.Setup, run.Trace)
	if err != nil {
		return nil, err
	}
	// The clock plot spans the timeline's view, so the two figures line up.
	clockTitle := "Clock offsets from true time: " + run.Setup.Name
	if tl.View < tl.End {
		clockTitle += "  [first " + tl.View.Duration().String() + " of " + tl.End.Duration().String() + "]"
	}
	clocks, err := ClocksImage(hs, tl.View, clockTitle)
	if err != nil {
		return nil, err
	}
	page, err := indexHTML(run, tl, timeline.SVG, clocks.SVG)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		"timeline.png": timeline.PNG,
		"timeline.svg": timeline.SVG,
		"clocks.png":   clocks.PNG,
		"clocks.svg":   clocks.SVG,
		"index.html":   page,
	}, nil
}

func uitoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

// svgURI embeds an SVG as a data URI (base64: no character of it can end
// the attribute).
func svgURI(svg []byte) template.URL {
	return template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(svg))
}

type verdictRow struct {
	Property string
	Explains string // what holds means (checker.About.Explains), a tooltip
	Verdict  checker.Verdict
	Expected string
	Status   string // "ok", "mismatch" or ""
}

type pageData struct {
	Run      *Run
	Verdicts []verdictRow
	Events   []sim.Event
	Timeline template.URL
	Clocks   template.URL
	Matched  string
	// Interactive is the interactive timeline's data (interactiveData)
	// and Script its code.
	Interactive template.JS
	Script      template.JS
	Drawn, Left int
	// Violations are the violations listed (at most checker.MaxViolations
	// of a result's, which a result locksim wrote never exceeds but an
	// edited one may), ViolationsLeft those not listed; ShadesLeft the
	// violation windows the timeline leaves out (MaxShadedWindows).
	Violations     []checker.Violation
	ViolationsLeft int
	ShadesLeft     int
	// Latency is the acquisition-latency histogram (empty without a
	// wait that ended with the lock).
	Latency template.URL
}

var page = template.Must(template.New("index").Funcs(template.FuncMap{
	"shadedWindows": func(int) int { return MaxShadedWindows },
	"time":          func(t sim.Time) string { return t.String() },
	// Wall-clock readings as seconds from the run's start, as the
	// summary prints them, never epoch milliseconds.
	"wall": func(e sim.Event) string { return sim.ReadableText(&e) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Run.Setup.Name}} (seed {{.Run.Result.Seed}}): locksim report</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; margin: 1.5em auto; max-width: 1400px; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; }
td, th { padding: 2px 10px; text-align: left; vertical-align: top; }
tr:nth-child(even) td { background: #f6f6f6; }
.violated { color: #b00; font-weight: bold; }
.holds { color: #060; }
.mismatch { color: #b00; font-weight: bold; }
.vacuous { color: #a60; font-weight: bold; }
.ok { color: #060; }
code, pre { font-family: "Liberation Mono", "Courier New", monospace; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; }
img { max-width: 100%; border: 1px solid #ddd; }
.muted { color: #777; }
p, li { max-width: 60em; line-height: 1.45; }
</style>
</head>
<body>
<h1>{{.Run.Setup.Name}}{{with .Run.Setup.Title}}: {{.}}{{end}}</h1>
{{with .Run.Setup.Source}}<p class="muted">Source: {{.}}</p>{{end}}
{{with .Run.Setup.Why}}<p>{{.}}</p>{{end}}
<p>Seed {{.Run.Result.Seed}}, {{.Run.Result.VirtualTime}} of virtual time, {{.Run.Result.Events}} events. {{.Matched}}</p>

<h2>Verdicts</h2>
<table>
<tr><th>property</th><th>verdict</th><th>expected</th><th></th></tr>
{{range .Verdicts}}<tr><td title="{{.Explains}}">{{.Property}}</td><td class="{{.Verdict}}">{{.Verdict}}</td><td>{{.Expected}}</td><td class="{{.Status}}">{{.Status}}</td></tr>
{{end}}</table>
{{if .Violations}}<h3>Explanation</h3>
<ul>{{range .Violations}}<li>{{.Explanation}}</li>
{{end}}</ul>{{if .ViolationsLeft}}<p class="muted">{{.ViolationsLeft}} more violations are not listed here: the first {{len .Violations}} are.</p>{{end}}{{end}}{{if .ShadesLeft}}
<p class="muted">The timelines shade the first {{.ShadesLeft | shadedWindows}} violation windows; {{.ShadesLeft}} more are not drawn.</p>{{end}}
{{with .Run.Result.Fencing}}<p>Fencing: {{.}}</p>{{end}}
{{with .Run.Result.LivenessNote}}<p>Liveness: {{.}}</p>{{end}}
{{range .Run.Result.Warnings}}<p class="vacuous">Warning: {{.}}</p>
{{end}}{{range .Run.Result.Vacuous}}<p class="vacuous">Vacuous: {{.}}</p>
{{end}}{{with .Run.Result.Stats}}
<h2>Numbers</h2>
<ul>{{range .Lines}}<li>{{.}}</li>
{{end}}</ul>
{{if .Clients}}<table>
<tr><th>client</th><th>grants</th><th>critical sections</th><th>acquire attempts</th><th>failed</th></tr>
{{range .Clients}}<tr><td>{{.Client}}</td><td>{{.Grants}}</td><td>{{.Sections}}</td><td>{{.Attempts}}</td><td>{{.Failures}}</td></tr>
{{end}}</table>{{end}}{{end}}
{{with .Latency}}<p><img src="{{.}}" alt="acquisition latency distribution"></p>{{end}}
{{if .Run.Visualizations}}<p>Porcupine's visualization of the illegal history:
{{range .Run.Visualizations}}<a href="{{.}}">{{.}}</a> {{end}}</p>{{end}}

<h2>Interactive timeline</h2>
<p class="muted">Wheel to zoom, drag to pan, double-click to reset; hover over an event (a dot) for its text and typed fields. Hatched: faults (pause, crash, partition side, delay); teal triangles: an order fault's choice (the event that went first at its instant); coloured bands: violation windows; red strips under the lanes: when each lock stood free while a client waited for it (availability, darker the more of the bin). {{.Drawn}} events drawn{{if .Left}}, {{.Left}} left out (the first {{.Drawn}} of the run are drawn; the trace and the figure below have them all){{end}}.</p>
<div id="itl" style="width:100%;overflow:hidden;border:1px solid #ddd"></div>
<pre id="itl-info" class="muted" style="min-height:1.4em;white-space:pre-wrap">(hover over an event)</pre>
<script>var ITL_DATA = {{.Interactive}};
{{.Script}}</script>

<h2>Timeline</h2>
<p><img src="{{.Timeline}}" alt="timeline of {{.Run.Setup.Name}}"></p>
<p class="muted">Also as <a href="timeline.png">timeline.png</a> and <a href="timeline.svg">timeline.svg</a>.</p>

<h2>Clocks</h2>
<p><img src="{{.Clocks}}" alt="clock offsets of {{.Run.Setup.Name}}"></p>
<p class="muted">Also as <a href="clocks.png">clocks.png</a> and <a href="clocks.svg">clocks.svg</a>.</p>

<h2>Key events</h2>
<table>
<tr><th>true time</th><th>process</th><th>event</th><th>detail</th></tr>
{{range .Events}}<tr><td>{{time .At}}</td><td>{{.Proc}}</td><td>{{.Kind}}</td><td>{{wall .}}</td></tr>
{{end}}</table>

<h2>Reproduce</h2>
<pre>{{.Run.Command}}</pre>
<p>Trace hash <code>{{.Run.Result.TraceHash}}</code></p>

<h2>Scenario</h2>
<p class="muted">{{.Run.Setup.File}}</p>
<pre>{{.Run.Setup.YAML}}</pre>
</body>
</html>
`))

func indexHTML(run *Run, tl *Timeline, timelineSVG, clocksSVG []byte) ([]byte, error) {
	var avail *checker.Availability
	if st := run.Result.Stats; st != nil {
		avail = st.Availability
	}
	data, err := interactiveData(tl, run.Trace, avail)
	if err != nil {
		return nil, err
	}
	d := pageData{
		Run:         run,
		Events:      KeyEvents(run.Trace),
		Timeline:    svgURI(timelineSVG),
		Clocks:      svgURI(clocksSVG),
		Interactive: data,
		Script:      template.JS(interactiveScript),
		Drawn:       min(len(run.Trace), MaxInteractiveEvents),
		Left:        max(len(run.Trace)-MaxInteractiveEvents, 0),
		ShadesLeft:  tl.ShadesLeft,
	}
	// A result's violations are bounded when locksim writes it, not when
	// a file is edited: a report of 600,000 took 23 s, 1.19 GB and 130 MB
	// of HTML (issue 33 item 11).
	vs := run.Result.Violations
	d.Violations = vs[:min(len(vs), checker.MaxViolations)]
	d.ViolationsLeft = len(vs) - len(d.Violations) + run.Result.ViolationsOmitted
	if st := run.Result.Stats; st != nil {
		if svg := LatencyHistogramSVG(st.Latency); svg != nil {
			d.Latency = svgURI(svg)
		}
	}
	exp := run.Result.Expected
	row := func(prop, explains, key string, got checker.Verdict) {
		r := verdictRow{Property: prop, Explains: explains, Verdict: got, Expected: exp[key]}
		if r.Expected != "" {
			r.Status = "ok"
			if string(got) != r.Expected {
				r.Status = "mismatch"
			}
		}
		d.Verdicts = append(d.Verdicts, r)
	}
	for _, j := range run.Result.Verdicts {
		title, explains := j.Property, ""
		if p, ok := checker.Lookup(j.Property); ok {
			title, explains = p.About().Title, "holds: "+p.About().Explains
		}
		row(title, explains, j.Property, j.Verdict)
	}
	switch {
	case run.Result.Inconclusive:
		d.Matched = "Inconclusive: a checker timed out."
	case run.Result.Matched:
		d.Matched = "The verdicts match the expectations."
	default:
		d.Matched = "The verdicts do NOT match the expectations."
	}
	var b bytes.Buffer
	if err := page.Execute(&b, d); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
