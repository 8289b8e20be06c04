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

// TestRegistriesDocumentThemselves: the reference (docs/reference) is
// generated from the registries (cmd/simrun TestReferenceDocsAreCurrent
// keeps it current); here, the hand-written scenario guide names every
// process kind's section, and every built-in scenario carries the words
// the catalogue reference shows.
func TestRegistriesDocumentThemselves(t *testing.T) {
	guide, err := os.ReadFile("../docs/guide/scenarios.md")
	require.NoError(t, err)
	for _, k := range Kinds() {
		assert.NotEmpty(t, k.Doc, "process kind %s has no Doc", k.Name)
		assert.Contains(t, string(guide), k.Section+":", "process kind %s missing from docs/guide/scenarios.md", k.Name)
	}
	for _, alg := range clients.Algorithms {
		a := clients.Lookup(alg)
		assert.NotEmpty(t, a.Doc, "algorithm %s has no Doc", alg)
		for _, p := range a.Params {
			assert.NotEmpty(t, p.Doc, "parameter %s of %s has no Doc", p.Name, alg)
		}
	}
	for _, k := range faults.Kinds {
		d, _ := faults.Lookup(k)
		assert.NotEmpty(t, d.Doc, "fault kind %s has no Doc", k)
	}
	cat, err := Catalogue()
	require.NoError(t, err)
	for _, s := range cat {
		assert.NotEmpty(t, s.Title, "%s: no title", s.Name)
		assert.NotEmpty(t, s.Source, "%s: no source", s.Name)
		assert.NotEmpty(t, s.Why, "%s: no why", s.Name)
	}
}

// TestGuideDocumentsProperties keeps the verdict documentation in step
// with the checker's registry: each property's Doc names each verdict it
// may be expected to have beyond holds and violated, it has its bullet in
// docs/guide/scenarios.md's "Verdicts", and the expect block of the
// guide's example lists it.
func TestGuideDocumentsProperties(t *testing.T) {
	fmtDoc, err := os.ReadFile("../docs/guide/scenarios.md")
	require.NoError(t, err)
	_, formatVerdicts, ok := strings.Cut(string(fmtDoc), "\n**Verdicts.**\n")
	require.True(t, ok, "no Verdicts section in docs/guide/scenarios.md")
	if i := strings.Index(formatVerdicts, "\n**"); i >= 0 {
		formatVerdicts = formatVerdicts[:i]
	}
	for _, p := range checker.Properties() {
		a := p.About()
		for _, v := range a.Expect {
			if v != checker.Holds && v != checker.Violated {
				assert.Contains(t, a.Doc, "`"+string(v)+"`", "the Doc of %s does not say when it is %s", a.Name, v)
			}
		}
		assert.Contains(t, formatVerdicts, "\n- `"+a.Name+"`", "property %s has no bullet in docs/guide/scenarios.md's Verdicts", a.Name)
		assert.Contains(t, string(fmtDoc), "\n  "+a.Name+": ", "docs/guide/scenarios.md's expect example does not list %s", a.Name)
	}
}
