package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/fuzz"
)

func TestExploreBadBounds(t *testing.T) {
	tests := []struct {
		name string
		args []string
		err  string
	}{
		{name: "unknown kind", args: []string{"explore", "single-gc-pause", "--faults", "pause,meteor"}, err: `--faults: explore cannot enumerate fault kind "meteor"`},
		{name: "K = 0", args: []string{"explore", "single-gc-pause", "--max-faults", "0"}, err: "--max-faults must be at least 1"},
		{name: "too large", args: []string{"explore", "single-gc-pause", "--faults", "pause", "--max-schedules", "100"}, err: "the space has 450 schedules"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := simrun(tt.args...)
			assert.Equal(t, exitBadInput, r.code, r.stderr)
			assert.Contains(t, r.stderr, tt.err)
			assert.Empty(t, r.stdout)
		})
	}
}

// TestExploreFindsAndReplays: explore reports the violating schedules by
// signature (exit 1), writes the first of each group, and the file replays.
func TestExploreFindsAndReplays(t *testing.T) {
	out := filepath.Join(t.TempDir(), "f")
	r := simrun("explore", "single-gc-pause", "--faults", "pause", "--out", out, "--quiet")
	require.Equal(t, exitMismatch, r.code, r.stderr)
	assert.Contains(t, r.stdout, "27 violating schedules in 450 (bounds: faults pause, at most 1")
	assert.Contains(t, r.stdout, "lock-safety violated, pause c1: 27 schedules")
	assert.Contains(t, r.stdout, "pruned 40 single faults: idle until the end")
	rr := simrun("run", filepath.Join(out, "finding-1.yaml"))
	assert.Equal(t, exitOK, rr.code, rr.stdout+rr.stderr)

	r = simrun("explore", "zk-session-expiry-pause-fenced", "--faults", "pause", "--out", out, "--force", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var j fuzz.ExploreJSON
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &j), r.stdout)
	assert.Equal(t, 1064, j.Schedules)
	assert.Zero(t, j.Violating)
	assert.Positive(t, j.Placements)
}

func TestEnvelopeCommand(t *testing.T) {
	r := simrun("envelope", "redlock-clock-jump", "--param", "clock-jump.by", "--range", "1ms..30s")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "boundary: clock-jump.by = 4.91s")
	assert.Contains(t, r.stdout, "holds:    clock-jump C by +4.909s")
	r = simrun("envelope", "redlock-clock-jump", "--param", "crash.mode")
	assert.Equal(t, exitBadInput, r.code, r.stderr)
	assert.Contains(t, r.stderr, `envelope cannot bisect "crash.mode"`)
}
