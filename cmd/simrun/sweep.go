package main

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/scenarios"
)

type sweepFlags struct {
	params  []string
	seeds   int
	seed    uint64
	seedSet bool
	workers int
	outDir  string
	quiet   bool
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

Seeds: run r of point p uses the seed made of the first 8 bytes (big endian)
of SHA-256("locksim-sweep <base> <p> <r>"), base being --seed (default the
scenario's seed). Results are collected by index, so they do not depend on
--workers.`,
		Args: exactArgs(1, "NAME|FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.seedSet = cmd.Flags().Changed("seed")
			return sweep(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], f)
		},
	}
	cmd.Flags().StringArrayVar(&f.params, "param", nil, "PATH=VALUES to vary (once or twice)")
	cmd.Flags().IntVar(&f.seeds, "seeds", 20, "runs (seeds) per point")
	cmd.Flags().Uint64Var(&f.seed, "seed", 0, "base seed (default: the scenario's seed)")
	cmd.Flags().IntVar(&f.workers, "workers", runtime.NumCPU(), "parallel runs")
	cmd.Flags().StringVar(&f.outDir, "out", "", "folder for the plot, the CSV and the point scenarios (required)")
	cmd.Flags().BoolVar(&f.quiet, "quiet", false, "no progress bar")
	return cmd
}

// sweepSeed derives the seed of run r of point p from the base seed: the
// first 8 bytes, big endian, of SHA-256("locksim-sweep <base> <p> <r>").
func sweepSeed(base uint64, p, r int) uint64 {
	h := sha256.Sum256([]byte(fmt.Sprintf("locksim-sweep %d %d %d", base, p, r)))
	return binary.BigEndian.Uint64(h[:8])
}

var rangeRE = regexp.MustCompile(`^(.+?)\.\.(.+)/(\d+)$`)

// parseSweepParam parses PATH=VALUES (see the command's help).
func parseSweepParam(spec string) (reports.SweepParam, error) {
	path, values, ok := strings.Cut(spec, "=")
	path = strings.TrimSpace(path)
	if !ok || path == "" || strings.TrimSpace(values) == "" {
		return reports.SweepParam{}, fmt.Errorf("--param %q: want PATH=VALUES, e.g. faults[1].by=0s..40s/9 or clients[0].lock.ttl=2s,5s,10s", spec)
	}
	p := reports.SweepParam{Path: path}
	values = strings.TrimSpace(values)
	if m := rangeRE.FindStringSubmatch(values); m != nil {
		n, err := strconv.Atoi(m[3])
		if err != nil || n < 1 || n > 1000 {
			return p, fmt.Errorf("--param %s: the count after / must be from 1 to 1000, not %q", spec, m[3])
		}
		if err := expandRange(&p, strings.TrimSpace(m[1]), strings.TrimSpace(m[2]), n); err != nil {
			return p, fmt.Errorf("--param %s: %v", spec, err)
		}
		return p, nil
	}
	for _, v := range strings.Split(values, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			return p, fmt.Errorf("--param %s: empty value in the list", spec)
		}
		p.Values = append(p.Values, v)
	}
	// Numeric positions: all durations, or all numbers.
	var xs []float64
	unit := "s"
	for _, v := range p.Values {
		d, err := scenarios.ParseDuration(v)
		if err != nil {
			xs = nil
			break
		}
		xs = append(xs, d.Seconds())
	}
	if xs == nil {
		unit = ""
		for _, v := range p.Values {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				xs = nil
				break
			}
			xs = append(xs, x)
		}
	} else if !hasUnit(p.Values) {
		unit = "" // all bare numbers that happen to be zero: numbers
	}
	p.X, p.Unit = xs, unit
	return p, nil
}

func hasUnit(vs []string) bool {
	for _, v := range vs {
		if strings.IndexFunc(v, func(r rune) bool { return r >= 'a' && r <= 'z' || r == 'µ' }) >= 0 {
			return true
		}
	}
	return false
}

// expandRange fills p with n evenly spaced values from lo to hi.
func expandRange(p *reports.SweepParam, lo, hi string, n int) error {
	dlo, errLo := scenarios.ParseDuration(lo)
	dhi, errHi := scenarios.ParseDuration(hi)
	if errLo == nil && errHi == nil && hasUnit([]string{lo, hi}) {
		plus := strings.HasPrefix(lo, "+") || strings.HasPrefix(hi, "+")
		for i := 0; i < n; i++ {
			d := dlo
			if n > 1 {
				// lo + (hi-lo)*i/(n-1), exactly, rounded to the nanosecond.
				num := new(big.Int).Mul(big.NewInt(int64(dhi)-int64(dlo)), big.NewInt(int64(i)))
				q := new(big.Rat).SetFrac(num, big.NewInt(int64(n-1)))
				f, _ := q.Float64()
				d = dlo + time.Duration(math.Round(f))
			}
			s := d.String()
			if plus && d > 0 {
				s = "+" + s
			}
			p.Values = append(p.Values, s)
			p.X = append(p.X, d.Seconds())
		}
		p.Unit = "s"
		return nil
	}
	flo, err1 := strconv.ParseFloat(lo, 64)
	fhi, err2 := strconv.ParseFloat(hi, 64)
	if err1 != nil || err2 != nil {
		switch {
		case errLo != nil && err1 != nil:
			return fmt.Errorf("%q is neither a duration (10s, +30s) nor a number (0.01)", lo)
		case errHi != nil && err2 != nil:
			return fmt.Errorf("%q is neither a duration (10s, +30s) nor a number (0.01)", hi)
		}
		return fmt.Errorf("%q and %q mix a duration with a number: give both ends a unit, or neither", lo, hi)
	}
	for i := 0; i < n; i++ {
		x := flo
		if n > 1 {
			x = flo + (fhi-flo)*float64(i)/float64(n-1)
		}
		// 12 significant digits: 0.1*3 prints as 0.3, not 0.30000000000000004.
		x, _ = strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
		p.Values = append(p.Values, strconv.FormatFloat(x, 'g', -1, 64))
		p.X = append(p.X, x)
	}
	return nil
}

// runResult is what a sweep or the matrix keeps of one run.
type runResult struct {
	lock, resource, liveness checker.Verdict
}

func (r runResult) violated() bool {
	return r.lock == checker.Violated || r.resource == checker.Violated || r.liveness == checker.Violated
}

// runAll runs job(i) for i in [0, n) on workers goroutines and returns the
// results by index (never by completion order). The first error stops the
// remaining jobs. tick is called after each job (progress).
func runAll(n, workers int, job func(i int) (runResult, error), tick func()) ([]runResult, error) {
	if workers < 1 {
		workers = 1
	}
	out := make([]runResult, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := false
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = job(i)
				mu.Lock()
				if errs[i] != nil {
					failed = true
				}
				if tick != nil {
					tick()
				}
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < n; i++ {
		mu.Lock()
		stop := failed
		mu.Unlock()
		if stop {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// progressBar draws a progress bar on a terminal, and nothing elsewhere.
type progressBar struct {
	w        io.Writer
	total    int
	done     int
	label    string
	lastDraw int
}

// newProgressBar returns a progress bar on w when w is a terminal and quiet is
// false (golang.org/x/term is not a dependency: a character device is a
// terminal here).
func newProgressBar(w io.Writer, total int, label string, quiet bool) *progressBar {
	if quiet {
		return nil
	}
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return &progressBar{w: w, total: total, label: label, lastDraw: -1}
}

func (p *progressBar) tick() {
	if p == nil {
		return
	}
	p.done++
	pct := 100 * p.done / max(p.total, 1)
	if pct == p.lastDraw && p.done != p.total {
		return
	}
	p.lastDraw = pct
	const width = 40
	fill := width * p.done / max(p.total, 1)
	fmt.Fprintf(p.w, "\r%s [%s%s] %3d%% %d/%d", p.label, strings.Repeat("#", fill), strings.Repeat(".", width-fill), pct, p.done, p.total)
	if p.done == p.total {
		fmt.Fprintln(p.w)
	}
}

func (p *progressBar) tickFunc() func() {
	if p == nil {
		return nil
	}
	return p.tick
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
	s, err := loadScenario(arg)
	if err != nil {
		return err
	}
	var params []reports.SweepParam
	for _, spec := range f.params {
		p, err := parseSweepParam(spec)
		if err != nil {
			return withCode(exitBadInput, err)
		}
		for _, q := range params {
			if q.Path == p.Path {
				return badInput("--param %s: %s is already swept by another --param", spec, p.Path)
			}
		}
		// Each value alone, so that an error names its parameter.
		for _, v := range p.Values {
			if _, err := s.With([][2]string{{p.Path, v}}); err != nil {
				return badInput("--param %s: value %q: %v", spec, v, err)
			}
		}
		params = append(params, p)
	}
	// The points, each validated as a whole.
	var combos [][]string
	if len(params) == 1 {
		for _, v := range params[0].Values {
			combos = append(combos, []string{v})
		}
	} else {
		for _, a := range params[0].Values {
			for _, b := range params[1].Values {
				combos = append(combos, []string{a, b})
			}
		}
	}
	base := s.Seed
	if f.seedSet {
		base = f.seed
	}
	if err := os.MkdirAll(filepath.Join(f.outDir, "points"), 0o755); err != nil {
		return badInput("--out: %v", err)
	}
	sw := &reports.Sweep{Scenario: s.Name, BaseSeed: base, Seeds: f.seeds, Params: params}
	pointScen := make([]*scenarios.Scenario, len(combos))
	for i, vals := range combos {
		var set [][2]string
		for j, v := range vals {
			set = append(set, [2]string{params[j].Path, v})
		}
		ps, err := s.With(set)
		if err != nil {
			return badInput("--param %s: values %s together: %v", strings.Join(f.params, " --param "), strings.Join(vals, ", "), err)
		}
		file := filepath.Join(f.outDir, "points", fmt.Sprintf("point-%03d.yaml", i))
		text, err := ps.Marshal()
		if err != nil {
			return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
		}
		header := fmt.Sprintf("# sweep of %s, point %d: %s\n", s.Name, i, pointWords(params, vals))
		if err := os.WriteFile(file, append([]byte(header), text...), 0o644); err != nil {
			return badInput("--out: %v", err)
		}
		ps.File = file
		pointScen[i] = ps
		rel, _ := filepath.Rel(f.outDir, file)
		sw.Points = append(sw.Points, reports.SweepPoint{Values: vals, File: rel})
	}

	n := len(combos) * f.seeds
	bar := newProgressBar(stderr, n, "sweep", f.quiet)
	results, err := runAll(n, f.workers, func(i int) (runResult, error) {
		p, r := i/f.seeds, i%f.seeds
		o, err := scenarios.Run(pointScen[p], sweepSeed(base, p, r), scenarios.Options{})
		if err != nil {
			return runResult{}, fmt.Errorf("point %d seed %d: %w", p, sweepSeed(base, p, r), err)
		}
		return runResult{o.LockSafety, o.ResourceSafety, o.Liveness}, nil
	}, bar.tickFunc())
	if err != nil {
		return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
	}
	for p := range sw.Points {
		pt := &sw.Points[p]
		first := -1
		for r := 0; r < f.seeds; r++ {
			res := results[p*f.seeds+r]
			pt.Counts.Add(res.lock, res.resource, res.liveness)
			if first < 0 && res.violated() {
				first = r
			}
		}
		if first < 0 {
			first = 0
		}
		pt.Replay = fmt.Sprintf("simrun run %s --seed %d", shellQuote(pointScen[p].File), sweepSeed(base, p, first))
	}

	img, err := reports.SweepImage(sw)
	if err != nil {
		return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
	}
	files := map[string][]byte{"sweep.png": img.PNG, "sweep.svg": img.SVG, "sweep.csv": sw.CSV()}
	for _, name := range []string{"sweep.png", "sweep.svg", "sweep.csv"} {
		if err := os.WriteFile(filepath.Join(f.outDir, name), files[name], 0o644); err != nil {
			return badInput("--out: %v", err)
		}
	}
	printSweep(stdout, sw, f.outDir)
	return nil
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
