package fuzz

import (
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenarios"
)

// WorldOf returns what the fault generator may touch in s: its clients,
// Redis masters and replicas, other processes, its duration and the longest
// lock lifetime of its clients.
func WorldOf(s *scenarios.Scenario) faults.GenWorld {
	w := faults.GenWorld{Duration: s.Duration}
	// Processes by role, from the process kinds (scenarios.ProcKind):
	// Redis masters and replicas are what persistence and failover faults
	// act on; every other server is one of the others.
	for _, p := range s.Servers() {
		switch p.Role {
		case scenarios.RoleRedis:
			w.Masters = append(w.Masters, p.Name)
		case scenarios.RoleReplica:
			w.Replicas = append(w.Replicas, p.Name)
		default:
			w.Others = append(w.Others, p.Name)
		}
	}
	for _, c := range s.Clients {
		w.Clients = append(w.Clients, c.Name)
		if ttl := c.Lock.ServerLifetime(); ttl > w.TTL {
			w.TTL = ttl
		}
	}
	if w.TTL <= 0 {
		// No client: scale faults with the run instead.
		w.TTL = s.Duration / 4
	}
	return w
}
