package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSimrunDrivesNoKernel: the command line parses flags and prints; it
// runs scenarios through the facade (locksim) or fuzz, never by calling
// the scenario layer's kernel entry point itself (shrink.go did, to pick
// the property to keep).
func TestSimrunDrivesNoKernel(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "scenarios" && (sel.Sel.Name == "Run" || sel.Sel.Name == "RunContext") {
				assert.Failf(t, "simrun drives the kernel", "%s: scenarios.%s: run through locksim or fuzz", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
}
