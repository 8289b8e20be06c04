package reports

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/vg"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/sim"
)

// throwaway is a property registered by a test only.
type throwaway struct{}

func (throwaway) About() checker.About {
	return checker.About{Name: "throwaway_prop", Title: "throwaway prop", Kind: "throwaway-prop", Short: "throwaway",
		Explains: "nothing", Expect: []checker.Verdict{checker.Holds, checker.Violated}}
}
func (throwaway) Judge(*sim.History, checker.Options) checker.Judgement {
	return checker.Judgement{Verdict: checker.Holds}
}
func (throwaway) Stream(checker.Options) checker.PieceJudge { return throwawayPieces{} }

type throwawayPieces struct{}

func (throwawayPieces) Piece(*sim.History) (bool, string) { return true, "" }
func (throwawayPieces) Final(*sim.History) checker.Judgement {
	return checker.Judgement{Verdict: checker.Holds}
}

// TestEveryPropertyIsDrawn draws one violation window of every registered
// property (a throwaway one registered here included): each must have a
// valid fill in the SVG (not the "#-8000..." of a missing colour) and a
// named legend entry, and no two properties may share a colour.
func TestEveryPropertyIsDrawn(t *testing.T) {
	t.Cleanup(checker.Register(throwaway{}))
	tl := &Timeline{Title: "shades", End: sim.Time(10 * time.Second), View: sim.Time(10 * time.Second),
		Lanes: []*Lane{{Name: "c1", Kind: LaneClient}}, Clients: []string{"c1"}}
	seen := map[string]string{}
	for i, p := range checker.Properties() {
		kind := p.About().Kind
		at := sim.Time(time.Duration(i+1) * time.Second)
		tl.Shades = append(tl.Shades, Shade{Kind: kind, Start: at, End: at + sim.Time(500*time.Millisecond), Lanes: []string{"c1"}})
		c := shadeColour(kind)
		require.NotZero(t, c.A, "%s has no colour", kind)
		hex := hexOf(c.R, c.G, c.B)
		assert.Empty(t, seen[hex], "%s has the colour of %s", kind, seen[hex])
		seen[hex] = kind
	}
	img, err := TimelineImage(tl, "shades")
	require.NoError(t, err)
	svg := string(img.SVG)
	assert.False(t, strings.Contains(svg, "fill:#-"), "a missing colour is drawn as fill:#-8000...")
	for _, m := range regexp.MustCompile(`fill:(#[^;"]*)`).FindAllStringSubmatch(svg, -1) {
		assert.Regexp(t, `^#[0-9a-fA-F]{6}$`, m[1])
	}
	// Each legend entry "<title> violated" has a swatch: the filled
	// rectangle drawn just before its text; no two share a fill.
	swatch := map[string]string{}
	fill := regexp.MustCompile(`fill:(#[0-9A-Fa-f]{6});fill-opacity`)
	chunks := strings.Split(svg, "<text")
	for i := 1; i < len(chunks); i++ {
		_, rest, _ := strings.Cut(chunks[i], ">")
		text, _, _ := strings.Cut(rest, "<")
		if !strings.HasSuffix(text, "(window)") {
			continue
		}
		fs := fill.FindAllStringSubmatch(chunks[i-1], -1)
		require.NotEmpty(t, fs, "legend entry %q has no swatch", text)
		swatch[text] = fs[0][1]
	}
	fills := map[string]string{}
	for _, p := range checker.Properties() {
		a := p.About()
		var got string
		for text, f := range swatch {
			if strings.HasPrefix(text, a.Title+" violated") {
				got = f
			}
		}
		require.NotEmpty(t, got, "no legend swatch for %s (legend: %v)", a.Name, swatch)
		assert.Empty(t, fills[got], "%s has the swatch colour of %s", a.Name, fills[got])
		fills[got] = a.Name
	}
}

// TestLegendNotClipped renders fenced-baseline, whose legend takes two
// rows: the height reserved for the legend must hold every row drawn (the
// second row was cut off when the height was measured for wider rows than
// the ones drawn).
func TestLegendNotClipped(t *testing.T) {
	run, _ := runOf(t, "fenced-baseline")
	tl, err := BuildTimeline(run)
	require.NoError(t, err)
	img, err := TimelineImage(tl, "fenced-baseline")
	require.NoError(t, err)
	rows := 0
	for _, m := range regexp.MustCompile(`<text x="[^"]*" y="(-?[0-9.]+)"`).FindAllStringSubmatch(string(img.SVG), -1) {
		y, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		// The SVG is flipped: a text's baseline is -y points above the
		// bottom edge; a legend row's glyphs need 4 points under it.
		assert.GreaterOrEqual(t, -y, 4.0, "a text's baseline is %.1fpt above the bottom edge: clipped", -y)
		if -y < 25 {
			rows++
		}
	}
	assert.Greater(t, rows, 0)
	assert.Len(t, legendRows(timelineLegend(tl), timelineWidth-1.5*vg.Inch), 2, "fenced-baseline's legend takes two rows")
}
