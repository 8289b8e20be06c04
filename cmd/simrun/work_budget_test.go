package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestWorkBudgetStopsFiller: issue 33 item 7's 15-line scenario (a filler
// of 1 MiB values every nanosecond) stops with exit 3 and the work
// budget's message instead of running for hours; the budget here is
// smaller than the default so that the test stays short.
func TestWorkBudgetStopsFiller(t *testing.T) {
	r := simrun("run", filepath.Join("testdata", "filler-runaway.yaml"), "--max-work", "256MiB")
	assert.Equal(t, exitInconclusive, r.code, r.stderr)
	assert.Contains(t, r.stderr, "run stopped: work budget of 256.0 MiB of event content exhausted")
	assert.Contains(t, r.stderr, "raise the budget with --max-work")

	r = simrun("run", "single-gc-pause", "--max-work", "soon")
	assert.Equal(t, exitBadInput, r.code)
	assert.Contains(t, r.stderr, "--max-work")
}
