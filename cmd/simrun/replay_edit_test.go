package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReplayComparesTheRecord: a result whose verdicts, statistics or
// violations were edited replays as a mismatch (exit 1) naming the field,
// though its trace hash is the replay's (issue 33 item 11: it replayed as
// "matches").
func TestReplayComparesTheRecord(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	r := simrun("run", "single-gc-pause", "--out", out)
	require.Equal(t, 0, r.code, r.stderr)
	result := filepath.Join(out, "result.json")
	data, err := os.ReadFile(result)
	require.NoError(t, err)

	r = simrun("replay", result)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "matches, and so do the verdicts and the run record")

	for _, tt := range []struct{ name, from, to, want string }{
		{"verdict", `"lock_safety": "violated"`, `"lock_safety": "holds"`, `lock_safety: recorded "holds", replayed "violated"`},
		{"matched", `"matched": true`, `"matched": false`, "matched: recorded false, replayed true"},
		{"events", `"events": 1561`, `"events": 1560`, "events: recorded 1560, replayed 1561"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, string(data), tt.from)
			edited := writeFile(t, dir, tt.name+".json", strings.Replace(string(data), tt.from, tt.to, 1))
			r := simrun("replay", edited)
			assert.Equal(t, exitMismatch, r.code, r.stdout+r.stderr)
			assert.Contains(t, r.stdout, "trace hash")
			assert.Contains(t, r.stdout, "but the result differs from its replay")
			assert.Contains(t, r.stdout, tt.want)
		})
	}
}
