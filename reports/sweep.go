package reports

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// SweepParam is one swept scenario parameter.
type SweepParam struct {
	// Path is the field path ("faults[1].by").
	Path string
	// Values are the values as written into the scenario.
	Values []string
	// X are the values' positions on an axis (seconds for durations), or
	// nil when the values are not numbers (then they are categories).
	X []float64
	// Unit is "s" for durations, "" otherwise.
	Unit string
	// Label is a readable name for the axis ("clock jump of C"); the path
	// is used when it is empty.
	Label string
}

// name is the parameter's readable name: its label, or its path.
func (p SweepParam) name() string {
	if p.Label != "" {
		return p.Label
	}
	return p.Path
}

func (p SweepParam) axisLabel() string {
	name := p.name()
	if p.Label != "" {
		name += "  [" + p.Path + "]"
	}
	if p.Unit != "" {
		return name + " (" + p.Unit + ")"
	}
	return name
}

// SweepReference is a vertical line on a one-parameter sweep's plot where
// the story predicts a change: for Kleppmann's clock jump, at ttl - hold.
type SweepReference struct {
	// X is the position on the parameter's axis (seconds for durations).
	X float64
	// Label says what the line is ("ttl - hold").
	Label string
}

// SweepPoint is one point of a sweep: a value per parameter and the
// verdicts of its runs.
type SweepPoint struct {
	Values []string
	Counts Counts
	// File is the point's scenario file, relative to the sweep's folder.
	File string
	// Replay is the command that replays the point's first violating run
	// (or its first run when none violated).
	Replay string
	// Violating are the seeds of the point's violating runs, in run order
	// (each replays with Replay's command and --seed S).
	Violating []uint64
}

// Sweep is the result of simrun sweep.
type Sweep struct {
	Scenario string
	BaseSeed uint64
	// Seeds is the number of runs per point.
	Seeds  int
	Params []SweepParam
	// Points are in row-major order: with two parameters, point
	// i*len(Params[1].Values)+j has the i-th value of the first and the
	// j-th of the second.
	Points []SweepPoint
	// References are drawn on a one-parameter sweep's plot.
	References []SweepReference
}

var verdictColours = map[Verdict]color.RGBA{
	LockSafety:     {0xd6, 0x27, 0x28, 0xff},
	ResourceSafety: {0xff, 0x7f, 0x0e, 0xff},
	Liveness:       {0x1f, 0x77, 0xb4, 0xff},
}

// judged reports whether any point judged the property.
func (s *Sweep) judged(v Verdict) bool {
	for _, p := range s.Points {
		if _, n := p.Counts.Of(v); n > 0 {
			return true
		}
	}
	return false
}

// CSV renders the raw counts, the estimates and the 95% Wilson intervals,
// one line per point.
func (s *Sweep) CSV() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	head := []string{"point"}
	for _, p := range s.Params {
		head = append(head, p.Path)
	}
	head = append(head, "runs",
		"lock_violated", "lock_unknown", "lock_p", "lock_lo", "lock_hi",
		"resource_violated", "resource_unknown", "resource_p", "resource_lo", "resource_hi",
		"liveness_violated", "liveness_judged", "liveness_p", "liveness_lo", "liveness_hi",
		"file", "replay")
	head = append(head, numberHead...)
	w.Write(head)
	for i, pt := range s.Points {
		row := []string{strconv.Itoa(i)}
		row = append(row, pt.Values...)
		c := pt.Counts
		row = append(row, strconv.Itoa(c.Runs))
		row = append(row, strconv.Itoa(c.LockViolated), strconv.Itoa(c.LockUnknown))
		row = append(row, rateCols(c, LockSafety)...)
		row = append(row, strconv.Itoa(c.ResourceViolated), strconv.Itoa(c.ResourceUnknown))
		row = append(row, rateCols(c, ResourceSafety)...)
		row = append(row, strconv.Itoa(c.LivenessViolated), strconv.Itoa(c.LivenessJudged))
		row = append(row, rateCols(c, Liveness)...)
		row = append(row, pt.File, pt.Replay)
		row = append(row, c.Numbers.cols()...)
		w.Write(row)
	}
	w.Flush()
	return b.Bytes()
}

func rateCols(c Counts, v Verdict) []string {
	p, lo, hi := c.Rate(v)
	if math.IsNaN(p) {
		return []string{"", "", ""}
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }
	return []string{f(p), f(lo), f(hi)}
}

