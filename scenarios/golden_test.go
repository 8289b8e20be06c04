package scenarios

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/NAME.txt for every catalogue scenario from the current model (and delete the files of removed scenarios)")

// goldenDir holds one golden file per built-in scenario, NAME.txt.
var goldenDir = filepath.Join("testdata", "golden")

// goldenText renders what the golden file of one scenario records: the
// verdicts at the scenario's own seed, each violation's explanation, the
// fencing summary, whether the expectation matched, and the trace hash.
func goldenText(s *Scenario) (string, error) {
	o, err := Run(s, s.Seed, Options{})
	if err != nil {
		return "", err
	}
	if why := undeclaredVacuity(s, o); why != "" {
		return "", fmt.Errorf("%s: %s", s.Name, why)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "== %s seed %d\n", s.Name, o.Seed)
	for _, j := range o.Verdicts {
		fmt.Fprintf(&b, "%s: %s\n", j.Property, j.Verdict)
	}
	for _, v := range o.Violations {
		fmt.Fprintf(&b, "%s: %s\n", v.Kind, v.Explanation)
	}
	if o.Fencing != "" {
		fmt.Fprintf(&b, "fencing: %s\n", o.Fencing)
	}
	for _, v := range o.Vacuous {
		fmt.Fprintf(&b, "vacuous: %s\n", v)
	}
	fmt.Fprintf(&b, "matched: %v\ntrace: %s\n", o.Matched, o.TraceHash)
	return b.String(), nil
}

// TestCatalogueGolden records, for each built-in scenario at its own seed,
// the verdicts, the explanations and the trace hash, one file per scenario
// under testdata/golden/. Any change to a model shows up as a diff to review
// in the files of the scenarios it touches; regenerate all of them (trace
// hashes change whenever the trace encoding does) with one command:
//
//	go test ./scenarios -run TestCatalogueGolden -update
//
// A scenario in the catalogue without its file, or a file without its
// scenario, fails with the file's name. The trace hash also pins determinism
// across machines: CI runs this on a different machine than the one that
// wrote the files.
func TestCatalogueGolden(t *testing.T) {
	cat, err := Catalogue()
	require.NoError(t, err)
	want := map[string]bool{}
	for _, s := range cat {
		s := s
		file := filepath.Join(goldenDir, s.Name+".txt")
		want[s.Name+".txt"] = true
		t.Run(s.Name, func(t *testing.T) {
			got, err := goldenText(s)
			require.NoError(t, err)
			if *update {
				require.NoError(t, os.MkdirAll(goldenDir, 0o755))
				require.NoError(t, os.WriteFile(file, []byte(got), 0o644))
				return
			}
			old, err := os.ReadFile(file)
			if os.IsNotExist(err) {
				require.FailNowf(t, "missing golden file", "scenario %q has no golden file %s: run go test ./scenarios -run TestCatalogueGolden -update and review it", s.Name, file)
			}
			require.NoError(t, err)
			assert.Equal(t, string(old), got, "%s: the scenario's verdicts or trace changed; review the diff and rerun with -update if intended", file)
		})
	}
	t.Run("no-stale-files", func(t *testing.T) {
		stale, err := staleGolden(goldenDir, want)
		require.NoError(t, err)
		if *update {
			for _, f := range stale {
				require.NoError(t, os.Remove(filepath.Join(goldenDir, f)))
			}
			return
		}
		for _, f := range stale {
			assert.Failf(t, "stale golden file", "%s names no catalogue scenario: delete it, or run go test ./scenarios -run TestCatalogueGolden -update", filepath.Join(goldenDir, f))
		}
	})
}

// undeclaredVacuity says what is vacuous in o, the run of catalogue
// scenario s at its seed, that s does not declare (issue 25), "" when
// nothing is: a lock or resource safety not used while clients tried to
// take the lock must be expected not-used; a lock safety that holds over
// a single grant must not be claimed (expect lock_safety: holds); a run
// with fewer grants than expect.min_grants is vacuous as a whole.
func undeclaredVacuity(s *Scenario, o *Outcome) string {
	if o.Stats == nil {
		return "the run has no numbers"
	}
	for _, name := range []string{checker.LockSafety, checker.ResourceSafety} {
		if o.Verdicts.Of(name) == checker.NotUsed && o.Stats.Attempts > 0 && s.Expect.Of(name) != checker.NotUsed {
			return fmt.Sprintf("%s is not used (no grant or no critical section in %d acquire attempts): fix the story, or declare it with expect: {%s: %s}", name, o.Stats.Attempts, name, checker.NotUsed)
		}
	}
	if o.Verdicts.Of(checker.LockSafety) == checker.Holds && o.Stats.Grants < 2 && s.Expect.Of(checker.LockSafety) == checker.Holds {
		return fmt.Sprintf("expect %s: holds over %d grant(s): no two holders could overlap, the claim is vacuous (give the story a second grant, or do not claim it)", checker.LockSafety, o.Stats.Grants)
	}
	if s.Expect.MinGrants > 0 && o.Stats.Grants < s.Expect.MinGrants {
		return fmt.Sprintf("%d grants, fewer than expect.%s %d: the story does not happen", o.Stats.Grants, ExpectMinGrants, s.Expect.MinGrants)
	}
	return ""
}

// staleGolden returns the files in dir, sorted, that are not in want.
func staleGolden(dir string, want map[string]bool) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if !want[e.Name()] {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// TestStaleGoldenNamesExtraFiles checks the check above: a file for a
// scenario that is not in the catalogue is reported, one that is is not.
func TestStaleGoldenNamesExtraFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"kept.txt", "gone.txt", "also-gone.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), nil, 0o644))
	}
	stale, err := staleGolden(dir, map[string]bool{"kept.txt": true, "missing.txt": true})
	require.NoError(t, err)
	assert.Equal(t, []string{"also-gone.txt", "gone.txt"}, stale)
}
