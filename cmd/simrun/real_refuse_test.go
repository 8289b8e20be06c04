package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRealRefusesWhatItCannotEmulate: a setting or fault whose real-mode
// emulation would differ from the model in a way that can change a
// verdict is refused by real and twin with exit 2, naming the file's line
// and why (issue 32; docs/real-mode-faults.md).
func TestRealRefusesWhatItCannotEmulate(t *testing.T) {
	file := filepath.Join(t.TempDir(), "lossy.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`name: lossy
duration: 5s
network:
  loss: 0.1
redis:
  - name: A
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 5s}
`), 0o644))
	for _, cmd := range []string{"real", "twin"} {
		t.Run(cmd, func(t *testing.T) {
			args := []string{cmd, file}
			if cmd == "twin" {
				args = append(args, "--out", t.TempDir())
			}
			r := simrun(args...)
			assert.Equal(t, exitBadInput, r.code, r.stderr)
			assert.Contains(t, r.stderr, "lossy.yaml:4: network.loss")
			assert.Contains(t, r.stderr, "loses nothing")
		})
	}
}
