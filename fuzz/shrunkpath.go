package fuzz

import (
	"path/filepath"
	"strings"

	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/scenarios"
)

// ShrunkPath is where a shrunk copy of the scenario file in goes: its name
// with .shrunk.yaml in place of .yaml or .yml.
func ShrunkPath(in string) string {
	for _, ext := range []string{".yaml", ".yml"} {
		if strings.HasSuffix(in, ext) {
			return strings.TrimSuffix(in, ext) + ".shrunk.yaml"
		}
	}
	return in + ".shrunk.yaml"
}

// DefaultShrunkPath is where shrink writes without --out: the scenario's
// base name with .shrunk.yaml, in the current directory. Never beside the
// input: that may be the catalogue folder, which embeds every *.yaml.
func DefaultShrunkPath(s *scenarios.Scenario) string {
	if record.ScenarioArg(s.File, s.Name) != s.File { // a built-in
		return s.Name + ".shrunk.yaml"
	}
	return filepath.Base(ShrunkPath(s.File))
}
