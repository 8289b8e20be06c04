package campaign

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestProgress: no bar when stderr is not a terminal or with --quiet, and
// an inert bar accepts every call.
func TestProgress(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b, 10, "sweep", false)
	assert.Nil(t, p.bar, "not a terminal")
	assert.Nil(t, NewProgress(os.Stderr, 10, "sweep", true).bar, "quiet")
	p.Set(3, "x")
	p.Add()
	p.Done()
	assert.Empty(t, b.String(), "no line before LogEvery passed")
	var q bytes.Buffer
	quiet := NewProgress(&q, 10, "sweep", true)
	quiet.Set(3, "x")
	assert.Empty(t, q.String())
}

// TestProgressLogsWithoutTerminal: on a non-terminal (a CI log) a plain
// line every LogEvery says how far the campaign is, its rate and, with a
// known total, the time left (issue 25: nothing until the end).
func TestProgressLogsWithoutTerminal(t *testing.T) {
	var b bytes.Buffer
	now := time.Unix(1000, 0)
	p := newLogProgress(&b, 100, "fuzz x", func() time.Time { return now })
	p.Set(5, "")
	assert.Empty(t, b.String())
	now = now.Add(LogEvery)
	p.Set(20, "1 violating")
	now = now.Add(time.Second)
	p.Set(25, "")
	now = now.Add(LogEvery)
	p.Set(40, "")
	assert.Equal(t, "fuzz x: 20 runs of 100 in 5s (4.0 runs/s, about 20s left); 1 violating\nfuzz x: 40 runs of 100 in 11s (3.6 runs/s, about 17s left)\n", b.String())

	var c bytes.Buffer
	now = time.Unix(1000, 0)
	open := newLogProgress(&c, -1, "fuzz y", func() time.Time { return now })
	now = now.Add(10 * time.Second)
	open.Add()
	assert.Equal(t, "fuzz y: 1 runs in 10s (0.1 runs/s)\n", c.String(), "no total, no time left")
}

// TestProgressStatus is issue 25: the progress said "0 runs/hr" before
// the first run and gave no time left for a --time campaign.
func TestProgressStatus(t *testing.T) {
	start := time.Unix(1000, 0)
	tests := []struct {
		name     string
		total    int
		deadline time.Duration // after start; 0: none
		n        int
		at       time.Duration
		want     string
	}{
		{"no run yet", 100, 0, 0, 3 * time.Second, ""},
		{"under a second", 100, 0, 5, 500 * time.Millisecond, ""},
		{"rate and time left", 100, 0, 20, 5 * time.Second, " (4.0 runs/s, about 20s left)"},
		{"fast", 1000, 0, 500, 5 * time.Second, " (100 runs/s, about 5s left)"},
		{"no total", -1, 0, 20, 5 * time.Second, " (4.0 runs/s)"},
		{"--time before the first run", -1, time.Minute, 0, 0, " (about 1m0s left)"},
		{"--time", -1, time.Minute, 40, 20 * time.Second, " (2.0 runs/s, about 40s left)"},
		{"--time past its end", -1, time.Minute, 40, 61 * time.Second, " (0.7 runs/s, about 0s left)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newLogProgress(&bytes.Buffer{}, tt.total, "fuzz", func() time.Time { return start })
			if tt.deadline > 0 {
				p.Until(start.Add(tt.deadline))
			}
			assert.Equal(t, tt.want, p.status(tt.n, start.Add(tt.at)))
		})
	}
}
