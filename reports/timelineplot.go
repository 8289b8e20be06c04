package reports

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/sim"
)

// Timeline figure geometry.
const (
	timelineWidth = 14 * vg.Inch
	laneHeight    = 0.62 * vg.Inch
	labelSize     = vg.Length(8)
)

// TimelineImage draws a timeline: true time on the x axis, one lane per
// process, a legend underneath.
func TimelineImage(tl *Timeline, title string) (Image, error) {
	rows := legendRows(timelineLegend(tl), timelineWidth-1.5*vg.Inch)
	legendH := legendHeight(rows)
	plotH := vg.Length(len(tl.Lanes))*laneHeight + vg.Length(len(tl.availRows()))*availHeight + tl.bandSpace() + 1.1*vg.Inch
	h := plotH + legendH
	return render(timelineWidth, h, func(c draw.Canvas) {
		top := draw.Crop(c, 0, 0, legendH, -titleMargin)
		p := timelinePlot(tl, title)
		p.Draw(top)
		drawLegend(c, rows, c.Min.X+vg.Inch, c.Min.Y+legendH-vg.Points(8))
	})
}

// laneTicks labels the y axis with the lane names (lane i is at y = -i).
type laneTicks struct{ tl *Timeline }

func (t laneTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for i, l := range t.tl.Lanes {
		label := l.Name
		if l.Note != "" {
			label += "\n" + l.Note
		}
		out = append(out, plot.Tick{Value: -float64(i), Label: label})
	}
	for i, a := range t.tl.availRows() {
		out = append(out, plot.Tick{Value: availY(t.tl, i), Label: a.Lock + " free,\nsomeone waiting"})
	}
	return out
}

// availHeight is the height of an availability row: thinner than a lane.
const availHeight = 0.4 * vg.Inch

// availY is the y of availability row i, under the lanes (a lane is 1
// high; a row availHeight/laneHeight of it).
func availY(tl *Timeline, i int) float64 {
	r := float64(availHeight / laneHeight)
	return -float64(len(tl.Lanes)) + 0.5 - r*(float64(i)+0.5)
}

// availArtist draws the availability rows: for each bin in which the
// lock stood free while a client waited, a red bar as dark as the share
// of the bin it stood free.
type availArtist struct{ tl *Timeline }

func (a *availArtist) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	av := a.tl.Avail
	h := (trY(0) - trY(-1)) * vg.Length(availHeight/laneHeight)
	for i, row := range a.tl.availRows() {
		yc := trY(availY(a.tl, i))
		c.StrokeLine2(draw.LineStyle{Color: grey, Width: vg.Points(0.8)}, c.Min.X, yc+h/2, c.Max.X, yc+h/2)
		for b, d := range row.Unavailable {
			start := sim.Time(time.Duration(b) * av.Bin)
			if d <= 0 || start > a.tl.View {
				continue
			}
			end := min(start+sim.Time(av.Bin), a.tl.View)
			x0, x1 := trX(start.Seconds()), trX(end.Seconds())
			if x1-x0 < vg.Points(1) {
				x1 = x0 + vg.Points(1)
			}
			share := max(float64(d)/float64(av.Bin), 0.15)
			fillRect(c, alpha(unavailRed, uint8(share*255)), x0, yc-0.15*h, x1, yc+0.4*h)
		}
	}
}

// unavailRed is the colour of the availability rows: a violet, never the
// red family of the violation windows (lock safety's light red read as
// the same pink as a lightly shaded bin of "lock free while waiting").
var unavailRed = color.RGBA{0x5e, 0x3c, 0x99, 0xff}

func timelinePlot(tl *Timeline, title string) *plot.Plot {
	p := newPlot(title)
	p.X.Label.Text = "true time (s)"
	p.X.Min, p.X.Max = 0, tl.View.Seconds()
	if p.X.Max <= 0 {
		p.X.Max = 1
	}
	// A little room left of 0, so that a mark at the very start (a crash
	// at 50 ms) is drawn inside its lane, not over the lane's name.
	p.X.Min = -p.X.Max / 100
	p.Y.Min, p.Y.Max = -float64(len(tl.Lanes))+0.5-float64(len(tl.availRows()))*float64(availHeight/laneHeight)-float64(tl.bandSpace()/laneHeight), 0.5
	p.Y.Tick.Marker = laneTicks{tl}
	p.X.Tick.Marker = timeTicks{}
	p.Y.Tick.Length = 0
	p.Y.Padding, p.X.Padding = 0, 0
	p.Y.Tick.Label.Font.Size = 10
	g := plotter.NewGrid()
	g.Horizontal.Color = nil
	g.Vertical.Color = color.RGBA{0xe4, 0xe4, 0xe4, 0xff}
	p.Add(&laneBackground{tl}, g, &timelineArtist{tl: tl}, &availArtist{tl})
	return p
}

