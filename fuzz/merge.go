package fuzz

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/scenarios"
)

// FuzzRecord is what a fuzz campaign or shard records of its runs in its
// manifest: each violating run with its verdicts and explanation (its
// swarm flags and schedule are drawn again from its seed, Schedule), the
// inconclusive runs and the errors.
type FuzzRecord struct {
	Kinds        []string        `json:"faults"`
	Checks       []string        `json:"checks"`
	MaxFaults    int             `json:"max_faults"`
	Keep         int             `json:"keep"`
	Findings     []FindingRecord `json:"findings"`
	Inconclusive []RunRef        `json:"inconclusive"`
	Errors       []RunError      `json:"errors"`
}

// FindingRecord is one violating run in FuzzRecord.
type FindingRecord struct {
	Run   int      `json:"run"`
	Seed  uint64   `json:"seed"`
	Kinds []string `json:"kinds"`
	// Verdicts are written as keys of the record, before explanation
	// ("lock_safety": "violated", ...).
	Verdicts    checker.Verdicts `json:"-"`
	Explanation string           `json:"explanation"`
}

type findingRecord FindingRecord

// MarshalJSON writes the verdicts as keys of the record.
func (f FindingRecord) MarshalJSON() ([]byte, error) {
	return checker.FlatJSON(findingRecord(f), f.Verdicts, "explanation")
}

// UnmarshalJSON reads what MarshalJSON writes.
func (f *FindingRecord) UnmarshalJSON(b []byte) error {
	var plain findingRecord
	if err := json.Unmarshal(b, &plain); err != nil {
		return err
	}
	vs, err := checker.ReadFlat(b)
	*f = FindingRecord(plain)
	f.Verdicts = vs
	return err
}

// Record returns res, a result of the prepared config cfg, as a
// FuzzRecord.
func Record(cfg Config, res *Result) FuzzRecord {
	rec := FuzzRecord{Kinds: res.Kinds, Checks: res.Checks, MaxFaults: cfg.MaxFaults, Keep: cfg.Keep, Findings: []FindingRecord{}, Inconclusive: res.Inconclusive, Errors: res.Errors}
	for _, f := range res.Findings {
		rec.Findings = append(rec.Findings, FindingRecord{
			Run: f.Run, Seed: f.Seed, Kinds: f.Kinds,
			Verdicts:    f.Verdicts,
			Explanation: f.Explanation,
		})
	}
	return rec
}

// FuzzParams are the parameters of a fuzz campaign that decide its runs
// and findings, in the fixed order of Identity.Params.
func FuzzParams(cfg Config) []string {
	return []string{
		"faults=" + strings.Join(cfg.Kinds, ","),
		"check=" + strings.Join(cfg.Checks, ","),
		"max-faults=" + strconv.Itoa(cfg.MaxFaults),
		"keep=" + strconv.Itoa(cfg.Keep),
	}
}

// MergeFuzz joins the records of a campaign's shards (in any order) into
// the result the whole campaign gives: the findings' schedules are drawn
// again from their seeds on base, and the findings are numbered in run
// order (Number). cfg must be the campaign's prepared config (Prepare).
func MergeFuzz(cfg Config, total int, recs []FuzzRecord) (*Result, error) {
	w := WorldOf(cfg.Base)
	res := &Result{Base: cfg.Base.Name, Seed: cfg.Seed, Runs: total, Planned: total, Kinds: cfg.Kinds, Checks: cfg.Checks, Symmetry: SymmetryOf(cfg.Base)}
	for _, rec := range recs {
		for _, fr := range rec.Findings {
			if fr.Seed != RunSeed(cfg.Seed, fr.Run) || len(fr.Kinds) == 0 || fr.Run < 0 || fr.Run >= total {
				return nil, fmt.Errorf("finding of run %d (seed %d) does not belong to this campaign", fr.Run, fr.Seed)
			}
			sw, specs := Schedule(w, fr.Seed, cfg.Kinds, cfg.MaxFaults)
			res.Findings = append(res.Findings, &Finding{
				Run: fr.Run, Seed: fr.Seed, Kinds: fr.Kinds, Swarm: sw, Faults: specs,
				Verdicts:    fr.Verdicts,
				Explanation: fr.Explanation,
			})
		}
		res.Inconclusive = append(res.Inconclusive, rec.Inconclusive...)
		res.Errors = append(res.Errors, rec.Errors...)
	}
	Number(res, cfg.Keep)
	return res, nil
}

// BaseFile is the file in which a campaign's output folder keeps its base
// scenario (canonical YAML), so that merge can rebuild findings from it.
const BaseFile = "base.yaml"

// BaseBytes returns a base scenario's canonical YAML, whose SHA-256 is
// the campaign identity's BaseHash.
func BaseBytes(s *scenarios.Scenario) ([]byte, error) { return s.Marshal() }
