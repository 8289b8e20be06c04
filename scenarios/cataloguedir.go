package scenarios

import (
	"bytes"
	"path/filepath"

	"github.com/locksim/locksim/internal/bounded"
)

// IsCatalogueDir reports whether dir is a copy of the built-in catalogue
// (the source tree's scenarios/catalogue): it holds a built-in scenario's
// file, byte for byte.
func IsCatalogueDir(dir string) bool {
	for _, n := range BuiltinNames() {
		want, err := BuiltinSource(n)
		if err != nil {
			continue
		}
		if got, err := bounded.ReadFile(filepath.Join(dir, n+".yaml"), "a scenario file", MaxFileBytes); err == nil && bytes.Equal(got, want) {
			return true
		}
	}
	return false
}
