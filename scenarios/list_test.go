package scenarios

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
)

func TestExpectText(t *testing.T) {
	assert.Equal(t, "no violation", Expect{}.Text())
	assert.Equal(t, "lock violated", Expect{Verdicts: map[string]checker.Verdict{checker.LockSafety: checker.Violated}}.Text())
}

func TestIsCatalogueDir(t *testing.T) {
	dir := t.TempDir()
	assert.False(t, IsCatalogueDir(dir))
	n := BuiltinNames()[0]
	src, err := BuiltinSource(n)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, n+".yaml"), append(src, '\n'), 0o644))
	assert.False(t, IsCatalogueDir(dir), "an edited copy is not the catalogue")
	require.NoError(t, os.WriteFile(filepath.Join(dir, n+".yaml"), src, 0o644))
	assert.True(t, IsCatalogueDir(dir))
}
