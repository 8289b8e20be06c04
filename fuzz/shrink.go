package fuzz

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// ShrinkOptions tune Shrink.
type ShrinkOptions struct {
	// Kind is the property that must stay violated (a checker violation
	// kind, see Properties).
	Kind string
	// MaxRuns bounds the candidate runs (DefaultShrinkRuns when 0); the
	// result is the smallest schedule found by then.
	MaxRuns int
	// CheckTimeout bounds each porcupine check (scenarios.Options).
	CheckTimeout time.Duration
	// Run, when set, runs each candidate instead of scenarios.Run (package
	// usercode shrinks schedules against user code through it).
	Run func(s *scenarios.Scenario, seed uint64) (*scenarios.Outcome, error)
}

// run runs a candidate.
func (opt ShrinkOptions) run(s *scenarios.Scenario, seed uint64) (*scenarios.Outcome, error) {
	if opt.Run != nil {
		return opt.Run(s, seed)
	}
	return scenarios.Run(s, seed, scenarios.Options{CheckTimeout: opt.CheckTimeout})
}

// DefaultShrinkRuns bounds a shrink's candidate runs by default. locksim's
// choice: an eight-fault schedule needs a few hundred.
const DefaultShrinkRuns = 3000

// ShrinkResult is a shrunk scenario and what shrinking changed.
type ShrinkResult struct {
	// Scenario is the input with the minimal schedule and duration (its
	// expect block unchanged).
	Scenario *scenarios.Scenario
	Seed     uint64
	Kind     string
	// Before and After are the schedules, DurationBefore and DurationAfter
	// the run lengths.
	Before, After                 []faults.Spec
	DurationBefore, DurationAfter time.Duration
	// Removed describes the faults removed, Changed the faults simplified
	// ("was ..., now ..."), each naming the fault's index in Before.
	Removed, Changed []string
	// Runs is the number of candidate runs; Exhausted is true when
	// MaxRuns stopped the search before no single change was left.
	Runs      int
	Exhausted bool
	// Outcome is the minimal scenario's run (without trace).
	Outcome *scenarios.Outcome
}

// Summary says in one line what shrinking did.
func (r *ShrinkResult) Summary() string {
	s := fmt.Sprintf("shrunk from %d faults to %d", len(r.Before), len(r.After))
	if r.DurationAfter != r.DurationBefore {
		s += fmt.Sprintf(", duration %s to %s", r.DurationBefore, r.DurationAfter)
	}
	s += fmt.Sprintf(" (%d candidate runs", r.Runs)
	if r.Exhausted {
		s += ", stopped at the run budget"
	}
	return s + ")"
}

// Header returns comment lines describing the shrink, for the file.
func (r *ShrinkResult) Header() []string {
	out := []string{fmt.Sprintf("%s, keeping %s violated at seed %d.", r.Summary(), r.Kind, r.Seed)}
	for _, s := range r.Removed {
		out = append(out, "removed "+s)
	}
	for _, s := range r.Changed {
		out = append(out, "changed "+s)
	}
	return out
}

// ShrinkTarget runs s once with seed, as a shrink runs its candidates
// (opt), and chooses the property a shrink must keep violated
// (TargetKind). An error running it is returned as is; a run that
// violates nothing worth keeping is a *BadTarget.
func ShrinkTarget(s *scenarios.Scenario, seed uint64, opt ShrinkOptions) (string, error) {
	o, err := opt.run(s, seed)
	if err != nil {
		return "", err
	}
	kind, err := TargetKind(s, o)
	if err != nil {
		return "", &BadTarget{err}
	}
	return kind, nil
}

// BadTarget is ShrinkTarget's error for a run with nothing to shrink.
type BadTarget struct{ Err error }

func (e *BadTarget) Error() string { return e.Err.Error() }
func (e *BadTarget) Unwrap() error { return e.Err }

