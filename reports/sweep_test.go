package reports

import (
	"bytes"
	"encoding/csv"
	"image/png"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
)

// TestWilson checks the interval against values computed by hand from the
// formula (Brown, Cai and DasGupta 2001, eq. 4, z = 1.96).
func TestWilson(t *testing.T) {
	tests := []struct {
		name      string
		k, n      int
		p, lo, hi float64
	}{
		{"none of ten", 0, 10, 0, 0, 0.2775},
		{"half of ten", 5, 10, 0.5, 0.2366, 0.7634},
		{"all of thirty", 30, 30, 1, 0.8865, 1},
		{"one of a hundred", 1, 100, 0.01, 0.0018, 0.0545},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, lo, hi := Wilson(tt.k, tt.n)
			assert.InDelta(t, tt.p, p, 1e-9)
			assert.InDelta(t, tt.lo, lo, 1e-4)
			assert.InDelta(t, tt.hi, hi, 1e-4)
		})
	}
	p, lo, hi := Wilson(0, 0)
	assert.True(t, math.IsNaN(p))
	assert.Equal(t, 0.0, lo)
	assert.Equal(t, 1.0, hi)
}

func TestCounts(t *testing.T) {
	var c Counts
	c.Add(checker.Violated, checker.Holds, checker.NotJudged)
	c.Add(checker.Unknown, checker.Violated, checker.Holds)
	c.Add(checker.Holds, checker.Holds, checker.Violated)
	assert.Equal(t, Counts{Runs: 3, LockViolated: 1, LockUnknown: 1, ResourceViolated: 1, LivenessViolated: 1, LivenessJudged: 2}, c)
	k, n := c.Of(LockSafety)
	assert.Equal(t, [2]int{1, 2}, [2]int{k, n}, "unknown verdicts are left out")
	k, n = c.Of(Liveness)
	assert.Equal(t, [2]int{1, 2}, [2]int{k, n}, "not-judged runs are left out")
}

func sampleSweep(params int) *Sweep {
	s := &Sweep{Scenario: "redlock-clock-jump", BaseSeed: 1, Seeds: 10, Params: []SweepParam{
		{Path: "faults[1].by", Values: []string{"0s", "10s", "20s", "30s"}, X: []float64{0, 10, 20, 30}, Unit: "s"},
	}}
	if params == 2 {
		s.Params = append(s.Params, SweepParam{Path: "clients[0].lock.fanout", Values: []string{"sequential", "parallel"}})
	}
	n := len(s.Params[0].Values)
	if params == 2 {
		n *= 2
	}
	for i := 0; i < n; i++ {
		c := Counts{Runs: 10, LockViolated: i * 10 / n, ResourceViolated: i * 5 / n, LivenessJudged: 10 - i, LivenessViolated: i / 2}
		vals := []string{s.Params[0].Values[i/len(s.Params)]}
		if params == 2 {
			vals = append(vals, s.Params[1].Values[i%2])
		}
		s.Points = append(s.Points, SweepPoint{Values: vals, Counts: c, File: "points/point-00" + string(rune('0'+i)) + ".yaml", Replay: "simrun run x --seed 3"})
	}
	return s
}

func TestSweepImageAndCSV(t *testing.T) {
	for _, params := range []int{1, 2} {
		s := sampleSweep(params)
		img, err := SweepImage(s)
		require.NoError(t, err)
		requirePNG(t, img.PNG)
		texts := strings.Join(svgTexts(t, img.SVG), "\n")
		assert.Contains(t, texts, "faults[1].by (s)")
		if params == 1 {
			assert.Contains(t, texts, "P(lock safety violated)")
			assert.Contains(t, texts, "probability")
		} else {
			assert.Contains(t, texts, "parallel")
			assert.Contains(t, texts, "P(resource safety violated)")
			assert.Contains(t, texts, "0/10 [0.00, 0.28]")
		}
		again, err := SweepImage(s)
		require.NoError(t, err)
		assert.Equal(t, img, again, "deterministic")

		rows, err := csv.NewReader(bytes.NewReader(s.CSV())).ReadAll()
		require.NoError(t, err)
		require.Len(t, rows, len(s.Points)+1)
		assert.Equal(t, "point", rows[0][0])
		assert.Equal(t, "faults[1].by", rows[0][1])
		assert.Equal(t, "replay", rows[0][len(rows[0])-4])
		assert.Equal(t, "10", rows[1][1+params], "runs")
	}
	_, err := SweepImage(&Sweep{})
	assert.Error(t, err)
}

// TestSweepLabelAndReference: a parameter's readable label replaces its
// path on the axis and in the title (the path stays, in brackets), and a
// reference line is drawn with its label and a legend entry.
func TestSweepLabelAndReference(t *testing.T) {
	s := sampleSweep(1)
	s.Params[0].Label = "clock jump of C"
	s.References = []SweepReference{{X: 5, Label: "ttl - hold"}}
	img, err := SweepImage(s)
	require.NoError(t, err)
	texts := strings.Join(svgTexts(t, img.SVG), "\n")
	assert.Contains(t, texts, "clock jump of C  [faults[1].by] (s)")
	assert.Contains(t, texts, "P(violation) vs clock jump of C")
	assert.Contains(t, texts, "ttl - hold")
	assert.Contains(t, texts, "predicted by the story (reference line)")
	plain, err := SweepImage(sampleSweep(1))
	require.NoError(t, err)
	assert.NotContains(t, strings.Join(svgTexts(t, plain.SVG), "\n"), "reference line")
}

