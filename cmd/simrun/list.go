package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim/scenarios"
)

// simrun list reads the catalogue itself: it runs nothing.

func newListCmd() *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the built-in scenarios with their expected verdicts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cat, err := scenarios.Catalogue()
			if err != nil {
				return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
			}
			w := cmd.OutOrStdout()
			if jsonOut {
				return scenarios.WriteListJSON(w, cat)
			}
			width := 0
			for _, s := range cat {
				if len(s.Name) > width {
					width = len(s.Name)
				}
			}
			for _, s := range cat {
				fmt.Fprintf(w, "%-*s  %s\n", width, s.Name, s.Title)
				fmt.Fprintf(w, "%-*s  expect: %s\n", width, "", s.Expect.Text())
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print a JSON array (name, title, source, duration, seed, expect)")
	return cmd
}

// listEntry is one scenario of simrun list --json.
type listEntry = scenarios.ListEntry
