package fuzz

import (
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenarios"
)

// WorldOf returns what the fault generator may touch in s: its clients,
// lock servers (masters and replicas), other processes, the trigger events
// of each lock server, its duration and the longest lock lifetime of its
// clients.
func WorldOf(s *scenarios.Scenario) faults.GenWorld {
	w := faults.GenWorld{Duration: s.Duration, Events: map[string][]string{}}
	// Processes by role, from the process kinds (scenarios.ProcKind): the
	// lock servers of every kind (LockServer) are what server faults and
	// server triggers aim at, a master when it replicates from no one, a
	// replica (promote's targets) when its kind can be promoted. Every
	// other server is one of the others; so is a replica promote cannot
	// reach (a MySQL replica), which crash, pause and clock faults still
	// hit now and then.
	for _, p := range s.Servers() {
		switch {
		case !p.Kind.LockServer:
			w.Others = append(w.Others, p.Name)
		case p.ReplicaOf == "":
			w.Masters = append(w.Masters, p.Name)
		case p.Kind.Promotable && !p.NoPromote:
			w.Replicas = append(w.Replicas, p.Name)
		default:
			w.Others = append(w.Others, p.Name)
		}
		if p.Kind.LockServer {
			for _, e := range p.Kind.TriggerEvents {
				w.Events[p.Name] = append(w.Events[p.Name], e.Name)
			}
		}
	}
	for _, c := range s.Clients {
		w.Clients = append(w.Clients, c.Name)
		if ttl := c.Lock.ServerLifetime(); ttl > w.TTL {
			w.TTL = ttl
		}
	}
	// reshard's targets: each lock key of a client that uses a Redis
	// Cluster, with the master serving its slot and the cluster's masters.
	for _, cs := range s.Clusters() {
		var masters []string
		in := map[string]bool{}
		for _, n := range cs.Nodes {
			in[n.Name] = true
			if n.ReplicaOf == "" {
				masters = append(masters, n.Name)
			}
		}
		seen := map[string]bool{}
		for _, c := range s.Clients {
			key := c.Lock.Key
			uses := in[c.Lock.Node]
			for _, n := range c.Lock.Nodes {
				uses = uses || in[n]
			}
			if key == "" || !uses || seen[key] {
				continue
			}
			seen[key] = true
			if from := cs.MasterOfKey(key); from != "" {
				w.Reshards = append(w.Reshards, faults.ReshardTarget{Key: key, From: from, Masters: masters})
			}
		}
	}
	if w.TTL <= 0 {
		// No client: scale faults with the run instead.
		w.TTL = s.Duration / 4
	}
	return w
}
