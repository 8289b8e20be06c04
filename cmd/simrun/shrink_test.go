package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/scenarios"
)

// TestShrinkNeverWritesIntoTheCatalogue is issue 18's bug: shrink of
// scenarios/catalogue/X.yaml wrote X.shrunk.yaml beside it, which the
// catalogue then embedded, and simrun list failed.
func TestShrinkNeverWritesIntoTheCatalogue(t *testing.T) {
	const name = "redlock-clock-jump"
	cat := t.TempDir() // a copy of scenarios/catalogue
	src, err := scenarios.BuiltinSource(name)
	require.NoError(t, err)
	in := filepath.Join(cat, name+".yaml")
	require.NoError(t, os.WriteFile(in, src, 0o644))
	work := t.TempDir()
	t.Chdir(work)

	r := simrun("shrink", in, "--max-runs", "30")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.FileExists(t, filepath.Join(work, name+".shrunk.yaml"), "written in the current directory")
	assert.Equal(t, []string{name + ".yaml"}, dirNames(t, cat), "nothing written beside the catalogue file")
	assert.Contains(t, r.stdout, "wrote "+name+".shrunk.yaml")

	r = simrun("shrink", in, "--max-runs", "30", "--out", filepath.Join(cat, "mine.yaml"))
	assert.Equal(t, exitBadInput, r.code)
	assert.Contains(t, r.stderr, "built-in catalogue folder")
	assert.Empty(t, r.stdout, "refused before shrinking")

	r = simrun("shrink", in, "--out", in)
	assert.Equal(t, exitBadInput, r.code)
	assert.Contains(t, r.stderr, "is also an input")

	r = simrun("list")
	assert.Equal(t, exitOK, r.code, r.stderr)
}
