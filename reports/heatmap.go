package reports

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// heatCell is one cell of a heatmap: a probability (NaN: nothing to show)
// and up to two lines of text.
type heatCell struct {
	p     float64
	lines []string
}

// heatmap is a grid of probabilities; row 0 is drawn at the top.
type heatmap struct {
	title      string
	rows, cols []string
	xLabel     string
	yLabel     string
	cells      [][]heatCell // [row][col]
	// palette colours a cell's value (nil: heatColour, the probability
	// scale); scale names what a palette other than heatColour shows, for
	// its own colour bar.
	palette func(float64) color.RGBA
	scale   string
}

// colour is the colour of a cell's value.
func (h *heatmap) colour(p float64) color.RGBA {
	if h.palette != nil {
		return h.palette(p)
	}
	return heatColour(p)
}

// colourStop is a stop of a sequential palette.
type colourStop struct {
	at float64
	c  color.RGBA
}

// heatColour maps a probability to white (0) through orange to dark red
// (1): ColorBrewer's sequential OrRd, for the probability of a violation.
func heatColour(p float64) color.RGBA {
	return ramp(p, []colourStop{
		{0, color.RGBA{0xff, 0xff, 0xff, 0xff}},
		{0.25, color.RGBA{0xfd, 0xd4, 0x9e, 0xff}},
		{0.5, color.RGBA{0xfc, 0x8d, 0x59, 0xff}},
		{0.75, color.RGBA{0xe3, 0x4a, 0x33, 0xff}},
		{1, color.RGBA{0x99, 0x00, 0x00, 0xff}},
	})
}

// quantityColour maps a share of the largest value (0 to 1) to white
// through blue: ColorBrewer's sequential Blues, for a quantity that is
// not the probability of a violation (the time the lock stood free), so
// that it never reads as one.
func quantityColour(p float64) color.RGBA {
	return ramp(p, []colourStop{
		{0, color.RGBA{0xf7, 0xfb, 0xff, 0xff}},
		{0.25, color.RGBA{0xc6, 0xdb, 0xef, 0xff}},
		{0.5, color.RGBA{0x6b, 0xae, 0xd6, 0xff}},
		{0.75, color.RGBA{0x21, 0x71, 0xb5, 0xff}},
		{1, color.RGBA{0x08, 0x30, 0x6b, 0xff}},
	})
}

// ramp interpolates stops at p (NaN: light grey, nothing to show).
func ramp(p float64, stops []colourStop) color.RGBA {
	if math.IsNaN(p) {
		return color.RGBA{0xee, 0xee, 0xee, 0xff}
	}
	p = math.Max(0, math.Min(1, p))
	for i := 1; i < len(stops); i++ {
		if p <= stops[i].at {
			a, b := stops[i-1], stops[i]
			f := (p - a.at) / (b.at - a.at)
			mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + (float64(y)-float64(x))*f)) }
			return color.RGBA{mix(a.c.R, b.c.R), mix(a.c.G, b.c.G), mix(a.c.B, b.c.B), 0xff}
		}
	}
	return stops[len(stops)-1].c
}

// heatPlot builds the plot of a heatmap.
func (h *heatmap) plot() *plot.Plot {
	p := newPlot(h.title)
	p.X.Label.Text = h.xLabel
	p.Y.Label.Text = h.yLabel
	p.NominalX(h.cols...)
	names := make([]string, len(h.rows))
	for i, r := range h.rows {
		names[len(h.rows)-1-i] = r
	}
	p.NominalY(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(h.cols))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(h.rows))-0.5
	p.X.Padding, p.Y.Padding = 0, 0
	p.X.Tick.Label.Font.Size = 9
	p.Y.Tick.Label.Font.Size = 9
	p.Add(&heatArtist{h})
	return p
}

type heatArtist struct{ h *heatmap }

func (a *heatArtist) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	n := len(a.h.rows)
	for ri, row := range a.h.cells {
		y := float64(n - 1 - ri)
		for ci, cell := range row {
			x0, x1 := trX(float64(ci)-0.5), trX(float64(ci)+0.5)
			y0, y1 := trY(y-0.5), trY(y+0.5)
			bg := a.h.colour(cell.p)
			fillRect(c, bg, x0, y0, x1, y1)
			strokeRect(c, draw.LineStyle{Color: color.White, Width: vg.Points(1.5)}, x0, y0, x1, y1)
			clr := color.Color(black)
			if !math.IsNaN(cell.p) && cell.p > 0.6 {
				clr = color.White
			}
			sizes := []vg.Length{10, 7.5}
			var total vg.Length
			for i := range cell.lines {
				total += textStyle(sizes[min(i, 1)], clr).Height("Xg")
			}
			ty := (y0+y1)/2 + total/2
			for i, line := range cell.lines {
				st := textStyle(sizes[min(i, 1)], clr)
				ty -= st.Height("Xg")
				w := st.Width(line)
				if w > x1-x0-vg.Points(2) {
					continue // no room: the table has it
				}
				c.FillText(st, vg.Point{X: (x0+x1)/2 - w/2, Y: ty}, line)
			}
		}
	}
}

// colourBar is a legend item showing the heat scale.
func colourBar(width vg.Length) legendItem {
	return paletteBar(width, heatColour, []string{"0", "0.25", "0.5", "0.75", "1"})
}

// paletteBar is a legend item showing a palette from 0 to 1 with five
// tick labels.
func paletteBar(width vg.Length, palette func(float64) color.RGBA, ticks []string) legendItem {
	return legendItem{text: "", thumb: func(c draw.Canvas, r vg.Rectangle) {
		const steps = 50
		sty := textStyle(8, black)
		for i := 0; i < steps; i++ {
			f := float64(i) / steps
			x0 := r.Min.X + width*vg.Length(f)
			x1 := r.Min.X + width*vg.Length(float64(i+1)/steps)
			fillRect(c, palette(f+0.5/steps), x0, r.Min.Y, x1, r.Max.Y)
		}
		strokeRect(c, draw.LineStyle{Color: grey, Width: vg.Points(0.5)}, r.Min.X, r.Min.Y, r.Min.X+width, r.Max.Y)
		for _, t := range []float64{0, 0.25, 0.5, 0.75, 1} {
			x := r.Min.X + width*vg.Length(t)
			label := ticks[int(t*4)]
			c.FillText(sty, vg.Point{X: x - sty.Width(label)/2, Y: r.Min.Y - sty.Height(label) - vg.Points(1)}, label)
		}
	}}
}
