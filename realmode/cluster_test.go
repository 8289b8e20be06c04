package realmode

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// TestRealCluster runs a Redis Cluster scenario on real redis-server
// processes (cluster-enabled, created as redis-cli --cluster create does,
// bus and client connections through the proxy): the cluster-aware client
// finds the lock's slot from CLUSTER SLOTS (whose addresses the gateway
// turns into process names), the master acknowledges the lock and loses
// power before replicating it, the real cluster elects the replica, and a
// second client takes the lock there: the violation the model predicts.
// Every server is gone afterwards.
func TestRealCluster(t *testing.T) {
	needServers(t)
	src := `
name: real-cluster
duration: 14s
cluster: {masters: 3, replicas: 1, node_timeout: 2s}
clients:
  - name: c1
    lock: {algorithm: redis-single, node: C1, ttl: 30s}
    workload: {start: 1s, cycles: 1, hold: 11s}
  - name: c2
    lock: {algorithm: redis-single, node: C1, ttl: 30s}
    workload: {start: 9s, cycles: 1, hold: 1s}
faults:
  - {at: 1s, kind: partition, groups: [[C2], [C6]], heal_after: 1s}
  - {on: {event: key-set, node: C2}, after: 50ms, kind: crash, node: C2, mode: power}
`
	s, err := scenarios.Parse("real-cluster.yaml", []byte(src))
	require.NoError(t, err)
	require.NoError(t, Check(s))
	var pids []int
	o, err := run(context.Background(), s, 1, Options{Dir: t.TempDir()}, func(rt *runtime) {
		for _, srv := range rt.servers {
			pids = append(pids, srv.pid())
		}
	})
	require.NoError(t, err)
	assert.Equal(t, checker.Violated, o.Verdicts.Of(checker.LockSafety))
	require.Len(t, pids, 6)
	for _, pid := range pids {
		assert.False(t, alive(pid), "server pid %d still runs after Run returned", pid)
	}
}

// minorityTimeline is what happened, after a master was partitioned into
// the minority at P and the partition healed at H: when the master itself
// went to cluster_state:fail (its keyed commands get -CLUSTERDOWN), when a
// majority master flagged it PFAIL and FAIL, when its replica took its
// slots (all after P), and when the old master became the new master's
// replica (after H).
type minorityTimeline struct {
	down, pfail, fail, promoted, demoted time.Duration
}

func (tl minorityTimeline) String() string {
	r := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf("minority CLUSTERDOWN +%v, PFAIL +%v, FAIL +%v, promoted +%v (after the cut); demoted +%v (after the heal)",
		r(tl.down), r(tl.pfail), r(tl.fail), r(tl.promoted), r(tl.demoted))
}

// minorityConformance is a 3-master, 3-replica cluster whose master C2
// (slot 8718, replica C6) is cut off from every other node at 4s, after
// the bus has run for twice the node timeout, and healed at 10s.
const minorityConformance = `
name: conformance-minority
duration: 14s
cluster: {masters: 3, replicas: 1, node_timeout: 2s}
clients:
  - name: c1
    lock: {algorithm: redis-single, node: C1, ttl: 5s}
    workload: {start: 500ms, cycles: 1, hold: 100ms}
faults:
  - {at: 4s, kind: partition, groups: [[C2], [C1, C3, C4, C5, C6]], heal_after: 6s}
`

