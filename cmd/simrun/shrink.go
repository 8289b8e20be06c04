package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/internal/outdir"
	"github.com/locksim/locksim/scenarios"
)

type shrinkFlags struct {
	out     string
	seed    uint64
	seedSet bool
	kind    string
	maxRuns int
}

func newShrinkCmd() *cobra.Command {
	var f shrinkFlags
	cmd := &cobra.Command{
		Use:   "shrink FILE",
		Short: "Reduce a failing scenario's faults to a minimal schedule",
		Long: `Given a failing scenario (its run violates something, or mismatches its
expect block), remove faults, shorten pauses, jumps and delays, move faults
earlier and shorten the run, keeping only the changes that preserve the
violation, until no single change does (delta debugging).

The violation kept (--kind overrides): a property the scenario expects to
hold but the run violates; else one it expects violated and the run violates
(a fuzz finding); else, with no expect block, the first one violated.

Writes the minimal scenario (default: NAME.shrunk.yaml in the current
directory, never beside a built-in scenario), with a comment
saying what was removed and an expect block set to the kept violation, so
'simrun run' of it exits 0 while it reproduces.

A scenario that does not fail is bad input.`,
		Args:              exactArgs(1, "FILE"),
		ValidArgsFunction: completeScenarios,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.seedSet = cmd.Flags().Changed("seed")
			return runShrink(cmd.OutOrStdout(), args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.out, "out", "", "file to write (default: FILE's base name with .shrunk.yaml, in the current directory)")
	fl.Uint64Var(&f.seed, "seed", 0, "seed of the run (default: the scenario's seed)")
	fl.StringVar(&f.kind, "kind", "", "violation to keep: lock, resource or liveness (default: see above)")
	fl.IntVar(&f.maxRuns, "max-runs", fuzz.DefaultShrinkRuns, "most candidate runs to try")
	return cmd
}

// shrunkPath is the input's name with .shrunk.yaml.
var shrunkPath = fuzz.ShrunkPath

func runShrink(stdout io.Writer, arg string, f shrinkFlags) error {
	s, err := loadScenario(arg)
	if err != nil {
		return err
	}
	out := f.out
	if out == "" {
		out = fuzz.DefaultShrunkPath(s)
	}
	// Checked before the (long) shrinking.
	if err := outdir.CheckOutputFile(out, inputFile(arg)); err != nil {
		return badInput("--out: %v", err)
	}
	if scenarios.IsCatalogueDir(filepath.Dir(out)) {
		return badInput("--out: %s is in the built-in catalogue folder, which compiles every *.yaml into simrun; write it elsewhere", out)
	}
	if f.maxRuns < 1 {
		return badInput("--max-runs must be at least 1, got %d", f.maxRuns)
	}
	seed := s.Seed
	if f.seedSet {
		seed = f.seed
	}
	kind := ""
	if f.kind != "" {
		ks, err := fuzz.ParseChecks(f.kind)
		if err != nil || len(ks) != 1 {
			return badInput("--kind: %q is not one property (allowed: lock, resource, liveness, token order)", f.kind)
		}
		kind = ks[0]
	} else {
		// The run that decides what to keep is fuzz's, as are the
		// candidates': simrun drives no kernel of its own.
		var bt *fuzz.BadTarget
		kind, err = fuzz.ShrinkTarget(s, seed, fuzz.ShrinkOptions{})
		switch {
		case errors.As(err, &bt):
			return badInput("%s: %v", arg, bt)
		case err != nil:
			return withCode(exitInconclusive, fmt.Errorf("internal error running %s: %w", arg, err))
		}
	}
	r, err := fuzz.Shrink(s, seed, fuzz.ShrinkOptions{Kind: kind, MaxRuns: f.maxRuns})
	if err != nil {
		return badInput("%s: %v", arg, err)
	}
	title := s.Title
	if title == "" {
		title = s.Name
	}
	source := "simrun shrink " + arg
	if s.Source != "" {
		source = s.Source + "; shrunk by simrun shrink"
	}
	ss, err := fuzz.ShrunkScenario(r, title+" (shrunk)", source)
	if err != nil {
		return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
	}
	head := append([]string{fmt.Sprintf("Shrunk by simrun shrink from %s.", arg)}, r.Header()...)
	head = append(head, "Replay: "+fuzz.ReplayCommand(out, seed)+" (exits 0 while it reproduces).", "")
	data, err := fuzz.FileBytes(ss, head)
	if err != nil {
		return withCode(exitInconclusive, err)
	}
	if err := outdir.WriteFileAtomic(out, data); err != nil {
		return badInput("--out: %v", err)
	}
	fmt.Fprintf(stdout, "%s: %s, keeping %s violated\n", arg, r.Summary(), kind)
	for _, sp := range r.After {
		fmt.Fprintf(stdout, "  - %s\n", sp)
	}
	if len(r.Removed) > 0 {
		fmt.Fprintf(stdout, "removed %d faults\n", len(r.Removed))
	}
	fmt.Fprintf(stdout, "wrote %s\nreplay: %s\n", out, fuzz.ReplayCommand(out, seed))
	return nil
}
