package bounded

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	require.NoError(t, os.WriteFile(small, []byte("abc"), 0o644))
	big := filepath.Join(dir, "big")
	require.NoError(t, os.WriteFile(big, make([]byte, 2<<20+1), 0o644))

	got, err := ReadFile(small, "a thing", 2<<20)
	require.NoError(t, err)
	assert.Equal(t, "abc", string(got))

	_, err = ReadFile(big, "a thing", 2<<20)
	assert.EqualError(t, err, big+" is 2097153 bytes, more than a thing may be (2 MiB)")

	_, err = ReadFile(dir, "a thing", 2<<20)
	assert.EqualError(t, err, dir+" is a directory, not a thing")

	_, err = ReadFile(filepath.Join(dir, "none"), "a thing", 2<<20)
	assert.ErrorIs(t, err, os.ErrNotExist)

	// A device has no size: it is read up to the bound and refused.
	if _, serr := os.Stat("/dev/zero"); serr == nil {
		_, err = ReadFile("/dev/zero", "a thing", 1<<20)
		assert.EqualError(t, err, "/dev/zero is more than 1 MiB, more than a thing may be")
	}
}