// timeTicks puts 8 to 16 major ticks on a time axis in seconds, at round
// steps, with minor ticks between.
type timeTicks struct{}

func (timeTicks) Ticks(min, max float64) []plot.Tick {
	span := max - min
	if span <= 0 {
		return nil
	}
	steps := []float64{0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600}
	step := steps[len(steps)-1]
	for _, s := range steps {
		if span/s <= 16 {
			step = s
			break
		}
	}
	minor := step / 5
	if step == 0.25 || step == 15 {
		minor = step / 5
	}
	var out []plot.Tick
	first := math.Ceil(min/minor-1e-9) * minor
	for i := 0; ; i++ {
		v := first + float64(i)*minor
		if v > max+1e-9 {
			break
		}
		t := plot.Tick{Value: v}
		if r := v / step; math.Abs(r-math.Round(r)) < 1e-6 {
			t.Label = strconv.FormatFloat(math.Round(v/minor)*minor, 'f', -1, 64)
			if math.Abs(v) < 1e-9 {
				t.Label = "0"
			}
		}
		out = append(out, t)
	}
	return out
}

// laneBackground stripes every other lane and separates the clients, the
// servers and the network lane.
type laneBackground struct{ tl *Timeline }

func (b *laneBackground) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	for i := range b.tl.Lanes {
		if i%2 == 1 {
			fillRect(c, color.RGBA{0xf6, 0xf6, 0xf6, 0xff}, c.Min.X, trY(-float64(i)-0.5), c.Max.X, trY(-float64(i)+0.5))
		}
		if i > 0 && b.tl.Lanes[i].Kind != b.tl.Lanes[i-1].Kind {
			y := trY(-float64(i) + 0.5)
			c.StrokeLine2(draw.LineStyle{Color: grey, Width: vg.Points(0.8)}, c.Min.X, y, c.Max.X, y)
		}
	}
}

// timelineArtist draws the lanes' contents in canvas coordinates, so that
// labels can be placed without overlapping.
type timelineArtist struct {
	tl *Timeline
}

// label is a text waiting for a place on its lane.
type label struct {
	x    vg.Length // anchor (the event)
	text string
	prio int
	clr  color.Color
}

func (a *timelineArtist) clientColour(name string) color.RGBA {
	for i, c := range a.tl.Clients {
		if c == name {
			return clientColours[i%len(clientColours)]
		}
	}
	return color.RGBA{0xaa, 0xaa, 0xaa, 0xff}
}

func (a *timelineArtist) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	h := trY(0) - trY(-1)
	x := func(t sim.Time) vg.Length { return trX(t.Seconds()) }
	laneY := map[string]vg.Length{}
	for i, l := range a.tl.Lanes {
		laneY[l.Name] = trY(-float64(i))
	}

	// Partition sides first, as lane tints, so the violation windows stay
	// legible on top of them.
	for _, l := range a.tl.Lanes {
		for _, s := range l.Spans {
			if s.Kind == SpanGroup && s.Start <= a.tl.View {
				a.drawSpan(c, l, s, x(s.Start), x(s.End), laneY[l.Name], h)
			}
		}
	}

	// Violation windows, behind the rest: on the lanes involved only (a
	// window shaded across every lane hides the bars that explain it), and
	// in a band along the time axis.
	for _, s := range a.tl.Shades {
		x0, x1 := x(s.Start), x(s.End)
		if x1-x0 < vg.Points(1.5) {
			x1 = x0 + vg.Points(1.5)
		}
		for _, name := range s.Lanes {
			if y, ok := laneY[name]; ok {
				drawShade(c, s.Kind, x0, y-h/2, x1, y+h/2)
			}
		}
		drawShade(c, s.Kind, x0, c.Min.Y, x1, c.Min.Y+shadeBand)
	}

	for _, l := range a.tl.Lanes {
		yc := laneY[l.Name]
		var labels []label
		for _, s := range l.Spans {
			if s.Start > a.tl.View || s.Kind == SpanGroup {
				continue
			}
			labels = append(labels, a.drawSpan(c, l, s, x(s.Start), x(s.End), yc, h)...)
		}
		for _, m := range l.Marks {
			if m.At > a.tl.View {
				continue
			}
			if m.Kind == MarkDrop {
				if ty, ok := laneY[m.To]; ok {
					a.drawDrop(c, x(m.At), yc, ty)
				}
			}
		}
		for _, m := range l.Marks {
			if m.At > a.tl.View {
				continue
			}
			if lb, ok := a.drawMark(c, m, x(m.At), yc, h); ok {
				labels = append(labels, lb)
			}
		}
		placeLabels(c, thin(labels), yc, h)
	}
}