// TestClusterMinorityTimelineConformance runs a master partitioned into
// the minority on a real cluster (redis-server 7.0.15 through real mode's
// proxy, where the partition acts on the bus) and in the model, and checks
// each timeline against the bounds Redis 7.0.15's src/cluster.c gives,
// with P the cut, H the heal, nt the node timeout and a clusterCron tick
// of 100 ms:
//   - the first unanswered ping to a node goes out at the latest when its
//     last pong is nt/2 old (clusterCron, cluster.c:4158-4168), and the
//     node is PFAIL once that ping and all data are over nt old
//     (:4190-4204), seen at a cron tick: the minority master flags the
//     other masters PFAIL in [P+nt, P+1.5nt+2 cron]; with fewer than
//     size/2+1 reachable masters clusterUpdateState sets cluster_state
//     fail at once (:4488-4496; only the way back to ok waits, the rejoin
//     delay :4498-4513), so its keyed commands get -CLUSTERDOWN; a
//     majority master flags it PFAIL within the same bounds;
//   - FAIL once a second master's gossip reports PFAIL
//     (markNodeAsFailingIfNeeded, :1505-1530), at the latest with its next
//     ping, nt/2 and a cron tick later;
//   - the replica's election 500 ms + 0..500 ms (rank 0) after FAIL
//     (clusterHandleSlaveFailover, :3646-3658), the promotion one vote
//     round trip and a cron tick later;
//   - after the heal the old master's PING (held by the partition, or sent
//     on a link clusterCron reconnects at a tick, :3959-3975) is answered
//     by a PONG whose sender claims its slots with a greater configEpoch,
//     and it becomes that node's replica (clusterUpdateSlotsConfigWith,
//     :1867): within nt/2 + 2 cron ticks of H (a link freed for nt/2 of
//     silence just at the heal, :4141-4157, reconnects at the next tick).
//
// The real side is polled every 20 ms through the servers' own addresses
// (outside the proxy, so the partition does not hide them) on a loaded
// machine, and gets the poll interval and one more second of slack, as
// TestClusterFailoverTimelineConformance (nodes/redis) does.
func TestClusterMinorityTimelineConformance(t *testing.T) {
	needServers(t)
	s, err := scenarios.Parse("conformance-minority.yaml", []byte(minorityConformance))
	require.NoError(t, err)
	const (
		nt   = 2 * time.Second
		cut  = 4 * time.Second
		heal = 10 * time.Second
		cron = 100 * time.Millisecond
	)
	model := modelMinorityTimeline(t, s, cut, heal)
	real := realMinorityTimeline(t, s, cut, heal)
	t.Logf("model: %v", model)
	t.Logf("real:  %v", real)
	slack := 20*time.Millisecond + time.Second
	for _, c := range []struct {
		who   string
		tl    minorityTimeline
		slack time.Duration
	}{{"model", model, 0}, {"real", real, slack}} {
		within := func(what string, d, lo, hi time.Duration) {
			assert.True(t, d >= lo-c.slack && d <= hi+c.slack, "%s: %s %v, want within [%v, %v]", c.who, what, d, lo, hi)
		}
		within("minority CLUSTERDOWN after the cut", c.tl.down, nt, nt+nt/2+2*cron)
		within("PFAIL of the minority master after the cut", c.tl.pfail, nt, nt+nt/2+2*cron)
		within("FAIL after the cut", c.tl.fail, c.tl.pfail, c.tl.pfail+nt/2+cron)
		within("promotion after the cut", c.tl.promoted, c.tl.fail+500*time.Millisecond, c.tl.fail+time.Second+2*cron)
		within("demotion after the heal", c.tl.demoted, 0, nt/2+2*cron)
	}
}

// modelMinorityTimeline runs s in the simulator and reads the timeline
// from its trace.
func modelMinorityTimeline(t *testing.T, s *scenarios.Scenario, cut, heal time.Duration) minorityTimeline {
	t.Helper()
	o, err := scenarios.Run(s, s.Seed, scenarios.Options{KeepTrace: true})
	require.NoError(t, err)
	first := func(kind sim.Kind, proc, sub string, after time.Duration) time.Duration {
		for _, e := range o.Trace {
			if e.Kind == kind && e.Proc == proc && strings.Contains(e.Text, sub) && time.Duration(e.At) >= after {
				return time.Duration(e.At) - after
			}
		}
		t.Fatalf("model: no %s event of %s with %q after %v", kind, proc, sub, after)
		return 0
	}
	return minorityTimeline{
		down:     first(redis.EventClusterState, "C2", "cluster state changed: fail", cut),
		pfail:    first(redis.EventClusterPFail, "C1", "C2 ", cut),
		fail:     first(redis.EventClusterFail, "C1", "C2 marked FAIL", cut),
		promoted: first(redis.EventClusterFailover, "C6", "took the slots of C2", cut),
		demoted:  first(redis.EventClusterFailover, "C2", "now a replica of C6", heal),
	}
}

