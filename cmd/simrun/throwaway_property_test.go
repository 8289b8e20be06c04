package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/sim"
)

// This file walks through docs/design/extending.md's "Adding a property" with a
// throwaway property that exists in this test only: fencedWrites stands
// for a file checker/fenced_writes.go, and registerFencedWrites for its
// one line in checker's registry. Nothing else in the tree knows it, yet
// the expect block validates it, the run judges it (whole and in pieces),
// and the summary, the JSON result and fuzz's --check name it.

// fencedWrites asks whether every write the resource accepted carried a
// fencing token.
type fencedWrites struct{}

func (fencedWrites) About() checker.About {
	return checker.About{
		Name: "fenced_writes", Title: "fenced writes", Kind: "fenced-writes", Short: "fenced",
		Explains: "every write the resource accepted carried a fencing token",
		Expect:   []checker.Verdict{checker.Holds, checker.Violated, checker.NotUsed},
		Fuzz:     checker.FuzzOnRequest,
	}
}

func (fencedWrites) Judge(h *sim.History, _ checker.Options) checker.Judgement {
	j := checker.Judgement{Verdict: checker.NotUsed}
	for _, x := range h.Sections {
		if !x.Written || x.Outcome != sim.WriteAccepted {
			continue
		}
		if j.Verdict == checker.NotUsed {
			j.Verdict = checker.Holds
		}
		if !x.HasToken {
			j.Verdict = checker.Violated
			j.Violations = append(j.Violations, checker.Violation{
				Kind: "fenced-writes", Lock: x.Lock, Clients: []string{x.Client},
				Windows:     []checker.Window{{Start: x.WriteAt, End: x.WriteAt}},
				Explanation: fmt.Sprintf("the resource accepted %s's write at %s without a fencing token", x.Client, x.WriteAt),
			})
		}
	}
	return j
}

func (p fencedWrites) Stream(opts checker.Options) checker.PieceJudge {
	return &fencedPieces{}
}

// fencedPieces carries whether a write was accepted yet.
type fencedPieces struct{ any bool }

func (f *fencedPieces) Piece(p *sim.History) (bool, string) {
	j := fencedWrites{}.Judge(p, checker.Options{})
	if j.Verdict == checker.Violated {
		return false, "fenced writes violated"
	}
	f.any = f.any || j.Verdict == checker.Holds
	return true, ""
}

func (f *fencedPieces) Final(*sim.History) checker.Judgement {
	if f.any {
		return checker.Judgement{Verdict: checker.Holds}
	}
	return checker.Judgement{Verdict: checker.NotUsed}
}

// registerFencedWrites is the one registration line, undone when the
// test ends.
func registerFencedWrites(t *testing.T) {
	t.Cleanup(checker.Register(fencedWrites{}))
}

func TestThrowawayProperty(t *testing.T) {
	dir := t.TempDir()
	expectBlock := "expect:\n  lock_safety: violated\n  fenced_writes: %s\n"
	file := func(name, verdict string) string {
		return writeFile(t, dir, name, pauseYAML+fmt.Sprintf(expectBlock, verdict))
	}
	line := strings.Count(pauseYAML, "\n") + 3 // the fenced_writes line

	// Unregistered, the expect block does not know it.
	unknown := file("before.yaml", "violated")
	r := simrun("run", unknown)
	require.Equal(t, exitBadInput, r.code, r.stdout)
	assert.Contains(t, r.stderr, fmt.Sprintf("%s:%d: expect.fenced_writes: unknown property \"fenced_writes\"", unknown, line))

	registerFencedWrites(t)

	// The expect block validates it: a misspelt name is suggested, a verdict
	// it does not allow is refused.
	misspelt := writeFile(t, dir, "misspelt.yaml", pauseYAML+"expect:\n  lock_safety: violated\n  fenced_write: violated\n")
	r = simrun("run", misspelt)
	require.Equal(t, exitBadInput, r.code, r.stdout)
	assert.Contains(t, r.stderr, fmt.Sprintf("%s:%d: expect.fenced_write: unknown property \"fenced_write\"", misspelt, line))
	assert.Contains(t, r.stderr, "did you mean fenced_writes?")
	bad := file("bad.yaml", "sometimes")
	r = simrun("run", bad)
	require.Equal(t, exitBadInput, r.code, r.stdout)
	assert.Contains(t, r.stderr, fmt.Sprintf("%s:%d: expect.fenced_writes: unknown verdict \"sometimes\" (allowed: holds, violated, not-used)", bad, line))

	// The run judges it: the summary has its line and its explanation, and
	// the expectation decides the exit code.
	good := file("good.yaml", "violated")
	r = simrun("run", good)
	require.Equal(t, exitOK, r.code, r.stderr+r.stdout)
	assert.Contains(t, r.stdout, "  fenced writes    violated   (expected violated: ok)\n")
	assert.Contains(t, r.stdout, "without a fencing token")
	r = simrun("run", file("wrong.yaml", "holds"))
	assert.Equal(t, exitMismatch, r.code, r.stderr+r.stdout)
	assert.Contains(t, r.stdout, "  fenced writes    violated   (expected holds: MISMATCH)\n")

	// The JSON result has its key, after the built-in ones, before the
	// violations; its violations come last.
	r = simrun("run", good, "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	assert.Equal(t, "violated", got["fenced_writes"])
	assert.Equal(t, map[string]any{"lock_safety": "violated", "fenced_writes": "violated"}, got["expected"])
	at := func(key string) int { return strings.Index(r.stdout, `"`+key+`":`) }
	assert.Less(t, at("token_order"), at("fenced_writes"))
	assert.Less(t, at("fenced_writes"), at("violations"))
	vs := got["violations"].([]any)
	assert.Equal(t, "fenced-writes", vs[len(vs)-1].(map[string]any)["kind"])

	// Recorded results read it back (simrun report, diff).
	out := filepath.Join(dir, "out")
	r = simrun("run", good, "--out", out)
	require.Equal(t, exitOK, r.code, r.stderr)
	r = simrun("diff", out, out)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "fenced writes    violated    violated")

	// fuzz --check knows it by its short label.
	checks, err := fuzz.ParseChecks("lock,fenced")
	require.NoError(t, err)
	assert.Equal(t, []string{checker.KindLockSafety, "fenced-writes"}, checks)
}
