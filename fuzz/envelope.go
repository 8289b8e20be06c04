package fuzz

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// Envelope (simrun envelope, issue 27): the boundary value of a fault's
// parameter at which a checked property's verdict flips, over every
// placement of the exhaustive single-fault space. For each placement (a
// target and a moment, as explore places faults) it first runs the largest
// value of the range; where that violates, it bisects down to the smallest
// violating value at the resolution Step. The envelope is the smallest such
// value over all placements, printed with the schedule on each side.
//
// Assumption: at one placement the verdict is monotone in the parameter (a
// larger forward clock jump expires keys no later; a longer pause ends no
// earlier). Under it, a placement whose run at (best so far - Step) holds
// cannot lower the envelope and is skipped after one run.

// EnvelopeParams are the parameters envelope can bisect.
var EnvelopeParams = []string{"clock-jump.by", "pause.for"}

// EnvelopeConfig bounds an envelope search.
type EnvelopeConfig struct {
	Base    *scenarios.Scenario
	Param   string
	Lo, Hi  time.Duration
	Step    time.Duration
	Targets []string
	Checks  []string
}

// EnvelopeResult is the boundary found.
type EnvelopeResult struct {
	Param string
	// Found is false when no value of the range violates at any placement.
	Found bool
	// Value is the smallest violating value; Holds and Violates are the
	// schedules on each side of it (the same placement, Value - Step and
	// Value).
	Value           time.Duration
	Holds, Violates faults.Spec
	Kinds           []string // what Violates violated
	// Checks are the properties the search checked (violation kinds, as
	// simrun fuzz --check names them): a boundary says nothing of the
	// others.
	Checks     []string
	Env        []faults.Spec
	Placements int
	Runs       int
	Step       time.Duration
	Lo, Hi     time.Duration
}

// Envelope finds the boundary.
func Envelope(cfg EnvelopeConfig) (*EnvelopeResult, error) {
	kind, _, _ := strings.Cut(cfg.Param, ".")
	if !contains(EnvelopeParams, cfg.Param) {
		return nil, &BadBounds{fmt.Sprintf("--param: envelope cannot bisect %q (allowed: %s)", cfg.Param, strings.Join(EnvelopeParams, ", "))}
	}
	if cfg.Lo < 0 || cfg.Hi < 0 {
		// The envelope is the smallest magnitude that violates (a
		// longer pause, a larger forward jump); a negative bound was
		// replaced by the step and the range then called empty
		// ("1ms..-1s").
		return nil, &BadBounds{fmt.Sprintf("--range: %s..%s has a negative end: envelope searches %s from a positive value up (a backward clock jump is not searched)", cfg.Lo, cfg.Hi, cfg.Param)}
	}
	if cfg.Step <= 0 {
		cfg.Step = time.Millisecond
	}
	if cfg.Hi == 0 {
		cfg.Hi = 3 * WorldOf(cfg.Base).TTL
	}
	if cfg.Lo <= 0 {
		cfg.Lo = cfg.Step
	}
	if cfg.Lo >= cfg.Hi {
		return nil, &BadBounds{fmt.Sprintf("--range: %s..%s is empty", cfg.Lo, cfg.Hi)}
	}
	ec := ExploreConfig{Base: cfg.Base, Kinds: []string{kind}, Targets: cfg.Targets, Checks: cfg.Checks, Force: true}
	pl, err := PlanExplore(&ec)
	if err != nil {
		return nil, err
	}
	// The distinct placements, in target and time order.
	type place struct {
		node string
		at   time.Duration
	}
	seen := map[place]bool{}
	var places []place
	for _, c := range pl.Candidates {
		p := place{c.Spec.Node, c.Spec.At.Lo}
		if !seen[p] {
			seen[p] = true
			places = append(places, p)
		}
	}
	sort.SliceStable(places, func(i, j int) bool { return places[i].at < places[j].at })
	res := &EnvelopeResult{Param: cfg.Param, Env: pl.Env, Placements: len(places), Step: cfg.Step, Lo: cfg.Lo, Hi: cfg.Hi, Checks: ec.Checks}
	spec := func(p place, v time.Duration) faults.Spec {
		s := faults.Spec{Kind: kind, Node: p.node, At: &sim.Range{Lo: p.at, Hi: p.at}}
		if kind == faults.KindClockJump {
			s.By = v
		} else {
			s.For = sim.Fixed(v)
		}
		return s
	}
	var runErr error
	test := func(p place, v time.Duration) []string {
		res.Runs++
		s, err := cfg.Base.WithFaults(append(append([]faults.Spec{}, pl.Env...), spec(p, v)))
		if err != nil {
			runErr = err
			return nil
		}
		o, err := scenarios.Run(s, cfg.Base.Seed, scenarios.Options{Stream: true})
		if err != nil {
			runErr = err
			return nil
		}
		violated, _ := Violated(o, ec.Checks)
		return violated
	}
	best := cfg.Hi + cfg.Step
	for _, p := range places {
		top := min(best-cfg.Step, cfg.Hi)
		if top < cfg.Lo {
			break
		}
		vk := test(p, top)
		if runErr != nil {
			return nil, runErr
		}
		if len(vk) == 0 {
			continue
		}
		// Smallest violating value in [Lo, top] at resolution Step:
		// invariant: hi violates; lo-Step... lo holds or is below Lo.
		lo, hi, hk := cfg.Lo, top, vk
		if k := test(p, lo); len(k) > 0 {
			hi, hk = lo, k
		} else {
			for hi-lo > cfg.Step {
				mid := lo + (hi-lo)/2/cfg.Step*cfg.Step
				if mid <= lo {
					mid = lo + cfg.Step
				}
				if k := test(p, mid); len(k) > 0 {
					hi, hk = mid, k
				} else {
					lo = mid
				}
			}
		}
		if runErr != nil {
			return nil, runErr
		}
		best = hi
		res.Found, res.Value, res.Kinds = true, hi, hk
		res.Violates, res.Holds = spec(p, hi), spec(p, hi-cfg.Step)
	}
	return res, nil
}

