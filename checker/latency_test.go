package checker

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLatencyBuckets: every duration falls in the bucket whose bounds hold
// it, the buckets tile the durations without gap or overlap, and none is
// wider than 1/128 of where it starts (exact below 256ns).
func TestLatencyBuckets(t *testing.T) {
	ds := []time.Duration{0, 1, 127, 128, 255, 256, 257, 511, 512, 1000, time.Microsecond, 1234567, time.Second, 3*time.Second + 7, 1<<62 + 12345, 1<<63 - 1}
	rng := rand.New(rand.NewPCG(28, 1))
	for range 2000 {
		ds = append(ds, time.Duration(rng.Uint64()>>uint(rng.IntN(63)+1)))
	}
	for _, d := range ds {
		i := latencyIndex(d)
		from, to := latencyBounds(i)
		require.True(t, from <= d && (d < to || to == 1<<63-1), "%d in bucket %d [%d, %d)", d, i, from, to)
		if i < 256 {
			assert.Equal(t, from+1, to, "exact below 256ns")
		} else {
			assert.LessOrEqual(t, (to-from)*128, from, "bucket %d too wide", i)
		}
	}
	for i := 1; i < latencyIndex(1<<63-1); i++ {
		_, prevTo := latencyBounds(i - 1)
		from, _ := latencyBounds(i)
		require.Equal(t, prevTo, from, "bucket %d starts where %d ends", i, i-1)
	}
}

// exactRank is the nearest-rank p-th percentile of ds.
func exactRank(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[max((p*len(s)+99)/100, 1)-1]
}

// TestLatencyPercentiles: the percentiles read from the histogram are
// within 1/256 of the exact nearest-rank values, the count and the max
// exact, whatever the order the latencies come in (a history judged in
// pieces counts them in another order than a whole one).
func TestLatencyPercentiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 28))
	spread := func(n int, lo, hi time.Duration) []time.Duration {
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
		}
		return out
	}
	tests := []struct {
		name string
		ds   []time.Duration
	}{
		{"one", []time.Duration{1500 * time.Millisecond}},
		{"two far apart", []time.Duration{time.Second, 3500 * time.Millisecond}},
		{"all equal", []time.Duration{time.Second, time.Second, time.Second}},
		{"contended turns", spread(5000, 100*time.Microsecond, 2500*time.Millisecond)},
		{"a tail", append(spread(990, time.Millisecond, 2*time.Millisecond), spread(10, 5*time.Second, 9*time.Second)...)},
		{"nanoseconds", spread(300, 0, 300)},
		{"one bucket", spread(1000, time.Second, time.Second+time.Millisecond)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := LatencyOf(tt.ds...)
			assert.Equal(t, len(tt.ds), l.Count)
			assert.Equal(t, slices.Max(tt.ds), l.Max)
			for _, p := range []int{1, 50, 90, 99, 100} {
				exact, got := exactRank(tt.ds, p), l.Percentile(p)
				assert.InDelta(t, float64(exact), float64(got), float64(exact)/256, "p%d", p)
			}
			assert.Equal(t, l.Percentile(50), l.P50)
			assert.Equal(t, l.Percentile(99), l.P99)
			shuffled := slices.Clone(tt.ds)
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			assert.Equal(t, l, LatencyOf(shuffled...), "order matters")
			// Bounded: at most 128 buckets per power of two in range.
			assert.LessOrEqual(t, len(l.Histogram), 128*40)
			n := 0
			for _, b := range l.Histogram {
				n += b.Count
			}
			assert.Equal(t, l.Count, n)
		})
	}
	// Exact where the data allow: one or two durations per bucket, the
	// rank on a bucket's edge.
	l := LatencyOf(time.Second, 3500*time.Millisecond)
	assert.Equal(t, time.Second, l.P50)
	assert.Equal(t, 3500*time.Millisecond, l.P99)
	assert.Equal(t, Latency{}, LatencyOf())
}

// TestLatencyJSONIsBounded: result.json carries the histogram, whose size
// follows the spread of the latencies, not their number (issue 25: it
// carried every sample).
func TestLatencyJSONIsBounded(t *testing.T) {
	ds := make([]time.Duration, 200_000)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range ds {
		ds[i] = time.Second + time.Duration(rng.Int64N(int64(time.Second)))
	}
	data, err := json.Marshal(LatencyOf(ds...))
	require.NoError(t, err)
	assert.Less(t, len(data), 20_000, "200,000 latencies between 1s and 2s")
	var back Latency
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, LatencyOf(ds...), back)
}
