package scenarios

import (
	"fmt"

	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/sim"
)

// Describe fills in what o's record says of the run beyond its verdicts
// (Options.Describe): the scenario's text and its SHA-256, the world's
// process table and the report's setup, so that the record alone is
// enough to draw the report, check a recorded trace and replay the run.
func Describe(s *Scenario, w *World, o *Outcome) error {
	text, err := s.Marshal()
	if err != nil {
		return err
	}
	st, err := SetupOf(s)
	if err != nil {
		return err
	}
	o.ScenarioText = string(text)
	o.ScenarioSHA256 = record.SHA256(o.ScenarioText)
	o.Setup = &st
	kinds := map[string]string{}
	for _, p := range s.Servers() {
		kinds[p.Name] = p.Kind.Name
	}
	for _, c := range s.Clients {
		kinds[c.Name] = clientKind.Name
	}
	o.Processes = make([]record.Process, 0, w.Kernel.NumProcs())
	for id := 0; id < w.Kernel.NumProcs(); id++ {
		name := w.Kernel.Name(sim.ProcID(id))
		o.Processes = append(o.Processes, record.Process{ID: id, Name: name, Kind: kinds[name]})
	}
	return nil
}

// SetupOf extracts what a report needs from a scenario: lanes, roles,
// lock keys, initial clocks (the name, file, duration and text are the
// record's own; record.Run.ReportSetup adds them).
func SetupOf(s *Scenario) (record.Setup, error) {
	st := record.Setup{Title: s.Title, Source: s.Source, Why: s.Why}
	clock := func(name string, c ClockSpec) error {
		if c == (ClockSpec{}) {
			return nil
		}
		ppb, err := sim.RateFromDrift(c.Drift)
		if err != nil {
			return fmt.Errorf("%s: clock: %w", name, err)
		}
		st.Clocks = append(st.Clocks, record.Clock{Proc: name, Offset: c.Offset, DriftPPB: ppb})
		return nil
	}
	seenKey := map[string]bool{}
	for _, c := range s.Clients {
		st.Clients = append(st.Clients, c.Name)
		if k := c.Lock.Key; k != "" && !seenKey[k] {
			seenKey[k] = true
			st.LockKeys = append(st.LockKeys, k)
		}
		if err := clock(c.Name, c.Clock); err != nil {
			return st, err
		}
	}
	// Server lanes come from the process kinds (kinds.go), in build order.
	for _, p := range s.Servers() {
		if p.Lane == record.LaneResource && len(s.Clients) == 0 {
			// Only lock clients read and write the protected resource:
			// a scenario without any (the stock counters' flash sales)
			// has an idle storage node, and no lane for it.
			continue
		}
		st.Servers = append(st.Servers, record.Server{Name: p.Name, Role: p.Role, Lane: p.Lane, Note: p.Note, AOF: p.AOF})
		if err := clock(p.Name, p.Clock); err != nil {
			return st, err
		}
	}
	return st, nil
}
