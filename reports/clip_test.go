package reports

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/scenarios"
)

var (
	svgHeightRE = regexp.MustCompile(`viewBox="0 0 [0-9.]+ ([0-9.]+)"`)
	svgTextRE   = regexp.MustCompile(`<text x="[-0-9.]+" y="(-[0-9.]+)" transform="scale\(1, -1\)"\s+style="[^"]*font-size:([0-9.]+)px[^"]*">([^<]*)</text>`)
)

// clippedAtTop lists the texts of an SVG drawn by render whose ascent
// (0.905 em, Liberation Sans's) reaches above the image's top edge.
func clippedAtTop(t *testing.T, svg []byte) []string {
	t.Helper()
	m := svgHeightRE.FindSubmatch(svg)
	require.NotNil(t, m, "no viewBox")
	h, err := strconv.ParseFloat(string(m[1]), 64)
	require.NoError(t, err)
	var out []string
	texts := svgTextRE.FindAllSubmatch(svg, -1)
	require.NotEmpty(t, texts)
	for _, x := range texts {
		y, _ := strconv.ParseFloat(string(x[1]), 64)
		size, _ := strconv.ParseFloat(string(x[2]), 64)
		if h-(-y) < 0.905*size {
			out = append(out, string(x[3]))
		}
	}
	return out
}

// TestTitlesNotClipped: no image cuts a title (or any text) at its top
// edge; the one-parameter sweep's title was drawn 10.5pt under the top in
// a 13px font.
func TestTitlesNotClipped(t *testing.T) {
	s := sampleSweep(1)
	for i := range s.Points {
		s.Points[i].Counts.Numbers.Add(2, 100*time.Millisecond, true, time.Duration(i)*time.Second)
	}
	one, err := SweepImage(s)
	require.NoError(t, err)
	assert.Empty(t, clippedAtTop(t, one.SVG), "one-parameter sweep")
	two, err := SweepImage(sampleSweep(2))
	require.NoError(t, err)
	assert.Empty(t, clippedAtTop(t, two.SVG), "two-parameter sweep")
	sc, err := scenarios.Builtin("redlock-clock-jump")
	require.NoError(t, err)
	run, _ := runScenario(t, sc)
	files, err := RenderRun(run)
	require.NoError(t, err)
	assert.Empty(t, clippedAtTop(t, files["timeline.svg"]), "timeline")
	assert.Empty(t, clippedAtTop(t, files["clocks.svg"]), "clocks")
}
