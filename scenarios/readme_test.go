package scenarios

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/faults"
)

// TestReadmeDocumentsEverything keeps the README's scenario reference in
// step with the code: every built-in scenario, algorithm, parameter and
// fault kind is named there.
func TestReadmeDocumentsEverything(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	readme := string(data)
	for _, name := range BuiltinNames() {
		assert.Contains(t, readme, "`"+name+"`", "catalogue entry missing from the README")
	}
	for _, alg := range clients.Algorithms {
		assert.Contains(t, readme, "`"+alg+"`", "algorithm missing from the README")
		cfg, err := clients.DefaultLockConfig(alg)
		require.NoError(t, err)
		for _, p := range cfg.Params() {
			assert.True(t, strings.Contains(readme, "`"+p+"`") || strings.Contains(readme, "`"+p+"` "), "parameter %s of %s missing from the README", p, alg)
		}
	}
	fmtDoc, err := os.ReadFile("../docs/scenario-format.md")
	require.NoError(t, err)
	for _, k := range Kinds() {
		assert.Contains(t, readme, "`"+k.Section, "process kind %s missing from the README", k.Name)
		assert.Contains(t, string(fmtDoc), k.Section+":", "process kind %s missing from docs/scenario-format.md", k.Name)
	}
	for _, k := range faults.Kinds {
		assert.Contains(t, readme, "`"+k+"`", "fault kind missing from the README")
	}
}
