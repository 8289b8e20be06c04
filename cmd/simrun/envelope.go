package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/internal/outdir"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

func init() { extraCommands = append(extraCommands, newEnvelopeCmd) }

func newEnvelopeCmd() *cobra.Command {
	var param, rng, targets, checks, out string
	var step time.Duration
	cmd := &cobra.Command{
		Use:   "envelope NAME|FILE --param P [--range A..B]",
		Short: "Find the fault parameter value at which a verdict flips",
		Long: `Over every placement of the exhaustive single-fault space (as simrun
explore places faults: just before and after each action of each target),
find the smallest value of the fault parameter P (clock-jump.by: a forward
jump; pause.for) in --range that violates a checked property, by bisection
at --step, and print it with the schedule on each side (the same placement,
one step less: holds), and, with --out, both as scenario files that simrun
run replays. It names the properties it checked. Assumes the verdict is monotone in P at one
placement. The base's other faults stay, as for explore.
Finding a boundary, or that none exists in the range, is success.`,
		Args: exactArgs(1, "NAME|FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			base, err := loadScenario(args[0])
			if err != nil {
				return err
			}
			cfg := fuzz.EnvelopeConfig{Base: base, Param: param, Step: step}
			if rng != "" {
				r, err := sim.ParseRange(rng)
				if err != nil {
					return badInput("--range: %v", err)
				}
				cfg.Lo, cfg.Hi = r.Lo, r.Hi
			}
			if targets != "" {
				cfg.Targets = fuzz.SplitList(targets)
			}
			if checks != "" {
				if cfg.Checks, err = fuzz.ParseChecks(checks); err != nil {
					return badInput("--check: %v", err)
				}
			}
			r, err := fuzz.Envelope(cfg)
			var bb *fuzz.BadBounds
			if errors.As(err, &bb) {
				return badInput("%v", bb)
			}
			if err != nil {
				return withCode(exitInconclusive, err)
			}
			fuzz.WriteEnvelope(cmd.OutOrStdout(), base.Name, r)
			if out != "" && r.Found {
				return writeEnvelopeFiles(cmd.OutOrStdout(), out, base, r)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&param, "param", "", "the parameter to bisect: "+strings.Join(fuzz.EnvelopeParams, ", "))
	fl.StringVar(&rng, "range", "", "the values to search, A..B (default: step..3 x the longest lock lifetime)")
	fl.DurationVar(&step, "step", time.Millisecond, "resolution of the boundary")
	fl.StringVar(&targets, "targets", "", "comma-separated processes to hit (default: every process)")
	fl.StringVar(&checks, "check", "", "comma-separated properties to check (default: as simrun fuzz)")
	fl.StringVar(&out, "out", "", "folder for the boundary's two schedules as scenario files to replay (envelope-holds.yaml, envelope-violated.yaml)")
	return cmd
}

// writeEnvelopeFiles writes the boundary's two sides into dir as scenario
// files (fuzz.EnvelopeFiles) and says where.
func writeEnvelopeFiles(w io.Writer, dir string, base *scenarios.Scenario, r *fuzz.EnvelopeResult) error {
	holds, violated, err := fuzz.EnvelopeScenarios(base, r)
	if err != nil {
		return withCode(exitInconclusive, err)
	}
	d, err := outdir.Prepare(dir)
	if err != nil {
		return badInput("--out: %v", err)
	}
	defer d.Close()
	for i, s := range []*scenarios.Scenario{holds, violated} {
		b, err := fuzz.FileBytes(s, []string{s.Title, "Replay: simrun run " + filepath.Join(dir, fuzz.EnvelopeFiles[i])})
		if err != nil {
			return withCode(exitInconclusive, err)
		}
		if err := d.WriteFile(fuzz.EnvelopeFiles[i], b); err != nil {
			return withCode(exitInconclusive, err)
		}
		fmt.Fprintf(w, "wrote %s (replay: simrun run %s)\n", filepath.Join(dir, fuzz.EnvelopeFiles[i]), filepath.Join(dir, fuzz.EnvelopeFiles[i]))
	}
	return nil
}
