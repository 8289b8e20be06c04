package scenarios

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/faults"
)

// warnInitialSync warns of a fault that acts on a replica's link to its
// master before the model's initial synchronisation can have completed.
//
// The model starts every server at 0s, and a replica sends its PSYNC from
// Init (nodes/redis replication.go, connectMaster); the master's full sync
// comes back one latency later. A partition, crash, pause, drop or delay
// between the two before then leaves the replica never synced, which real
// Redis reports as a link down since ever (server.repl_down_since = 0,
// "Never connected, repl is down since EVER", R 7.0.15 src/server.c
// initServer): a cluster replica with that data age does not stand for
// election (clusterHandleSlaveFailover), a Sentinel-monitored one is
// chosen on its master_link_down_time. Real mode (and so simrun twin)
// starts a run only once every replica reports its link up (realmode;
// docs/guide/real-and-twin.md), so the two can start from different worlds. Found by
// outsider3: a cluster partition at 0s between a master and its replica
// gave "holds" in the model (the replica never synced, never stood for
// election) and "violated" on real servers (synced before the run, then
// promoted without the lock key).
//
// It warns only where the difference changes what the servers do: a
// cluster replica (the election's data-age check refuses a replica that
// never synced, R 7.0.15 src/cluster.c:3618-3621, server.c:1985) and the
// replica of a master with min_replicas_to_write (a never-synced replica
// is no good replica). Sentinel promotes a never-synced replica like a
// synced one (it reads master_link_down_since_seconds -1, server.c:5874-
// 5876, and skips only a larger down time, sentinel.c:4980), and an empty
// master's full sync carries nothing, so the Sentinel stories that cut
// the link at 0s (single-failover) tell the same story either way.
func warnInitialSync(s *Scenario, at func(string) *yaml.Node) {
	for _, e := range EarlyReplicaFaults(s) {
		path := fmt.Sprintf("faults[%d].at", e.Fault)
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s:%d: %s: %s", s.File, lineOf(at(path)), path, e.Why))
	}
}

// EarlyReplicaFault is a fault that acts on a replica's link to its master
// before the model's initial synchronisation can have completed, where
// that changes what the servers do (warnInitialSync).
type EarlyReplicaFault struct {
	Fault           int // index in Scenario.Faults
	Replica, Master string
	// Bound is when the initial sync has completed at the latest: the
	// fault is safe from then on.
	Bound time.Duration
	Why   string
}

// EarlyReplicaFaults lists the scenario's faults that warnInitialSync warns
// of (real mode refuses them: realmode.Check).
func EarlyReplicaFaults(s *Scenario) []EarlyReplicaFault {
	var out []EarlyReplicaFault
	type pair struct {
		replica, master string
		why             string
	}
	minReplicas := map[string]int{}
	for _, r := range s.Redis() {
		minReplicas[r.Name] = r.MinReplicasToWrite
	}
	var pairs []pair
	for _, p := range s.Servers() {
		switch {
		case p.ReplicaOf == "":
		case p.NoPromote:
			pairs = append(pairs, pair{p.Name, p.ReplicaOf, "a cluster replica that never synced does not stand for election (its data age counts from never)"})
		case minReplicas[p.ReplicaOf] > 0:
			pairs = append(pairs, pair{p.Name, p.ReplicaOf, p.ReplicaOf + "'s min_replicas_to_write does not count a replica that never synced"})
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	delay := map[string]time.Duration{}
	for _, r := range s.Redis() {
		delay[r.Name] = r.ReplicationDelay.Hi
	}
	extra := func(a, b string) time.Duration {
		var d time.Duration
		for _, l := range s.Links {
			if l.From == a && l.To == b {
				d += l.Extra
			}
		}
		return d
	}
	group := func(groups [][]string, name string) int {
		for i, g := range groups {
			for _, n := range g {
				if n == name {
					return i
				}
			}
		}
		return -1
	}
	for i, f := range s.Faults {
		if f.At == nil {
			continue
		}
		for _, p := range pairs {
			// A PSYNC to the master and its full sync back.
			bound := 2*s.Network.Latency.Hi + extra(p.replica, p.master) + extra(p.master, p.replica) + delay[p.replica]
			if f.At.Lo >= bound {
				continue
			}
			var hit bool
			switch f.Kind {
			case faults.KindPartition:
				gr, gm := group(f.Groups, p.replica), group(f.Groups, p.master)
				hit = gr >= 0 && gm >= 0 && gr != gm
			case faults.KindPartitionRing:
				hit = group(f.Ring, p.replica) >= 0 || group(f.Ring, p.master) >= 0
			case faults.KindCrash, faults.KindPause:
				hit = f.Node == p.replica || f.Node == p.master
			case faults.KindDrop, faults.KindDelay:
				hit = (f.From == p.replica && f.To == p.master) || (f.From == p.master && f.To == p.replica)
			}
			if !hit {
				continue
			}
			out = append(out, EarlyReplicaFault{Fault: i, Replica: p.replica, Master: p.master, Bound: bound,
				Why: fmt.Sprintf("the %s at %s acts on %s's link to its master %s before the model's initial sync can have completed (up to %s: its PSYNC and the full sync back), so %s may never sync, as a replica started at that instant would not, and %s; real mode and simrun twin start only once every replica has synced, so their verdicts can differ: fire it at %s or later",
					f.Kind, f.At.Lo, p.replica, p.master, bound, p.replica, p.why, bound)})
			break
		}
	}
	return out
}