func (a *timelineArtist) drawSpan(c draw.Canvas, l *Lane, s Span, x0, x1, yc, h vg.Length) []label {
	min := vg.Points(1)
	if x1-x0 < min {
		x1 = x0 + min
	}
	own := a.clientColour(s.Owner)
	switch s.Kind {
	case SpanGroup:
		// The lane is tinted in its side's colour while the partition
		// lasts (thin strips under every lane were hard to read). When
		// partitions overlap, each takes its own horizontal slice of the
		// lane, in the order of the network lane's rows, so that tints
		// never mix.
		rows := a.tl.PartRows
		if rows < 1 {
			rows = 1
		}
		if rows > maxPartSlices {
			// Too many partitions at once (a majorities ring: a cut per
			// position) to give each a slice: the lane is tinted once
			// per partition it is in, a light grey that darkens with
			// the number of cuts, and the network lane says which.
			fillRect(c, alpha(grey, 0x1c), x0, yc-h/2, x1, yc+h/2)
			break
		}
		slice := h / vg.Length(rows)
		top := yc + h/2 - vg.Length(s.Row)*slice
		// A light tint behind the bars, and a solid strip of the side's
		// colour along the slice's top, so that the side reads on any
		// lane background (a tint alone was hard to tell apart).
		gc := groupColours[s.Group%len(groupColours)]
		fillRect(c, alpha(gc, 0x40), x0, top-slice, x1, top)
		fillRect(c, gc, x0, top-partStrip, x1, top)
	case SpanAttempt:
		c.StrokeLine2(draw.LineStyle{Color: grey, Width: vg.Points(1)}, x0, yc, x1, yc)
		if x1-x0 > vg.Points(6) {
			c.StrokeLine2(draw.LineStyle{Color: grey, Width: vg.Points(1)}, x0, yc-0.06*h, x0, yc+0.06*h)
		}
	case SpanBelief:
		fillRect(c, tint(own, 0.55), x0, yc-0.12*h, x1, yc+0.12*h)
		strokeRect(c, draw.LineStyle{Color: own, Width: vg.Points(0.8)}, x0, yc-0.12*h, x1, yc+0.12*h)
		if s.Label != "" {
			return []label{{x: x0, text: s.Label, prio: 3, clr: shadeOf(own, 0.35)}}
		}
	case SpanSection:
		fillRect(c, shadeOf(own, 0.25), x0, yc-0.055*h, x1, yc+0.055*h)
	case SpanHeld, SpanTombstone:
		// A key held for a few milliseconds must still show.
		if x1-x0 < vg.Points(2.5) {
			x1 = x0 + vg.Points(2.5)
		}
		fill := tint(own, 0.25)
		if s.Kind == SpanTombstone {
			fill = lightGrey
		}
		fillRect(c, fill, x0, yc-0.13*h, x1, yc+0.13*h)
		strokeRect(c, draw.LineStyle{Color: shadeOf(own, 0.2), Width: vg.Points(0.6)}, x0, yc-0.13*h, x1, yc+0.13*h)
		if s.Kind == SpanTombstone {
			hatch(c, draw.LineStyle{Color: grey, Width: vg.Points(0.6)}, vg.Points(4), x0, yc-0.13*h, x1, yc+0.13*h)
		}
		if s.Label != "" {
			sty := textStyle(labelSize, black)
			if w := sty.Width(s.Label); x1-x0 >= w+vg.Points(4) {
				c.FillText(sty, vg.Point{X: x0 + vg.Points(2), Y: yc - sty.Height(s.Label)/2 + vg.Points(1)}, s.Label)
			} else {
				return []label{{x: x0, text: s.Label, prio: prioHolder, clr: shadeOf(own, 0.4)}}
			}
		}
	case SpanDown:
		fillRect(c, color.RGBA{0xe8, 0xe8, 0xe8, 0xff}, x0, yc-0.16*h, x1, yc+0.16*h)
		hatch(c, draw.LineStyle{Color: downGrey, Width: vg.Points(0.7)}, vg.Points(3), x0, yc-0.16*h, x1, yc+0.16*h)
		return []label{{x: x0, text: s.Label, prio: 1, clr: downGrey}}
	case SpanPause:
		hatch(c, draw.LineStyle{Color: purple, Width: vg.Points(0.9)}, vg.Points(4), x0, yc-0.16*h, x1, yc+0.16*h)
		strokeRect(c, draw.LineStyle{Color: purple, Width: vg.Points(0.9)}, x0, yc-0.16*h, x1, yc+0.16*h)
		return []label{{x: x0, text: s.Label, prio: 1, clr: purple}}
	case SpanDelay:
		y0, y1 := yc-0.38*h, yc-0.3*h
		hatch(c, draw.LineStyle{Color: color.RGBA{0x1f, 0x77, 0xb4, 0xff}, Width: vg.Points(0.7)}, vg.Points(3), x0, y0, x1, y1)
		return []label{{x: x0, text: "delay " + s.Label, prio: 1, clr: color.RGBA{0x1f, 0x77, 0xb4, 0xff}}}
	case SpanPartition:
		rows := a.tl.PartRows
		if rows < 1 {
			rows = 1
		}
		slot := 0.7 * h / vg.Length(rows)
		bh := slot - vg.Points(1.5)
		if bh > 0.3*h {
			bh = 0.3 * h
		}
		top := yc + 0.35*h - vg.Length(s.Row)*slot
		if rows == 1 {
			top = yc + bh/2
		}
		y0, y1 := top-bh, top
		fillRect(c, color.RGBA{0xe0, 0xf4, 0xf7, 0xff}, x0, y0, x1, y1)
		strokeRect(c, draw.LineStyle{Color: groupColours[0], Width: vg.Points(0.8)}, x0, y0, x1, y1)
		sty := textStyle(labelSize, black)
		if w := sty.Width(s.Label); x1-x0 >= w+vg.Points(4) && bh >= sty.Height(s.Label) {
			// Each side in the colour of its strips.
			tx := x0 + vg.Points(2)
			ty := (y0+y1)/2 - sty.Height(s.Label)/2 + vg.Points(1)
			for i, part := range strings.Split(s.Label, " | ") {
				if i > 0 {
					c.FillText(sty, vg.Point{X: tx, Y: ty}, " | ")
					tx += sty.Width(" | ")
				}
				st := sty
				if !strings.HasSuffix(s.Label, " cut") {
					st.Color = shadeOf(groupColours[i%len(groupColours)], 0.35)
				}
				c.FillText(st, vg.Point{X: tx, Y: ty}, part)
				tx += sty.Width(part)
			}
		} else {
			return []label{{x: x0, text: s.Label, prio: 1, clr: black}}
		}
	}
	return nil
}