// realMinorityTimeline runs s in real mode and polls the real servers.
func realMinorityTimeline(t *testing.T, s *scenarios.Scenario, cut, heal time.Duration) minorityTimeline {
	t.Helper()
	var (
		tl    minorityTimeline
		mu    sync.Mutex
		stop  = make(chan struct{})
		polls sync.WaitGroup
	)
	_, err := run(context.Background(), s, 1, Options{Dir: t.TempDir()}, func(rt *runtime) {
		start := time.Now() // the kernel's time 0 follows within microseconds (loop)
		addr := func(n string) string { return rt.servers[n].ls.Addr() }
		id, err := command(addr("C2"), "CLUSTER", "MYID")
		require.NoError(t, err)
		polls.Add(1)
		go func() {
			defer polls.Done()
			set := func(d *time.Duration, from, now time.Duration) {
				if *d == 0 && now >= from {
					*d = now - from
				}
			}
			for {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				now := time.Since(start)
				var down, pfail, fail, promoted, demoted bool
				if v, err := command(addr("C2"), "CLUSTER", "INFO"); err == nil {
					down = strings.Contains(v.Str, "cluster_state:fail")
				}
				if v, err := command(addr("C1"), "CLUSTER", "NODES"); err == nil {
					for _, line := range strings.Split(v.Str, "\n") {
						if f := strings.Fields(line); len(f) > 2 && f[0] == id.Str {
							pfail = strings.Contains(f[2], "fail")
							fail = strings.Contains(","+f[2]+",", ",fail,")
						}
					}
				}
				if v, err := command(addr("C6"), "ROLE"); err == nil && len(v.Array) > 0 {
					promoted = v.Array[0].Str == "master"
				}
				if v, err := command(addr("C2"), "ROLE"); err == nil && len(v.Array) > 0 {
					demoted = v.Array[0].Str == "slave"
				}
				mu.Lock()
				if down {
					set(&tl.down, cut, now)
				}
				if pfail {
					set(&tl.pfail, cut, now)
				}
				if fail {
					set(&tl.fail, cut, now)
				}
				if promoted {
					set(&tl.promoted, cut, now)
				}
				if demoted {
					set(&tl.demoted, heal, now)
				}
				mu.Unlock()
			}
		}()
	})
	close(stop)
	polls.Wait()
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	for what, d := range map[string]time.Duration{"CLUSTERDOWN on C2": tl.down, "PFAIL": tl.pfail, "FAIL": tl.fail, "C6 promoted": tl.promoted, "C2 demoted": tl.demoted} {
		require.NotZero(t, d, "real: %s never seen", what)
	}
	return tl
}

// TestRealClusterKnobs runs issue 32's cluster knobs on real redis-server
// processes: a master created without slots (C4) and two masters created
// with one configEpoch (SET-CONFIG-EPOCH 1 twice), a reshard of the lock's
// slot to C4, repl-timeout, repl-ping-replica-period and
// cluster-replica-no-failover in every redis.conf, and an operator's
// CLUSTER FAILOVER FORCE to C5 5.5 s after its master C2 died: C5 is
// still a replica then (without no-failover it is elected within about
// 4 s and answers "You should send CLUSTER FAILOVER to a replica") and
// takes the manual failover; c1's lock, on the slot C4 now serves, is
// granted by C4.
func TestRealClusterKnobs(t *testing.T) {
	needServers(t)
	src := `
name: real-cluster-knobs
duration: 11s
cluster:
  node_timeout: 2s
  repl_timeout: 5s
  repl_ping_replica_period: 2s
  replica_no_failover: true
  nodes:
    - {name: C1, slots: 0-5460, config_epoch: 1}
    - {name: C2, slots: 5461-10922, config_epoch: 1}
    - {name: C3, slots: 10923-16383}
    - {name: C4}
    - {name: C5, replicaof: C2}
clients:
  - name: c1
    lock: {algorithm: redis-single, node: C1, ttl: 5s}
    workload: {start: 2s, cycles: 1, hold: 1s}
faults:
  - {at: 1s, kind: reshard, key: lock, from: C2, to: C4}
  - {at: 3500ms, kind: crash, node: C2}
  - {at: 9s, kind: manual-failover, node: C5, mode: force}
`
	s, err := scenarios.Parse("real-cluster-knobs.yaml", []byte(src))
	require.NoError(t, err)
	require.NoError(t, Check(s))
	o, err := run(context.Background(), s, 1, Options{Dir: t.TempDir()}, nil)
	require.NoError(t, err)
	var steps []string
	lockOn := ""
	for _, e := range o.Trace {
		switch {
		case e.Kind == scenarios.KindOperatorStep:
			steps = append(steps, e.Text)
		case e.Kind == "reshard-step" && strings.HasPrefix(e.Text, "slot 8718 now served by"):
			steps = append(steps, e.Text)
		case e.Kind == sim.KindSend && e.Proc == "c1" && strings.Contains(e.Text, " SET lock ") && lockOn == "":
			lockOn = e.Peer
		}
	}
	assert.Equal(t, []string{"slot 8718 now served by C4", "C5 CLUSTER FAILOVER FORCE: OK"}, steps)
	assert.Equal(t, "C4", lockOn, "the lock's slot is C4's, a master created without slots")
	assert.Equal(t, checker.Holds, o.Verdicts.Of(checker.LockSafety))
}
