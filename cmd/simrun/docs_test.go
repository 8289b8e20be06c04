package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenarios"
)

// TestReferenceDocsAreCurrent fails when a file of docs/reference is not
// what simrun docs writes from the registries today (as gofmt -l fails on
// an unformatted file), and says how to regenerate it.
func TestReferenceDocsAreCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	want, err := referenceDocs(root)
	require.NoError(t, err)
	dir := filepath.Join(root, referenceDir)
	have, err := filepath.Glob(filepath.Join(dir, "*.md"))
	require.NoError(t, err)
	var stale []string
	for _, f := range have {
		if _, ok := want[filepath.Base(f)]; !ok {
			stale = append(stale, referenceDir+"/"+filepath.Base(f)+" (not generated: remove it)")
		}
	}
	for _, name := range sortedKeys(want) {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != string(want[name]) {
			stale = append(stale, referenceDir+"/"+name)
		}
	}
	sort.Strings(stale)
	assert.Empty(t, stale, "stale reference docs; regenerate them with `%s` (from the repository root) and commit the result", regenerateDocs)
}

// TestRegistryEntriesCarryDocs: every registry entry the reference is
// generated from has its own doc text, so that a new one cannot land
// undocumented (the reference would show an empty entry).
func TestRegistryEntriesCarryDocs(t *testing.T) {
	for _, p := range checker.Properties() {
		a := p.About()
		if assert.NotEmpty(t, a.Doc, "property %s: About().Doc is empty", a.Name) {
			for _, v := range a.Expect {
				if v != checker.Holds && v != checker.Violated {
					assert.Contains(t, a.Doc, "`"+string(v)+"`", "property %s: its Doc does not say when it is %s", a.Name, v)
				}
			}
		}
	}
	for _, k := range faults.Kinds {
		d, ok := faults.Lookup(k)
		require.True(t, ok)
		assert.NotEmpty(t, d.Doc, "fault kind %s: KindDef.Doc is empty", k)
		for _, f := range d.Fields {
			assert.Contains(t, d.Doc, "`"+f.Name+"`", "fault kind %s: its Doc does not say what field %s means", k, f.Name)
		}
	}
	for _, name := range clients.Algorithms {
		a := clients.Lookup(name)
		assert.NotEmpty(t, a.Doc, "algorithm %s: Algorithm.Doc is empty", name)
		for _, p := range a.Params {
			assert.NotEmpty(t, p.Doc, "algorithm %s: parameter %s has no Doc", name, p.Name)
		}
	}
	for _, k := range scenarios.Kinds() {
		assert.NotEmpty(t, k.Doc, "process kind %s: ProcKind.Doc is empty", k.Name)
	}
	cat, err := scenarios.Catalogue()
	require.NoError(t, err)
	for _, s := range cat {
		assert.NotEmpty(t, s.Title, "%s: no title", s.Name)
		assert.NotEmpty(t, s.Source, "%s: no source", s.Name)
		assert.NotEmpty(t, s.Why, "%s: no why", s.Name)
	}
	var undocumented []string
	for _, c := range visibleCommands(newRoot(&strings.Builder{}, &strings.Builder{})) {
		if c.Short == "" {
			undocumented = append(undocumented, c.CommandPath())
		}
		for _, f := range flagsOf(c) {
			if f.Usage == "" {
				undocumented = append(undocumented, c.CommandPath()+" --"+f.Name)
			}
		}
	}
	assert.Empty(t, undocumented, "commands and flags without a help text")
}

// TestReferenceDocsIgnoreTheMachine: the reference is the same on every
// machine, so that the staleness test does not fail on another one: a
// flag whose default or help names this machine's figures says so in
// words (docDefaultAnnotation, docUsageAnnotation).
func TestReferenceDocsIgnoreTheMachine(t *testing.T) {
	docs, err := referenceDocs(filepath.Join("..", ".."))
	require.NoError(t, err)
	cli := string(docs["cli.md"])
	assert.NotContains(t, cli, " here)", "a flag's help names this machine's figure")
	assert.Contains(t, cli, "| `--workers` int | the number of CPUs |")
}
