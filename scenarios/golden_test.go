package scenarios

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/catalogue.golden from the current model")

// TestCatalogueGolden records, for each built-in scenario at its own seed,
// the verdicts, the explanations and the trace hash. Any change to a model
// shows up here as a diff to review; regenerate with
//
//	go test ./scenarios -run TestCatalogueGolden -update
//
// The trace hash also pins determinism across machines: CI runs this on a
// different machine than the one that wrote the file.
func TestCatalogueGolden(t *testing.T) {
	cat, err := Catalogue()
	require.NoError(t, err)
	var b strings.Builder
	for _, s := range cat {
		o, err := Run(s, s.Seed, Options{})
		require.NoError(t, err)
		fmt.Fprintf(&b, "== %s seed %d\n", s.Name, o.Seed)
		fmt.Fprintf(&b, "lock_safety: %s\nresource_safety: %s\nliveness: %s\ntoken_order: %s\n", o.LockSafety, o.ResourceSafety, o.Liveness, o.TokenOrder)
		for _, v := range o.Violations {
			fmt.Fprintf(&b, "%s: %s\n", v.Kind, v.Explanation)
		}
		if o.Fencing != "" {
			fmt.Fprintf(&b, "fencing: %s\n", o.Fencing)
		}
		fmt.Fprintf(&b, "matched: %v\ntrace: %s\n\n", o.Matched, o.TraceHash)
	}
	path := filepath.Join("testdata", "catalogue.golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file: run go test ./scenarios -run TestCatalogueGolden -update")
	assert.Equal(t, string(want), b.String(), "the catalogue's verdicts or traces changed; review the diff and rerun with -update if intended")
}
