package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMergeBadInput: every unusable shard set or flag exits 2 and says why.
func TestMergeBadInput(t *testing.T) {
	dir := t.TempDir()
	var shards []string
	for k := 0; k < 2; k++ {
		d := filepath.Join(dir, "s"+string(rune('0'+k)))
		r := simrun("sweep", "redlock-clock-jump", "--param", "faults[1].by=0s,+30s", "--seeds", "2", "--shard", string(rune('0'+k))+"/2", "--out", d)
		require.Equal(t, exitOK, r.code, r.stderr)
		shards = append(shards, d)
	}
	edited := filepath.Join(dir, "edited")
	require.NoError(t, os.CopyFS(edited, os.DirFS(shards[1])))
	base := filepath.Join(edited, "base.yaml")
	data, err := os.ReadFile(base)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(base, []byte(strings.Replace(string(data), "duration:", "# edited\nduration:", 1)), 0o644))
	garbage := filepath.Join(dir, "garbage")
	require.NoError(t, os.MkdirAll(garbage, 0o755))
	writeFile(t, garbage, "campaign.json", "{not json")

	tests := []struct {
		name string
		args []string
		err  string
	}{
		{name: "no folders", args: []string{"merge"}, err: "merge needs DIR..."},
		{name: "sweep without --out", args: []string{"merge", shards[0], shards[1]}, err: "--out: required for a sweep"},
		{name: "json for a sweep", args: []string{"merge", shards[0], shards[1], "--json", "--out", filepath.Join(dir, "o")}, err: "for fuzz and explore campaigns"},
		{name: "no workers", args: []string{"merge", shards[0], shards[1], "--workers", "0"}, err: "--workers must be at least 1"},
		{name: "out is a shard", args: []string{"merge", shards[0], shards[1], "--out", shards[0]}, err: "is one of the shard folders"},
		{name: "not a campaign", args: []string{"merge", dir}, err: "no campaign.json"},
		{name: "garbage manifest", args: []string{"merge", garbage}, err: "not a campaign manifest"},
		{name: "edited base", args: []string{"merge", edited, shards[0], "--out", filepath.Join(dir, "o2")}, err: "edited after the campaign"},
		{name: "junit in a missing folder", args: []string{"merge", shards[0], shards[1], "--junit", "/proc/x/j.xml"}, err: "--junit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := simrun(tt.args...)
			assert.Equal(t, exitBadInput, r.code, r.stderr)
			assert.Contains(t, r.stderr, tt.err)
		})
	}
	r := simrun("merge", shards[1], shards[0], "--out", filepath.Join(dir, "merged"))
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.FileExists(t, filepath.Join(dir, "merged", "sweep.csv"))
}
