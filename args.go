package locksim

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ExpandArgs turns NAME|FILE|DIR arguments into scenario arguments: a
// directory stands for its *.yaml and *.yml files, sorted.
func ExpandArgs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			out = append(out, a)
			continue
		}
		var files []string
		for _, pat := range []string{"*.yaml", "*.yml"} {
			m, err := filepath.Glob(filepath.Join(globEscape(a), pat))
			if err != nil {
				return nil, fmt.Errorf("%s: %v", a, err)
			}
			files = append(files, m...)
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s is a directory without scenario files (*.yaml, *.yml)", a)
		}
		sort.Strings(files)
		out = append(out, files...)
	}
	return out, nil
}

// globEscape escapes glob metacharacters in a directory name.
func globEscape(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(s)
}