// TargetKind chooses the property a shrink of s must keep violated, given
// its run o: a property the scenario expects to hold but o violates (the
// mismatch a user wants explained); else a property it expects violated and
// o violates (a fuzz finding); else, when it expects nothing, the first
// property o violates. It fails when o violates nothing worth keeping.
func TargetKind(s *scenarios.Scenario, o *scenarios.Outcome) (string, error) {
	for _, p := range Properties() {
		if expected(s.Expect, p) == checker.Holds && Verdict(o, p) == checker.Violated {
			return p, nil
		}
	}
	for _, p := range Properties() {
		if expected(s.Expect, p) == checker.Violated && Verdict(o, p) == checker.Violated {
			return p, nil
		}
	}
	none := true
	for _, p := range Properties() {
		if expected(s.Expect, p) != "" {
			none = false
		}
	}
	if none {
		for _, p := range Properties() {
			if Verdict(o, p) == checker.Violated {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("the run at seed %d violates nothing to shrink (%s; expected: %s)", o.Seed, verdictsText(o.Verdicts), expectText(s.Expect))
}

func expectText(e scenarios.Expect) string {
	var parts []string
	for _, p := range Properties() {
		if v := expected(e, p); v != "" {
			parts = append(parts, expectKey(p)+" "+string(v))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// item is a fault of the schedule being shrunk, with its index in the
// original schedule.
type item struct {
	orig int
	spec faults.Spec
}

type shrinker struct {
	base     *scenarios.Scenario
	seed     uint64
	opt      ShrinkOptions
	runs     int
	rejected map[string]bool
	// current state and its outcome
	items []item
	dur   time.Duration
	last  *scenarios.Outcome
}

// Shrink reduces s's fault schedule and duration while its run at seed
// keeps violating opt.Kind: delta debugging (remove chunks of faults, then
// single faults), then simplifying each fault (fewer processes in a
// partition, a process crash instead of a power loss, the first trigger
// instead of the Nth, halved pauses, jumps, delays and counts, times moved
// to 0 or halved, durations rounded to fewer digits), then a shorter run;
// repeated until no single change keeps the violation or MaxRuns is
// reached. Every candidate goes through scenario validation; invalid ones
// are skipped.
func Shrink(s *scenarios.Scenario, seed uint64, opt ShrinkOptions) (*ShrinkResult, error) {
	if !contains(Properties(), opt.Kind) {
		return nil, fmt.Errorf("unknown property %q (allowed: %s)", opt.Kind, strings.Join(Properties(), ", "))
	}
	if opt.MaxRuns <= 0 {
		opt.MaxRuns = DefaultShrinkRuns
	}
	sh := &shrinker{base: s, seed: seed, opt: opt, rejected: map[string]bool{}, dur: s.Duration}
	for i, f := range s.Faults {
		sh.items = append(sh.items, item{orig: i, spec: f})
	}
	o, err := opt.run(s, seed)
	if err != nil {
		return nil, err
	}
	sh.runs++
	if Verdict(o, opt.Kind) != checker.Violated {
		return nil, fmt.Errorf("the run at seed %d does not violate %s (%s): nothing to shrink", seed, opt.Kind, verdictsText(o.Verdicts))
	}
	sh.last = o
	for {
		before := sh.key(sh.items, sh.dur)
		sh.removeFaults()
		sh.simplifyFaults()
		sh.shortenRun()
		if sh.key(sh.items, sh.dur) == before || sh.exhausted() {
			break
		}
	}
	res := &ShrinkResult{
		Seed: seed, Kind: opt.Kind, Before: s.Faults, After: sh.specs(sh.items),
		DurationBefore: s.Duration, DurationAfter: sh.dur,
		Runs: sh.runs, Exhausted: sh.exhausted(), Outcome: sh.last,
	}
	res.Scenario, err = sh.build(sh.items, sh.dur)
	if err != nil {
		return nil, fmt.Errorf("internal error: the shrunk scenario does not validate: %v", err)
	}
	kept := map[int]faults.Spec{}
	for _, it := range sh.items {
		kept[it.orig] = it.spec
	}
	for i, f := range s.Faults {
		now, ok := kept[i]
		switch {
		case !ok:
			res.Removed = append(res.Removed, fmt.Sprintf("faults[%d]: %s", i, f))
		case now.String() != f.String():
			res.Changed = append(res.Changed, fmt.Sprintf("faults[%d]: was %s, now %s", i, f, now))
		}
	}
	return res, nil
}

func (sh *shrinker) exhausted() bool { return sh.runs >= sh.opt.MaxRuns }

func (sh *shrinker) specs(items []item) []faults.Spec {
	out := make([]faults.Spec, len(items))
	for i, it := range items {
		out[i] = it.spec
	}
	return out
}

func (sh *shrinker) key(items []item, dur time.Duration) string {
	var b strings.Builder
	b.WriteString(dur.String())
	for _, it := range items {
		b.WriteString("|")
		b.WriteString(it.spec.String())
		// Spec.String shows an enum's default for ""; the key tells them
		// apart.
		if d, ok := faults.Lookup(it.spec.Kind); ok {
			for _, fd := range d.Fields {
				if fd.Type == faults.FieldEnum {
					b.WriteString(" " + *fd.Ptr(&it.spec).(*string))
				}
			}
		}
	}
	return b.String()
}

func (sh *shrinker) build(items []item, dur time.Duration) (*scenarios.Scenario, error) {
	s, err := sh.base.WithFaults(sh.specs(items))
	if err != nil {
		return nil, err
	}
	if dur != sh.base.Duration {
		return withDuration(s, dur.String())
	}
	return s, nil
}

// try runs a candidate and adopts it when the violation stays.
func (sh *shrinker) try(items []item, dur time.Duration) bool {
	if sh.exhausted() {
		return false
	}
	k := sh.key(items, dur)
	if sh.rejected[k] {
		return false
	}
	s, err := sh.build(items, dur)
	if err != nil {
		sh.rejected[k] = true
		return false
	}
	sh.runs++
	o, err := sh.opt.run(s, sh.seed)
	if err != nil || Verdict(o, sh.opt.Kind) != checker.Violated {
		sh.rejected[k] = true
		return false
	}
	sh.items, sh.dur, sh.last = items, dur, o
	return true
}

// removeFaults is ddmin's complement step: split the schedule into n
// chunks and drop the first chunk whose removal keeps the violation;
// refine to single faults when none can go.
func (sh *shrinker) removeFaults() {
	n := 2
	for len(sh.items) > 0 && !sh.exhausted() {
		if n > len(sh.items) {
			n = len(sh.items)
		}
		reduced := false
		for c := 0; c < n; c++ {
			lo, hi := c*len(sh.items)/n, (c+1)*len(sh.items)/n
			cand := append(append([]item(nil), sh.items[:lo]...), sh.items[hi:]...)
			if sh.try(cand, sh.dur) {
				reduced = true
				break
			}
		}
		switch {
		case reduced:
			if n > 2 {
				n--
			}
		case n >= len(sh.items):
			return
		default:
			n *= 2
		}
	}
}

// simplifyFaults tries each fault's simpler variants, keeping the first
// that preserves the violation, until none does.
func (sh *shrinker) simplifyFaults() {
	for i := 0; i < len(sh.items) && !sh.exhausted(); i++ {
		for changed := true; changed && !sh.exhausted(); {
			changed = false
			for _, v := range variants(sh.items[i].spec) {
				cand := append([]item(nil), sh.items...)
				cand[i] = item{orig: sh.items[i].orig, spec: v}
				if sh.try(cand, sh.dur) {
					changed = true
					break
				}
			}
		}
	}
}

// shortenRun tries to end the run a second after the last violation of the
// kind ends, then halves the duration.
func (sh *shrinker) shortenRun() {
	for !sh.exhausted() {
		var cands []time.Duration
		var end sim.Time
		for _, v := range sh.last.Violations {
			if v.Kind != sh.opt.Kind {
				continue
			}
			for _, w := range v.Windows {
				if w.End > end && w.End < sim.Never {
					end = w.End
				}
			}
		}
		if end > 0 {
			d := (time.Duration(end)/time.Second + 2) * time.Second
			if d < sh.dur {
				cands = append(cands, d)
			}
		}
		if half := sh.dur / 2 / time.Second * time.Second; half >= time.Second && half < sh.dur {
			cands = append(cands, half)
		}
		done := true
		for _, d := range cands {
			if sh.try(sh.items, d) {
				done = false
				break
			}
		}
		if done {
			return
		}
	}
}

// variants returns simpler versions of a fault, structural changes first,
// then smaller sizes and earlier times.
func variants(s faults.Spec) []faults.Spec {
	var out []faults.Spec
	add := func(f func(c *faults.Spec)) {
		c := s.Clone()
		f(&c)
		out = append(out, c)
	}
	instant := false
	if d, ok := faults.Lookup(s.Kind); ok {
		for _, fd := range d.Fields {
			fieldVariants(s, fd, add)
		}
		// An order choice names a tie at its instant: at another, it
		// would name nothing (the shrinker may still drop it).
		instant = d.Instant
	}
	switch {
	case s.On != nil:
		for _, n := range intVariants(s.On.Count) {
			n := n
			add(func(c *faults.Spec) { c.On.Count = n })
		}
		if s.After != (sim.Range{}) {
			for _, r := range rangeVariants(s.After, 0, true) {
				r := r
				add(func(c *faults.Spec) { c.After = r })
			}
		}
	case s.At != nil && !instant:
		for _, r := range rangeVariants(*s.At, 0, true) {
			r := r
			add(func(c *faults.Spec) { c.At = &r })
		}
	}
	return out
}

// fieldVariants adds the simpler versions of one field of s, by the type
// its kind declares (faults' kind table): groups lose a group (when more
// than two) or a member, an enum returns to its default, numbers and
// durations get smaller or rounder, never below the field's ShrinkMin.
func fieldVariants(s faults.Spec, fd faults.Field, add func(func(c *faults.Spec))) {
	switch p := fd.Ptr(&s).(type) {
	case *[][]string:
		groups := *p
		if len(groups) > 2 {
			for gi := range groups {
				gi := gi
				add(func(c *faults.Spec) {
					g := fd.Ptr(c).(*[][]string)
					*g = append((*g)[:gi], (*g)[gi+1:]...)
				})
			}
		}
		for gi, g := range groups {
			if len(g) < 2 {
				continue
			}
			for mi := range g {
				gi, mi := gi, mi
				add(func(c *faults.Spec) {
					g := fd.Ptr(c).(*[][]string)
					(*g)[gi] = append((*g)[gi][:mi], (*g)[gi][mi+1:]...)
				})
			}
		}
	case *string:
		if fd.Type == faults.FieldEnum && *p != "" && *p != fd.Default {
			add(func(c *faults.Spec) { *fd.Ptr(c).(*string) = "" })
		}
	case **sim.Range:
		if *p != nil {
			for _, r := range rangeVariants(**p, fd.ShrinkMin, fd.ShrinkZero) {
				r := r
				add(func(c *faults.Spec) { *fd.Ptr(c).(**sim.Range) = &r })
			}
		}
	case *sim.Range:
		for _, r := range rangeVariants(*p, fd.ShrinkMin, fd.ShrinkZero) {
			r := r
			add(func(c *faults.Spec) { *fd.Ptr(c).(*sim.Range) = r })
		}
	case *int:
		for _, n := range intVariants(*p) {
			n := n
			add(func(c *faults.Spec) { *fd.Ptr(c).(*int) = n })
		}
	case *time.Duration:
		for _, d := range durVariants(*p, fd.ShrinkMin, fd.ShrinkZero) {
			d := d
			add(func(c *faults.Spec) { *fd.Ptr(c).(*time.Duration) = d })
		}
	case *float64:
		for _, r := range rateVariants(*p) {
			r := r
			add(func(c *faults.Spec) { *fd.Ptr(c).(*float64) = r })
		}
	}
}

// intVariants: 1, then half (counts are at least 1).
func intVariants(n int) []int {
	var out []int
	if n > 1 {
		out = append(out, 1)
	}
	if h := n / 2; h > 1 {
		out = append(out, h)
	}
	return out
}

// rangeVariants: a range becomes one of its ends; a fixed value gets
// durVariants.
func rangeVariants(r sim.Range, min time.Duration, zeroOK bool) []sim.Range {
	if r.Lo != r.Hi {
		return []sim.Range{sim.Fixed(r.Lo), sim.Fixed(r.Hi)}
	}
	var out []sim.Range
	for _, d := range durVariants(r.Lo, min, zeroOK) {
		out = append(out, sim.Fixed(d))
	}
	return out
}

// durVariants returns smaller or rounder versions of a (signed) duration:
// zero when allowed, half, and the value rounded to one and two
// significant digits when that drops digits. A value never goes below min
// in magnitude (nor to zero unless zeroOK).
func durVariants(d, min time.Duration, zeroOK bool) []time.Duration {
	var out []time.Duration
	ok := func(c time.Duration) bool {
		if c == d {
			return false
		}
		if c == 0 {
			return zeroOK
		}
		return abs(c) >= min
	}
	if ok(0) {
		out = append(out, 0)
	}
	half := d / 2
	if abs(half) >= time.Millisecond {
		half = half.Round(time.Millisecond)
	}
	if ok(half) {
		out = append(out, half)
	}
	for _, k := range []int{1, 2} {
		if r := roundSig(d, k); sigDigits(r) < sigDigits(d) && ok(r) {
			out = append(out, r)
		}
	}
	return out
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// sigDigits counts a duration's significant decimal digits in nanoseconds
// (12.3s has 3).
func sigDigits(d time.Duration) int {
	a := uint64(abs(d))
	if a == 0 {
		return 0
	}
	for a%10 == 0 {
		a /= 10
	}
	return len(strconv.FormatUint(a, 10))
}

// roundSig rounds a duration to k significant digits (half away from zero).
func roundSig(d time.Duration, k int) time.Duration {
	a := uint64(abs(d))
	n := len(strconv.FormatUint(a, 10))
	if n <= k {
		return d
	}
	p := uint64(math.Pow10(n - k))
	r := time.Duration((a + p/2) / p * p)
	if d < 0 {
		return -r
	}
	return r
}

// rateVariants halves a drift rate and rounds it to one significant digit,
// at a resolution of 0.001 and never to zero.
func rateVariants(r float64) []float64 {
	var out []float64
	add := func(c float64) {
		c = math.Round(c*1000) / 1000
		if c != 0 && c != r && !containsF(out, c) {
			out = append(out, c)
		}
	}
	add(r / 2)
	if r != 0 {
		p := math.Pow10(int(math.Floor(math.Log10(math.Abs(r)))))
		add(math.Round(r/p) * p)
	}
	return out
}

func containsF(list []float64, f float64) bool {
	for _, x := range list {
		if x == f {
			return true
		}
	}
	return false
}
