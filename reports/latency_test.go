package reports

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
)

func TestLatencyBins(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name    string
		samples []time.Duration
		n       int
		counts  []int
		width   time.Duration
	}{
		{"none", nil, 4, nil, 0},
		{"no bins", []time.Duration{ms}, 0, nil, 0},
		{"round width", []time.Duration{0, 150 * ms, 390 * ms, 399 * ms, 100 * ms}, 4, []int{1, 2, 0, 2}, 100 * ms},
		{"only the bins up to the largest", []time.Duration{0, 10 * ms, 150 * ms}, 20, []int{1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 10 * ms},
		{"the largest on an edge", []time.Duration{400 * ms}, 4, []int{0, 0, 1}, 200 * ms},
		{"all zero", []time.Duration{0, 0}, 2, []int{2}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counts, width := LatencyBins(checker.LatencyOf(tt.samples...), tt.n)
			assert.Equal(t, tt.counts, counts)
			assert.Equal(t, tt.width, width)
		})
	}
}

// TestLatencyHistogramInReport: the run report draws the distribution of
// the acquisition latencies from the record's numbers (issue 25).
func TestLatencyHistogramInReport(t *testing.T) {
	svg := LatencyHistogramSVG(checker.LatencyOf(100*time.Millisecond, 150*time.Millisecond, 2*time.Second))
	require.NotNil(t, svg)
	assert.Len(t, regexp.MustCompile(`class="bin"`).FindAll(svg, -1), 11, "200ms bins up to the one of 2s")
	assert.Contains(t, string(svg), "3 waits that ended with the lock")
	assert.Nil(t, LatencyHistogramSVG(checker.Latency{}))

	run, _ := runOf(t, "fenced-baseline")
	run.Result.Stats = &checker.Stats{Latency: checker.LatencyOf(time.Second, 2*time.Second, 3*time.Second)}
	files, err := RenderRun(run)
	require.NoError(t, err)
	page := string(files["index.html"])
	assert.Contains(t, page, `alt="acquisition latency distribution"`)
	run.Result.Stats = &checker.Stats{}
	files, err = RenderRun(run)
	require.NoError(t, err)
	assert.NotContains(t, string(files["index.html"]), "acquisition latency distribution", "no acquisition: no histogram")
}