func TestMatrixOutputs(t *testing.T) {
	m := &Matrix{Rows: []string{"redlock", "redlock +fencing"}, Cols: []string{"clock jump", "failover"}, Runs: 10, Seed: 1,
		Notes: []string{"a note"},
		Cells: [][]MatrixCell{
			{{Counts: Counts{Runs: 10, LockViolated: 4, ResourceViolated: 4}, Replay: "simrun run cases/a.yaml --seed 9"}, {NA: true}},
			{{Counts: Counts{Runs: 10, LockViolated: 4}}, {NA: true}},
		}}
	img, err := MatrixImage(m)
	require.NoError(t, err)
	requirePNG(t, img.PNG)
	texts := strings.Join(svgTexts(t, img.SVG), "\n")
	for _, want := range []string{"redlock +fencing", "clock jump", "40%", "4/10", "[17–69%]", "n/a", "P(lock safety violated)", "P(resource safety violated)", "95% Wilson intervals"} {
		assert.Contains(t, texts, want)
	}
	md := string(m.Markdown())
	assert.Contains(t, md, "| redlock | 40% / 40% | n/a |")
	assert.Contains(t, md, "| redlock +fencing | 40% / 0% | n/a |")
	rows, err := csv.NewReader(bytes.NewReader(m.CSV())).ReadAll()
	require.NoError(t, err)
	assert.Len(t, rows, 5)
	page, err := m.HTML(img.SVG)
	require.NoError(t, err)
	assert.Contains(t, string(page), "simrun run cases/a.yaml --seed 9")
	assert.Contains(t, string(page), "40% (4/10, 95% CI")
	assert.Contains(t, m.Summary(), "40% / 0%")
}

// TestNumbersAggregate: a point or cell sums the grants, takes the median
// of the runs' median latencies (runs that never acquired left out) and
// the mean unavailable time, and the CSVs carry them after their older
// columns (issue 25).
func TestNumbersAggregate(t *testing.T) {
	var n Numbers
	_, ok := n.LatencyP50()
	assert.False(t, ok)
	assert.Equal(t, []string{"", "", ""}, n.cols(), "no run counted: empty")
	n.Add(4, 300*time.Millisecond, true, time.Second)
	n.Add(0, 0, false, 5*time.Second)
	n.Add(2, 100*time.Millisecond, true, 0)
	n.Add(3, 200*time.Millisecond, true, 0)
	n.Add(1, 900*time.Millisecond, true, 0)
	assert.Equal(t, 5, n.Runs)
	assert.Equal(t, 10, n.Grants)
	p, ok := n.LatencyP50()
	require.True(t, ok)
	assert.Equal(t, 200*time.Millisecond, p, "lower middle of 100, 200, 300, 900 ms")
	u, ok := n.MeanUnavailable()
	require.True(t, ok)
	assert.Equal(t, 1200*time.Millisecond, u)
	assert.Equal(t, []string{"10", "0.200000", "1.200000"}, n.cols())

	s := sampleSweep(1)
	s.Points[0].Counts.Numbers = n
	rows, err := csv.NewReader(bytes.NewReader(s.CSV())).ReadAll()
	require.NoError(t, err)
	head := rows[0]
	require.Greater(t, len(head), 3)
	assert.Equal(t, []string{"replay", "grants", "latency_p50_median_s", "unavailable_mean_s"}, head[len(head)-4:], "new columns after the old")
	assert.Equal(t, []string{"10", "0.200000", "1.200000"}, rows[1][len(head)-3:])
	assert.Equal(t, []string{"", "", ""}, rows[2][len(head)-3:], "a point without numbers")

	m := &Matrix{Rows: []string{"redlock"}, Cols: []string{"clock jump", "failover"}, Runs: 5, Seed: 1,
		Cells: [][]MatrixCell{{{Counts: Counts{Runs: 5, Numbers: n}}, {NA: true}}}}
	rows, err = csv.NewReader(bytes.NewReader(m.CSV())).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3)
	head = rows[0]
	assert.Equal(t, []string{"replay", "grants", "latency_p50_median_s", "unavailable_mean_s"}, head[len(head)-4:])
	assert.Equal(t, []string{"10", "0.200000", "1.200000"}, rows[1][len(head)-3:])
	assert.Equal(t, []string{"n/a", "", "", ""}, rows[2][len(head)-4:])
}

