package reports

import (
	"fmt"
	"image/color"
	"math"
	"strings"
	"time"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/locksim/locksim/sim"
)

// clockSeries is one clock's offset from true time over the run.
type clockSeries struct {
	procs []string
	wall  bool // the wall clock (else the monotonic clock)
	both  bool // wall and monotonic are the same line
	pts   []point
}

type point struct {
	t   sim.Time
	off time.Duration
}

// offsets samples a clock's offset at the start, on both sides of every
// change, and at the end: between changes it is affine, so this is exact.
func offsets(h *ClockHistory, wall bool, end sim.Time) []point {
	off := func(st sim.ClockState, t sim.Time) time.Duration {
		if wall {
			return time.Duration(st.Read(sim.Wall, t) - sim.Epoch - int64(t))
		}
		return time.Duration(st.Read(sim.Mono, t) - int64(t))
	}
	pts := []point{{0, off(h.segs[0].st, 0)}}
	for i := 1; i < len(h.segs); i++ {
		t := h.segs[i].from
		if t > end {
			break
		}
		pts = append(pts, point{t, off(h.segs[i-1].st, t)}, point{t, off(h.segs[i].st, t)})
	}
	pts = append(pts, point{end, off(h.at(end), end)})
	// Drop repeated points (a change that changed nothing).
	out := pts[:1]
	for _, p := range pts[1:] {
		if p != out[len(out)-1] {
			out = append(out, p)
		}
	}
	if len(out) == 1 {
		out = append(out, point{end, out[0].off})
	}
	return out
}

func seriesKey(pts []point) string {
	var b strings.Builder
	for _, p := range pts {
		fmt.Fprintf(&b, "%d:%d;", p.t, p.off)
	}
	return b.String()
}

// clockGroups groups processes whose clocks followed the same offsets, so
// that the legend names them together.
func clockGroups(hs []*ClockHistory, end sim.Time) []*clockSeries {
	var out []*clockSeries
	idx := map[string]*clockSeries{}
	for _, h := range hs {
		w, m := offsets(h, true, end), offsets(h, false, end)
		same := seriesKey(w) == seriesKey(m)
		add := func(pts []point, wall, both bool) {
			k := fmt.Sprintf("%v%v%s", wall, both, seriesKey(pts))
			if s := idx[k]; s != nil {
				s.procs = append(s.procs, h.Proc)
				return
			}
			s := &clockSeries{procs: []string{h.Proc}, wall: wall, both: both, pts: pts}
			idx[k] = s
			out = append(out, s)
		}
		add(w, true, same)
		if !same {
			add(m, false, false)
		}
	}
	return out
}

var seriesColours = []color.RGBA{
	{0x4e, 0x79, 0xa7, 0xff}, {0xe1, 0x57, 0x59, 0xff}, {0x59, 0xa1, 0x4f, 0xff}, {0xf2, 0x8e, 0x2b, 0xff},
	{0xb0, 0x7a, 0xa1, 0xff}, {0x76, 0xb7, 0xb2, 0xff}, {0x9c, 0x75, 0x5f, 0xff}, {0xed, 0xc9, 0x48, 0xff},
	{0xff, 0x9d, 0xa7, 0xff}, {0x55, 0x55, 0x55, 0xff},
}

// offsetUnit picks the unit of the y axis.
func offsetUnit(max time.Duration) (time.Duration, string) {
	switch {
	case max >= time.Second:
		return time.Second, "s"
	case max >= time.Millisecond:
		return time.Millisecond, "ms"
	case max >= time.Microsecond:
		return time.Microsecond, "µs"
	}
	return time.Second, "s"
}

// ClocksImage draws every process's wall and monotonic clock offset from
// true time (reading minus true time; the wall clock relative to the epoch
// it started at), with jumps as vertical steps and drift as slopes.
func ClocksImage(hs []*ClockHistory, end sim.Time, title string) (Image, error) {
	groups := clockGroups(hs, end)
	var max time.Duration
	for _, g := range groups {
		for _, p := range g.pts {
			if a := p.off; a > max || -a > max {
				if a < 0 {
					a = -a
				}
				max = a
			}
		}
	}
	unit, uname := offsetUnit(max)
	p := newPlot(title)
	p.X.Label.Text = "true time (s)"
	p.Y.Label.Text = "clock − true time (" + uname + ")"
	p.X.Min, p.X.Max = 0, math.Max(end.Seconds(), 1e-9)
	p.X.Tick.Marker = timeTicks{}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.RGBA{0xe4, 0xe4, 0xe4, 0xff}
	grid.Horizontal.Color = color.RGBA{0xe4, 0xe4, 0xe4, 0xff}
	p.Add(grid)
	var items []legendItem
	for i, g := range groups {
		xys := make(plotter.XYs, len(g.pts))
		for j, pt := range g.pts {
			xys[j] = plotter.XY{X: pt.t.Seconds(), Y: float64(pt.off) / float64(unit)}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return Image{}, err
		}
		ls := draw.LineStyle{Color: seriesColours[i%len(seriesColours)], Width: vg.Points(1.8)}
		what := "wall"
		switch {
		case g.both:
			what = "wall = monotonic"
		case !g.wall:
			what = "monotonic"
			ls.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		l.LineStyle = ls
		p.Add(l)
		text := strings.Join(g.procs, ", ") + ": " + what
		items = append(items, legendItem{text: text, thumb: func(c draw.Canvas, r vg.Rectangle) {
			y := (r.Min.Y + r.Max.Y) / 2
			c.StrokeLine2(ls, r.Min.X, y, r.Max.X, y)
		}})
	}
	if max == 0 {
		p.Y.Min, p.Y.Max = -1, 1
	} else {
		pad := float64(max) / float64(unit) * 0.08
		p.Y.Min -= pad
		p.Y.Max += pad
	}
	w := 11 * vg.Inch
	rows := legendRows(items, w-1.2*vg.Inch)
	legendH := legendHeight(rows)
	h := 4.2*vg.Inch + legendH
	return render(w, h, func(c draw.Canvas) {
		p.Draw(draw.Crop(c, 0, 0, legendH, -titleMargin))
		drawLegend(c, rows, c.Min.X+0.8*vg.Inch, c.Min.Y+legendH-vg.Points(6))
	})
}
