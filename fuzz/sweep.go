package fuzz

import (
	"fmt"

	"github.com/locksim/locksim/scenarios"
)

// Sweep is the campaign behind simrun sweep: points (the base scenario
// with some fields set), each run Seeds times. Run n is seed number
// n % Seeds of point n / Seeds, seeded with RunSeed(Seed, n) like every
// campaign's runs, so a sweep's results do not depend on workers or
// shards.
type Sweep struct {
	Base   *scenarios.Scenario
	Points []*scenarios.Scenario
	Seeds  int
	Seed   uint64
}

// NewSweep builds a sweep's points: point i is base with the fields of
// sets[i] set (scenarios.Scenario.With, PATH and VALUE pairs). The error
// names the point whose values do not validate together.
func NewSweep(base *scenarios.Scenario, sets [][][2]string, seeds int, seed uint64) (*Sweep, error) {
	if seeds < 1 {
		return nil, fmt.Errorf("seeds must be at least 1, got %d", seeds)
	}
	if n := len(sets); n > 0 && seeds > MaxCampaignRuns/n {
		return nil, &TooManyRuns{What: fmt.Sprintf("%d points × --seeds %d", n, seeds)}
	}
	sw := &Sweep{Base: base, Seeds: seeds, Seed: seed}
	for i, set := range sets {
		ps, err := base.With(set)
		if err != nil {
			return nil, &PointError{Point: i, Err: err}
		}
		sw.Points = append(sw.Points, ps)
	}
	return sw, nil
}

// MaxCampaignRuns bounds the runs of one sweep or matrix (or one shard of
// it): each keeps its verdicts until the campaign's outputs are written,
// about 180 bytes a run, so a million runs hold about 180 MB (issue 33:
// --seeds 1e8 allocated 17.6 GB up front, and --seeds 9223372036854775807
// overflowed into a panic). A million runs is hours of CPU; more is a
// mistake or a job for several campaigns.
const MaxCampaignRuns = 1_000_000

// TooManyRuns is a campaign of more than MaxCampaignRuns runs.
type TooManyRuns struct {
	What string // "12 points × --seeds 100000000"
}

func (e *TooManyRuns) Error() string {
	return fmt.Sprintf("%s is more than %d runs, the most one campaign may make: fewer seeds or points, or several campaigns", e.What, MaxCampaignRuns)
}

// PointError is a sweep point whose values do not validate together.
type PointError struct {
	Point int
	Err   error
}

func (e *PointError) Error() string { return fmt.Sprintf("point %d: %v", e.Point, e.Err) }

// Total is the number of runs.
func (sw *Sweep) Total() int { return len(sw.Points) * sw.Seeds }

// RunSeed is the seed of run n.
func (sw *Sweep) RunSeed(n int) uint64 { return RunSeed(sw.Seed, n) }

// Run runs run n: point n / Seeds at RunSeed(n).
func (sw *Sweep) Run(n int) (Verdicts, error) {
	p := n / sw.Seeds
	o, err := scenarios.Run(sw.Points[p], sw.RunSeed(n), scenarios.Options{})
	if err != nil {
		return Verdicts{}, fmt.Errorf("point %d seed %d: %w", p, sw.RunSeed(n), err)
	}
	return verdictsOf(o), nil
}
