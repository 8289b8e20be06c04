package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/exit"
)

// TestEveryHelpShowsTheExitCodes: the help of every command, sub-commands
// included, ends with the one table of exit codes (internal/exit), and no
// help lists codes of its own (explore's said 3 meant interrupted while it
// exited 130; real and twin said 3: issue 33, item 9).
func TestEveryHelpShowsTheExitCodes(t *testing.T) {
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	walk(newRoot(nil, nil), nil)
	require.Greater(t, len(paths), 15)
	for _, p := range paths {
		t.Run(strings.Join(append([]string{"simrun"}, p...), " "), func(t *testing.T) {
			r := simrun(append(append([]string(nil), p...), "--help")...)
			require.Equal(t, exitOK, r.code, r.stderr)
			assert.Contains(t, r.stdout, exit.Help())
			assert.Equal(t, 1, strings.Count(strings.ToLower(r.stdout), "exit code"), "one table, no codes of its own:\n%s", r.stdout)
		})
	}
}

// TestExitCodesDoc: docs/guide/exit-codes.md holds the table as internal/exit
// has it (regenerate with LOCKSIM_REWRITE=1).
func TestExitCodesDoc(t *testing.T) {
	p := filepath.Join("..", "..", "docs", "guide", "exit-codes.md")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	const begin, end = "<!-- exit codes: begin (generated from internal/exit) -->\n", "<!-- exit codes: end -->"
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	require.True(t, i >= 0 && j > i, "%s: the generated table's markers are missing", p)
	want := doc[:i+len(begin)] + exit.Markdown() + doc[j:]
	if os.Getenv("LOCKSIM_REWRITE") == "1" {
		require.NoError(t, os.WriteFile(p, []byte(want), 0o644))
		return
	}
	assert.Equal(t, want, doc, "%s is out of date: run with LOCKSIM_REWRITE=1", p)
}