// shadeBand is the height of the band along the time axis that repeats
// every violation window.
const shadeBand = vg.Length(7)

// bandSpace is the strip under the lanes and the availability rows that
// holds the violation band: a strip of its own, so that the band is never
// drawn over the availability rows (0 when no window is drawn).
func (tl *Timeline) bandSpace() vg.Length {
	if len(tl.Shades) == 0 {
		return 0
	}
	return shadeBand + vg.Points(2)
}

// alpha returns c with its opacity set to a (0 to 255).
func alpha(c color.Color, a uint8) color.NRGBA {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), a}
}

// maxPartSlices is the most overlapping partitions whose sides the lanes
// show, each in a slice of the lane; beyond it (a majorities ring) the
// slices turned every lane into stripes, and a lane shows only how many
// cuts it is in.
const maxPartSlices = 2

// partStrip is the height of the solid strip in a partition side's colour
// along the top of the lane (slice) it tints.
const partStrip = vg.Length(2.5)

// drawShade marks a violation window: lock safety filled red, resource
// safety hatched orange (so that both show where they overlap), liveness
// filled yellow, token order filled violet, any other registered property
// in its palette colour (shadeColour).
func drawShade(c draw.Canvas, kind string, x0, y0, x1, y1 vg.Length) {
	fillRect(c, shadeColour(kind), x0, y0, x1, y1)
	if kind == checker.KindResourceSafety {
		hatch(c, draw.LineStyle{Color: color.NRGBA{0xff, 0x7f, 0x0e, 0x90}, Width: vg.Points(1)}, vg.Points(7), x0, y0, x1, y1)
	}
}

// drawDrop draws an arrow from the lane that lost messages to the lane
// they were for.
func (a *timelineArtist) drawDrop(c draw.Canvas, x, from, to vg.Length) {
	sty := draw.LineStyle{Color: red, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}
	c.StrokeLine2(sty, x, from, x, to)
	dir := vg.Length(1)
	if to < from {
		dir = -1
	}
	c.FillPolygon(red, []vg.Point{{X: x, Y: to}, {X: x - vg.Points(3), Y: to - dir*vg.Points(5)}, {X: x + vg.Points(3), Y: to - dir*vg.Points(5)}})
}