// SweepImage plots a sweep: for one parameter, the probability of each
// verdict against the value with 95% Wilson intervals as error bars; for
// two, one heatmap per verdict.
func SweepImage(s *Sweep) (Image, error) {
	switch len(s.Params) {
	case 1:
		return sweepLines(s)
	case 2:
		return sweepHeatmaps(s)
	}
	return Image{}, fmt.Errorf("a sweep plot needs one or two parameters, not %d", len(s.Params))
}

// errPoints are the points of one series with their intervals.
type errPoints struct {
	xy     plotter.XYs
	lo, hi []float64
}

func (e errPoints) Len() int                    { return len(e.xy) }
func (e errPoints) XY(i int) (float64, float64) { return e.xy[i].X, e.xy[i].Y }
func (e errPoints) YError(i int) (float64, float64) {
	return e.xy[i].Y - e.lo[i], e.hi[i] - e.xy[i].Y
}

// probTicks marks a probability axis every 0.1, labelled every 0.2.
type probTicks struct{}

func (probTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for i := 0; i <= 10; i++ {
		t := plot.Tick{Value: float64(i) / 10}
		if i%2 == 0 {
			t.Label = strconv.FormatFloat(t.Value, 'f', 1, 64)
		}
		out = append(out, t)
	}
	return out
}

// categoryTicks labels the integer positions of categories.
type categoryTicks []string

func (c categoryTicks) Ticks(min, max float64) []plot.Tick {
	out := make([]plot.Tick, len(c))
	for i, s := range c {
		out[i] = plot.Tick{Value: float64(i), Label: s}
	}
	return out
}

