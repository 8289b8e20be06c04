package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim/checker"
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
				return listJSON(w, cat)
			}
			width := 0
			for _, s := range cat {
				if len(s.Name) > width {
					width = len(s.Name)
				}
			}
			for _, s := range cat {
				fmt.Fprintf(w, "%-*s  %s\n", width, s.Name, s.Title)
				fmt.Fprintf(w, "%-*s  expect: %s\n", width, "", expectText(s.Expect))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print a JSON array (name, title, source, duration, seed, expect)")
	return cmd
}

// listEntry is one scenario of simrun list --json.
type listEntry struct {
	Name     string            `json:"name"`
	Title    string            `json:"title"`
	Source   string            `json:"source,omitempty"`
	Duration string            `json:"duration"`
	Seed     uint64            `json:"seed"`
	Expect   map[string]string `json:"expect"`
}

func listJSON(w io.Writer, cat []*scenarios.Scenario) error {
	out := make([]listEntry, 0, len(cat))
	for _, s := range cat {
		e := listEntry{Name: s.Name, Title: s.Title, Source: s.Source, Duration: s.Duration.String(), Seed: s.Seed, Expect: map[string]string{}}
		for _, j := range s.Expect.Expected() {
			e.Expect[j.Property] = string(j.Verdict)
		}
		if s.Expect.MaxWait > 0 {
			e.Expect["max_wait"] = s.Expect.MaxWait.String()
		}
		out = append(out, e)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// expectText says what e expects, property by property in registry order
// ("lock violated, liveness holds (max wait 20s)").
func expectText(e scenarios.Expect) string {
	var parts []string
	for _, p := range checker.Properties() {
		a := p.About()
		v := e.Of(a.Name)
		if v == "" {
			continue
		}
		l := a.Short + " " + string(v)
		if a.Name == checker.Liveness && e.MaxWait > 0 {
			l += " (max wait " + e.MaxWait.String() + ")"
		}
		parts = append(parts, l)
	}
	if len(parts) == 0 {
		return "no violation"
	}
	return strings.Join(parts, ", ")
}
