package reports

import (
	"bytes"
	"fmt"
	"html"
	"time"

	"github.com/locksim/locksim/checker"
)

// latencyBins is the number of bars of the latency histogram.
const latencyBins = 20

// LatencyBins counts a run's acquisition latencies (the histogram of
// checker.Latency) into n bins from 0 of a round width (1, 2 or 5 times a
// power of ten nanoseconds) that n of them cover the longest with, up to
// the longest one's bin (at most n bins); width is that width. A bucket of
// the histogram goes whole into the bin of the middle of its shortest and
// longest duration (a bucket is at most 1/128 as wide as its durations, a
// bin at least 1/n as wide as the longest). No latency, or n < 1: no bins.
func LatencyBins(l checker.Latency, n int) (counts []int, width time.Duration) {
	if l.Count == 0 || len(l.Histogram) == 0 || n < 1 {
		return nil, 0
	}
	top := l.Max
	width = niceWidth((top + time.Duration(n) - 1) / time.Duration(n))
	for top >= time.Duration(n)*width {
		width = niceWidth(width + 1)
	}
	// Only the bins up to the longest latency's: at most n.
	counts = make([]int, min(int(top/width)+1, n))
	for _, b := range l.Histogram {
		at := b.Min + (b.Max-b.Min)/2
		i := min(int(max(at, 0)/width), len(counts)-1)
		counts[i] += b.Count
	}
	return counts, width
}

// niceWidth is the smallest of 1, 2 and 5 times a power of ten
// nanoseconds that is at least d (at least 1ns), so the bins' edges read
// as round durations.
func niceWidth(d time.Duration) time.Duration {
	for p := time.Duration(1); ; p *= 10 {
		for _, m := range []time.Duration{1, 2, 5} {
			if m*p >= d {
				return m * p
			}
		}
	}
}

// LatencyHistogramSVG draws the distribution of a run's acquisition
// latencies (the histogram of checker.Latency) as a bar chart: how many
// waits ended with the lock after how long. Nil without latencies.
func LatencyHistogramSVG(l checker.Latency) []byte {
	counts, width := LatencyBins(l, latencyBins)
	if counts == nil {
		return nil
	}
	const (
		w, h           = 720, 260
		left, right    = 60, 20
		top, bottom    = 30, 50
		plotW, plotH   = w - left - right, h - top - bottom
		fill, textFill = "#1f77b4", "#222"
	)
	barW := plotW / len(counts)
	most := 0
	for _, c := range counts {
		most = max(most, c)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Liberation Sans, Arial, sans-serif" font-size="12">`, w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/>`, w, h)
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="14" fill="%s">Acquisition latency: %d waits that ended with the lock</text>`, left, textFill, l.Count)
	for i, c := range counts {
		bh := 0
		if most > 0 {
			bh = c * plotH / most
		}
		lo, hi := time.Duration(i)*width, time.Duration(i+1)*width
		fmt.Fprintf(&b, `<rect class="bin" x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s</title></rect>`,
			left+i*barW+1, top+plotH-bh, barW-2, bh, fill, html.EscapeString(fmt.Sprintf("%v to %v: %d", lo, hi, c)))
	}
	// Axes: counts on the left (0 and the tallest bar), latency below.
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#444"/>`, left, top+plotH, left+plotW, top+plotH)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#444"/>`, left, top, left, top+plotH)
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="%s">0</text>`, left-6, top+plotH+4, textFill)
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="%s">%d</text>`, left-6, top+4, textFill, most)
	step := max(len(counts)/5, 1)
	for i := 0; i <= len(counts); i += step {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" fill="%s">%v</text>`, left+i*barW, top+plotH+16, textFill, html.EscapeString((time.Duration(i) * width).String()))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" fill="%s">time from wanting the lock to holding it</text>`, left+plotW/2, h-8, textFill)
	fmt.Fprintf(&b, `<text transform="translate(16 %d) rotate(-90)" text-anchor="middle" fill="%s">waits</text>`, top+plotH/2, textFill)
	b.WriteString(`</svg>`)
	return b.Bytes()
}
