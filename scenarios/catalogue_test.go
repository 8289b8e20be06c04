package scenarios

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
)

// sweepSeeds is how many seeds besides its own each catalogue scenario must
// reproduce its expected verdicts for (issue 5 asks for at least 20; a
// 200-seed sweep once found redlock-pause-in-flight fragile at 13/200, so
// the test runs more).
const sweepSeeds = 60

// TestCatalogueSeedSweep runs every built-in scenario with its own seed and
// sweepSeeds others and requires its expected verdicts each time. A failure
// prints the command that replays it.
func TestCatalogueSeedSweep(t *testing.T) {
	cat, err := Catalogue()
	require.NoError(t, err)
	require.NotEmpty(t, cat)
	for _, s := range cat {
		s := s
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			require.NotEmpty(t, s.Title, "title")
			require.NotEmpty(t, s.Source, "source")
			require.NotEmpty(t, s.Why, "why")
			require.NotEmpty(t, s.Expect.Verdicts, "a catalogue scenario states its expected verdicts")
			seeds := []uint64{s.Seed}
			for i := uint64(1); len(seeds) <= sweepSeeds; i++ {
				if seed := s.Seed + i*7919; seed != s.Seed {
					seeds = append(seeds, seed)
				}
			}
			for _, seed := range seeds {
				o, err := Run(s, seed, Options{})
				require.NoError(t, err)
				assert.False(t, o.Inconclusive, "seed %d inconclusive", seed)
				if !o.Matched {
					t.Errorf("%s seed %d: lock %s, resource %s, liveness %s; expected %v\n%s\nreplay: go run ./cmd/simrun run %s --seed %d",
						s.Name, seed, o.Verdicts.Of(checker.LockSafety), o.Verdicts.Of(checker.ResourceSafety), o.Verdicts.Of(checker.Liveness), o.Expected, explanations(o), s.Name, seed)
				}
			}
		})
	}
}

func explanations(o *Outcome) string {
	out := ""
	for _, v := range o.Violations {
		out += fmt.Sprintf("  %s: %s\n", v.Kind, v.Explanation)
	}
	return out
}

// TestSameSeedSameTrace runs every built-in scenario twice with the same
// seed and requires the same trace hash and the same events.
func TestSameSeedSameTrace(t *testing.T) {
	cat, err := Catalogue()
	require.NoError(t, err)
	for _, s := range cat {
		a, err := Run(s, s.Seed, Options{KeepTrace: true})
		require.NoError(t, err)
		b, err := Run(s, s.Seed, Options{KeepTrace: true})
		require.NoError(t, err)
		assert.Equal(t, a.TraceHash, b.TraceHash, s.Name)
		assert.Equal(t, len(a.Trace), len(b.Trace), s.Name)
		c, err := Run(s, s.Seed+1, Options{})
		require.NoError(t, err)
		assert.Equal(t, a.TraceHash == c.TraceHash, false, "%s: a different seed should give a different trace", s.Name)
	}
}

// TestCatalogueEntry: only NAME.yaml files are catalogue entries; a stray
// NAME.shrunk.yaml compiled in by the embed pattern is skipped, so that
// simrun list never breaks on it (issue 18).
func TestCatalogueEntry(t *testing.T) {
	tests := []struct {
		file string
		want bool
	}{
		{"redlock-clock-jump.yaml", true},
		{"zk_session.yaml", true},
		{"redlock-clock-jump.shrunk.yaml", false},
		{"notes.txt", false},
		{".yaml", false},
		{"a b.yaml", false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			assert.Equal(t, tt.want, catalogueEntry(tt.file))
		})
	}
	_, err := Builtin("../catalogue/redlock-clock-jump")
	assert.Error(t, err)
}

// TestCatalogueTitlesStandAlone: a title is read alone (simrun list, the
// matrix, the HTML report), so none may lean on its neighbour in the
// catalogue ("The same pause, ...").
func TestCatalogueTitlesStandAlone(t *testing.T) {
	cat, err := Catalogue()
	require.NoError(t, err)
	for _, s := range cat {
		assert.NotEmpty(t, s.Title, s.Name)
		assert.False(t, strings.HasPrefix(strings.ToLower(s.Title), "the same"), "%s: title %q leans on another scenario's: say what this one is", s.Name, s.Title)
	}
}
