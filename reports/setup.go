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
	for _, r := range s.Redis {
		srv := Server{Name: r.Name, Role: RoleRedis, AOF: r.AppendOnly}
		if r.ReplicaOf != "" {
			srv.Role, srv.Note = RoleReplica, "replica of "+r.ReplicaOf
		}
		st.Servers = append(st.Servers, srv)
		if err := clock(r.Name, r.Clock); err != nil {
			return st, err
		}
	}
	if sp := s.Sentinel; sp != nil {
		for _, n := range sp.Names {
			st.Servers = append(st.Servers, Server{Name: n, Role: RoleSentinel, Note: "sentinel"})
			if err := clock(n, sp.Clock); err != nil {
				return st, err
			}
		}
	}
	if z := s.ZK; z != nil {
		st.Servers = append(st.Servers, Server{Name: z.Name, Role: RoleZooKeeper, Note: "zookeeper"})
		if err := clock(z.Name, z.Clock); err != nil {
			return st, err
		}
	}
	st.Servers = append(st.Servers, Server{Name: s.Resource.Name, Role: RoleStorage, Note: "resource, fencing " + orNone(s.Resource.Fencing)})
	text, err := s.Marshal()
	if err != nil {
		return st, err
	}
	st.YAML = string(text)
	return st, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
