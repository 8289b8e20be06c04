package reports

import (
	"bytes"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/locksim/locksim/checker"
)

// dpi is the resolution of every PNG.
const dpi = 100

// Image is a figure rendered in both formats.
type Image struct {
	PNG []byte
	SVG []byte
}

// render draws a figure of w×h on a PNG and an SVG canvas. draw must be
// deterministic; so are both back ends (gonum's rasterizer and PNG encoder,
// and its SVG writer, without embedded fonts).
func render(w, h vg.Length, paint func(c draw.Canvas)) (Image, error) {
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
	paint(draw.New(img))
	var pb bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&pb); err != nil {
		return Image{}, err
	}
	svg := vgsvg.New(w, h)
	dc := draw.New(svg)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	paint(dc)
	var sb bytes.Buffer
	if _, err := svg.WriteTo(&sb); err != nil {
		return Image{}, err
	}
	return Image{PNG: pb.Bytes(), SVG: fixSVGFonts(sb.Bytes())}, nil
}

// fixSVGFonts gives the SVG's font families fallbacks: gonum names the
// Liberation fonts it measured with, which many viewers lack; Liberation
// Sans has Arial's metrics, so the layout holds.
func fixSVGFonts(b []byte) []byte {
	s := string(b)
	s = strings.ReplaceAll(s, "font-family:Liberation Sans;", "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")
	s = strings.ReplaceAll(s, "font-family:Liberation Mono;", "font-family:'Liberation Mono','Courier New',monospace;")
	return []byte(s)
}

// sans is the report's font.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

func textStyle(size vg.Length, clr color.Color) text.Style {
	return text.Style{
		Color:   clr,
		Font:    font.From(sans, size),
		Handler: plot.DefaultTextHandler,
		XAlign:  draw.XLeft,
		YAlign:  draw.YBottom,
	}
}

// titleMargin is the room kept above a plot drawn at the top of an image
// or under another: gonum draws a plot's title against its canvas's top
// edge, and the glyphs' ascent then reached past it (a title cut at the
// top), or into the x axis label of the panel above.
const titleMargin = vg.Length(6)

// newPlot returns a plot in the report's style: sans-serif text, no legend
// (reports draw their own, outside the data area).
func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 13)
	p.Title.Padding = vg.Points(6)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 11)
		a.Tick.Label.Font = font.From(sans, 10)
	}
	p.Legend.TextStyle.Font = font.From(sans, 10)
	return p
}

// colours.
var (
	black     = color.RGBA{0x22, 0x22, 0x22, 0xff}
	grey      = color.RGBA{0x88, 0x88, 0x88, 0xff}
	lightGrey = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
	red       = color.RGBA{0xd6, 0x27, 0x28, 0xff}
	green     = color.RGBA{0x2c, 0xa0, 0x2c, 0xff}
	purple    = color.RGBA{0x80, 0x3c, 0xa0, 0xff}
	downGrey  = color.RGBA{0x55, 0x55, 0x55, 0xff}

	// clientColours are Tableau 10 without its red (kept for violations).
	clientColours = []color.RGBA{
		{0x4e, 0x79, 0xa7, 0xff}, // blue
		{0xf2, 0x8e, 0x2b, 0xff}, // orange
		{0x59, 0xa1, 0x4f, 0xff}, // green
		{0xb0, 0x7a, 0xa1, 0xff}, // purple
		{0x9c, 0x75, 0x5f, 0xff}, // brown
		{0x76, 0xb7, 0xb2, 0xff}, // teal
		{0xed, 0xc9, 0x48, 0xff}, // yellow
		{0xff, 0x9d, 0xa7, 0xff}, // pink
	}
	// groupColours mark the sides of a partition.
	groupColours = []color.RGBA{
		{0x17, 0xbe, 0xcf, 0xff}, // cyan
		{0xbc, 0xbd, 0x22, 0xff}, // olive
		{0x7f, 0x7f, 0x7f, 0xff}, // grey
		{0x8c, 0x56, 0x4b, 0xff}, // brown
	}
	// builtinShades are the built-in properties' violation colours, by
	// Violation.Kind; a property without one takes shadePalette's colour
	// at its place in the registry (shadeColour).
	builtinShades = map[string]color.NRGBA{
		checker.KindLockSafety:     {0xe1, 0x57, 0x59, 0x40},
		checker.KindResourceSafety: {0xff, 0x9f, 0x1c, 0x18},
		checker.KindLiveness:       {0xed, 0xc9, 0x48, 0x48},
		checker.KindTokenOrder:     {0x9c, 0x27, 0xb0, 0x38},
	}
	shadePalette = []color.NRGBA{
		{0x1f, 0x77, 0xb4, 0x38}, // blue
		{0x8c, 0x56, 0x4b, 0x40}, // brown
		{0x17, 0xbe, 0xcf, 0x40}, // cyan
		{0x7f, 0x7f, 0x7f, 0x40}, // grey
	}
)

// shadeColour is the colour of a violation window of kind: the built-in
// property's own, else a palette colour chosen by the property's place in
// checker.Properties(), so that every registered property has one.
func shadeColour(kind string) color.NRGBA {
	if c, ok := builtinShades[kind]; ok {
		return c
	}
	for i, p := range checker.Properties() {
		if p.About().Kind == kind {
			return shadePalette[i%len(shadePalette)]
		}
	}
	// A kind no property declares (a record from another build): still
	// drawn, in the palette's last colour.
	return shadePalette[len(shadePalette)-1]
}

// tint mixes a colour with white (f = 0: the colour, 1: white).
func tint(c color.RGBA, f float64) color.RGBA {
	mix := func(v uint8) uint8 { return uint8(float64(v) + (255-float64(v))*f) }
	return color.RGBA{mix(c.R), mix(c.G), mix(c.B), 0xff}
}

// shadeOf darkens a colour (f = 0: the colour, 1: black).
func shadeOf(c color.RGBA, f float64) color.RGBA {
	mix := func(v uint8) uint8 { return uint8(float64(v) * (1 - f)) }
	return color.RGBA{mix(c.R), mix(c.G), mix(c.B), 0xff}
}

// rect fills a rectangle.
func fillRect(c draw.Canvas, clr color.Color, x0, y0, x1, y1 vg.Length) {
	if x1 < x0 {
		x0, x1 = x1, x0
	}
	c.FillPolygon(clr, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
}

func strokeRect(c draw.Canvas, sty draw.LineStyle, x0, y0, x1, y1 vg.Length) {
	c.StrokeLines(sty, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}, {X: x0, Y: y0}})
}

// hatch draws 45° lines every gap inside a rectangle.
func hatch(c draw.Canvas, sty draw.LineStyle, gap, x0, y0, x1, y1 vg.Length) {
	if x1 <= x0 || y1 <= y0 {
		return
	}
	// Lines x = x0 + k + (y - y0), for k from -(height) to width, anchored
	// at multiples of gap from the canvas origin so that adjacent spans
	// line up.
	h := y1 - y0
	start := vg.Length(float64(int((x0-h)/gap))) * gap
	for xk := start; xk <= x1; xk += gap {
		k := xk - x0
		ys := y0
		if y0-k > ys {
			ys = y0 - k
		}
		ye := y1
		if y0+(x1-x0-k) < ye {
			ye = y0 + (x1 - x0 - k)
		}
		if ys >= ye {
			continue
		}
		c.StrokeLine2(sty, x0+k+(ys-y0), ys, x0+k+(ye-y0), ye)
	}
}