func glyph(c draw.Canvas, shape draw.GlyphDrawer, clr color.Color, r vg.Length, x, y vg.Length) {
	c.DrawGlyphNoClip(draw.GlyphStyle{Color: clr, Radius: r, Shape: shape}, vg.Point{X: x, Y: y})
}

// downTriangle is a filled triangle pointing down.
type downTriangle struct{}

func (downTriangle) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	c.FillPolygon(sty.Color, []vg.Point{{X: pt.X - r, Y: pt.Y + r}, {X: pt.X + r, Y: pt.Y + r}, {X: pt.X, Y: pt.Y - r}})
}

// leftTriangle is a filled triangle pointing left (back in time: an event
// moved ahead of the others due at its instant).
type leftTriangle struct{}

func (leftTriangle) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	c.FillPolygon(sty.Color, []vg.Point{{X: pt.X + r, Y: pt.Y + r}, {X: pt.X + r, Y: pt.Y - r}, {X: pt.X - r, Y: pt.Y}})
}

// teal is the order mark's colour.
var teal = color.RGBA{0x17, 0x8f, 0x8f, 0xff}

// diamond is a filled diamond.
type diamond struct{}

func (diamond) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	c.FillPolygon(sty.Color, []vg.Point{{X: pt.X, Y: pt.Y + r}, {X: pt.X + r, Y: pt.Y}, {X: pt.X, Y: pt.Y - r}, {X: pt.X - r, Y: pt.Y}})
}

// thickCross is a bold ×.
type thickCross struct{}

func (thickCross) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	ls := draw.LineStyle{Color: sty.Color, Width: r / 2}
	c.StrokeLine2(ls, pt.X-r, pt.Y-r, pt.X+r, pt.Y+r)
	c.StrokeLine2(ls, pt.X-r, pt.Y+r, pt.X+r, pt.Y-r)
}

// bar is a short vertical bar (a belief's end).
type bar struct{}

func (bar) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.StrokeLine2(draw.LineStyle{Color: sty.Color, Width: vg.Points(2)}, pt.X, pt.Y-sty.Radius, pt.X, pt.Y+sty.Radius)
}

func (a *timelineArtist) drawMark(c draw.Canvas, m Mark, x, yc, h vg.Length) (label, bool) {
	r := vg.Points(3.5)
	lb := label{x: x + r, text: m.Label, prio: 1, clr: black}
	switch m.Kind {
	case MarkWriteOK:
		glyph(c, draw.CircleGlyph{}, green, r, x, yc)
		lb.prio, lb.clr = 2, shadeOf(green, 0.3)
	case MarkWriteRejected, MarkReadRejected:
		glyph(c, thickCross{}, red, r+0.5, x, yc)
		lb.prio, lb.clr = 1, red
	case MarkWriteLost:
		c.DrawGlyphNoClip(draw.GlyphStyle{Color: black, Radius: r, Shape: draw.RingGlyph{}}, vg.Point{X: x, Y: yc})
		lb.prio = 2
	case MarkLockLost:
		glyph(c, bar{}, shadeOf(a.clientColour(m.Owner), 0.4), 0.16*h, x, yc)
		lb.prio, lb.clr = 2, grey
	case MarkCrash:
		glyph(c, thickCross{}, black, r+1.5, x, yc)
	case MarkRestart:
		glyph(c, draw.TriangleGlyph{}, green, r, x, yc)
		lb.prio = 1
	case MarkJump:
		glyph(c, downTriangle{}, red, r+0.5, x, yc+0.2*h)
		lb.clr = red
	case MarkDrift:
		glyph(c, diamond{}, color.RGBA{0xd6, 0x61, 0x0a, 0xff}, r+0.5, x, yc+0.2*h)
		lb.clr = color.RGBA{0xd6, 0x61, 0x0a, 0xff}
	case MarkDrop:
		glyph(c, thickCross{}, red, r-0.5, x, yc)
		lb.clr = red
	case MarkPromoted, MarkSwitch:
		glyph(c, draw.PyramidGlyph{}, purple, r, x, yc)
		lb.clr = purple
	case MarkOrder:
		glyph(c, leftTriangle{}, teal, r+0.5, x, yc-0.2*h)
		lb.clr = teal
	case MarkSessionExpired:
		glyph(c, draw.RingGlyph{}, red, r, x, yc)
		lb.clr = red
	case MarkRead:
		glyph(c, draw.RingGlyph{}, shadeOf(a.clientColour(m.Owner), 0.3), r-0.5, x, yc)
		lb.prio, lb.clr = 2, shadeOf(a.clientColour(m.Owner), 0.4)
	case MarkSale:
		glyph(c, draw.CircleGlyph{}, a.clientColour(m.Owner), r-0.5, x, yc)
		lb.prio, lb.clr = 2, shadeOf(a.clientColour(m.Owner), 0.4)
	case MarkNoSale:
		glyph(c, bar{}, grey, 0.16*h, x, yc)
		lb.prio, lb.clr = 2, grey
	case MarkSaleUnknown:
		c.DrawGlyphNoClip(draw.GlyphStyle{Color: black, Radius: r, Shape: draw.RingGlyph{}}, vg.Point{X: x, Y: yc})
		lb.prio = 1
	default:
		return label{}, false
	}
	return lb, m.Label != ""
}

