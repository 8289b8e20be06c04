package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
)

// This file walks through docs/extending.md's "Adding a fault kind" with a
// throwaway kind that exists in this test only: freeze stands for a file
// faults/kind_freeze.go, and registerFreeze for its one registration.
// Nothing else in the tree knows it, yet a scenario reads it (and its
// errors name the file:line), a run applies it and draws it in the report,
// fuzzing draws it, and real mode refuses it with exit 2 because it
// registered no real-mode emulation.

// freeze stops a process for a while, as pause does, under its own name:
// what matters is that it is declared in one value.
var freeze = faults.KindDef{
	Name: "throwaway-freeze",
	Fields: []faults.Field{
		{Name: "node", Type: faults.FieldProc, Required: true, Ptr: func(s *faults.Spec) any { return &s.Node }},
		{Name: "for", Type: faults.FieldRange, Required: true, ShrinkMin: time.Millisecond, Ptr: func(s *faults.Spec) any { return &s.For },
			Check: func(s *faults.Spec) string {
				if s.For.Lo <= 0 {
					return "must be positive"
				}
				return ""
			}},
	},
	Liveness: sim.LiveSpan,
	Words:    func(b *strings.Builder, s faults.Spec) { fmt.Fprintf(b, " %s for %s", s.Node, s.For) },
	Apply: func(in *faults.Installer, s faults.Spec, node sim.ProcID, rec sim.FaultRecord) sim.FaultRecord {
		d := s.For.Draw(in.Rand())
		in.Kernel().Pause(node, d)
		rec.Text = fmt.Sprintf("%s froze for %s", s.Node, d)
		rec.Until = in.Kernel().Now() + sim.Time(d)
		return rec
	},
	Generate: func(g *faults.Gen, s faults.Spec, _ []faults.Spec) faults.Spec {
		s.Node = g.Target()
		s.For = sim.Fixed(g.Size(3 * g.World().TTL))
		return s
	},
	// No Real: real mode cannot run it.
}

// registerFreeze is the one registration, undone when the test ends.
func registerFreeze(t *testing.T) {
	t.Cleanup(faults.Register(freeze))
}

// freezeYAML is pauseYAML with the pause declared as the throwaway kind.
var freezeYAML = strings.Replace(pauseYAML, "kind: pause", "kind: throwaway-freeze", 1)

func TestThrowawayFaultKind(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "freeze.yaml", freezeYAML)
	line := strings.Count(freezeYAML[:strings.Index(freezeYAML, "kind: throwaway-freeze")], "\n") + 1

	// Unregistered, the scenario reader does not know it.
	r := simrun("run", file)
	require.Equal(t, exitBadInput, r.code, r.stdout)
	assert.Contains(t, r.stderr, fmt.Sprintf("%s:%d: faults[0].kind: unknown fault kind \"throwaway-freeze\"", file, line))

	registerFreeze(t)

	// Parse: its fields are read and checked, errors naming file:line.
	bad := writeFile(t, dir, "bad.yaml", strings.Replace(freezeYAML, "for: 30s", "for: -1s", 1))
	r = simrun("run", bad)
	require.Equal(t, exitBadInput, r.code, r.stdout)
	assert.Contains(t, r.stderr, fmt.Sprintf("%s:%d: faults[0].for: must be positive", bad, line+2))
	missing := writeFile(t, dir, "missing.yaml", strings.Replace(freezeYAML, "    node: c1\n", "", 1))
	r = simrun("run", missing)
	require.Equal(t, exitBadInput, r.code, r.stdout)
	assert.Contains(t, r.stderr, "faults[0].node")

	// A run applies it (the kernel pauses c1: the story of pauseYAML, a
	// violation), and the summary and the report show it.
	out := filepath.Join(dir, "out")
	r = simrun("run", file, "--out", out)
	require.Contains(t, []int{exitOK, exitMismatch}, r.code, r.stderr)
	assert.Contains(t, r.stdout, "throwaway-freeze: c1 froze for 30s")
	assert.Contains(t, r.stdout, "lock safety      violated")
	html, err := os.ReadFile(filepath.Join(out, "index.html"))
	require.NoError(t, err)
	assert.Contains(t, string(html), "c1 froze for 30s")

	// Fuzzing draws it when asked, and each schedule it draws runs.
	r = simrun("fuzz", file, "--faults", "throwaway-freeze", "--runs", "20", "--seed", "3", "--workers", "1", "--out", filepath.Join(dir, "fuzz"), "--quiet", "--keep", "1")
	require.Contains(t, []int{exitOK, exitMismatch}, r.code, r.stderr+r.stdout)
	assert.Contains(t, r.stdout, "throwaway-freeze")
	assert.NotContains(t, r.stdout, "clock-jump", "only the kinds asked for are drawn")

	// Real mode refuses it, exit 2, naming the fault and why, before it
	// starts any server.
	for _, cmd := range []string{"real", "twin"} {
		r = simrun(cmd, file)
		assert.Equal(t, exitBadInput, r.code, cmd+": "+r.stderr+r.stdout)
		assert.Contains(t, r.stderr, fmt.Sprintf("%s:%d: faults[0].kind: fault kind throwaway-freeze registered no real-mode emulation", file, line), cmd)
	}
}
