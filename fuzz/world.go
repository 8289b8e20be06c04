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
	for _, r := range s.Redis {
		if r.ReplicaOf != "" {
			w.Replicas = append(w.Replicas, r.Name)
		} else {
			w.Masters = append(w.Masters, r.Name)
		}
	}
	if s.Sentinel != nil {
		w.Others = append(w.Others, s.Sentinel.Names...)
	}
	if s.ZK != nil {
		w.Others = append(w.Others, s.ZK.Name)
	}
	w.Others = append(w.Others, s.Resource.Name)
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