// denseLabels is how many routine labels (tokens, write values, holders)
// a lane shows; beyond it they are noise and only the faults, crashes and
// rejections are labelled.
const denseLabels = 30

// crowdedHolders is how many holder names of keys held too briefly to be
// named inside their bar a lane shows beside them; beyond it (a flurry
// of short-lived keys during a partition) they are left out.
const crowdedHolders = 4

func thin(labels []label) []label {
	n, holders := 0, 0
	for _, lb := range labels {
		switch {
		case lb.prio == prioHolder:
			holders++
		case lb.prio >= 2:
			n++
		}
	}
	out := labels[:0]
	for _, lb := range labels {
		switch {
		case n > denseLabels && lb.prio >= 2 && lb.prio != prioHolder:
		case holders > crowdedHolders && lb.prio == prioHolder:
		default:
			out = append(out, lb)
		}
	}
	return out
}

// prioHolder is the priority of a holder's name beside a short held bar.
const prioHolder = 4

// placeLabels puts each label, most important first, in the first of the
// lane's text rows where it overlaps no other label; a label with no room
// is left out (the key-event table in index.html has every event).
func placeLabels(c draw.Canvas, labels []label, yc, h vg.Length) {
	sty := textStyle(labelSize, black)
	fh := sty.Height("Xg")
	rows := []vg.Length{yc + 0.19*h, yc + 0.19*h + fh + vg.Points(0.5), yc - 0.19*h - fh}
	for _, p := range layoutLabels(labels, len(rows), sty.Width, c.Min.X, c.Max.X) {
		st := sty
		st.Color = p.clr
		c.FillText(st, vg.Point{X: p.x0, Y: rows[p.row]}, p.text)
	}
}

// placed is a label with its place: its left edge and its row.
type placed struct {
	label
	x0  vg.Length
	row int
}

// labelGap is the least room between two labels of a row.
const labelGap = vg.Length(3)

// layoutLabels places labels, most important first (then left to right),
// each in the first of rows text rows where it overlaps no label already
// placed, starting just right of its anchor (or ending left of it at the
// right edge). Labels that fit nowhere are left out.
func layoutLabels(labels []label, rows int, width func(string) vg.Length, min, max vg.Length) []placed {
	sort.SliceStable(labels, func(i, j int) bool {
		if labels[i].prio != labels[j].prio {
			return labels[i].prio < labels[j].prio
		}
		return labels[i].x < labels[j].x
	})
	type span struct{ x0, x1 vg.Length }
	used := make([][]span, rows)
	var out []placed
	for _, lb := range labels {
		if lb.text == "" {
			continue
		}
		w := width(lb.text)
		x0 := lb.x + vg.Points(1)
		if x0+w > max {
			x0 = lb.x - w - vg.Points(5)
		}
		if x0 < min {
			x0 = min
		}
		x1 := x0 + w
		for ri := 0; ri < rows; ri++ {
			free := true
			for _, u := range used[ri] {
				if x0 < u.x1+labelGap && u.x0 < x1+labelGap {
					free = false
					break
				}
			}
			if free {
				used[ri] = append(used[ri], span{x0, x1})
				out = append(out, placed{label: lb, x0: x0, row: ri})
				break
			}
		}
	}
	return out
}

// ---- legend ----

// legendItem is one entry of a figure's legend.
type legendItem struct {
	text  string
	thumb func(c draw.Canvas, r vg.Rectangle)
}

const (
	legendThumb = vg.Length(22)
	legendSize  = vg.Length(9)
	legendRow   = vg.Length(15)
)

func legendWidth(it legendItem) vg.Length {
	return legendThumb + vg.Points(4) + textStyle(legendSize, black).Width(it.text) + vg.Points(14)
}

