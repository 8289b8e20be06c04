package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReportBoundsViolations: a result listing thousands of violations
// (an edited one: locksim lists at most checker.MaxViolations) gets a
// report that lists and shades a bounded number of them and says how
// many it left out (issue 33 item 11: 600,000 violations took 23 s,
// 1.19 GB and a 130 MB page).
func TestReportBoundsViolations(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	r := simrun("run", "single-gc-pause", "--out", out)
	require.Equal(t, 0, r.code, r.stderr)
	result := filepath.Join(out, "result.json")
	data, err := os.ReadFile(result)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	vs := m["violations"].([]any)
	require.NotEmpty(t, vs)
	const n = 5000
	many := make([]any, 0, n)
	for len(many) < n {
		many = append(many, vs...)
	}
	m["violations"] = many[:n]
	edited, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(result, edited, 0o644))

	r = simrun("report", result)
	require.Equal(t, 0, r.code, r.stderr)
	page, err := os.ReadFile(filepath.Join(out, "index.html"))
	require.NoError(t, err)
	assert.Contains(t, string(page), "4900 more violations are not listed here: the first 100 are.")
	assert.Contains(t, string(page), "The timelines shade the first 200 violation windows;")
	assert.Less(t, len(page), 8<<20, "the page's size")
}
