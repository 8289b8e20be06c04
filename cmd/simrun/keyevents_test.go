package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTraceStreamsTheSameBytes checks that --trace alone, which streams the
// trace to its file as the run goes without keeping it, writes the same
// bytes as the kept trace --out writes, and that the summary is the same.
func TestTraceStreamsTheSameBytes(t *testing.T) {
	dir := t.TempDir()
	streamed := filepath.Join(dir, "streamed.jsonl")
	r1 := simrun("run", quick, "--trace", streamed)
	require.Equal(t, exitOK, r1.code, r1.stderr)
	r2 := simrun("run", quick, "--out", filepath.Join(dir, "out"))
	require.Equal(t, exitOK, r2.code, r2.stderr)
	a, err := os.ReadFile(streamed)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "out", "trace.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, a)
	assert.True(t, bytes.Equal(a, b), "streamed and kept traces differ")
	// The summaries differ only in where they say the full trace is.
	norm := func(s string) string {
		return strings.NewReplacer(streamed, "TRACE", filepath.Join(dir, "out", "trace.jsonl"), "TRACE").Replace(s)
	}
	assert.Equal(t, norm(r2.stdout), norm(r1.stdout))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "no temporary file is left behind")
}
