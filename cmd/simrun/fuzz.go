package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/internal/campaign"
	"github.com/locksim/locksim/internal/outdir"
)

func init() { extraCommands = append(extraCommands, newFuzzCmd, newShrinkCmd) }

type fuzzFlags struct {
	runs      int
	dur       time.Duration
	seed      uint64
	workers   int
	kinds     string
	checks    string
	maxFaults int
	out       string
	keep      int
	jsonOut   bool
	junit     string
	shrink    bool
	shard     string
	force     bool
	quiet     bool
}

// defaultFuzzRuns is the number of runs when neither --runs nor --time is
// given.
const defaultFuzzRuns = 1000

func newFuzzCmd() *cobra.Command {
	var f fuzzFlags
	cmd := &cobra.Command{
		Use:   "fuzz NAME|FILE",
		Short: "Run random fault schedules against a scenario and report violations",
		Long: `Take a scenario as the base (its topology, clients and workload), replace
its fault schedule with random ones and report every run that violates a
checked property, grouped by kind, with the command that replays it.

Checked properties (--check overrides): the safety properties the base
expects to hold (fenced-baseline expects resource_safety holds: resource
violations are findings, lock violations are not); both safety properties
when the base expects none to hold. Liveness only with --check liveness.

Each run first draws which fault kinds are on and how often (swarm testing),
then the faults. Run seeds: run seed = splitmix64(campaign seed +
(run+1) * 0x9e3779b97f4a7c15); the run's simulation and schedule both derive
from it, so the findings do not depend on --workers.

Each finding is written to --out as finding-N.yaml: the base with the
generated faults and an expect block set to the observed violation, so
'simrun run DIR/finding-N.yaml' exits 0 while it reproduces. --shrink also
writes finding-N.shrunk.yaml (see simrun shrink) and groups the shrunk
findings by signature (the fault kinds and targets that remain). --out also
receives campaign.json (the campaign's identity and results) and base.yaml.
A folder holding another campaign's results is refused unless --force
(which replaces them); every output is checked before the first run.

--shard K/N runs only shard K (0..N-1) of a --runs campaign: the runs
K*runs/N to (K+1)*runs/N-1, with the seeds they have in the whole
campaign. A shard writes campaign.json and base.yaml only; 'simrun merge'
joins the shards' folders into what the whole campaign writes. A shard
exits 0 when it did its runs, whatever they found.

Ctrl-C (or SIGTERM) stops starting runs, writes what was found so far and
exits; a second Ctrl-C kills at once.`,
		Args: exactArgs(1, "NAME|FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("runs") && !cmd.Flags().Changed("time") {
				f.runs = defaultFuzzRuns
			}
			return runFuzz(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.runs, "runs", 0, "number of runs (default 1000 unless --time is given; with --time: at most this many)")
	fl.DurationVar(&f.dur, "time", 0, "stop starting runs after this long (wall time), e.g. 30s")
	fl.Uint64Var(&f.seed, "seed", 1, "campaign seed (vary it in CI to explore new schedules)")
	workersFlag(fl, &f.workers, "parallel workers")
	fl.StringVar(&f.kinds, "faults", "", "comma-separated fault kinds to generate (default: every kind that applies)")
	fl.StringVar(&f.checks, "check", "", "comma-separated properties to check: lock, resource, liveness (default: see above)")
	fl.IntVar(&f.maxFaults, "max-faults", faults.DefaultMaxFaults, "most faults in one schedule")
	fl.StringVar(&f.out, "out", "fuzz-findings", "folder for the finding files")
	fl.IntVar(&f.keep, "keep", fuzz.DefaultKeep, "findings of each kind to write (and shrink)")
	fl.BoolVar(&f.jsonOut, "json", false, "print one JSON object instead of the summary")
	fl.StringVar(&f.junit, "junit", "", "write a JUnit XML report to this file (each violating run a failing test case)")
	fl.BoolVar(&f.shrink, "shrink", false, "shrink each written finding to a minimal schedule")
	fl.StringVar(&f.shard, "shard", "", "run only shard K/N of the campaign (K from 0 to N-1); join the shards with simrun merge")
	fl.BoolVar(&f.force, "force", false, "replace the results of another campaign in --out")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress bar")
	return cmd
}

func runFuzz(stdout, stderr io.Writer, arg string, f fuzzFlags) error {
	switch {
	case f.runs < 0:
		return badInput("--runs must not be negative, got %d", f.runs)
	case f.dur < 0:
		return badInput("--time must not be negative, got %s", f.dur)
	case f.runs == 0 && f.dur == 0:
		return badInput("--runs 0 needs --time (otherwise the campaign never ends)")
	case f.keep < 1:
		return badInput("--keep must be at least 1, got %d", f.keep)
	case checkWorkers(f.workers) != nil:
		return checkWorkers(f.workers)
	case f.maxFaults < 1:
		return badInput("--max-faults must be at least 1, got %d (a schedule without faults finds nothing)", f.maxFaults)
	case f.maxFaults > faults.MaxFaultsLimit:
		return badInput("--max-faults must be at most %d, got %d (a finding holds its schedule, and run and replay must read it back)", faults.MaxFaultsLimit, f.maxFaults)
	}
	shard, err := campaign.ParseShard(f.shard)
	if err != nil {
		return err
	}
	if shard.N > 1 {
		switch {
		case f.dur > 0:
			return badInput("--shard with --time: a shard needs a fixed --runs (the whole campaign's), so that the shards add up to it")
		}
	}
	if err := campaign.CheckShardFlags(shard, f.shrink, f.jsonOut, f.junit); err != nil {
		return err
	}
	base, err := loadScenario(arg)
	if err != nil {
		return err
	}
	cfg := fuzz.Config{Base: base, Seed: f.seed, Runs: f.runs, Workers: f.workers, MaxFaults: f.maxFaults, Keep: f.keep, Shard: shard}
	if f.kinds != "" {
		cfg.Kinds = fuzz.SplitList(f.kinds)
	}
	if f.checks != "" {
		if cfg.Checks, err = fuzz.ParseChecks(f.checks); err != nil {
			return badInput("--check: %v", err)
		}
	}
	if err := fuzz.Prepare(&cfg); err != nil {
		return badInput("%v", err)
	}
	baseYAML, err := fuzz.BaseBytes(base)
	if err != nil {
		return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
	}
	id := fuzz.Identity{Command: "fuzz", Version: campaign.Version(version), Base: base.Name, BaseHash: fuzz.Hash(baseYAML),
		Seed: f.seed, Total: f.runs, Params: fuzz.FuzzParams(cfg)}
	// Every output is checked before the first run.
	if f.junit != "" {
		if err := outdir.CheckOutputFile(f.junit, base.File); err != nil {
			return badInput("--junit: %v", err)
		}
	}
	d, err := campaign.ClaimOut("--out", f.out, id, shard, f.force, fuzz.FindingPatterns...)
	if err != nil {
		return withCode(exitBadInput, err)
	}
	defer d.Close()

	ctx, interrupted, stop := campaign.Interruptible(context.Background())
	defer stop()
	if f.dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.dur)
		defer cancel()
	}
	total := -1
	if f.runs > 0 {
		first, end := shard.Range(f.runs)
		total = end - first
	}
	label := "fuzz " + base.Name
	if shard.N > 1 {
		label += " shard " + shard.String()
	}
	prog := campaign.NewProgress(stderr, total, label, f.quiet)
	if f.dur > 0 {
		prog.Until(time.Now().Add(f.dur))
	}
	cfg.Progress = func(p fuzz.Progress) { prog.Set(p.Runs, fmt.Sprintf("%s: %d violating", label, p.Found)) }
	start := time.Now()
	res, err := fuzz.Run(ctx, cfg)
	prog.Done()
	if err != nil {
		return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
	}
	res.Interrupted = interrupted()
	elapsed := time.Since(start)
	res.Elapsed = elapsed
	rate := float64(res.Runs) / elapsed.Seconds()
	fmt.Fprintf(stderr, "%d runs in %.1fs: %.0f runs/s on %d workers (%.0f per worker), %d violating\n",
		res.Runs, elapsed.Seconds(), rate, cfg.Workers, rate/float64(cfg.Workers), len(res.Findings))

	m := &fuzz.Manifest{Identity: id, Shard: shard.K, Shards: shard.N, First: res.First, Done: res.Runs, Interrupted: res.Interrupted}
	m.End = res.First + res.Planned
	if f.runs == 0 { // a --time campaign: its runs are the ones it did
		m.Total, m.End = res.Runs, res.Runs
	}
	if shard.N > 1 {
		if err := campaign.WriteShard(d, m, baseYAML, fuzz.Record(cfg, res)); err != nil {
			return withCode(exitBadInput, fmt.Errorf("--out: %w", err))
		}
		fmt.Fprintf(stdout, "fuzz %s shard %s: runs %d..%d of %d, %d violating; wrote %s (join the shards with simrun merge)\n",
			base.Name, shard, m.First, m.First+m.Done-1, m.Total, len(res.Findings), filepath.Join(d.Path(), fuzz.ManifestFile))
		if err := campaign.InterruptError(ctx, fmt.Sprintf("stopped after %d of the shard's %d runs; wrote its %d findings in %s (marked interrupted: run the shard again for a complete set)", res.Runs, res.Planned, len(res.Findings), filepath.Join(d.Path(), fuzz.ManifestFile))); err != nil {
			return err
		}
		if len(res.Errors) > 0 {
			return withCode(exitInconclusive, fmt.Errorf("run %d failed: %s", res.Errors[0].Run, res.Errors[0].Err))
		}
		return nil
	}
	return campaign.FinishFuzz(stdout, stderr, ctx, d, base, baseYAML, cfg, res, m, f.shrink, f.jsonOut, f.junit)
}
