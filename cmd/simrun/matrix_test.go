package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMatrix runs the whole matrix with one schedule per cell, with one and
// two workers: the outputs must not depend on the number of workers.
func TestMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the matrix twice")
	}
	outs := map[string]string{}
	for _, workers := range []string{"1", "2"} {
		dir := filepath.Join(t.TempDir(), "m")
		r := simrun("matrix", "--runs", "1", "--workers", workers, "--out", dir)
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stdout, "redlock +fencing")
		outs[workers] = dir
	}
	for _, f := range []string{"matrix.csv", "matrix.md", "matrix.png", "matrix.svg", "worlds/redlock-fencing.yaml"} {
		a := bytes.ReplaceAll(mustRead(t, filepath.Join(outs["1"], f)), []byte(outs["1"]), []byte("DIR"))
		b := bytes.ReplaceAll(mustRead(t, filepath.Join(outs["2"], f)), []byte(outs["2"]), []byte("DIR"))
		assert.Equal(t, a, b, "%s depends on the number of workers", f)
	}
	page := string(mustRead(t, filepath.Join(outs["1"], "matrix.html")))
	assert.Contains(t, page, "<h1>Which lock should we use?</h1>")
	assert.Contains(t, page, "data:image/svg&#43;xml;base64,")
	md := string(mustRead(t, filepath.Join(outs["1"], "matrix.md")))
	assert.Contains(t, md, "| zookeeper | ")
	assert.Contains(t, md, "| mysql-for-update | ")
	assert.Contains(t, md, "n/a")
	entries, err := os.ReadDir(filepath.Join(outs["1"], "worlds"))
	require.NoError(t, err)
	// Twelve rows of issue 7's algorithms, ten of issue 13's (the MySQL
	// locks have no +fencing row) and issue 26's cluster row with its
	// +fencing row.
	assert.Len(t, entries, 24)
	assert.Contains(t, md, "| redis-single cluster | ")
}

func TestMatrixErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		err  string
	}{
		{"no out", []string{"matrix"}, "--out: required"},
		{"no runs", []string{"matrix", "--out", t.TempDir(), "--runs", "0"}, "--runs"},
		// Issue 33: the runtime's out-of-memory under a 4 GiB limit.
		{"runs 1e8", []string{"matrix", "--out", t.TempDir(), "--runs", "100000000"}, "--runs 100000000 is more than 1000000 runs"},
		{"no workers", []string{"matrix", "--out", t.TempDir(), "--workers", "0"}, "--workers"},
		{"an argument", []string{"matrix", "extra"}, "extra"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := simrun(tt.args...)
			assert.Equal(t, exitBadInput, r.code)
			assert.Contains(t, r.stderr, tt.err)
		})
	}
}