func legendRows(items []legendItem, width vg.Length) [][]legendItem {
	var rows [][]legendItem
	var cur []legendItem
	var used vg.Length
	for _, it := range items {
		w := legendWidth(it)
		if len(cur) > 0 && used+w > width {
			rows = append(rows, cur)
			cur, used = nil, 0
		}
		cur = append(cur, it)
		used += w
	}
	if len(cur) > 0 {
		rows = append(rows, cur)
	}
	return rows
}

// legendHeight is the height the rows take (laid out once by legendRows,
// so that the height reserved and the rows drawn agree: a height measured
// for a wider row than the one drawn clipped the last row).
func legendHeight(rows [][]legendItem) vg.Length {
	return vg.Length(len(rows))*legendRow + vg.Points(16)
}

// drawLegend draws the rows from (x, top) down.
func drawLegend(c draw.Canvas, rows [][]legendItem, x, top vg.Length) {
	sty := textStyle(legendSize, black)
	for ri, row := range rows {
		y := top - vg.Length(ri+1)*legendRow
		cx := x
		for _, it := range row {
			it.thumb(c, vg.Rectangle{Min: vg.Point{X: cx, Y: y + vg.Points(1)}, Max: vg.Point{X: cx + legendThumb, Y: y + vg.Points(10)}})
			c.FillText(sty, vg.Point{X: cx + legendThumb + vg.Points(4), Y: y + vg.Points(1)}, it.text)
			cx += legendWidth(it)
		}
	}
}

