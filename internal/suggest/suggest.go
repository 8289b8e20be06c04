// Package suggest finds the names close to a misspelt one, for the
// "did you mean" of an error message.
package suggest

import (
	"sort"
	"strings"
)

// Closest returns the names close to name (edit distance at most half
// of its length, at least 2, or containing it), closest first, at most
// three.
func Closest(name string, names []string) []string {
	type cand struct {
		name string
		d    int
	}
	limit := max(2, len(name)/2)
	var cs []cand
	for _, n := range names {
		d := editDistance(name, n)
		if d <= limit || (len(name) >= 4 && strings.Contains(n, name)) {
			cs = append(cs, cand{n, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	var out []string
	for i, c := range cs {
		if i == 3 {
			break
		}
		out = append(out, c.name)
	}
	return out
}

// DidYouMean is "; did you mean A or B?" for the names close to name, or
// "" when none is.
func DidYouMean(name string, names []string) string {
	if s := Closest(name, names); len(s) > 0 {
		return "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
