package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim/internal/suggest"
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

// notFound is the message for a name that is neither a built-in nor a file.
func notFound(name string) error {
	msg := fmt.Sprintf("%q is neither a built-in scenario nor a file", name) + suggest.DidYouMean(name, scenarios.BuiltinNames())
	return badInput("%s (simrun list shows the built-ins)", msg)
}

// loadScenario resolves NAME|FILE for the commands whose doors take the
// scenario itself (fuzz, shrink, sweep, real, twin), mapping every user
// error to exit 2. simrun run goes through the facade (openScenario).
func loadScenario(arg string) (*scenarios.Scenario, error) {
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return nil, badInput("%s is a directory, not a scenario file", arg)
	}
	s, err := scenarios.Load(arg)
	if err != nil {
		return nil, scenarioError(err)
	}
	return s, nil
}
