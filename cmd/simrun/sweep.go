package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/internal/campaign"
	"github.com/locksim/locksim/internal/outdir"
	"github.com/locksim/locksim/internal/shell"
	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

type sweepFlags struct {
	params  []string
	seeds   int
	seed    uint64
	seedSet bool
	workers int
	outDir  string
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
	cmd.Flags().IntVar(&f.workers, "workers", runtime.NumCPU(), "parallel runs")
	cmd.Flags().StringVar(&f.outDir, "out", "", "folder for the plot, the CSV and the point scenarios (required)")
	cmd.Flags().BoolVar(&f.quiet, "quiet", false, "no progress bar")
	cmd.Flags().StringVar(&f.shard, "shard", "", "run only shard K/N of the sweep's runs (K from 0 to N-1); join the shards with simrun merge")
	return cmd
}

// sweepPlan is a sweep: its base, parameters, points and seeds, from
// which every run and every output follows.
type sweepPlan struct {
	*fuzz.Sweep
	s        *scenarios.Scenario
	baseYAML []byte
	specs    []string
	params   []reports.SweepParam
	combos   [][]string
	// labels (--label PATH=TEXT) and refs (--reference VALUE=TEXT) as given,
	// and the reference lines they make.
	labels, refs []string
	lines        []reports.SweepReference
}

// annotate applies --label and --reference to the parsed parameters; its
// errors carry exit code 2.
func (pl *sweepPlan) annotate() error {
	swept := make([]string, len(pl.params))
	for i, p := range pl.params {
		swept[i] = p.Path
	}
	for _, spec := range pl.labels {
		path, text, ok := strings.Cut(spec, "=")
		path, text = strings.TrimSpace(path), strings.TrimSpace(text)
		if !ok || path == "" || text == "" {
			return badInput("--label %q: want PATH=TEXT, e.g. 'faults[1].by=clock jump of C'", spec)
		}
		found := false
		for i := range pl.params {
			if pl.params[i].Path == path {
				pl.params[i].Label, found = text, true
			}
		}
		if !found {
			return badInput("--label %q: %s is not swept (swept: %s)", spec, path, strings.Join(swept, ", "))
		}
	}
	for _, spec := range pl.refs {
		value, text, ok := strings.Cut(spec, "=")
		value, text = strings.TrimSpace(value), strings.TrimSpace(text)
		if !ok || value == "" || text == "" {
			return badInput("--reference %q: want VALUE=TEXT, e.g. '5s=ttl - hold'", spec)
		}
		if len(pl.params) != 1 || pl.params[0].X == nil {
			return badInput("--reference %q: reference lines are drawn on a sweep of one numeric or duration parameter", spec)
		}
		var x float64
		var err error
		if pl.params[0].Unit == "s" {
			var d time.Duration
			if d, err = sim.ParseDuration(value); err == nil {
				x = d.Seconds()
			}
		} else {
			x, err = strconv.ParseFloat(value, 64)
		}
		if err != nil {
			return badInput("--reference %q: %q is not a value of %s: %v", spec, value, pl.params[0].Path, err)
		}
		pl.lines = append(pl.lines, reports.SweepReference{X: x, Label: text})
	}
	return nil
}

// planSweep parses the --param specs against s and builds the points;
// its errors carry exit code 2.
func planSweep(s *scenarios.Scenario, specs, labels, refs []string, seeds int, seed uint64) (*sweepPlan, error) {
	pl := &sweepPlan{s: s, specs: specs, labels: labels, refs: refs}
	for _, spec := range specs {
		p, err := reports.ParseSweepParam(spec)
		if err != nil {
			return nil, withCode(exitBadInput, err)
		}
		for _, q := range pl.params {
			if q.Path == p.Path {
				return nil, badInput("--param %s: %s is already swept by another --param", spec, p.Path)
			}
		}
		// Each value alone, so that an error names its parameter.
		for _, v := range p.Values {
			if _, err := s.With([][2]string{{p.Path, v}}); err != nil {
				return nil, badInput("--param %s: value %q: %v", spec, v, err)
			}
		}
		pl.params = append(pl.params, p)
	}
	if err := pl.annotate(); err != nil {
		return nil, err
	}
	if len(pl.params) == 1 {
		for _, v := range pl.params[0].Values {
			pl.combos = append(pl.combos, []string{v})
		}
	} else {
		for _, a := range pl.params[0].Values {
			for _, b := range pl.params[1].Values {
				pl.combos = append(pl.combos, []string{a, b})
			}
		}
	}
	// The points, each validated as a whole.
	var sets [][][2]string
	for _, vals := range pl.combos {
		var set [][2]string
		for j, v := range vals {
			set = append(set, [2]string{pl.params[j].Path, v})
		}
		sets = append(sets, set)
	}
	var err error
	if pl.Sweep, err = fuzz.NewSweep(s, sets, seeds, seed); err != nil {
		var pe *fuzz.PointError
		if errors.As(err, &pe) {
			return nil, badInput("--param %s: values %s together: %v", strings.Join(specs, " --param "), strings.Join(pl.combos[pe.Point], ", "), pe.Err)
		}
		return nil, badInput("%v", err)
	}
	if pl.baseYAML, err = fuzz.BaseBytes(s); err != nil {
		return nil, withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
	}
	return pl, nil
}

