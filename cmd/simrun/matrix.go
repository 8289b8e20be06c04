package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/internal/campaign"
)

// The matrix's rows, worlds, families and run numbering live in
// fuzz.Matrix; this file parses the flags, writes the tables and prints.

type matrixFlags struct {
	runs    int
	seed    uint64
	workers int
	outDir  string
	force   bool
	quiet   bool
	shard   string
}

func newMatrixCmd() *cobra.Command {
	var f matrixFlags
	cmd := &cobra.Command{
		Use:   "matrix --out DIR [--runs N]",
		Short: "Violation rates of every lock algorithm under every fault family (which lock should we use?)",
		Long: `Run each lock algorithm (redis-single, redis-single with WAIT 1, redlock,
redsync, redisson, zookeeper, memcached-add, mysql-insert, mysql-for-update,
redis-getset, redis-reentrant, redis-reentrant-hash; each without and, when
it has a token, with fencing: a token and a marking resource) under random fault schedules of each family (clock jump,
clock drift, pause, crash without fsync, failover, partition, message
delay), N runs per cell, and write into DIR: matrix.png and matrix.svg (two
heatmaps: lock-safety and resource-safety violation rates), matrix.csv (raw
counts, 95% Wilson intervals, the replay of each cell's first violating
run), matrix.md, matrix.html, and worlds/ (the base scenarios) with cases/
(the scenario of each cell's first violating run).

Base worlds: three clients in continuous contention, 30 s, lock lifetime 5 s.
Schedules come from the fuzz generator, limited to the family's fault kind.
Run r of row i under family j has run number (g*families + j)*N + r, g the
number of the row's algorithm (a row and its +fencing row share it),
and uses the run seed of simrun fuzz, splitmix64(base + (n+1) *
0x9e3779b97f4a7c15), for both its schedule and its simulation: a row and
its +fencing row face the same schedules and seeds, and results do not
depend on --workers.

--shard K/N runs only part K of the matrix's runs and writes campaign.json
into --out; 'simrun merge' joins the shards into the whole matrix.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return matrix(cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	cmd.Flags().IntVar(&f.runs, "runs", 60, "random schedules per cell")
	cmd.Flags().Uint64Var(&f.seed, "seed", 1, "base seed")
	workersFlag(cmd.Flags(), &f.workers, "parallel runs")
	cmd.Flags().StringVar(&f.outDir, "out", "", "folder for the heatmap and the tables (required)")
	cmd.Flags().BoolVar(&f.force, "force", false, "replace the results of another campaign (not a matrix's) in --out")
	cmd.Flags().BoolVar(&f.quiet, "quiet", false, "no progress bar")
	cmd.Flags().StringVar(&f.shard, "shard", "", "run only shard K/N of the matrix's runs (K from 0 to N-1); join the shards with simrun merge")
	return cmd
}

// planMatrix plans the matrix (fuzz.NewMatrix); its worlds are built in,
// so an error is internal.
func planMatrix(runs int, seed uint64) (*fuzz.Matrix, error) {
	pl, err := fuzz.NewMatrix(runs, seed)
	var tm *fuzz.TooManyRuns
	if errors.As(err, &tm) {
		return nil, badInput("--runs: %v", err)
	}
	if err != nil {
		return nil, withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
	}
	return pl, nil
}

func matrix(stdout, stderr io.Writer, f matrixFlags) error {
	if f.outDir == "" {
		return badInput("--out: required (the folder for matrix.png, matrix.csv, matrix.md, matrix.html)")
	}
	if f.runs < 1 {
		return badInput("--runs: must be at least 1 (got %d)", f.runs)
	}
	if err := checkWorkers(f.workers); err != nil {
		return err
	}
	shard, err := campaign.ParseShard(f.shard)
	if err != nil {
		return err
	}
	pl, err := planMatrix(f.runs, f.seed)
	if err != nil {
		return err
	}
	id := campaign.MatrixIdentity(pl, version)
	// The matrix's outputs are regenerated whole: it replaces an earlier
	// matrix's; another campaign's only with --force.
	d, err := campaign.ClaimRegenerated("--out", f.outDir, id, shard, f.force)
	if err != nil {
		return withCode(exitBadInput, err)
	}
	defer d.Close()
	verdicts, m, err := campaign.RunShard(stderr, "matrix", id, shard, len(pl.Jobs), f.workers, f.quiet, pl.Run)
	if err != nil {
		// An interrupt (exit 130, 143): a matrix is written whole or not
		// at all.
		campaign.DropIfEmpty(d)
		if m != nil {
			return campaign.Stopped(err, "a partial matrix is not written: --out left as it was")
		}
		return err
	}
	if shard.N > 1 {
		if err := campaign.WriteShard(d, m, nil, fuzz.RecordOf(verdicts)); err != nil {
			return badInput("--out: %v", err)
		}
		fmt.Fprintf(stdout, "matrix shard %s: runs %d..%d of %d; wrote %s (join the shards with simrun merge)\n",
			shard, m.First, m.End-1, len(pl.Jobs), filepath.Join(d.Path(), fuzz.ManifestFile))
		return nil
	}
	return campaign.WriteMatrix(stdout, d, pl, m, verdicts)
}

// mergeMatrix joins matrix shards (simrun merge).
func mergeMatrix(stdout, stderr io.Writer, dirs []string, ms []*fuzz.Manifest, f mergeFlags) error {
	id := ms[0].Identity
	runs := 0
	for _, p := range id.Params {
		if k, v, _ := strings.Cut(p, "="); k == "runs" {
			runs, _ = strconv.Atoi(v)
		}
	}
	if runs < 1 {
		return badInput("%s: the matrix's parameters %q lack runs=", filepath.Join(dirs[0], fuzz.ManifestFile), id.Params)
	}
	pl, err := planMatrix(runs, id.Seed)
	if err != nil {
		return err
	}
	if pl.Hash != id.BaseHash || len(pl.Jobs) != id.Total {
		return badInput("%s: the matrix's worlds differ from this simrun's (%.12s, %d runs; this simrun: %.12s, %d runs)", dirs[0], id.BaseHash, id.Total, pl.Hash, len(pl.Jobs))
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
	fmt.Fprintf(stderr, "merged %d shards of the matrix: %d runs\n", len(dirs), len(verdicts))
	return campaign.WriteMatrix(stdout, d, pl, campaign.WholeManifest(id), verdicts)
}
