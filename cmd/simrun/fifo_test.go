package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNamedPipeRefused: a named pipe given as a scenario, or found as
// x.yaml in a folder given to simrun run, or given as a result to replay,
// is refused with exit 2 instead of waited on for ever (issue 33 item 10).
// Each command runs in a goroutine so that a regression fails the test
// instead of hanging it.
func TestNamedPipeRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "x.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for _, args := range [][]string{
		{"run", fifo},
		{"run", dir},
		{"fuzz", fifo, "--runs", "1"},
		{"replay", fifo},
	} {
		t.Run(args[0]+" "+filepath.Base(args[1]), func(t *testing.T) {
			done := make(chan result, 1)
			go func() { done <- simrun(args...) }()
			select {
			case r := <-done:
				assert.Equal(t, 2, r.code, r.stderr)
				assert.Contains(t, r.stderr, fifo+" is a named pipe (FIFO)")
			case <-time.After(2 * time.Minute):
				if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
					w.Close()
				}
				t.Fatal("simrun blocked on a named pipe")
			}
		})
	}
}
