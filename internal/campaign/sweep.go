package campaign

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/internal/exit"
	"github.com/locksim/locksim/internal/outdir"
	"github.com/locksim/locksim/internal/shell"
	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// SweepPlan is a sweep: its base, parameters, points and seeds, from
// which every run and every output follows.
type SweepPlan struct {
	*fuzz.Sweep
	s        *scenarios.Scenario
	BaseYAML []byte
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
func (pl *SweepPlan) annotate() error {
	swept := make([]string, len(pl.params))
	for i, p := range pl.params {
		swept[i] = p.Path
	}
	for _, spec := range pl.labels {
		path, text, ok := strings.Cut(spec, "=")
		path, text = strings.TrimSpace(path), strings.TrimSpace(text)
		if !ok || path == "" || text == "" {
			return exit.BadInputf("--label %q: want PATH=TEXT, e.g. 'faults[1].by=clock jump of C'", spec)
		}
		found := false
		for i := range pl.params {
			if pl.params[i].Path == path {
				pl.params[i].Label, found = text, true
			}
		}
		if !found {
			return exit.BadInputf("--label %q: %s is not swept (swept: %s)", spec, path, strings.Join(swept, ", "))
		}
	}
	for _, spec := range pl.refs {
		value, text, ok := strings.Cut(spec, "=")
		value, text = strings.TrimSpace(value), strings.TrimSpace(text)
		if !ok || value == "" || text == "" {
			return exit.BadInputf("--reference %q: want VALUE=TEXT, e.g. '5s=ttl - hold'", spec)
		}
		if len(pl.params) != 1 || pl.params[0].X == nil {
			return exit.BadInputf("--reference %q: reference lines are drawn on a sweep of one numeric or duration parameter", spec)
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
			return exit.BadInputf("--reference %q: %q is not a value of %s: %v", spec, value, pl.params[0].Path, err)
		}
		pl.lines = append(pl.lines, reports.SweepReference{X: x, Label: text})
	}
	return nil
}

// PlanSweep parses the --param specs against s and builds the points;
// its errors carry exit code 2.
func PlanSweep(s *scenarios.Scenario, specs, labels, refs []string, seeds int, seed uint64) (*SweepPlan, error) {
	pl := &SweepPlan{s: s, specs: specs, labels: labels, refs: refs}
	for _, spec := range specs {
		p, err := reports.ParseSweepParam(spec)
		if err != nil {
			return nil, exit.With(exit.BadInput, err)
		}
		for _, q := range pl.params {
			if q.Path == p.Path {
				return nil, exit.BadInputf("--param %s: %s is already swept by another --param", spec, p.Path)
			}
		}
		// Each value alone, so that an error names its parameter.
		for _, v := range p.Values {
			if _, err := s.With([][2]string{{p.Path, v}}); err != nil {
				return nil, exit.BadInputf("--param %s: value %q: %v", spec, v, err)
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
			return nil, exit.BadInputf("--param %s: values %s together: %v", strings.Join(specs, " --param "), strings.Join(pl.combos[pe.Point], ", "), pe.Err)
		}
		return nil, exit.BadInputf("%v", err)
	}
	if pl.BaseYAML, err = fuzz.BaseBytes(s); err != nil {
		return nil, exit.With(exit.Inconclusive, fmt.Errorf("internal error: %w", err))
	}
	return pl, nil
}

func (pl *SweepPlan) Identity(version string) fuzz.Identity {
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
	return fuzz.Identity{Command: "sweep", Version: Version(version), Base: pl.s.Name, BaseHash: fuzz.Hash(pl.BaseYAML),
		Seed: pl.Seed, Total: pl.Total(), Params: params}
}

// WriteSweep writes a whole sweep's outputs into d (sweep without
// --shard, and simrun merge of sweep shards). An interrupted sweep
// (m.Interrupted, verdicts of fewer runs than the sweep's) writes the
// points whose seeds all ran. It writes points/point-NNN.yaml
// (removing point files of an earlier sweep), sweep.png, sweep.svg,
// sweep.csv, json and base.yaml, and prints the table.
func WriteSweep(stdout io.Writer, d *outdir.Dir, pl *SweepPlan, m *fuzz.Manifest, verdicts []fuzz.Verdicts) error {
	if err := d.Begin(); err != nil {
		return exit.BadInputf("--out: %v", err)
	}
	pd, err := outdir.Prepare(filepath.Join(d.Path(), "points"))
	if err != nil {
		return exit.BadInputf("--out: %v", err)
	}
	defer pd.Close()
	sw := &reports.Sweep{Scenario: pl.s.Name, BaseSeed: pl.Seed, Seeds: pl.Seeds, Params: pl.params, References: pl.lines}
	points := min(len(pl.combos), len(verdicts)/pl.Seeds)
	for i, vals := range pl.combos[:points] {
		name := fmt.Sprintf("point-%03d.yaml", i)
		file := filepath.Join(d.Path(), "points", name)
		text, err := pl.Points[i].Marshal()
		if err != nil {
			return exit.With(exit.Inconclusive, fmt.Errorf("internal error: %w", err))
		}
		header := fmt.Sprintf("# sweep of %s, point %d: %s\n", pl.s.Name, i, pointWords(pl.params, vals))
		if err := pd.WriteFile(name, append([]byte(header), text...)); err != nil {
			return exit.BadInputf("--out: %v", err)
		}
		rel, _ := filepath.Rel(d.Path(), file)
		pt := reports.SweepPoint{Values: vals, File: rel}
		first := -1
		for r := 0; r < pl.Seeds; r++ {
			res := verdicts[i*pl.Seeds+r]
			pt.Counts.Add(res.Lock, res.Resource, res.Liveness)
			if n := res.Numbers; n.Known {
				pt.Counts.Numbers.Add(n.Grants, n.LatencyP50, n.HasLatency, n.Unavailable)
			}
			if res.Violated() {
				if first < 0 {
					first = r
				}
				pt.Violating = append(pt.Violating, pl.RunSeed(i*pl.Seeds+r))
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
		return exit.BadInputf("--out: %v", err)
	}
	img, err := reports.SweepImage(sw)
	if err != nil {
		return exit.With(exit.Inconclusive, fmt.Errorf("internal error: %w", err))
	}
	files := map[string][]byte{"sweep.png": img.PNG, "sweep.svg": img.SVG, "sweep.csv": sw.CSV()}
	for _, name := range []string{"sweep.png", "sweep.svg", "sweep.csv"} {
		if err := d.WriteFile(name, files[name]); err != nil {
			return exit.BadInputf("--out: %v", err)
		}
	}
	if err := WriteManifest(d, m, pl.BaseYAML, fuzz.RecordOf(verdicts)); err != nil {
		return exit.BadInputf("--out: %v", err)
	}
	if err := d.Complete(); err != nil {
		return exit.BadInputf("--out: %v", err)
	}
	printSweep(stdout, sw, d.Path())
	if points < len(pl.combos) {
		fmt.Fprintf(stdout, "interrupted: %d of %d points written\n", points, len(pl.combos))
	}
	return nil
}

// SweepPointsDone is how many whole points the verdicts of a sweep's
// first runs make.
func (pl *SweepPlan) SweepPointsDone(runs int) int { return min(len(pl.combos), runs/pl.Seeds) }

// NumPoints is the number of the sweep's points.
func (pl *SweepPlan) NumPoints() int { return len(pl.combos) }

// maxSeedsListed bounds the violating seeds printed per point.
const maxSeedsListed = 20

// seedList lists seeds, the first max of them, and how many more.
func seedList(seeds []uint64, max int) string {
	var parts []string
	for i, s := range seeds {
		if i == max {
			parts = append(parts, fmt.Sprintf("and %d more", len(seeds)-max))
			break
		}
		parts = append(parts, fmt.Sprint(s))
	}
	return strings.Join(parts, ", ")
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
		if len(pt.Violating) > 0 {
			fmt.Fprintf(w, "     violating seeds: %s\n", seedList(pt.Violating, maxSeedsListed))
		}
	}
	fmt.Fprintf(w, "\nwrote %s (sweep.png, sweep.svg, sweep.csv, points/)\n", dir)
}

// ReplanSweep plans again the sweep of a campaign's manifest (simrun merge
// of sweep shards), from its parameters, and checks that it is the same
// sweep; dir names the first shard's folder in errors.
func ReplanSweep(s *scenarios.Scenario, id fuzz.Identity, dir string) (*SweepPlan, error) {
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
		return nil, exit.BadInputf("%s: the sweep's parameters %q lack param= or seeds=", filepath.Join(dir, fuzz.ManifestFile), id.Params)
	}
	pl, err := PlanSweep(s, specs, labels, refs, seeds, id.Seed)
	if err != nil {
		return nil, err
	}
	if pl.Total() != id.Total || fuzz.Hash(pl.BaseYAML) != id.BaseHash {
		return nil, exit.BadInputf("%s: the sweep planned again does not match its manifest (%d runs, manifest %d)", dir, pl.Total(), id.Total)
	}
	return pl, nil
}
