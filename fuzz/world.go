package fuzz

import (
	"time"

	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenarios"
)

// zkMaxSession is the longest session a ZooKeeper server negotiates by
// default (maxSessionTimeout = 20 × tickTime = 40 s, ZooKeeperServer.java;
// nodes/zookeeper DefaultConfig): a longer requested timeout does not make
// a lock live longer.
const zkMaxSession = 40 * time.Second

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
		if ttl := lockLife(c.Lock); ttl > w.TTL {
			w.TTL = ttl
		}
	}
	if w.TTL <= 0 {
		// No client: scale faults with the run instead.
		w.TTL = s.Duration / 4
	}
	return w
}

// lockLife is how long a lock lives without renewal.
func lockLife(l clients.LockConfig) time.Duration {
	switch l.Algorithm {
	case clients.Redisson:
		return l.Lease
	case clients.ZooKeeper:
		if l.SessionTimeout > zkMaxSession {
			return zkMaxSession
		}
		return l.SessionTimeout
	}
	return l.TTL
}
