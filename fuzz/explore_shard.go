package fuzz

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// An exploration is sharded as a fuzz campaign is (--shard K/N): shard K
// runs the schedules K×Total/N to (K+1)×Total/N-1 of the plan, numbered as
// in the whole exploration, and records them in its campaign.json as an
// ExploreRecord; simrun merge plans the space again from the base and the
// record's bounds (the plan is a function of them: one base run at the
// scenario's seed), checks that it has the same number of schedules, and
// rebuilds each finding's schedule from its number (Plan.Specs), so the
// merge writes what the whole exploration writes.

// ExploreRecord is what an exploration (or a shard of one) records of its
// schedules in its manifest: the bounds that decide the plan, and the
// violating, inconclusive and failed schedules (FuzzRecord's; a finding's
// run is its schedule number).
type ExploreRecord struct {
	FuzzRecord
	Targets []string `json:"targets"`
	Grid    string   `json:"grid"`
	// NoStatePrune and StatePruned: whether pruning by world state was
	// off, and the schedules it did not run (explore_state.go).
	NoStatePrune bool `json:"no_state_pruning,omitempty"`
	StatePruned  int  `json:"state_pruned"`
	// Orders: the same-instant order choices were explored (--orders).
	Orders bool `json:"orders,omitempty"`
}

// RecordExplore returns er (of the planned config cfg) as an
// ExploreRecord.
func RecordExplore(cfg ExploreConfig, er *ExploreResult) ExploreRecord {
	rec := ExploreRecord{FuzzRecord: Record(Config{MaxFaults: er.Plan.K}, er.Result), Targets: er.Plan.Targets, Grid: cfg.Grid.String(),
		NoStatePrune: cfg.NoStatePrune, StatePruned: er.StatePruned, Orders: cfg.Orders}
	return rec
}

// ExploreParams are the bounds of a planned exploration that decide its
// schedules, in the fixed order of Identity.Params.
func ExploreParams(cfg ExploreConfig, pl *Plan) []string {
	ps := []string{
		"faults=" + strings.Join(pl.Kinds, ","),
		"check=" + strings.Join(cfg.Checks, ","),
		"max-faults=" + strconv.Itoa(pl.K),
		"targets=" + strings.Join(pl.Targets, ","),
		"grid=" + cfg.Grid.String(),
		"state-pruning=" + strconv.FormatBool(!cfg.NoStatePrune),
	}
	if cfg.Orders {
		// Only when on: the identity of an exploration without it is
		// what it was before --orders existed.
		ps = append(ps, "orders=true")
	}
	return ps
}

// Config returns the exploration config rec was recorded with (Base,
// Workers and the rest left to the caller).
func (rec ExploreRecord) Config() (ExploreConfig, error) {
	grid, err := time.ParseDuration(rec.Grid)
	if err != nil {
		return ExploreConfig{}, fmt.Errorf("grid %q: %v", rec.Grid, err)
	}
	kinds := rec.Kinds
	if kinds == nil {
		kinds = []string{} // --orders alone (nil would mean the default kinds)
	}
	return ExploreConfig{Kinds: kinds, Checks: rec.Checks, MaxFaults: rec.MaxFaults, Targets: rec.Targets, Grid: grid, Force: true, NoStatePrune: rec.NoStatePrune, Orders: rec.Orders}, nil
}

// MergeExplore joins the records of an exploration's shards (in any order)
// into the result of the whole exploration of pl, planned again from the
// same base and bounds: each finding's schedule is pl.Specs of its number.
func MergeExplore(cfg ExploreConfig, pl *Plan, recs []ExploreRecord) (*ExploreResult, error) {
	res := &Result{Base: cfg.Base.Name, Seed: cfg.Base.Seed, Runs: pl.Total, Planned: pl.Total, Kinds: pl.Kinds, Checks: cfg.Checks, Command: "explore", Symmetry: SymmetryOf(cfg.Base)}
	er := &ExploreResult{Result: res, Plan: pl, Violated: make([]bool, pl.Total)}
	for _, rec := range recs {
		for _, fr := range rec.Findings {
			if fr.Seed != cfg.Base.Seed || len(fr.Kinds) == 0 || fr.Run < 0 || fr.Run >= pl.Total {
				return nil, fmt.Errorf("finding of schedule %d (seed %d) does not belong to this exploration", fr.Run, fr.Seed)
			}
			er.Violated[fr.Run] = true
			res.Findings = append(res.Findings, &Finding{
				Run: fr.Run, Seed: fr.Seed, Kinds: fr.Kinds, Faults: pl.Specs(fr.Run),
				Verdicts: fr.Verdicts, Explanation: fr.Explanation,
			})
		}
		res.Inconclusive = append(res.Inconclusive, rec.Inconclusive...)
		res.Errors = append(res.Errors, rec.Errors...)
		er.StatePruned += rec.StatePruned
	}
	er.summarise()
	return er, nil
}
