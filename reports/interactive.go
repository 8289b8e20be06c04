package reports

import (
	"encoding/json"
	"html/template"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/sim"
)

// MaxInteractiveEvents caps the events the interactive timeline of the
// HTML report carries, so that a long run's page stays small (about 200
// bytes an event); the page says how many were left out. The trace file
// and timeline.svg have them all.
const MaxInteractiveEvents = 3000

// interactive is what the report's interactive timeline draws (the
// script in page reads it): the lanes and their spans as the static
// timeline has them, the violation windows, and the trace's events.
type interactive struct {
	End    sim.Time    `json:"end"`
	View   sim.Time    `json:"view"`
	Lanes  []iLane     `json:"lanes"`
	Shades []iShade    `json:"shades"`
	Events []sim.Event `json:"events"`
	Left   int         `json:"left_out"`
	Total  int         `json:"total"`
	// Avail is the availability strip (checker.Availability): per lock,
	// the time it stood free while someone waited, per bin. Nil when no
	// lock ever did.
	Avail *checker.Availability `json:"avail,omitempty"`
}

type iLane struct {
	Name  string  `json:"name"`
	Note  string  `json:"note,omitempty"`
	Spans []iSpan `json:"spans"`
	// Marks are the lane's point marks that no event circle of its own
	// shows: an order fault's (MarkOrder), whose trace event belongs to
	// no process. Every other mark is drawn from an event on its lane.
	Marks []iMark `json:"marks,omitempty"`
}

type iMark struct {
	Kind  string   `json:"kind"`
	At    sim.Time `json:"t"`
	Label string   `json:"label,omitempty"`
}

type iSpan struct {
	Kind  string   `json:"kind"`
	Start sim.Time `json:"start"`
	End   sim.Time `json:"end"`
	Label string   `json:"label,omitempty"`
	Owner string   `json:"owner,omitempty"`
	// Fault is true for a pause, a crash's downtime, a partition side or
	// a link delay: drawn as a band.
	Fault bool `json:"fault,omitempty"`
}

type iShade struct {
	Kind  string   `json:"kind"`
	Name  string   `json:"name"`
	Start sim.Time `json:"start"`
	End   sim.Time `json:"end"`
	Lanes []string `json:"lanes"`
	Fill  string   `json:"fill"`
}

// interactiveData renders the interactive timeline's data as JSON for the
// page's script (json.Marshal escapes <, > and &, so it cannot end the
// script element).
func interactiveData(tl *Timeline, trace []sim.Event, avail *checker.Availability) (template.JS, error) {
	d := interactive{End: tl.End, View: tl.View, Total: len(trace), Avail: avail}
	for _, l := range tl.Lanes {
		il := iLane{Name: l.Name, Note: l.Note, Spans: []iSpan{}}
		for _, s := range l.Spans {
			fault := false
			switch s.Kind {
			case SpanDown, SpanPause, SpanGroup, SpanDelay, SpanPartition:
				fault = true
			}
			il.Spans = append(il.Spans, iSpan{Kind: spanKindName(s.Kind), Start: s.Start, End: s.End, Label: s.Label, Owner: s.Owner, Fault: fault})
		}
		for _, m := range l.Marks {
			if m.Kind == MarkOrder {
				il.Marks = append(il.Marks, iMark{Kind: "order", At: m.At, Label: m.Label})
			}
		}
		d.Lanes = append(d.Lanes, il)
	}
	d.Shades = []iShade{}
	for _, s := range tl.Shades {
		c := shadeColour(s.Kind)
		d.Shades = append(d.Shades, iShade{Kind: s.Kind, Name: shadeName(s.Kind), Start: s.Start, End: s.End, Lanes: s.Lanes,
			Fill: "#" + hexOf(c.R, c.G, c.B)})
	}
	d.Events = trace
	if len(trace) > MaxInteractiveEvents {
		d.Events = trace[:MaxInteractiveEvents]
		d.Left = len(trace) - MaxInteractiveEvents
	}
	if d.Events == nil {
		d.Events = []sim.Event{}
	}
	// The texts a reader sees (the event list, the tooltips) give wall
	// clock readings as seconds from the run's start; the typed fields
	// keep the readings. A copy: the trace is the caller's.
	shown := make([]sim.Event, len(d.Events))
	for i, e := range d.Events {
		e.Text = sim.RelativeWallTimes(e.Text)
		shown[i] = e
	}
	d.Events = shown
	b, err := json.Marshal(d)
	if err != nil {
		return "", err
	}
	return template.JS(b), nil
}

// hexOf renders a colour as six hex digits.
func hexOf(r, g, b uint8) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 6)
	for _, v := range []uint8{r, g, b} {
		out = append(out, digits[v>>4], digits[v&15])
	}
	return string(out)
}

