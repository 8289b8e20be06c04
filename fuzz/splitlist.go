package fuzz

import "strings"

// SplitList splits a comma-separated flag value (--faults, --targets) into
// its trimmed, non-empty items; nil when there are none.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
