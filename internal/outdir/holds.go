package outdir

import (
	"os"
	"path/filepath"
)

// Holds reports whether the file in is one of names inside d (the same
// path, or the same file by another path).
func (d *Dir) Holds(in string, names []string) bool {
	inAbs, _ := filepath.Abs(in)
	for _, n := range names {
		p := filepath.Join(d.path, n)
		if pAbs, _ := filepath.Abs(p); pAbs == inAbs || sameFile(p, in) {
			return true
		}
	}
	return false
}

// sameFile reports whether a and b name the same existing file.
func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}
