package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim/scenarios"
)

// completeScenarios completes a NAME|FILE argument: the built-in scenario
// names that start with what was typed, and files (the shell's own
// completion) for the rest.
func completeScenarios(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, n := range scenarios.BuiltinNames() {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveDefault
}

// suggest returns the built-in names close to name (edit distance at most a
// third of its length, at least 2, or containing it), closest first.
func suggest(name string, names []string) []string {
	type cand struct {
		name string
		d    int
	}
	limit := max(2, len(name)/3)
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

// notFound is the message for a name that is neither a built-in nor a file.
func notFound(name string) error {
	msg := fmt.Sprintf("%q is neither a built-in scenario nor a file", name)
	if s := suggest(name, scenarios.BuiltinNames()); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return badInput("%s (simrun list shows the built-ins)", msg)
}
