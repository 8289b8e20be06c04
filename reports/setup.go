package reports

import (
	"fmt"

	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// SetupOf extracts what a report needs from a scenario: lanes, roles,
// lock keys, initial clocks and the text.
func SetupOf(s *scenarios.Scenario) (Setup, error) {
	st := Setup{
		Name:     s.Name,
		Title:    s.Title,
		Source:   s.Source,
		Why:      s.Why,
		File:     s.File,
		Duration: s.Duration,
	}
	clock := func(name string, c scenarios.ClockSpec) error {
		if c == (scenarios.ClockSpec{}) {
			return nil
		}
		ppb, err := sim.RateFromDrift(c.Drift)
		if err != nil {
			return fmt.Errorf("%s: clock: %w", name, err)
		}
		st.Clocks = append(st.Clocks, Clock{Proc: name, Offset: c.Offset, DriftPPB: ppb})
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
	// Server lanes come from the process kinds (scenarios/kinds.go), in
	// build order.
	for _, p := range s.Servers() {
		if p.Role == RoleStorage && len(s.Clients) == 0 {
			// Only lock clients read and write the protected resource:
			// a scenario without any (the stock counters' flash sales)
			// has an idle storage node, and no lane for it.
			continue
		}
		st.Servers = append(st.Servers, Server{Name: p.Name, Role: p.Role, Note: p.Note, AOF: p.AOF})
		if err := clock(p.Name, p.Clock); err != nil {
			return st, err
		}
	}
	text, err := s.Marshal()
	if err != nil {
		return st, err
	}
	st.YAML = string(text)
	return st, nil
}
