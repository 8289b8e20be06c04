package fuzz

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locksim/locksim/scenarios"
)

func TestSplitList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{" , ,", nil},
		{"clock-jump", []string{"clock-jump"}},
		{" clock-jump , pause,,crash ", []string{"clock-jump", "pause", "crash"}},
	} {
		assert.Equal(t, tc.want, SplitList(tc.in), tc.in)
	}
}

func TestShrunkPaths(t *testing.T) {
	for in, want := range map[string]string{"a/b.yaml": "a/b.shrunk.yaml", "b.yml": "b.shrunk.yaml", "b": "b.shrunk.yaml"} {
		assert.Equal(t, want, ShrunkPath(in))
	}
	assert.Equal(t, "redlock-clock-jump.shrunk.yaml", DefaultShrunkPath(&scenarios.Scenario{Name: "redlock-clock-jump"}))
	assert.Equal(t, "mine.shrunk.yaml", DefaultShrunkPath(&scenarios.Scenario{Name: "mine", File: "some/dir/mine.yaml"}))
}
