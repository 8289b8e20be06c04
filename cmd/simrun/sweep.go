package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/internal/campaign"
)

type sweepFlags struct {
	params  []string
	seeds   int
	seed    uint64
	seedSet bool
	workers int
	outDir  string
	force   bool
	quiet   bool
	shard   string
	labels  []string
	refs    []string
}

func newSweepCmd() *cobra.Command {
	var f sweepFlags
	cmd := &cobra.Command{
		Use:   "sweep NAME|FILE --param PATH=VALUES [--param PATH=VALUES] --seeds N --out DIR",
		Short: "Vary one or two scenario parameters and plot the probability of each violation",
		Long: `Vary one or two scenario fields and run N seeds per point on all cores. Writes
into DIR: sweep.png and sweep.svg (one parameter: the probability of each
violation against the value, with 95% Wilson intervals; two: a heatmap per
verdict), sweep.csv (raw counts, estimates, intervals, replay commands) and
points/point-NNN.yaml, the scenario of each point, so that any run can be
replayed with simrun run DIR/points/point-NNN.yaml --seed S.

VALUES is a list (2s,5s,10s,30s) or a range with a count, a..b/N: N evenly
spaced values from a to b (durations, as 0s..40s/9, or numbers, as
0..0.1/11). PATH is a field path of the scenario format: faults[1].by,
clients[0].lock.ttl, redis[2].clock.drift, network.loss.

Seeds: the runs are numbered n = p*N + r (point p, seed number r) and run n
uses the run seed of simrun fuzz, splitmix64(base + (n+1) *
0x9e3779b97f4a7c15), base being --seed (default the scenario's seed).
Results are collected by run number, so they do not depend on --workers.

--shard K/N runs only the runs K*total/N to (K+1)*total/N-1 and writes
campaign.json and base.yaml into --out; 'simrun merge' joins the shards'
folders into what the whole sweep writes. --out also receives
campaign.json and base.yaml; a sweep replaces what an earlier one wrote
into the same folder, point files included.`,
		Args: exactArgs(1, "NAME|FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.seedSet = cmd.Flags().Changed("seed")
			return sweep(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], f)
		},
	}
	cmd.Flags().StringArrayVar(&f.params, "param", nil, "PATH=VALUES to vary (once or twice)")
	cmd.Flags().StringArrayVar(&f.labels, "label", nil, "PATH=TEXT: a readable name for a swept parameter's axis (e.g. 'faults[1].by=clock jump of C')")
	cmd.Flags().StringArrayVar(&f.refs, "reference", nil, "VALUE=TEXT: a reference line the story predicts, on a one-parameter sweep (e.g. '5s=ttl - hold')")
	cmd.Flags().IntVar(&f.seeds, "seeds", 20, "runs (seeds) per point")
	cmd.Flags().Uint64Var(&f.seed, "seed", 0, "base seed (default: the scenario's seed)")
	workersFlag(cmd.Flags(), &f.workers, "parallel runs")
	cmd.Flags().StringVar(&f.outDir, "out", "", "folder for the plot, the CSV and the point scenarios (required)")
	cmd.Flags().BoolVar(&f.force, "force", false, "replace the results of another campaign (not a sweep's) in --out")
	cmd.Flags().BoolVar(&f.quiet, "quiet", false, "no progress bar")
	cmd.Flags().StringVar(&f.shard, "shard", "", "run only shard K/N of the sweep's runs (K from 0 to N-1); join the shards with simrun merge")
	return cmd
}

func sweep(stdout, stderr io.Writer, arg string, f sweepFlags) error {
	if f.outDir == "" {
		return badInput("--out: required (the folder for sweep.png, sweep.csv and points/)")
	}
	if len(f.params) == 0 || len(f.params) > 2 {
		return badInput("--param: give one or two parameters to vary (got %d)", len(f.params))
	}
	if f.seeds < 1 {
		return badInput("--seeds: must be at least 1 (got %d)", f.seeds)
	}
	if err := checkWorkers(f.workers); err != nil {
		return err
	}
	shard, err := campaign.ParseShard(f.shard)
	if err != nil {
		return err
	}
	s, err := loadScenario(arg)
	if err != nil {
		return err
	}
	base := s.Seed
	if f.seedSet {
		base = f.seed
	}
	pl, err := campaign.PlanSweep(s, f.params, f.labels, f.refs, f.seeds, base)
	if err != nil {
		return err
	}
	id := pl.Identity(version)
	// A sweep's outputs are regenerated whole, so it replaces an earlier
	// sweep's; another campaign's only with --force (issue 33: a sweep into
	// an explore folder left both).
	d, err := campaign.ClaimRegenerated("--out", f.outDir, id, shard, f.force)
	if err != nil {
		return withCode(exitBadInput, err)
	}
	defer d.Close()

	verdicts, m, stopped := campaign.RunShard(stderr, "sweep "+s.Name, id, shard, pl.Total(), f.workers, f.quiet, pl.Run)
	if m == nil {
		return stopped
	}
	if shard.N > 1 {
		if err := campaign.WriteShard(d, m, pl.BaseYAML, fuzz.RecordOf(verdicts)); err != nil {
			return badInput("--out: %v", err)
		}
		fmt.Fprintf(stdout, "sweep %s shard %s: runs %d..%d of %d; wrote %s (join the shards with simrun merge)\n",
			s.Name, shard, m.First, m.First+m.Done-1, pl.Total(), filepath.Join(d.Path(), fuzz.ManifestFile))
		if stopped != nil {
			return campaign.Stopped(stopped, "wrote the shard's finished runs to "+filepath.Join(d.Path(), fuzz.ManifestFile)+" (marked interrupted: run the shard again to merge it)")
		}
		return nil
	}
	if stopped != nil && pl.SweepPointsDone(len(verdicts)) == 0 {
		campaign.DropIfEmpty(d)
		return campaign.Stopped(stopped, "no point finished: nothing written, --out left as it was")
	}
	if err := campaign.WriteSweep(stdout, d, pl, m, verdicts); err != nil {
		return err
	}
	if stopped != nil {
		return campaign.Stopped(stopped, fmt.Sprintf("wrote the %d finished points of %d to %s", pl.SweepPointsDone(len(verdicts)), pl.NumPoints(), d.Path()))
	}
	return nil
}

// mergeSweep joins sweep shards (simrun merge).
func mergeSweep(stdout, stderr io.Writer, dirs []string, ms []*fuzz.Manifest, f mergeFlags) error {
	id := ms[0].Identity
	s, _, err := campaign.ReadBase(dirs[0], id)
	if err != nil {
		return err
	}
	pl, err := campaign.ReplanSweep(s, id, dirs[0])
	if err != nil {
		return err
	}
	verdicts, err := campaign.JoinVerdicts(dirs, ms)
	if err != nil {
		return err
	}
	d, err := campaign.ClaimRegenerated("--out", f.out, id, fuzz.Whole, f.force)
	if err != nil {
		return withCode(exitBadInput, err)
	}
	defer d.Close()
	fmt.Fprintf(stderr, "merged %d shards of sweep %s: %d runs\n", len(dirs), s.Name, len(verdicts))
	return campaign.WriteSweep(stdout, d, pl, campaign.WholeManifest(id), verdicts)
}
