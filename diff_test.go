package locksim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locksim/locksim/record"
)

func TestWriteDiff(t *testing.T) {
	side := func(label, hash, lock string) *RecordedRun {
		return &RecordedRun{Label: label, Path: label + "/result.json",
			Rec:    &record.Run{Scenario: "redlock-clock-jump", Seed: 7, Events: 10, TraceHash: hash},
			Fields: map[string]any{"lock_safety": lock, "matched": true, "custom_prop": "holds"},
			Note:   "no trace beside " + label + "/result.json"}
	}
	for _, tc := range []struct {
		name   string
		a, b   *RecordedRun
		differ bool
		want   []string
	}{
		{"same", side("A", "h1", "holds"), side("B", "h1", "holds"), false,
			[]string{"same trace hash h1", "custom prop"}},
		{"verdict and hash differ", side("A", "h1", "holds"), side("B", "h2", "violated"), true,
			[]string{"the trace hashes differ", "DIFFERS", "no event comparison: A: no trace beside A/result.json (give --trace-a)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sb strings.Builder
			assert.Equal(t, tc.differ, WriteDiff(&sb, tc.a, tc.b))
			for _, w := range tc.want {
				assert.Contains(t, sb.String(), w)
			}
			if !tc.differ {
				assert.NotContains(t, sb.String(), "DIFFERS")
			}
		})
	}
}
