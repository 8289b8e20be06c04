package reports

import (
	"image/color"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/scenarios"
)

// onWhite is what a colour looks like drawn over the white background.
func onWhite(c color.Color) (r, g, b float64) {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	a := float64(n.A) / 255
	mix := func(v uint8) float64 { return (float64(v)*a + 255*(1-a)) / 255 }
	return mix(n.R), mix(n.G), mix(n.B)
}

// hue is the hue of a colour in degrees.
func hue(r, g, b float64) float64 {
	mx, mn := math.Max(r, math.Max(g, b)), math.Min(r, math.Min(g, b))
	if mx == mn {
		return 0
	}
	var h float64
	switch mx {
	case r:
		h = math.Mod((g-b)/(mx-mn), 6)
	case g:
		h = (b-r)/(mx-mn) + 2
	default:
		h = (r-g)/(mx-mn) + 4
	}
	h *= 60
	if h < 0 {
		h += 360
	}
	return h
}

// TestAvailabilityIsNotAViolationColour: "lock free while waiting" (a
// light bin as well as a dark one) and a lock safety window are told apart
// by hue, not by shade (both were pink).
func TestAvailabilityIsNotAViolationColour(t *testing.T) {
	for _, share := range []uint8{0x26, 0x80, 0xff} {
		ah := hue(onWhite(alpha(unavailRed, share)))
		for _, kind := range []string{checker.KindLockSafety, checker.KindResourceSafety, checker.KindLiveness} {
			vh := hue(onWhite(shadeColour(kind)))
			d := math.Abs(ah - vh)
			d = math.Min(d, 360-d)
			assert.Greater(t, d, 60.0, "availability (alpha %#x, hue %.0f) against %s (hue %.0f)", share, ah, kind, vh)
		}
	}
}

// TestViolationBandBelowAvailability: the band that repeats the violation
// windows along the time axis has a strip of its own under the
// availability rows, instead of being drawn over them.
func TestViolationBandBelowAvailability(t *testing.T) {
	s, err := scenarios.Builtin("redlock-clock-jump")
	require.NoError(t, err)
	run, _ := runScenario(t, s)
	tl, err := BuildTimeline(run)
	require.NoError(t, err)
	require.NotEmpty(t, tl.Shades)
	rows := tl.availRows()
	require.NotEmpty(t, rows)
	p := timelinePlot(tl, "t")
	r := float64(availHeight / laneHeight)
	lowestRowBottom := availY(tl, len(rows)-1) - r/2
	bandTop := p.Y.Min + float64(shadeBand/laneHeight)
	assert.GreaterOrEqual(t, lowestRowBottom, bandTop, "the band (up to y=%.3f) reaches into the availability row (down to y=%.3f)", bandTop, lowestRowBottom)
}

// TestRingPartitionsLegible: a majorities ring (a cut per position, five
// at once) no longer slices every lane into one stripe per partition: the
// lanes say they are partitioned, the network lane says how.
func TestRingPartitionsLegible(t *testing.T) {
	s, err := scenarios.Builtin("redlock-majorities-ring")
	require.NoError(t, err)
	run, _ := runScenario(t, s)
	tl, err := BuildTimeline(run)
	require.NoError(t, err)
	require.Greater(t, tl.PartRows, maxPartSlices, "the ring's cuts overlap")
	var texts []string
	for _, it := range timelineLegend(tl) {
		texts = append(texts, it.text)
	}
	assert.Contains(t, texts, "in a partition (darker: in more of them at once; the network lane names them)")
	assert.NotContains(t, texts, "partition side (lane tinted by side as on the network lane; overlapping partitions in rows)")
	// Two partitions at once keep their sides (redlock-clock-jump).
	s, err = scenarios.Builtin("redlock-clock-jump")
	require.NoError(t, err)
	run, _ = runScenario(t, s)
	tl, err = BuildTimeline(run)
	require.NoError(t, err)
	texts = nil
	for _, it := range timelineLegend(tl) {
		texts = append(texts, it.text)
	}
	assert.Contains(t, texts, "partition side (lane tinted by side as on the network lane; overlapping partitions in rows)")
}

// TestInteractiveAvailabilityColour: the HTML report's interactive
// timeline draws availability in the same colour as the images.
func TestInteractiveAvailabilityColour(t *testing.T) {
	assert.Contains(t, interactiveScript, `fill: "#`+hexOf(unavailRed.R, unavailRed.G, unavailRed.B)+`", "fill-opacity"`)
}
