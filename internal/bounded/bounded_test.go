package bounded

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

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

	// A device is refused before it is read (issue 33: not a regular file).
	if _, serr := os.Stat("/dev/zero"); serr == nil {
		_, err = ReadFile("/dev/zero", "a thing", 1<<20)
		assert.EqualError(t, err, "/dev/zero is a device, not a thing: simrun reads only regular files (a pipe or a device could block or never end)")
	}
}

// TestFIFORefused: a named pipe without a writer is refused at once
// (issue 33: opening one for reading waited for ever). The read runs in a
// goroutine so that a regression fails the test instead of hanging it.
func TestFIFORefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "x.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	done := make(chan error, 1)
	go func() {
		_, err := ReadFile(fifo, "a scenario file", 1<<20)
		done <- err
	}()
	select {
	case err := <-done:
		assert.EqualError(t, err, fifo+" is a named pipe (FIFO), not a scenario file: simrun reads only regular files (a pipe or a device could block or never end)")
	case <-time.After(time.Minute):
		// Unblock the reader so the goroutine ends.
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("reading a named pipe blocked")
	}
}
