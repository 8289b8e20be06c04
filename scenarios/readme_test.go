package scenarios

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
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

// TestReadmeDocumentsProperties keeps the verdict documentation in step
// with the checker's registry: each property has its bullet in the
// README's "Verdicts" section and in docs/scenario-format.md's, each
// verdict it may be expected to have is named in its README bullet, and
// the expect block of docs/scenario-format.md's example lists it.
func TestReadmeDocumentsProperties(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	fmtDoc, err := os.ReadFile("../docs/scenario-format.md")
	require.NoError(t, err)
	section := func(doc, heading string) string {
		_, after, ok := strings.Cut(doc, heading)
		require.True(t, ok, "no %q section", heading)
		if i := strings.Index(after, "\n#"); i >= 0 {
			after = after[:i]
		}
		if i := strings.Index(after, "\n**"); i >= 0 {
			after = after[:i]
		}
		return after
	}
	verdicts := section(string(readme), "\n### Verdicts\n")
	formatVerdicts := section(string(fmtDoc), "\n**Verdicts.**\n")
	for _, p := range checker.Properties() {
		a := p.About()
		_, bullet, ok := strings.Cut(verdicts, "\n- `"+a.Name+"`")
		if !assert.True(t, ok, "property %s has no bullet (- `%s` ...) in the README's Verdicts section", a.Name, a.Name) {
			continue
		}
		if i := strings.Index(bullet, "\n- "); i >= 0 {
			bullet = bullet[:i]
		}
		for _, v := range a.Expect {
			if v != checker.Holds && v != checker.Violated {
				assert.Contains(t, bullet, "`"+string(v)+"`", "the README's bullet of %s does not say when it is %s", a.Name, v)
			}
		}
		assert.Contains(t, formatVerdicts, "\n- `"+a.Name+"`", "property %s has no bullet in docs/scenario-format.md's Verdicts", a.Name)
		assert.Contains(t, string(fmtDoc), "\n  "+a.Name+": ", "docs/scenario-format.md's expect example does not list %s", a.Name)
	}
}