func sweepLines(s *Sweep) (Image, error) {
	par := s.Params[0]
	title := fmt.Sprintf("%s: P(violation) vs %s  (%d seeds per point, 95%% Wilson intervals)", s.Scenario, par.name(), s.Seeds)
	p := newPlot(title)
	p.X.Label.Text = par.axisLabel()
	p.Y.Label.Text = "probability"
	p.Y.Min, p.Y.Max = -0.02, 1.02
	p.Y.Tick.Marker = probTicks{}
	xs := par.X
	if xs == nil {
		xs = make([]float64, len(par.Values))
		for i := range xs {
			xs[i] = float64(i)
		}
		p.X.Tick.Marker = categoryTicks(par.Values)
	} else {
		p.X.Tick.Marker = timeTicks{}
	}
	xmin, xmax := xs[0], xs[0]
	for _, x := range xs {
		xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
	}
	span := xmax - xmin
	if span == 0 {
		span = 1
	}
	p.X.Min, p.X.Max = xmin-0.04*span, xmax+0.04*span
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.RGBA{0xe4, 0xe4, 0xe4, 0xff}
	grid.Horizontal.Color = color.RGBA{0xe4, 0xe4, 0xe4, 0xff}
	p.Add(grid)
	var items []legendItem
	for _, ref := range s.References {
		p.Add(&referenceLine{x: ref.X, label: ref.Label})
	}
	if len(s.References) > 0 {
		items = append(items, legendItem{text: "predicted by the story (reference line)", thumb: func(c draw.Canvas, r vg.Rectangle) {
			y := (r.Min.Y + r.Max.Y) / 2
			c.StrokeLine2(referenceStyle, r.Min.X, y, r.Max.X, y)
		}})
	}
	verdicts := []Verdict{LockSafety, ResourceSafety, Liveness}
	for vi, v := range verdicts {
		if !s.judged(v) {
			items = append(items, legendItem{text: v.String() + ": not judged in any run", thumb: func(draw.Canvas, vg.Rectangle) {}})
			continue
		}
		dodge := (float64(vi) - 1) * 0.008 * span
		var ep errPoints
		for i, pt := range s.Points {
			pr, lo, hi := pt.Counts.Rate(v)
			if math.IsNaN(pr) {
				continue
			}
			ep.xy = append(ep.xy, plotter.XY{X: xs[i] + dodge, Y: pr})
			ep.lo, ep.hi = append(ep.lo, lo), append(ep.hi, hi)
		}
		if len(ep.xy) == 0 {
			continue
		}
		clr := verdictColours[v]
		line, pts, err := plotter.NewLinePoints(ep.xy)
		if err != nil {
			return Image{}, err
		}
		line.LineStyle = draw.LineStyle{Color: clr, Width: vg.Points(1.6)}
		pts.GlyphStyle = draw.GlyphStyle{Color: clr, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
		bars, err := plotter.NewYErrorBars(ep)
		if err != nil {
			return Image{}, err
		}
		bars.LineStyle = draw.LineStyle{Color: clr, Width: vg.Points(1)}
		bars.CapWidth = vg.Points(6)
		p.Add(line, bars, pts)
		items = append(items, legendItem{text: "P(" + v.String() + ")", thumb: func(c draw.Canvas, r vg.Rectangle) {
			y := (r.Min.Y + r.Max.Y) / 2
			c.StrokeLine2(draw.LineStyle{Color: clr, Width: vg.Points(1.6)}, r.Min.X, y, r.Max.X, y)
			glyph(c, draw.CircleGlyph{}, clr, 3, (r.Min.X+r.Max.X)/2, y)
		}})
	}
	p.X.Min, p.X.Max = xmin-0.04*span, xmax+0.04*span
	p.Y.Min, p.Y.Max = -0.02, 1.02
	panels, err := numbersPanels(s, xs, p.X)
	if err != nil {
		return Image{}, err
	}
	w := 10 * vg.Inch
	rows := legendRows(items, w-1.2*vg.Inch)
	legendH := legendHeight(rows)
	const panelH = 2.4 * vg.Inch
	h := 5*vg.Inch + legendH + vg.Length(len(panels))*panelH
	return render(w, h, func(c draw.Canvas) {
		below := legendH + vg.Length(len(panels))*panelH
		// Panel i under the legend: from (n-1-i) to (n-i) panel heights
		// above the bottom.
		n := vg.Length(len(panels))
		cs := []draw.Canvas{draw.Crop(c, 0, 0, below, -titleMargin)}
		ps := append([]*plot.Plot{p}, panels...)
		for i := range panels {
			cs = append(cs, draw.Crop(c, 0, 0, (n-1-vg.Length(i))*panelH, (n-vg.Length(i))*panelH-h-titleMargin))
		}
		// The same x axis on every panel: each data area starts where the
		// widest y axis leaves room for.
		var left vg.Length
		for i, q := range ps {
			left = max(left, q.DataCanvas(cs[i]).Min.X)
		}
		for i, q := range ps {
			q.Draw(draw.Crop(cs[i], left-q.DataCanvas(cs[i]).Min.X, 0, 0, 0))
		}
		drawLegend(c, rows, c.Min.X+0.8*vg.Inch, c.Min.Y+below-vg.Points(6))
	})
}

// numbersPanels are a one-parameter sweep's plots of the numbers under
// its probabilities, on the same x axis: the grants per run, and the
// median latency and mean unavailable time in seconds. None when no run's
// numbers were recorded.
func numbersPanels(s *Sweep, xs []float64, x plot.Axis) ([]*plot.Plot, error) {
	var grants, lat, free plotter.XYs
	for i, pt := range s.Points {
		n := pt.Counts.Numbers
		if g, ok := n.GrantsPerRun(); ok {
			grants = append(grants, plotter.XY{X: xs[i], Y: g})
		}
		if d, ok := n.LatencyP50(); ok {
			lat = append(lat, plotter.XY{X: xs[i], Y: d.Seconds()})
		}
		if d, ok := n.MeanUnavailable(); ok {
			free = append(free, plotter.XY{X: xs[i], Y: d.Seconds()})
		}
	}
	if len(grants) == 0 {
		return nil, nil
	}
	panel := func(title, ylabel string) *plot.Plot {
		q := newPlot(title)
		q.X.Min, q.X.Max, q.X.Tick.Marker, q.X.Label.Text = x.Min, x.Max, x.Tick.Marker, x.Label.Text
		q.Y.Label.Text = ylabel
		q.Y.Min = 0
		g := plotter.NewGrid()
		g.Vertical.Color = color.RGBA{0xe4, 0xe4, 0xe4, 0xff}
		g.Horizontal.Color = g.Vertical.Color
		q.Add(g)
		q.Legend.Top = true
		return q
	}
	add := func(q *plot.Plot, xys plotter.XYs, clr color.RGBA, name string) error {
		if len(xys) == 0 {
			return nil
		}
		line, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		line.LineStyle = draw.LineStyle{Color: clr, Width: vg.Points(1.6)}
		pts.GlyphStyle = draw.GlyphStyle{Color: clr, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
		q.Add(line, pts)
		if name != "" {
			q.Legend.Add(name, line, pts)
		}
		for _, xy := range xys {
			// Room above the highest point for the legend.
			q.Y.Max = max(q.Y.Max, 1.45*xy.Y)
		}
		return nil
	}
	gp := panel("grants per run (mean over the point's runs)", "grants")
	if err := add(gp, grants, color.RGBA{0x2c, 0xa0, 0x2c, 0xff}, ""); err != nil {
		return nil, err
	}
	tp := panel("acquisition latency and unavailability", "seconds")
	if err := add(tp, lat, color.RGBA{0x94, 0x67, 0xbd, 0xff}, "latency p50 (median of the runs' medians)"); err != nil {
		return nil, err
	}
	if err := add(tp, free, color.RGBA{0xd6, 0x27, 0x28, 0xff}, "lock free while someone waited (mean per run)"); err != nil {
		return nil, err
	}
	return []*plot.Plot{gp, tp}, nil
}

// cellLines are the texts of a heatmap cell: the estimate and its interval.
func cellLines(c Counts, v Verdict) (float64, []string) {
	p, lo, hi := c.Rate(v)
	if math.IsNaN(p) {
		return p, []string{"n/a"}
	}
	k, n := c.Of(v)
	return p, []string{fmt.Sprintf("%.2f", p), fmt.Sprintf("%d/%d [%.2f, %.2f]", k, n, lo, hi)}
}

func sweepHeatmaps(s *Sweep) (Image, error) {
	rowPar, colPar := s.Params[0], s.Params[1]
	var maps []*heatmap
	for _, v := range []Verdict{LockSafety, ResourceSafety, Liveness} {
		if !s.judged(v) {
			continue
		}
		h := &heatmap{title: "P(" + v.String() + ")", rows: rowPar.Values, cols: colPar.Values, xLabel: colPar.axisLabel(), yLabel: rowPar.axisLabel()}
		for i := range rowPar.Values {
			var row []heatCell
			for j := range colPar.Values {
				pr, lines := cellLines(s.Points[i*len(colPar.Values)+j].Counts, v)
				row = append(row, heatCell{p: pr, lines: lines})
			}
			h.cells = append(h.cells, row)
		}
		maps = append(maps, h)
	}
	if len(maps) == 0 {
		return Image{}, fmt.Errorf("no run of the sweep was judged")
	}
	if h := numbersHeatmap(s); h != nil {
		maps = append(maps, h)
	}
	title := fmt.Sprintf("%s: %d seeds per point, 95%% Wilson intervals", s.Scenario, s.Seeds)
	return heatmapsImage(title, maps, "")
}

// heatmapsImage draws heatmaps under a title, at most maxHeatCols side by
// side (three or four in one row made an image four times as wide as
// high), with a colour bar for the probability and one for each other
// palette (heatmap.scale), and an optional note.
func heatmapsImage(title string, maps []*heatmap, note string) (Image, error) {
	panelW := 5.2 * vg.Inch
	cols := maps[0].cols
	var rowLabel vg.Length
	for _, r := range maps[0].rows {
		rowLabel = max(rowLabel, textStyle(9, black).Width(r))
	}
	if wide := vg.Length(len(cols))*0.95*vg.Inch + rowLabel + 0.7*vg.Inch; wide > panelW {
		panelW = wide
	}
	panelH := vg.Length(len(maps[0].rows))*0.42*vg.Inch + 1.3*vg.Inch
	perRow := min(len(maps), maxHeatCols)
	rows := (len(maps) + perRow - 1) / perRow
	// The colour bars: the probability's, then each other palette's.
	type bar struct {
		label   string
		palette func(float64) color.RGBA
		ticks   []string
	}
	var bars []bar
	prob := false
	for _, m := range maps {
		if m.palette == nil && !prob {
			prob = true
			bars = append([]bar{{"probability", heatColour, []string{"0", "0.25", "0.5", "0.75", "1"}}}, bars...)
		}
		if m.palette != nil {
			bars = append(bars, bar{m.scale, m.palette, []string{"0", "", "half", "", "the most"}})
		}
	}
	w := panelW * vg.Length(perRow)
	head := 0.45 * vg.Inch
	foot := 0.45*vg.Inch + vg.Length(len(bars))*vg.Points(30)
	h := head + panelH*vg.Length(rows) + foot
	return render(w, h, func(c draw.Canvas) {
		st := textStyle(14, black)
		c.FillText(st, vg.Point{X: c.Center().X - st.Width(title)/2, Y: c.Max.Y - head + vg.Points(10)}, title)
		body := draw.Crop(c, 0, 0, foot, -head)
		tiles := draw.Tiles{Rows: rows, Cols: perRow, PadX: vg.Points(10), PadY: vg.Points(10), PadLeft: vg.Points(6), PadRight: vg.Points(10)}
		for i, m := range maps {
			m.plot().Draw(tiles.At(body, i%perRow, i/perRow))
		}
		lst := textStyle(9, black)
		x := c.Min.X + vg.Inch
		var labelW vg.Length
		for _, b := range bars {
			labelW = max(labelW, lst.Width(b.label))
		}
		for i, b := range bars {
			y := c.Min.Y + foot - vg.Points(22) - vg.Length(i)*vg.Points(30)
			c.FillText(lst, vg.Point{X: x, Y: y + vg.Points(1)}, b.label)
			bx := x + labelW + vg.Points(8)
			paletteBar(2.5*vg.Inch, b.palette, b.ticks).thumb(c, vg.Rectangle{Min: vg.Point{X: bx, Y: y}, Max: vg.Point{X: bx + 2.5*vg.Inch, Y: y + vg.Points(10)}})
		}
		if note != "" {
			nx := x + labelW + 2.5*vg.Inch + vg.Points(28)
			y := c.Min.Y + foot - vg.Points(22)
			for i, line := range strings.Split(note, "\n") {
				c.FillText(lst, vg.Point{X: nx, Y: y + vg.Points(1) - vg.Length(i)*vg.Points(12)}, line)
			}
		}
	})
}

// maxHeatCols is the most heatmap panels side by side.
const maxHeatCols = 2

// referenceStyle draws a sweep's reference lines: dashed, dark grey.
var referenceStyle = draw.LineStyle{Color: color.RGBA{0x44, 0x44, 0x44, 0xff}, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}

// referenceLine is a labelled vertical line across a plot.
type referenceLine struct {
	x     float64
	label string
}

func (l *referenceLine) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(l.x)
	if x < c.Min.X || x > c.Max.X {
		return
	}
	c.StrokeLine2(referenceStyle, x, c.Min.Y, x, c.Max.Y)
	// The label stands left of the line at mid-height, on white, where a
	// sweep's curve (low before the predicted change, high after it) is
	// least likely to run.
	sty := textStyle(9, color.RGBA{0x44, 0x44, 0x44, 0xff})
	w, h := sty.Width(l.label), sty.Height(l.label)
	tx, ty := x-w-vg.Points(4), (c.Min.Y+c.Max.Y)/2
	if tx < c.Min.X {
		tx = x + vg.Points(4)
	}
	fillRect(c, color.White, tx-vg.Points(2), ty-vg.Points(2), tx+w+vg.Points(2), ty+h)
	c.FillText(sty, vg.Point{X: tx, Y: ty}, l.label)
}

// numbersHeatmap is a two-parameter sweep's panel of numbers: per point
// the grants, the median latency and the mean unavailable time (Numbers),
// coloured by the unavailable time as a share of the largest point's. Nil
// when no run's numbers were recorded.
func numbersHeatmap(s *Sweep) *heatmap {
	rowPar, colPar := s.Params[0], s.Params[1]
	var most time.Duration
	known := false
	for _, pt := range s.Points {
		if u, ok := pt.Counts.Numbers.MeanUnavailable(); ok {
			most, known = max(most, u), true
		}
	}
	if !known {
		return nil
	}
	h := &heatmap{title: "numbers (colour: time free while waited)", rows: rowPar.Values, cols: colPar.Values, xLabel: colPar.axisLabel(), yLabel: rowPar.axisLabel(),
		palette: quantityColour, scale: fmt.Sprintf("time free while waited (mean per run; %s the most)", most.Round(time.Millisecond))}
	for i := range rowPar.Values {
		var row []heatCell
		for j := range colPar.Values {
			n := s.Points[i*len(colPar.Values)+j].Counts.Numbers
			u, ok := n.MeanUnavailable()
			p := math.NaN()
			if ok {
				p = 0
				if most > 0 {
					p = float64(u) / float64(most)
				}
			}
			lines := n.Lines()
			if lines == nil {
				lines = []string{"n/a"}
			}
			row = append(row, heatCell{p: p, lines: lines})
		}
		h.cells = append(h.cells, row)
	}
	return h
}
