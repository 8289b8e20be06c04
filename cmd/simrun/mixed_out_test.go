package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/internal/outdir"
)

// TestSweepIntoAnotherCampaignsFolder: a sweep into an explore's folder is
// refused (it exited 0 and left both sets, issue 33 item 3); with --force
// it replaces the exploration whole: no finding of it is left.
func TestSweepIntoAnotherCampaignsFolder(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x")
	r := simrun("explore", "single-gc-pause", "--faults", "pause", "--out", out, "--quiet")
	require.Equal(t, exitMismatch, r.code, r.stderr)
	require.FileExists(t, filepath.Join(out, "finding-1.yaml"))
	sweep := []string{"sweep", "redlock-clock-jump", "--param", "faults[1].by=0s,+30s", "--seeds", "1", "--out", out}
	r = simrun(sweep...)
	assert.Equal(t, exitBadInput, r.code, r.stdout)
	assert.Contains(t, r.stderr, "holds the results of another campaign (explore of single-gc-pause")
	assert.FileExists(t, filepath.Join(out, "finding-1.yaml"))
	assert.NoFileExists(t, filepath.Join(out, "sweep.csv"))

	r = simrun(append(sweep, "--force")...)
	require.Equal(t, exitOK, r.code, r.stderr)
	names, _ := filepath.Glob(filepath.Join(out, "finding-*.yaml"))
	assert.Empty(t, names, "the exploration's findings beside the sweep")
	m, err := fuzz.ReadManifest(out)
	require.NoError(t, err)
	assert.Equal(t, "sweep", m.Command)

	// A matrix into the sweep's folder: refused too; a second sweep is not.
	r = simrun("matrix", "--runs", "1", "--out", out)
	assert.Equal(t, exitBadInput, r.code, r.stdout)
	r = simrun("sweep", "redlock-clock-jump", "--param", "faults[1].by=0s,+10s", "--seeds", "1", "--out", out)
	assert.Equal(t, exitOK, r.code, r.stderr)
}

// TestRunIntoACampaignsFolder: run --out and real --out refuse a folder
// holding a campaign, and fuzz refuses a run's report folder.
func TestRunIntoACampaignsFolder(t *testing.T) {
	camp := filepath.Join(t.TempDir(), "c")
	r := simrun("fuzz", "redlock-clock-jump", "--runs", "20", "--out", camp)
	require.Contains(t, []int{exitOK, exitMismatch}, r.code, r.stderr)
	r = simrun("run", "redlock-clock-jump", "--out", camp)
	assert.Equal(t, exitBadInput, r.code, r.stdout)
	assert.Contains(t, r.stderr, "holds a campaign's results")
	assert.NoFileExists(t, filepath.Join(camp, "result.json"))
	r = simrun("real", "redlock-clock-jump", "--out", camp)
	assert.Equal(t, exitBadInput, r.code, r.stdout)
	assert.Contains(t, r.stderr, "holds a campaign's results")

	rep := filepath.Join(t.TempDir(), "r")
	r = simrun("run", "redlock-clock-jump", "--out", rep)
	require.Equal(t, exitOK, r.code, r.stderr)
	r = simrun("fuzz", "redlock-clock-jump", "--runs", "20", "--out", rep)
	assert.Equal(t, exitBadInput, r.code, r.stdout)
	assert.Contains(t, r.stderr, "holds a run's report")
}

// TestReadersRefuseAnIncompleteFolder: a folder marked incomplete (what a
// simrun killed between two renames leaves: here an old result.json
// beside the trace of another run) is refused by replay, diff, report and
// merge, naming the folder and the writer; replay said "matches".
func TestReadersRefuseAnIncompleteFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	r := simrun("run", "redlock-clock-jump", "--out", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	other := filepath.Join(t.TempDir(), "other")
	r = simrun("run", "redlock-clock-jump", "--seed", "9", "--out", other)
	require.Contains(t, []int{exitOK, exitMismatch}, r.code, r.stderr)
	// The state a SIGKILL between the renames of the second run's
	// trace and result leaves: the new trace, the old result, the mark.
	trace, err := os.ReadFile(filepath.Join(other, "trace.jsonl"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "trace.jsonl"), trace, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, outdir.IncompleteFile), []byte("x\nwriter: simrun run redlock-clock-jump\n"), 0o644))

	for _, args := range [][]string{
		{"replay", filepath.Join(dir, "result.json")},
		{"diff", dir, other},
		{"report", filepath.Join(dir, "result.json")},
	} {
		r := simrun(args...)
		assert.Equal(t, exitBadInput, r.code, "%v: %s", args, r.stdout)
		assert.Contains(t, r.stderr, dir+" is incomplete", args)
		assert.Contains(t, r.stderr, "simrun run redlock-clock-jump", args)
		assert.NotContains(t, r.stdout, "matches", args)
	}

	// A rerun into it writes a whole set and removes the mark.
	r = simrun("run", "redlock-clock-jump", "--out", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NoFileExists(t, filepath.Join(dir, outdir.IncompleteFile))
	r = simrun("replay", filepath.Join(dir, "result.json"))
	assert.Equal(t, exitOK, r.code, r.stderr)
}

// TestCampaignIntoAnIncompleteFolder: a campaign folder left incomplete by
// another campaign is refused without --force and not merged; the same
// campaign writes it again whole.
func TestCampaignIntoAnIncompleteFolder(t *testing.T) {
	out := filepath.Join(t.TempDir(), "f")
	args := []string{"fuzz", "redlock-clock-jump", "--runs", "20", "--seed", "3", "--out", out}
	r := simrun(args...)
	require.Contains(t, []int{exitOK, exitMismatch}, r.code, r.stderr)
	mark := filepath.Join(out, outdir.IncompleteFile)
	require.NoError(t, os.WriteFile(mark, []byte("x\nwriter: simrun explore other\n"), 0o644))
	r = simrun(args...)
	assert.Equal(t, exitBadInput, r.code, r.stdout)
	assert.Contains(t, r.stderr, "holds the incomplete outputs of a stopped run (simrun explore other)")
	r = simrun("merge", out, "--out", filepath.Join(t.TempDir(), "m"))
	assert.Equal(t, exitBadInput, r.code, r.stdout)
	assert.Contains(t, r.stderr, out+" is incomplete")
	r = simrun(append(args, "--force")...)
	require.Contains(t, []int{exitOK, exitMismatch}, r.code, r.stderr)
	assert.NoFileExists(t, mark)
}
