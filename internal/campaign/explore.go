package campaign

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/internal/exit"
	"github.com/locksim/locksim/internal/outdir"
	"github.com/locksim/locksim/scenarios"
)

// CheckShardFlags refuses what a shard of a fuzz or explore campaign
// cannot do: shrinking, --json and --junit belong to the merge.
func CheckShardFlags(shard fuzz.Shard, shrink, jsonOut bool, junit string) error {
	if shard.N <= 1 {
		return nil
	}
	switch {
	case shrink:
		return exit.BadInputf("--shard with --shrink: shrink once at the end, with simrun merge --shrink")
	case jsonOut || junit != "":
		return exit.BadInputf("--shard with --json or --junit: a shard's findings are numbered at the merge; give them to simrun merge")
	}
	return nil
}

// ExploreIdentity is the identity of the exploration cfg planned as pl.
func ExploreIdentity(version string, base *scenarios.Scenario, baseYAML []byte, cfg fuzz.ExploreConfig, pl *fuzz.Plan) fuzz.Identity {
	return fuzz.Identity{Command: "explore", Version: version, Base: base.Name, BaseHash: fuzz.Hash(baseYAML),
		Seed: base.Seed, Total: pl.Total, Params: fuzz.ExploreParams(cfg, pl)}
}

// FinishExploreShard writes a shard's campaign.json and base.yaml and says
// what it ran; its error carries the exit code (0 whatever it found).
func FinishExploreShard(stdout io.Writer, ctx context.Context, d *outdir.Dir, baseYAML []byte, cfg fuzz.ExploreConfig, er *fuzz.ExploreResult, m *fuzz.Manifest) error {
	res := er.Result
	if err := WriteShard(d, m, baseYAML, fuzz.RecordExplore(cfg, er)); err != nil {
		return exit.With(exit.BadInput, fmt.Errorf("--out: %w", err))
	}
	fmt.Fprintf(stdout, "explore %s shard %d/%d: schedules %d..%d of %d, %d violating; wrote %s (join the shards with simrun merge)\n",
		res.Base, m.Shard, m.Shards, m.First, m.First+m.Done-1, m.Total, len(res.Findings), filepath.Join(d.Path(), fuzz.ManifestFile))
	if err := InterruptError(ctx, fmt.Sprintf("stopped after %d of the shard's %d schedules; wrote its %d findings in %s (marked interrupted: run the shard again for a complete set)", res.Runs, res.Planned, len(res.Findings), filepath.Join(d.Path(), fuzz.ManifestFile))); err != nil {
		return err
	}
	if len(res.Errors) > 0 {
		return exit.With(exit.Inconclusive, fmt.Errorf("schedule %d failed: %s", res.Errors[0].Run, res.Errors[0].Err))
	}
	return nil
}

// FinishExplore writes and prints a whole exploration's result (simrun
// explore without --shard, and simrun merge of explore shards): shrinks the
// first finding of each group when asked, writes the finding files,
// campaign.json and base.yaml into d, the JUnit report, and prints the
// summary or JSON; its error carries explore's exit code.
func FinishExplore(stdout, stderr io.Writer, ctx context.Context, d *outdir.Dir, base *scenarios.Scenario, baseYAML []byte, cfg fuzz.ExploreConfig, er *fuzz.ExploreResult, m *fuzz.Manifest, shrink, jsonOut bool, junit string) error {
	res := er.Result
	fcfg := fuzz.Config{Base: base, Seed: base.Seed, Kinds: res.Kinds, Checks: res.Checks, MaxFaults: er.Plan.K, Workers: cfg.Workers}
	if err := write(stderr, ctx, d, base, baseYAML, fcfg, res, m, func() any { return fuzz.RecordExplore(cfg, er) }, shrink, junit); err != nil {
		return err
	}
	if jsonOut {
		if err := fuzz.WriteExploreJSON(stdout, er); err != nil {
			return exit.With(exit.Inconclusive, err)
		}
	} else {
		fuzz.WriteExploreSummary(stdout, er)
	}
	if err := InterruptError(ctx, Wrote(fmt.Sprintf("%d of %d schedules", res.Runs, er.Plan.Total), res, d, junit)); err != nil {
		return err
	}
	switch {
	case len(res.Findings) > 0:
		return exit.With(exit.Mismatch, nil)
	case len(res.Errors) > 0 || len(res.Inconclusive) > 0:
		return exit.With(exit.Inconclusive, nil)
	}
	return nil
}