func timelineLegend(tl *Timeline) []legendItem {
	has := map[SpanKind]bool{}
	marks := map[MarkKind]bool{}
	for _, l := range tl.Lanes {
		for _, s := range l.Spans {
			has[s.Kind] = true
		}
		for _, m := range l.Marks {
			marks[m.Kind] = true
		}
	}
	c0 := clientColours[0]
	var out []legendItem
	add := func(text string, f func(c draw.Canvas, r vg.Rectangle)) { out = append(out, legendItem{text, f}) }
	mid := func(r vg.Rectangle) vg.Length { return (r.Min.Y + r.Max.Y) / 2 }
	if has[SpanAttempt] {
		add("acquire attempt", func(c draw.Canvas, r vg.Rectangle) {
			c.StrokeLine2(draw.LineStyle{Color: grey, Width: vg.Points(1)}, r.Min.X, mid(r), r.Max.X, mid(r))
		})
	}
	if has[SpanBelief] {
		add("believes it holds the lock (colour = client)", func(c draw.Canvas, r vg.Rectangle) {
			fillRect(c, tint(c0, 0.55), r.Min.X, r.Min.Y+1, r.Max.X, r.Max.Y-1)
			strokeRect(c, draw.LineStyle{Color: c0, Width: vg.Points(0.8)}, r.Min.X, r.Min.Y+1, r.Max.X, r.Max.Y-1)
		})
	}
	if has[SpanSection] {
		add("critical section (read → write)", func(c draw.Canvas, r vg.Rectangle) {
			fillRect(c, shadeOf(c0, 0.25), r.Min.X, mid(r)-2, r.Max.X, mid(r)+2)
		})
	}
	if has[SpanHeld] {
		add("server holds the lock key (colour = holder)", func(c draw.Canvas, r vg.Rectangle) {
			fillRect(c, tint(c0, 0.25), r.Min.X, r.Min.Y, r.Max.X, r.Max.Y)
		})
	}
	if has[SpanTombstone] {
		add("lock-delay tombstone", func(c draw.Canvas, r vg.Rectangle) {
			fillRect(c, lightGrey, r.Min.X, r.Min.Y, r.Max.X, r.Max.Y)
			hatch(c, draw.LineStyle{Color: grey, Width: vg.Points(0.6)}, vg.Points(4), r.Min.X, r.Min.Y, r.Max.X, r.Max.Y)
		})
	}
	if has[SpanPause] {
		add("paused", func(c draw.Canvas, r vg.Rectangle) {
			hatch(c, draw.LineStyle{Color: purple, Width: vg.Points(0.9)}, vg.Points(4), r.Min.X, r.Min.Y, r.Max.X, r.Max.Y)
			strokeRect(c, draw.LineStyle{Color: purple, Width: vg.Points(0.9)}, r.Min.X, r.Min.Y, r.Max.X, r.Max.Y)
		})
	}
	if has[SpanDown] {
		add("crashed (down)", func(c draw.Canvas, r vg.Rectangle) {
			hatch(c, draw.LineStyle{Color: downGrey, Width: vg.Points(0.7)}, vg.Points(3), r.Min.X, r.Min.Y, r.Max.X, r.Max.Y)
		})
	}
	if has[SpanGroup] && tl.PartRows > maxPartSlices {
		add("in a partition (darker: in more of them at once; the network lane names them)", func(c draw.Canvas, r vg.Rectangle) {
			mx := (r.Min.X + r.Max.X) / 2
			fillRect(c, alpha(grey, 0x1c), r.Min.X, r.Min.Y, mx, r.Max.Y)
			fillRect(c, alpha(grey, 0x38), mx, r.Min.Y, r.Max.X, r.Max.Y)
		})
	} else if has[SpanGroup] {
		add("partition side (lane tinted by side as on the network lane; overlapping partitions in rows)", func(c draw.Canvas, r vg.Rectangle) {
			mx := (r.Min.X + r.Max.X) / 2
			fillRect(c, alpha(groupColours[0], 0x40), r.Min.X, r.Min.Y, mx, r.Max.Y)
			fillRect(c, groupColours[0], r.Min.X, r.Max.Y-partStrip, mx, r.Max.Y)
			fillRect(c, alpha(groupColours[1], 0x40), mx, r.Min.Y, r.Max.X, r.Max.Y)
			fillRect(c, groupColours[1], mx, r.Max.Y-partStrip, r.Max.X, r.Max.Y)
		})
	}
	if has[SpanDelay] {
		add("extra link delay", func(c draw.Canvas, r vg.Rectangle) {
			hatch(c, draw.LineStyle{Color: color.RGBA{0x1f, 0x77, 0xb4, 0xff}, Width: vg.Points(0.7)}, vg.Points(3), r.Min.X, r.Min.Y+2, r.Max.X, r.Min.Y+6)
		})
	}
	if len(tl.availRows()) > 0 {
		add("lock free while a client waited (darker: more of the time)", func(c draw.Canvas, r vg.Rectangle) {
			mx := (r.Min.X + r.Max.X) / 2
			fillRect(c, alpha(unavailRed, 0x50), r.Min.X, r.Min.Y+2, mx, r.Max.Y-2)
			fillRect(c, unavailRed, mx, r.Min.Y+2, r.Max.X, r.Max.Y-2)
		})
	}
	glyphItem := func(k MarkKind, text string, shape draw.GlyphDrawer, clr color.Color) {
		if marks[k] {
			add(text, func(c draw.Canvas, r vg.Rectangle) { glyph(c, shape, clr, 3.5, (r.Min.X+r.Max.X)/2, mid(r)) })
		}
	}
	glyphItem(MarkRead, "resource read (r=value, t=token)", draw.RingGlyph{}, shadeOf(c0, 0.3))
	glyphItem(MarkWriteOK, "write accepted", draw.CircleGlyph{}, green)
	glyphItem(MarkWriteRejected, "write rejected (fencing)", thickCross{}, red)
	glyphItem(MarkReadRejected, "read rejected (fencing)", thickCross{}, red)
	glyphItem(MarkWriteLost, "write lost", draw.RingGlyph{}, black)
	glyphItem(MarkLockLost, "client learns it lost the lock", bar{}, grey)
	glyphItem(MarkCrash, "crash", thickCross{}, black)
	glyphItem(MarkRestart, "restart", draw.TriangleGlyph{}, green)
	glyphItem(MarkJump, "wall-clock jump", downTriangle{}, red)
	glyphItem(MarkDrift, "clock drift change", diamond{}, color.RGBA{0xd6, 0x61, 0x0a, 0xff})
	glyphItem(MarkDrop, "messages dropped (arrow: to)", thickCross{}, red)
	glyphItem(MarkPromoted, "promoted to master", draw.PyramidGlyph{}, purple)
	glyphItem(MarkSessionExpired, "session expired", draw.RingGlyph{}, red)
	glyphItem(MarkOrder, "same-instant order: this event went first (order fault)", leftTriangle{}, teal)
	glyphItem(MarkSale, "counter sale (=value seen)", draw.CircleGlyph{}, c0)
	glyphItem(MarkNoSale, "counter purchase, nothing sold", bar{}, grey)
	glyphItem(MarkSaleUnknown, "counter purchase, outcome unknown", draw.RingGlyph{}, black)
	seen := map[string]bool{}
	for _, s := range tl.Shades {
		if seen[s.Kind] {
			continue
		}
		seen[s.Kind] = true
		kind := s.Kind
		add(shadeName(kind)+" (window)", func(c draw.Canvas, r vg.Rectangle) { drawShade(c, kind, r.Min.X, r.Min.Y-2, r.Max.X, r.Max.Y+2) })
	}
	return out
}

// laneNames lists the lanes (for tests).
func laneNames(tl *Timeline) string {
	var names []string
	for _, l := range tl.Lanes {
		names = append(names, l.Name)
	}
	return fmt.Sprint(strings.Join(names, " "))
}