// interactiveScript draws the interactive timeline into #itl from
// ITL_DATA: one row per lane, its spans as bars, faults (pauses, downtime,
// partition sides, delays) as hatched bands, order faults' marks as teal
// triangles pointing back on the lane whose event went first (with their
// label), violation windows as bands
// across the lanes involved, and one circle.ev per event (its text and
// typed fields in a title and in the panel under the figure on hover).
// Wheel zooms around the pointer, dragging pans, a double click resets.
// Inline, no network: the report is one self-contained file.
const interactiveScript = `
(function () {
  var D = ITL_DATA, root = document.getElementById("itl");
  if (!root) return;
  var NS = "http://www.w3.org/2000/svg";
  var laneH = 34, left = 130, top = 6;
  var lanes = D.lanes.map(function (l) { return l.name; });
  var idx = {};
  lanes.forEach(function (n, i) { idx[n] = i; });
  D.events.forEach(function (e) {
    var p = e.proc || "(no process)";
    if (!(p in idx)) { idx[p] = lanes.length; lanes.push(p); }
  });
  // One availability row per lock under the lanes: the bins of time the
  // lock stood free while someone waited, darker the more of the bin.
  var av = D.avail || {bin: 1, locks: []}, stripH = 16, stripTop = top + lanes.length * laneH;
  var W = Math.max(600, (root.clientWidth || 1300)), H = stripTop + av.locks.length * stripH + 26;
  var t0 = 0, t1 = Math.max(D.view, 1), full = [0, Math.max(D.end, 1)];
  var svg = document.createElementNS(NS, "svg");
  svg.setAttribute("width", W); svg.setAttribute("height", H);
  svg.setAttribute("class", "itl-svg");
  root.appendChild(svg);
  var info = document.getElementById("itl-info");
  function el(name, attrs, parent, title) {
    var x = document.createElementNS(NS, name);
    for (var k in attrs) x.setAttribute(k, attrs[k]);
    if (title) { var t = document.createElementNS(NS, "title"); t.textContent = title; x.appendChild(t); }
    (parent || svg).appendChild(x);
    return x;
  }
  function X(t) { return left + (t - t0) / (t1 - t0) * (W - left - 10); }
  function secs(t) { return (t / 1e9).toFixed(6).replace(/0+$/, "").replace(/\.$/, "") + "s"; }
  function clip(a, b) { return [Math.max(X(a), left), Math.min(X(b), W - 10)]; }
  function describe(e) {
    var s = secs(e.t) + " " + (e.proc || "") + " " + e.kind + (e.peer ? " -> " + e.peer : "") + (e.text ? ": " + e.text : "");
    if (e.fields) s += "  " + JSON.stringify(e.fields);
    return s;
  }
  var colours = {};
  var palette = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#9c755f", "#76b7b2", "#edc948", "#ff9da7"];
  lanes.forEach(function (n, i) { colours[n] = palette[i % palette.length]; });
  function draw() {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    lanes.forEach(function (n, i) {
      var y = top + i * laneH;
      el("rect", {x: 0, y: y, width: W, height: laneH, fill: i % 2 ? "#f6f6f6" : "#fff"});
      var lab = el("text", {x: 4, y: y + laneH / 2 + 4, "font-size": 11}); lab.textContent = n;
    });
    D.lanes.forEach(function (l, i) {
      var y = top + i * laneH;
      l.spans.forEach(function (s) {
        var end = s.end > 0 ? s.end : D.end;
        if (end < t0 || s.start > t1) return;
        var c = clip(s.start, end), w = Math.max(c[1] - c[0], 1);
        var what = s.kind + (s.label ? " " + s.label : "") + " " + secs(s.start) + ".." + secs(end);
        if (s.fault) {
          el("rect", {x: c[0], y: y + 1, width: w, height: laneH - 2, fill: "url(#itl-hatch)", stroke: "#805", "stroke-width": 0.5, "class": "fault", "data-kind": s.kind}, null, "fault: " + what);
        } else if (s.kind === "attempt") {
          el("line", {x1: c[0], x2: c[0] + w, y1: y + laneH / 2, y2: y + laneH / 2, stroke: "#888"}, null, what);
        } else {
          var oc = colours[s.owner] || "#4e79a7", h = s.kind === "section" ? 6 : 14;
          el("rect", {x: c[0], y: y + laneH / 2 - h / 2, width: w, height: h, fill: oc, "fill-opacity": s.kind === "belief" ? 0.45 : 0.8, "class": "span", "data-kind": s.kind}, null, what);
        }
      });
      (l.marks || []).forEach(function (m) {
        if (m.t < t0 || m.t > t1) return;
        var x = X(m.t), yc = y + laneH / 2 + 7, what = "order fault " + secs(m.t) + ": " + m.label;
        el("polygon", {points: (x + 5) + "," + (yc - 5) + " " + (x + 5) + "," + (yc + 5) + " " + (x - 5) + "," + yc, fill: "#178f8f", "class": "mark", "data-kind": m.kind}, null, what);
        var lab = el("text", {x: x + 7, y: yc + 4, "font-size": 10, fill: "#178f8f", "class": "mark-label"}); lab.textContent = m.label;
      });
    });
    av.locks.forEach(function (l, i) {
      var y = stripTop + i * stripH;
      el("rect", {x: 0, y: y, width: W, height: stripH, fill: "#fff", stroke: "#eee"});
      var lab = el("text", {x: 4, y: y + stripH / 2 + 4, "font-size": 10, "class": "avail-label"}); lab.textContent = l.lock + " free, waited";
      l.unavailable.forEach(function (d, b) {
        if (!d) return;
        var s0 = b * av.bin, s1 = s0 + av.bin;
        if (s1 < t0 || s0 > t1) return;
        var c = clip(s0, s1), w = Math.max(c[1] - c[0], 1);
        el("rect", {x: c[0], y: y + 2, width: w, height: stripH - 4, fill: "#5e3c99", "fill-opacity": Math.max(0.15, d / av.bin).toFixed(3), "class": "avail", "data-lock": l.lock},
          null, l.lock + " free while a client waited: " + secs(d) + " of " + secs(s0) + ".." + secs(s1));
      });
    });
    D.shades.forEach(function (s) {
      if (s.end < t0 || s.start > t1) return;
      var c = clip(s.start, s.end), w = Math.max(c[1] - c[0], 2);
      var what = s.name + " " + secs(s.start) + ".." + secs(s.end);
      el("rect", {x: c[0], y: H - 24, width: w, height: 6, fill: s.fill, "class": "violation", "data-kind": s.kind}, null, what);
      s.lanes.forEach(function (n) {
        if (!(n in idx)) return;
        el("rect", {x: c[0], y: top + idx[n] * laneH, width: w, height: laneH, fill: s.fill, "fill-opacity": 0.3, "class": "violation", "data-kind": s.kind}, null, what);
      });
    });
    D.events.forEach(function (e) {
      if (e.t < t0 || e.t > t1) return;
      var i = idx[e.proc || "(no process)"];
      var c = el("circle", {cx: X(e.t), cy: top + i * laneH + laneH / 2, r: 3, fill: "#222", "fill-opacity": 0.55, "class": "ev", "data-seq": e.seq, "data-text": describe(e)}, null, describe(e));
      c.addEventListener("mouseover", function () { if (info) info.textContent = describe(e); });
    });
    for (var k = 0; k <= 10; k++) {
      var t = t0 + (t1 - t0) * k / 10, x = X(t);
      el("line", {x1: x, x2: x, y1: top, y2: H - 26, stroke: "#ddd"});
      var lab = el("text", {x: x - 10, y: H - 6, "font-size": 10}); lab.textContent = secs(Math.round(t));
    }
  }
  var defs = document.createElementNS(NS, "defs");
  defs.innerHTML = '<pattern id="itl-hatch" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="5" height="5" fill="#805" fill-opacity="0.08"/><line x1="0" y1="0" x2="0" y2="5" stroke="#805" stroke-opacity="0.5"/></pattern>';
  svg.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var r = svg.getBoundingClientRect(), at = t0 + (ev.clientX - r.left - left) / (W - left - 10) * (t1 - t0);
    var f = ev.deltaY < 0 ? 0.8 : 1.25, n0 = at - (at - t0) * f, n1 = at + (t1 - at) * f;
    if (n1 - n0 < 1000) return;
    t0 = Math.max(full[0], n0); t1 = Math.min(full[1], n1);
    redraw();
  }, {passive: false});
  var drag = null;
  svg.addEventListener("mousedown", function (ev) { drag = {x: ev.clientX, t0: t0, t1: t1}; });
  window.addEventListener("mouseup", function () { drag = null; });
  svg.addEventListener("mousemove", function (ev) {
    if (!drag) return;
    var dt = (ev.clientX - drag.x) / (W - left - 10) * (drag.t1 - drag.t0);
    var n0 = drag.t0 - dt, n1 = drag.t1 - dt;
    if (n0 < full[0] || n1 > full[1]) return;
    t0 = n0; t1 = n1; redraw();
  });
  svg.addEventListener("dblclick", function () { t0 = 0; t1 = Math.max(D.view, 1); redraw(); });
  function redraw() { draw(); svg.insertBefore(defs, svg.firstChild); }
  redraw();
})();
`
