package main

import (
	"encoding/json"
	"os"
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

// TestEnvelopeSaysWhatItCheckedAndWritesReplays: envelope names the
// properties it checked, and --out writes the boundary's two sides as
// scenario files that simrun run replays: one step below, nothing
// violated; at the boundary, what it violated.
func TestEnvelopeSaysWhatItCheckedAndWritesReplays(t *testing.T) {
	out := t.TempDir()
	r := simrun("envelope", "redlock-clock-jump", "--param", "clock-jump.by", "--range", "1ms..30s", "--out", out)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "checked: lock safety, resource safety")
	assert.Contains(t, r.stdout, "boundary: clock-jump.by = 4.91s (lock safety, resource safety violated from there)")
	holds, violated := filepath.Join(out, "envelope-holds.yaml"), filepath.Join(out, "envelope-violated.yaml")
	assert.Contains(t, r.stdout, "wrote "+holds)
	rh := simrun("run", holds)
	require.Equal(t, exitOK, rh.code, rh.stderr+rh.stdout)
	assert.Contains(t, rh.stdout, "clock-jump: C's wall clock jumped +4.909s")
	assert.Contains(t, rh.stdout, "  lock safety      holds")
	rv := simrun("run", violated)
	require.Equal(t, exitOK, rv.code, rv.stderr+rv.stdout)
	assert.Contains(t, rv.stdout, "  lock safety      violated   (expected violated: ok)")
	assert.Contains(t, rv.stdout, "clock-jump: C's wall clock jumped +4.91s")
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

// TestExploreOrdersShrinksAndReplays: on order-tie-pause (c1's and c2's
// SET NX reach A at one instant; c2 pauses later), explore without
// --orders finds nothing and says how many order choices it left out;
// with --orders it finds the one order in which c2's pause breaks the
// lock, shrinks it to a file with an order fault that simrun run replays
// (its expected verdicts match, the same trace hash twice), and that real
// mode refuses naming the fault's file, line and field (exit 2).
func TestExploreOrdersShrinksAndReplays(t *testing.T) {
	base := filepath.Join("..", "..", "fuzz", "testdata", "order-tie-pause.yaml")
	out := filepath.Join(t.TempDir(), "f")
	args := []string{"explore", base, "--faults", "crash", "--targets", "c2", "--quiet", "--force", "--out", out}
	r := simrun(args...)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "explore kept the kernel's order of them (--orders runs each other event of a tie first: 6 more single faults)")

	r = simrun(append(args, "--orders", "--shrink")...)
	require.Equal(t, exitMismatch, r.code, r.stderr)
	assert.Contains(t, r.stdout, "lock-safety violated, order A: 1 schedules")
	assert.Contains(t, r.stdout, "6 order choices (each other event of a tie first, 0 pruned): 6 schedules with one ran, covering 6 ties, 1 violating")
	shrunk := filepath.Join(out, "finding-1.shrunk.yaml")
	data, err := os.ReadFile(shrunk)
	require.NoError(t, err)
	require.Contains(t, string(data), "kind: order")
	hash := func() string {
		rr := simrun("run", shrunk, "--json")
		require.Equal(t, exitOK, rr.code, rr.stdout+rr.stderr)
		var j struct {
			TraceHash string `json:"trace_hash"`
		}
		require.NoError(t, json.Unmarshal([]byte(rr.stdout), &j))
		require.NotEmpty(t, j.TraceHash)
		return j.TraceHash
	}
	assert.Equal(t, hash(), hash())

	rr := simrun("real", shrunk)
	assert.Equal(t, exitBadInput, rr.code, rr.stdout+rr.stderr)
	assert.Regexp(t, `finding-1\.shrunk\.yaml:\d+: faults\[\d\]\.kind: order chooses which of the events due at one instant`, rr.stderr)
}