// TestSweepImageShowsNumbers: a sweep whose runs recorded their numbers
// draws them beside the probabilities: panels of grants per run and of
// latency and unavailability under a one-parameter plot, a numbers
// heatmap beside a two-parameter one; without numbers, neither.
func TestSweepImageShowsNumbers(t *testing.T) {
	for _, params := range []int{1, 2} {
		s := sampleSweep(params)
		plain, err := SweepImage(s)
		require.NoError(t, err)
		for i := range s.Points {
			for r := 0; r < 10; r++ {
				s.Points[i].Counts.Numbers.Add(2+i, time.Duration(100+i)*time.Millisecond, true, time.Duration(i)*time.Second)
			}
		}
		img, err := SweepImage(s)
		require.NoError(t, err)
		texts := strings.Join(svgTexts(t, img.SVG), "\n")
		plainTexts := strings.Join(svgTexts(t, plain.SVG), "\n")
		if params == 1 {
			for _, want := range []string{"grants per run (mean over the point's runs)", "acquisition latency and unavailability",
				"latency p50 (median of the runs' medians)", "lock free while someone waited (mean per run)"} {
				assert.Contains(t, texts, want)
				assert.NotContains(t, plainTexts, want)
			}
			continue
		}
		assert.Contains(t, texts, "numbers (colour: time free while waited)")
		assert.NotContains(t, plainTexts, "numbers (colour")
		assert.Contains(t, texts, "2.0 grants/run")
		assert.Contains(t, texts, "p50 107ms")
		assert.Contains(t, texts, "free 7.00s")
	}
}

// TestTwoParameterHeatmapScales: a two-parameter sweep's numbers panel
// (time free while waited) is coloured on a palette of its own, not the
// probability's violation reds, with its own colour bar beside the
// probability's; the panels wrap at two per row, so the image is not four
// times as wide as high.
func TestTwoParameterHeatmapScales(t *testing.T) {
	s := sampleSweep(2)
	for i := range s.Points {
		s.Points[i].Counts.Numbers.Add(2, 100*time.Millisecond, true, time.Duration(i)*time.Second)
	}
	img, err := SweepImage(s)
	require.NoError(t, err)
	texts := svgTexts(t, img.SVG)
	joined := strings.Join(texts, "\n")
	assert.Equal(t, 1, strings.Count(joined, "probability"), "one probability scale")
	assert.Contains(t, joined, "time free while waited (mean per run;")
	assert.Contains(t, joined, "the most")
	// The numbers' palette is not a red: its darkest end is blue.
	r, g, b := onWhite(quantityColour(1))
	assert.Greater(t, hue(r, g, b), 180.0)
	assert.Less(t, hue(r, g, b), 260.0)
	cfg, err := png.DecodeConfig(bytes.NewReader(img.PNG))
	require.NoError(t, err)
	assert.LessOrEqual(t, float64(cfg.Width)/float64(cfg.Height), 2.0, "%dx%d", cfg.Width, cfg.Height)
	assert.LessOrEqual(t, cfg.Width, 1600)
}

// TestMatrixHTMLShowsNumbers: matrix.html has a table of each cell's
// numbers (those of matrix.csv's last columns).
func TestMatrixHTMLShowsNumbers(t *testing.T) {
	var c Counts
	c.Add(checker.Holds, checker.Holds, checker.Holds)
	c.Add(checker.Violated, checker.Holds, checker.Holds)
	c.Numbers.Add(3, 120*time.Millisecond, true, 2*time.Second)
	c.Numbers.Add(5, 80*time.Millisecond, true, 0)
	m := &Matrix{Rows: []string{"redlock"}, Cols: []string{"pause", "failover"}, Runs: 2, Seed: 1,
		Cells: [][]MatrixCell{{{Counts: c}, {NA: true}}}}
	page, err := m.HTML([]byte("<svg/>"))
	require.NoError(t, err)
	html := string(page)
	require.Contains(t, html, "<h2>Numbers</h2>")
	_, numbers, _ := strings.Cut(html, "<h2>Numbers</h2>")
	assert.Contains(t, numbers, "<td>4.0 grants/run<br>p50 80.0ms<br>free 1.00s</td><td>n/a</td>")
}

// TestMatrixHTMLFitsTheWindow: matrix.html overflowed a 1400 px window:
// its image (wider than the page) was shown at full size, and its tables
// had nothing to scroll in. The image now scales to the page's width
// (linking to matrix.png at full size) and each table scrolls in its own
// box. (Measured in headless Chromium at 1400 px: the document's
// scrollWidth equals its clientWidth.)
func TestMatrixHTMLFitsTheWindow(t *testing.T) {
	m := &Matrix{Rows: []string{"redlock"}, Cols: []string{"pause", "failover"}, Runs: 1, Seed: 1,
		Cells: [][]MatrixCell{{{}, {NA: true}}}}
	page, err := m.HTML([]byte("<svg/>"))
	require.NoError(t, err)
	html := string(page)
	assert.Contains(t, html, ".fit img { max-width: 100%; height: auto; }")
	assert.Regexp(t, `<div class="fit"><a href="matrix.png"[^>]*><img src="data:image/svg`, html)
	assert.Equal(t, strings.Count(html, "<table>"), strings.Count(html, `<div class="scroll"><table>`), "every table scrolls in its own box")
	assert.NotContains(t, html, "max-width: none")
}
