package main

import (
	"path/filepath"

	"github.com/locksim/locksim/internal/outdir"

	"encoding/json"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// needRealServers skips loudly without redis-server (fails under CI=true).
func needRealServers(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("redis-server is required under CI=true")
	}
	t.Skip("SKIPPED: simrun real needs redis-server (apt-get install redis-server redis-sentinel)")
}

// TestRealRefusals: what real mode cannot do is exit 2 before anything
// starts, naming the section or fault and why.
func TestRealRefusals(t *testing.T) {
	tests := []struct {
		name string
		args []string
		errs []string
	}{
		{name: "zookeeper lock-delay", args: []string{"real", "chubby-lock-delay"}, errs: []string{"zookeeper.lock_delay", "no lock-delay"}},
		{name: "drop on the replication link", args: []string{"real", "testdata/real-drop-replication.yaml"}, errs: []string{"faults[0]", "no TCP counterpart"}},
		{name: "twin refuses too", args: []string{"twin", "chubby-lock-delay-short"}, errs: []string{"zookeeper.lock_delay"}},
		{name: "twin --runs 0", args: []string{"twin", "get-del-release", "--runs", "0"}, errs: []string{"--runs"}},
		{name: "unknown scenario", args: []string{"real", "no-such-scenario"}, errs: []string{"no-such-scenario"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := simrun(tt.args...)
			assert.Equal(t, exitBadInput, r.code, r.stderr)
			for _, e := range tt.errs {
				assert.Contains(t, r.stderr, e)
			}
			assert.Empty(t, r.stdout)
		})
	}
}

// TestRealMissingServer: without redis-server on PATH, exit 2 naming it.
func TestRealMissingServer(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	r := simrun("real", "get-del-release")
	assert.Equal(t, exitBadInput, r.code)
	assert.Contains(t, r.stderr, "redis-server")
	assert.Contains(t, r.stderr, "apt-get install")
}

// TestRealOwnScenario runs a scenario written from the README's format
// (testdata/real-server-pause.yaml) in real mode: its expected verdicts
// hold, and --json says "mode": "real".
func TestRealOwnScenario(t *testing.T) {
	needRealServers(t)
	out := t.TempDir()
	r := simrun("real", "testdata/real-server-pause.yaml", "--json", "--out", out)
	require.Equal(t, exitOK, r.code, r.stderr+r.stdout)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	assert.Equal(t, "real", got["mode"])
	assert.Equal(t, "holds", got["lock_safety"])
	assert.Equal(t, true, got["matched"])
	assert.FileExists(t, out+"/result.json")
	// One whole set (outdir), which report reads.
	assert.NoFileExists(t, filepath.Join(out, outdir.IncompleteFile))
	rr := simrun("report", filepath.Join(out, "result.json"))
	assert.Equal(t, exitOK, rr.code, rr.stderr)
}

// TestTwinAgrees runs simrun twin on a short catalogue scenario.
func TestTwinAgrees(t *testing.T) {
	needRealServers(t)
	out := t.TempDir()
	r := simrun("twin", "get-del-release", "--json", "--out", out)
	require.Equal(t, exitOK, r.code, r.stderr+r.stdout)
	var got struct {
		Agree bool `json:"agree"`
		Real  []struct {
			Seed   uint64 `json:"seed"`
			Agrees bool   `json:"agrees"`
		} `json:"real"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	assert.True(t, got.Agree)
	require.Len(t, got.Real, 1)
	assert.Equal(t, uint64(1), got.Real[0].Seed)
	assert.DirExists(t, out+"/sim")
	assert.DirExists(t, out+"/real-seed-1")
}
