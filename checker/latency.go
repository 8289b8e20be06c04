package checker

import (
	"math/bits"
	"sort"
	"time"
)

// Acquisition latencies are counted in a bounded histogram, not kept one
// by one (issue 28: a 1000-hour contended run made 2.6 million
// acquisitions, 21 MB of exact samples, more with the collector's
// headroom; issue 25: result.json carried every sample). The buckets are
// log-linear, as HdrHistogram's are: below 2^latencySubBits ns every
// nanosecond has its own bucket; above, each power of two [2^k, 2^(k+1))
// is split into 2^latencySubBits buckets of equal width, so a bucket is
// never wider than 1/128 of the durations it holds. A bucket also keeps the
// shortest and longest duration it counted.
//
// A percentile is the nearest-rank sample's bucket, read exactly where the
// bucket says it (the rank is the bucket's first or last sample: its
// shortest or longest; a bucket of one duration) and as the middle of the
// bucket's shortest and longest otherwise: within 1/256 (0.4%) of the
// exact nearest-rank value. Count and max are exact. The histogram depends
// only on the set of latencies, not on their order, so a history judged in
// pieces and the same history judged whole give the same numbers.
const latencySubBits = 7

// LatencyBucket is one bucket of the latency histogram: Count durations
// from From (inclusive) to To (exclusive), the shortest Min and the
// longest Max of them.
type LatencyBucket struct {
	From  time.Duration `json:"from"`
	To    time.Duration `json:"to"`
	Count int           `json:"count"`
	Min   time.Duration `json:"min"`
	Max   time.Duration `json:"max"`
}

// latencyIndex is the bucket of d (d >= 0): d itself below 2^latencySubBits,
// then 2^latencySubBits buckets per power of two.
func latencyIndex(d time.Duration) int {
	v := uint64(d)
	if v < 1<<latencySubBits {
		return int(v)
	}
	shift := bits.Len64(v) - 1 - latencySubBits
	return shift<<latencySubBits + int(v>>shift)
}

// latencyBounds are the durations bucket i holds: from (inclusive) to
// (exclusive).
func latencyBounds(i int) (from, to time.Duration) {
	if i < 2<<latencySubBits {
		return time.Duration(i), time.Duration(i + 1)
	}
	shift := i>>latencySubBits - 1
	m := uint64(i&(1<<latencySubBits-1) + 1<<latencySubBits)
	lo := m << shift
	hi := lo + 1<<shift
	if hi > uint64(1<<63-1) || hi < lo {
		hi = 1<<63 - 1
	}
	return time.Duration(lo), time.Duration(hi)
}

// latencyHist counts latencies in the buckets above, the non-empty ones in
// index order.
type latencyHist struct {
	idx     []int
	buckets []LatencyBucket
	n       int
}

// add counts d (a negative duration counts as 0).
func (h *latencyHist) add(d time.Duration) {
	d = max(d, 0)
	i := latencyIndex(d)
	j := sort.SearchInts(h.idx, i)
	if j == len(h.idx) || h.idx[j] != i {
		from, to := latencyBounds(i)
		h.idx = append(h.idx, 0)
		copy(h.idx[j+1:], h.idx[j:])
		h.idx[j] = i
		h.buckets = append(h.buckets, LatencyBucket{})
		copy(h.buckets[j+1:], h.buckets[j:])
		h.buckets[j] = LatencyBucket{From: from, To: to, Min: d, Max: d}
	}
	b := &h.buckets[j]
	b.Count++
	b.Min, b.Max = min(b.Min, d), max(b.Max, d)
	h.n++
}

// latency summarises the histogram.
func (h *latencyHist) latency() Latency {
	return latencyOfBuckets(append([]LatencyBucket(nil), h.buckets...))
}

// LatencyOf summarises the latencies ds as the checker does (the
// histogram, and the percentiles read from it).
func LatencyOf(ds ...time.Duration) Latency {
	var h latencyHist
	for _, d := range ds {
		h.add(d)
	}
	return h.latency()
}

// latencyOfBuckets summarises the non-empty buckets bs, shortest first.
func latencyOfBuckets(bs []LatencyBucket) Latency {
	l := Latency{Histogram: bs}
	for _, b := range bs {
		l.Count += b.Count
	}
	if l.Count == 0 {
		l.Histogram = nil
		return l
	}
	l.P50, l.P99, l.Max = l.Percentile(50), l.Percentile(99), bs[len(bs)-1].Max
	return l
}

// Percentile is the p-th percentile (nearest rank, 1 <= p <= 100) read
// from the histogram as the package comment above says: exact where the
// rank is the first or last duration of its bucket, within 1/256 of the
// exact value otherwise; 0 without latencies.
func (l Latency) Percentile(p int) time.Duration {
	if l.Count == 0 {
		return 0
	}
	rank := max((p*l.Count+99)/100, 1) // 1-based
	seen := 0
	for _, b := range l.Histogram {
		if rank > seen+b.Count {
			seen += b.Count
			continue
		}
		switch rank {
		case seen + 1:
			return b.Min
		case seen + b.Count:
			return b.Max
		}
		return b.Min + (b.Max-b.Min)/2
	}
	return l.Histogram[len(l.Histogram)-1].Max
}
