package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/internal/campaign"
	"github.com/locksim/locksim/internal/outdir"
)

func init() { extraCommands = append(extraCommands, newExploreCmd) }

type exploreFlags struct {
	kinds, targets, checks string
	maxFaults, maxSched    int
	grid                   time.Duration
	force, shrink, jsonOut bool
	noStatePrune, orders   bool
	quiet                  bool
	workers                int
	out, junit, shard      string
}

func newExploreCmd() *cobra.Command {
	var f exploreFlags
	cmd := &cobra.Command{
		Use:   "explore NAME|FILE",
		Short: "Run every fault schedule within stated bounds and report every violation",
		Long: `Enumerate every schedule within the bounds and run each: at most
--max-faults faults of the kinds --faults, on every process a kind can hit
(--targets narrows), placed just before and just after each instant at which
the target acts in the base run (it handles a message, or a timer of its
does something visible; --grid adds a placement every so long), with
parameters from the classes that matter: for a clock jump, 1 ms below, at
and 1 ms above each margin of the scenario's timings (ttl, lease, timeouts,
Redlock's drift and validity, server timeouts) and a backward jump of each;
for a pause, 1 ms shorter than, equal to and 1 ms longer than each, or past
the end of the run; for a crash, process or (servers) power mode, for good
or restarted at once or after each pause length. The base's own
faults of the explored kinds are replaced; its other faults stay in every
schedule (the environment). Every schedule runs at the scenario's seed.

Pruned (and counted): a fault after the target's last action; a clock jump
or crash for good in the same gap between two actions of its target as
another; a longer pause at the same instant as a shorter one that ends while
the target is idle in the shorter one's run (same world state, safety
verdicts copied; off with --check liveness or --no-state-pruning). See
docs/guide/exploration.md for what this pruning assumes. --orders adds, at each
instant of the base run where two or more messages or timers are due at once,
one schedule per other event run first (an order fault; --faults '' for orders alone).

Prints "no violation in N schedules (bounds: ...)" or the violations grouped
by property and signature (the explored faults' kinds and targets), the
first schedule of each group written to --out as finding-N.yaml (--shrink:
also shrunk), and the coverage reached. A space larger than
--max-schedules is refused (exit 2, saying how large) unless --force.

--shard K/N runs the schedules K*total/N to (K+1)*total/N-1 only; 'simrun
merge' joins the shards into exactly what the whole exploration writes.`,
		Args: exactArgs(1, "NAME|FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExplore(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.kinds, "faults", "clock-jump,pause", "comma-separated fault kinds to enumerate (clock-jump, pause, crash)")
	fl.IntVar(&f.maxFaults, "max-faults", 1, "most faults in one schedule (K): every set of K distinct single faults")
	fl.StringVar(&f.targets, "targets", "", "comma-separated processes to hit (default: every process a kind can hit)")
	fl.DurationVar(&f.grid, "grid", 0, "also place faults every so long (e.g. 500ms); 0: only at the targets' actions")
	fl.IntVar(&f.maxSched, "max-schedules", fuzz.DefaultMaxSchedules, "refuse a larger space unless --force")
	fl.BoolVar(&f.force, "force", false, "explore a space larger than --max-schedules; replace another campaign's results in --out")
	fl.StringVar(&f.checks, "check", "", "comma-separated properties to check (default: as simrun fuzz)")
	workersFlag(fl, &f.workers, "parallel workers")
	fl.StringVar(&f.out, "out", "explore-findings", "folder for the finding files")
	fl.BoolVar(&f.jsonOut, "json", false, "print one JSON object instead of the summary")
	fl.StringVar(&f.junit, "junit", "", "write a JUnit XML report to this file")
	fl.BoolVar(&f.shrink, "shrink", false, "shrink the first finding of each group")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress bar")
	fl.BoolVar(&f.orders, "orders", false, "also vary the order of events due at one instant: each other event of a tie first")
	fl.BoolVar(&f.noStatePrune, "no-state-pruning", false, "run every schedule (no pruning by world state; see docs/guide/exploration.md)")
	fl.StringVar(&f.shard, "shard", "", "run only shard K/N of the schedules (K from 0 to N-1); join the shards with simrun merge")
	return cmd
}

func runExplore(stdout, stderr io.Writer, arg string, f exploreFlags) error {
	if err := checkWorkers(f.workers); err != nil {
		return err
	}
	if f.maxFaults < 1 {
		return badInput("--max-faults must be at least 1, got %d (a schedule without faults explores nothing)", f.maxFaults)
	}
	shard, err := campaign.ParseShard(f.shard)
	if err != nil {
		return err
	}
	if err := campaign.CheckShardFlags(shard, f.shrink, f.jsonOut, f.junit); err != nil {
		return err
	}
	base, err := loadScenario(arg)
	if err != nil {
		return err
	}
	cfg := fuzz.ExploreConfig{Base: base, Kinds: fuzz.SplitList(f.kinds), MaxFaults: f.maxFaults, Grid: f.grid,
		MaxSchedules: f.maxSched, Force: f.force, Workers: f.workers, Shard: shard, NoStatePrune: f.noStatePrune, Orders: f.orders}
	if cfg.Kinds == nil {
		cfg.Kinds = []string{}
	}
	if f.targets != "" {
		cfg.Targets = fuzz.SplitList(f.targets)
	}
	if f.checks != "" {
		if cfg.Checks, err = fuzz.ParseChecks(f.checks); err != nil {
			return badInput("--check: %v", err)
		}
	}
	pl, err := fuzz.PlanExplore(&cfg)
	var bb *fuzz.BadBounds
	if errors.As(err, &bb) {
		return badInput("%v", bb)
	}
	if err != nil {
		return withCode(exitInconclusive, err)
	}
	baseYAML, err := fuzz.BaseBytes(base)
	if err != nil {
		return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
	}
	if f.junit != "" {
		if err := outdir.CheckOutputFile(f.junit, base.File); err != nil {
			return badInput("--junit: %v", err)
		}
	}
	id := campaign.ExploreIdentity(campaign.Version(version), base, baseYAML, cfg, pl)
	d, err := campaign.ClaimOut("--out", f.out, id, shard, f.force, fuzz.FindingPatterns...)
	if err != nil {
		return withCode(exitBadInput, err)
	}
	defer d.Close()
	ctx, interrupted, stop := campaign.Interruptible(context.Background())
	defer stop()
	label := "explore " + base.Name
	first, end := shard.Range(pl.Total)
	if shard.N > 1 {
		label += " shard " + shard.String()
	}
	prog := campaign.NewProgress(stderr, end-first, label, f.quiet)
	cfg.Progress = func(p fuzz.Progress) { prog.Set(p.Runs, fmt.Sprintf("%s: %d violating", label, p.Found)) }
	start := time.Now()
	er, err := fuzz.Explore(ctx, cfg, pl)
	prog.Done()
	if err != nil {
		return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
	}
	res := er.Result
	res.Interrupted = interrupted()
	elapsed := time.Since(start)
	res.Elapsed = elapsed
	fmt.Fprintf(stderr, "%d schedules in %.1fs: %.0f schedules/s on %d workers\n", res.Runs, elapsed.Seconds(), float64(res.Runs)/elapsed.Seconds(), cfg.Workers)
	m := &fuzz.Manifest{Identity: id, Shard: shard.K, Shards: shard.N, First: first, End: end, Done: res.Runs, Interrupted: res.Interrupted}
	if shard.N > 1 {
		return campaign.FinishExploreShard(stdout, ctx, d, baseYAML, cfg, er, m)
	}
	return campaign.FinishExplore(stdout, stderr, ctx, d, base, baseYAML, cfg, er, m, f.shrink, f.jsonOut, f.junit)
}
