package scenarios

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
)

// TestFuzzFindingNamesTheHoldersPause is the finding of
// "simrun fuzz redlock-clock-jump --seed 42", run 2 (issue 14): c1 was
// paused for 16.6s and kept believing it held the lock while c2 took it.
// The explanation once named c2's crash, a pause that was never applied and
// B's pause, and folded c1's own pause into "5 earlier faults"; it must name
// c1's pause first.
func TestFuzzFindingNamesTheHoldersPause(t *testing.T) {
	const file = "testdata/fuzz-redlock-clock-jump-42-run2.yaml"
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	s, err := Parse(file, data)
	require.NoError(t, err)
	o, err := Run(s, s.Seed, Options{})
	require.NoError(t, err)
	require.Equal(t, checker.Violated, o.LockSafety)
	require.NotEmpty(t, o.Violations)
	text := o.Violations[0].Explanation
	assert.Contains(t, text, "the overlap began 4.78s after c1 paused for 16.613s at 5.261s;")
	assert.Less(t, strings.Index(text, "c1 paused"), strings.Index(text, "c2 crashed"), text)
	assert.NotContains(t, text, "was not paused", "a pause that was not applied explains nothing")
}
