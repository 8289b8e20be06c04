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
	assert.Equal(t, "fuzz x: 20 runs of 100 in 5s (4 runs/s, about 20s left); 1 violating\nfuzz x: 40 runs of 100 in 11s (4 runs/s, about 17s left)\n", b.String())

	var c bytes.Buffer
	now = time.Unix(1000, 0)
	open := newLogProgress(&c, -1, "fuzz y", func() time.Time { return now })
	now = now.Add(10 * time.Second)
	open.Add()
	assert.Equal(t, "fuzz y: 1 runs in 10s (0 runs/s)\n", c.String(), "no total, no time left")
}
