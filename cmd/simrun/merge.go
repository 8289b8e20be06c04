package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/internal/campaign"
	"github.com/locksim/locksim/internal/outdir"
)

func init() { extraCommands = append(extraCommands, newMergeCmd) }

type mergeFlags struct {
	out     string
	jsonOut bool
	junit   string
	shrink  bool
	force   bool
	workers int
}

func newMergeCmd() *cobra.Command {
	var f mergeFlags
	cmd := &cobra.Command{
		Use:   "merge DIR... [--out DIR] [--json] [--junit FILE]",
		Short: "Join the shards of a fuzz, explore, sweep or matrix campaign into the whole campaign's output",
		Long: `Read the campaign.json of each shard folder (written by simrun fuzz,
explore, sweep or matrix --shard K/N --out DIR), check that they are the shards of one
campaign (same command, version, base scenario and its hash, seed, runs
and parameters) and that each shard 0..N-1 is there exactly once and
complete, then write what the unsharded campaign writes:

  fuzz:   the summary (or --json), finding-N.yaml numbered by run in --out,
          --junit, --shrink as fuzz --shrink
  explore: as fuzz (the space is planned again from base.yaml and the
          bounds; each finding's schedule is rebuilt from its number)
  sweep:  sweep.png, sweep.svg, sweep.csv and points/ in --out (required)
  matrix: matrix.png, .svg, .csv, .md, .html, worlds/ and cases/ in --out
          (required)

Mixed, missing, duplicated or interrupted shards are named and refused
as bad input; otherwise merge exits as the campaign's command would.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return badInput("merge needs DIR...: the output folders of a campaign's shards")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMerge(cmd.OutOrStdout(), cmd.ErrOrStderr(), args, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.out, "out", "", "folder for the joined output (fuzz, explore: optional; sweep and matrix: required)")
	fl.BoolVar(&f.jsonOut, "json", false, "fuzz, explore: print one JSON object instead of the summary")
	fl.StringVar(&f.junit, "junit", "", "fuzz, explore: write a JUnit XML report to this file")
	fl.BoolVar(&f.shrink, "shrink", false, "fuzz, explore: shrink each written finding to a minimal schedule")
	fl.BoolVar(&f.force, "force", false, "replace the results of another campaign in --out")
	workersFlag(fl, &f.workers, "parallel workers (shrinking)")
	return cmd
}

func runMerge(stdout, stderr io.Writer, dirs []string, f mergeFlags) error {
	if err := checkWorkers(f.workers); err != nil {
		return err
	}
	ms := make([]*fuzz.Manifest, len(dirs))
	for i, dir := range dirs {
		m, err := fuzz.ReadManifest(dir)
		if err != nil {
			return badInput("%v", err)
		}
		ms[i] = m
	}
	if err := fuzz.CheckSet(dirs, ms); err != nil {
		return badInput("%v", err)
	}
	for _, dir := range dirs {
		if f.out != "" && filepath.Clean(dir) == filepath.Clean(f.out) {
			return badInput("--out %s is one of the shard folders: give a folder of its own", f.out)
		}
	}
	if f.junit != "" {
		if err := outdir.CheckOutputFile(f.junit); err != nil {
			return badInput("--junit: %v", err)
		}
	}
	id := ms[0].Identity
	switch id.Command {
	case "fuzz":
		return mergeFuzz(stdout, stderr, dirs, ms, f)
	case "explore":
		return mergeExplore(stdout, stderr, dirs, ms, f)
	case "sweep", "matrix":
		if f.jsonOut || f.junit != "" || f.shrink {
			return badInput("--json, --junit and --shrink are for fuzz and explore campaigns; this is a %s", id.Command)
		}
		if f.out == "" {
			return badInput("--out: required for a %s (the folder for its plots and tables)", id.Command)
		}
		if id.Command == "sweep" {
			return mergeSweep(stdout, stderr, dirs, ms, f)
		}
		return mergeMatrix(stdout, stderr, dirs, ms, f)
	}
	return badInput("%s: unknown campaign command %q", filepath.Join(dirs[0], fuzz.ManifestFile), id.Command)
}

func mergeFuzz(stdout, stderr io.Writer, dirs []string, ms []*fuzz.Manifest, f mergeFlags) error {
	id := ms[0].Identity
	base, baseYAML, err := campaign.ReadBase(dirs[0], id)
	if err != nil {
		return err
	}
	recs, err := campaign.DecodeResults[fuzz.FuzzRecord](dirs, ms)
	if err != nil {
		return err
	}
	r := recs[0]
	cfg := fuzz.Config{Base: base, Seed: id.Seed, Runs: id.Total, Workers: f.workers, Kinds: r.Kinds, Checks: r.Checks, MaxFaults: r.MaxFaults, Keep: r.Keep}
	if err := fuzz.Prepare(&cfg); err != nil {
		return badInput("%s: %v", dirs[0], err)
	}
	res, err := fuzz.MergeFuzz(cfg, id.Total, recs)
	if err != nil {
		return badInput("%v", err)
	}
	d, err := campaign.ClaimMergedOut(f.out, id, f.force)
	if err != nil {
		return withCode(exitBadInput, err)
	}
	defer d.Close()
	fmt.Fprintf(stderr, "merged %d shards of fuzz %s: %d runs, %d violating\n", len(dirs), base.Name, res.Runs, len(res.Findings))
	ctx, _, stop := campaign.Interruptible(context.Background())
	defer stop()
	return campaign.FinishFuzz(stdout, stderr, ctx, d, base, baseYAML, cfg, res, campaign.WholeManifest(id), f.shrink, f.jsonOut, f.junit)
}

func mergeExplore(stdout, stderr io.Writer, dirs []string, ms []*fuzz.Manifest, f mergeFlags) error {
	id := ms[0].Identity
	base, baseYAML, err := campaign.ReadBase(dirs[0], id)
	if err != nil {
		return err
	}
	recs, err := campaign.DecodeResults[fuzz.ExploreRecord](dirs, ms)
	if err != nil {
		return err
	}
	cfg, err := recs[0].Config()
	if err != nil {
		return badInput("%s: %v", dirs[0], err)
	}
	cfg.Base, cfg.Workers = base, f.workers
	pl, err := fuzz.PlanExplore(&cfg)
	if err != nil || pl.Total != id.Total {
		return badInput("%s: the exploration cannot be planned again as it was (%d schedules): %v", dirs[0], id.Total, err)
	}
	er, err := fuzz.MergeExplore(cfg, pl, recs)
	if err != nil {
		return badInput("%v", err)
	}
	d, err := campaign.ClaimMergedOut(f.out, id, f.force)
	if err != nil {
		return withCode(exitBadInput, err)
	}
	defer d.Close()
	fmt.Fprintf(stderr, "merged %d shards of explore %s: %d schedules, %d violating\n", len(dirs), base.Name, er.Runs, len(er.Findings))
	ctx, _, stop := campaign.Interruptible(context.Background())
	defer stop()
	return campaign.FinishExplore(stdout, stderr, ctx, d, base, baseYAML, cfg, er, campaign.WholeManifest(id), f.shrink, f.jsonOut, f.junit)
}