// WriteEnvelope prints an envelope's result.
func WriteEnvelope(w interface{ Write([]byte) (int, error) }, base string, r *EnvelopeResult) {
	fmt.Fprintf(w, "envelope %s --param %s over %s..%s, step %s: %d placements, %d runs\n", base, r.Param, r.Lo, r.Hi, r.Step, r.Placements, r.Runs)
	fmt.Fprintf(w, "checked: %s (a verdict flip of any other property is not searched; --check chooses)\n", checkTitles(r.Checks))
	if len(r.Env) > 0 {
		fmt.Fprintf(w, "environment kept in every run: %s\n", specStringsJoin(r.Env))
	}
	if !r.Found {
		fmt.Fprintf(w, "no value in %s..%s violates at any placement\n", r.Lo, r.Hi)
		return
	}
	fmt.Fprintf(w, "boundary: %s = %s (%s violated from there)\n", r.Param, r.Value, checkTitles(r.Kinds))
	fmt.Fprintf(w, "  holds:    %s\n", r.Holds)
	fmt.Fprintf(w, "  violated: %s\n", r.Violates)
}

// checkTitles names checked properties (violation kinds) by their titles.
func checkTitles(kinds []string) string {
	var out []string
	for _, k := range kinds {
		t := k
		for _, p := range checker.Properties() {
			if p.About().Kind == k {
				t = p.About().Title
			}
		}
		out = append(out, t)
	}
	return strings.Join(out, ", ")
}

// EnvelopeFiles are the files WriteEnvelopeFiles writes: the boundary's
// two schedules as scenarios to replay.
var EnvelopeFiles = []string{"envelope-holds.yaml", "envelope-violated.yaml"}

// EnvelopeScenarios are the boundary's two sides as scenarios: the base
// with the environment and the fault one step below the boundary (expect:
// nothing violated, so simrun run exits 0 while it holds), and at the
// boundary (expect: what it violated).
func EnvelopeScenarios(base *scenarios.Scenario, r *EnvelopeResult) (holds, violated *scenarios.Scenario, err error) {
	if !r.Found {
		return nil, nil, fmt.Errorf("no boundary was found")
	}
	with := func(f faults.Spec) []faults.Spec { return append(append([]faults.Spec{}, r.Env...), f) }
	source := fmt.Sprintf("simrun envelope %s --param %s (%s..%s, step %s)", base.Name, r.Param, r.Lo, r.Hi, r.Step)
	holds, err = Variant(base, with(r.Holds), nil, base.Seed,
		fmt.Sprintf("%s one step below the envelope: %s = %s holds", base.Name, r.Param, r.Value-r.Step), source)
	if err != nil {
		return nil, nil, err
	}
	violated, err = Variant(base, with(r.Violates), r.Kinds, base.Seed,
		fmt.Sprintf("%s at the envelope: %s = %s violates %s", base.Name, r.Param, r.Value, checkTitles(r.Kinds)), source)
	return holds, violated, err
}
