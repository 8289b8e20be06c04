package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadFileBounds: a scenario file is read up to MaxFileBytes, and a
// value quoted in an error is cut (outsider3: simrun run /dev/zero read for
// ever, and a 300 MB file of one word printed the word whole in its error).
func TestReadFileBounds(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(MaxFileBytes+1)) // sparse: no 16 MiB written
	require.NoError(t, f.Close())
	word := filepath.Join(dir, "word.yaml")
	require.NoError(t, os.WriteFile(word, []byte(strings.Repeat("a", 5000)+"\n"), 0o644))

	tests := []struct {
		name, path, want string
	}{
		{"larger than the bound", big, "big.yaml is 16777217 bytes, more than a scenario file may be (16 MiB)"},
		{"a directory", dir, "is a directory, not a scenario file"},
		{"an endless device", "/dev/zero", "/dev/zero is a device, not a scenario file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := os.Stat(tt.path); err != nil {
				t.Skipf("%s: %v", tt.path, err)
			}
			_, err := ReadFile(tt.path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			_, err = Load(tt.path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, err = Load(word)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `must be a mapping of fields, got "`+strings.Repeat("a", maxQuoted)+`"... (5000 bytes)`)
	assert.Less(t, len(err.Error()), 300)
}