func (pl *sweepPlan) identity() fuzz.Identity {
	params := make([]string, 0, len(pl.specs)+1)
	for _, sp := range pl.specs {
		params = append(params, "param="+sp)
	}
	for _, l := range pl.labels {
		params = append(params, "label="+l)
	}
	for _, r := range pl.refs {
		params = append(params, "reference="+r)
	}
	params = append(params, "seeds="+strconv.Itoa(pl.Seeds))
	return fuzz.Identity{Command: "sweep", Version: campaign.Version(version), Base: pl.s.Name, BaseHash: fuzz.Hash(pl.baseYAML),
		Seed: pl.Seed, Total: pl.Total(), Params: params}
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
	if f.workers < 1 {
		return badInput("--workers: must be at least 1 (got %d)", f.workers)
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
	pl, err := planSweep(s, f.params, f.labels, f.refs, f.seeds, base)
	if err != nil {
		return err
	}
	id := pl.identity()
	// A sweep's outputs are regenerated whole, so it replaces an earlier
	// campaign's (force).
	d, err := campaign.ClaimOut("--out", f.outDir, id, shard, true)
	if err != nil {
		return withCode(exitBadInput, err)
	}
	defer d.Close()

	verdicts, m, err := campaign.RunShard(stderr, "sweep "+s.Name, id, shard, pl.Total(), f.workers, f.quiet, pl.Run)
	if err != nil {
		return err
	}
	if shard.N > 1 {
		if err := campaign.WriteManifest(d, m, pl.baseYAML, fuzz.VerdictRecord{Verdicts: fuzz.EncodeVerdicts(verdicts)}); err != nil {
			return badInput("--out: %v", err)
		}
		fmt.Fprintf(stdout, "sweep %s shard %s: runs %d..%d of %d; wrote %s (join the shards with simrun merge)\n",
			s.Name, shard, m.First, m.End-1, pl.Total(), filepath.Join(d.Path(), fuzz.ManifestFile))
		return nil
	}
	return writeSweep(stdout, d, pl, m, verdicts)
}

// writeSweep writes a whole sweep's outputs into d (sweep without
// --shard, and simrun merge of sweep shards): points/point-NNN.yaml
// (removing point files of an earlier sweep), sweep.png, sweep.svg,
// sweep.csv, campaign.json and base.yaml, and prints the table.
func writeSweep(stdout io.Writer, d *outdir.Dir, pl *sweepPlan, m *fuzz.Manifest, verdicts []fuzz.Verdicts) error {
	pd, err := outdir.Prepare(filepath.Join(d.Path(), "points"))
	if err != nil {
		return badInput("--out: %v", err)
	}
	defer pd.Close()
	sw := &reports.Sweep{Scenario: pl.s.Name, BaseSeed: pl.Seed, Seeds: pl.Seeds, Params: pl.params, References: pl.lines}
	for i, vals := range pl.combos {
		name := fmt.Sprintf("point-%03d.yaml", i)
		file := filepath.Join(d.Path(), "points", name)
		text, err := pl.Points[i].Marshal()
		if err != nil {
			return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
		}
		header := fmt.Sprintf("# sweep of %s, point %d: %s\n", pl.s.Name, i, pointWords(pl.params, vals))
		if err := pd.WriteFile(name, append([]byte(header), text...)); err != nil {
			return badInput("--out: %v", err)
		}
		rel, _ := filepath.Rel(d.Path(), file)
		pt := reports.SweepPoint{Values: vals, File: rel}
		first := -1
		for r := 0; r < pl.Seeds; r++ {
			res := verdicts[i*pl.Seeds+r]
			pt.Counts.Add(res.Lock, res.Resource, res.Liveness)
			if first < 0 && res.Violated() {
				first = r
			}
		}
		if first < 0 {
			first = 0
		}
		pt.Replay = fmt.Sprintf("simrun run %s --seed %d", shell.Quote(file), pl.RunSeed(i*pl.Seeds+first))
		sw.Points = append(sw.Points, pt)
	}
	// Issue 18: a second sweep with fewer points left point files of the
	// first.
	if err := pd.RemoveStale("point-*.yaml"); err != nil {
		return badInput("--out: %v", err)
	}
	img, err := reports.SweepImage(sw)
	if err != nil {
		return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
	}
	files := map[string][]byte{"sweep.png": img.PNG, "sweep.svg": img.SVG, "sweep.csv": sw.CSV()}
	for _, name := range []string{"sweep.png", "sweep.svg", "sweep.csv"} {
		if err := d.WriteFile(name, files[name]); err != nil {
			return badInput("--out: %v", err)
		}
	}
	if err := campaign.WriteManifest(d, m, pl.baseYAML, fuzz.VerdictRecord{Verdicts: fuzz.EncodeVerdicts(verdicts)}); err != nil {
		return badInput("--out: %v", err)
	}
	printSweep(stdout, sw, d.Path())
	return nil
}

// mergeSweep joins sweep shards (simrun merge).
func mergeSweep(stdout, stderr io.Writer, dirs []string, ms []*fuzz.Manifest, f mergeFlags) error {
	id := ms[0].Identity
	s, _, err := readBase(dirs[0], id)
	if err != nil {
		return err
	}
	var specs, labels, refs []string
	seeds := 0
	for _, p := range id.Params {
		switch k, v, _ := strings.Cut(p, "="); k {
		case "param":
			specs = append(specs, v)
		case "label":
			labels = append(labels, v)
		case "reference":
			refs = append(refs, v)
		case "seeds":
			seeds, _ = strconv.Atoi(v)
		}
	}
	if seeds < 1 || len(specs) == 0 {
		return badInput("%s: the sweep's parameters %q lack param= or seeds=", filepath.Join(dirs[0], fuzz.ManifestFile), id.Params)
	}
	pl, err := planSweep(s, specs, labels, refs, seeds, id.Seed)
	if err != nil {
		return err
	}
	if pl.Total() != id.Total || fuzz.Hash(pl.baseYAML) != id.BaseHash {
		return badInput("%s: the sweep planned again does not match its manifest (%d runs, manifest %d)", dirs[0], pl.Total(), id.Total)
	}
	verdicts, err := campaign.JoinVerdicts(dirs, ms)
	if err != nil {
		return err
	}
	d, err := campaign.ClaimOut("--out", f.out, id, fuzz.Whole, true)
	if err != nil {
		return withCode(exitBadInput, err)
	}
	defer d.Close()
	fmt.Fprintf(stderr, "merged %d shards of sweep %s: %d runs\n", len(dirs), s.Name, len(verdicts))
	return writeSweep(stdout, d, pl, campaign.WholeManifest(id), verdicts)
}

func pointWords(params []reports.SweepParam, vals []string) string {
	var w []string
	for i, v := range vals {
		w = append(w, params[i].Path+"="+v)
	}
	return strings.Join(w, ", ")
}

func printSweep(w io.Writer, sw *reports.Sweep, dir string) {
	fmt.Fprintf(w, "sweep of %s: %d points, %d seeds each (base seed %d)\n\n", sw.Scenario, len(sw.Points), sw.Seeds, sw.BaseSeed)
	rate := func(c reports.Counts, v reports.Verdict) string {
		p, lo, hi := c.Rate(v)
		if math.IsNaN(p) {
			return "-"
		}
		return fmt.Sprintf("%.2f [%.2f,%.2f]", p, lo, hi)
	}
	for i, pt := range sw.Points {
		fmt.Fprintf(w, "%3d  %-30s lock %-18s resource %-18s liveness %-18s\n", i, pointWords(sw.Params, pt.Values),
			rate(pt.Counts, reports.LockSafety), rate(pt.Counts, reports.ResourceSafety), rate(pt.Counts, reports.Liveness))
		fmt.Fprintf(w, "     replay: %s\n", pt.Replay)
	}
	fmt.Fprintf(w, "\nwrote %s (sweep.png, sweep.svg, sweep.csv, points/)\n", dir)
}
