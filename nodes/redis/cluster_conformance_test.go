package redis

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/realmode/launch"
	"github.com/locksim/locksim/sim"
)

// failoverTimeline is when, after a master's process was killed, another
// master flagged it PFAIL and FAIL and its replica took its slots.
type failoverTimeline struct {
	pfail, fail, promoted time.Duration
}

func (tl failoverTimeline) String() string {
	return fmt.Sprintf("PFAIL +%v, FAIL +%v, promoted +%v", tl.pfail.Round(time.Millisecond), tl.fail.Round(time.Millisecond), tl.promoted.Round(time.Millisecond))
}

// TestClusterFailoverTimelineConformance starts a real 3-master,
// 3-replica Redis Cluster (redis-server --cluster-enabled yes, laid out as
// redis-cli --cluster create does), kills the master of slot 8718 and
// compares the failover timeline with the model's, each within the bounds
// the source gives (C 7.0.15 cluster.c): PFAIL node timeout after the
// first unanswered ping, which goes out at the latest when the last pong
// is half the node timeout old (the failed reconnects to the killed
// process set no ping_sent), seen at the next clusterCron (100 ms); FAIL once another master's gossip reports PFAIL (at least one
// ping a second); the election 500 ms + 0..500 ms (rank 0) after FAIL, the
// promotion one vote round trip later. The real side is polled every 20 ms
// and runs on a loaded machine, so its bounds get the poll interval and
// one more second of slack.
func TestClusterFailoverTimelineConformance(t *testing.T) {
	bin := simtest.NeedBinaries(t, "the Redis Cluster failover conformance test", "apt-get install -y redis-server", "redis-server")[0]
	const nt = 3 * time.Second
	names := []string{"n1", "n2", "n3", "n4", "n5", "n6"}
	members, err := CreateCluster(names, 1)
	require.NoError(t, err)

	real := realClusterTimeline(t, bin, members, nt)
	model := modelClusterTimeline(t, members, nt)
	t.Logf("real:  %v", real)
	t.Logf("model: %v", model)

	const cron = 100 * time.Millisecond
	slack := 20*time.Millisecond + time.Second // poll interval, machine load
	for _, c := range []struct {
		who   string
		tl    failoverTimeline
		slack time.Duration
	}{{"model", model, 0}, {"real", real, slack}} {
		// The first ping after the kill goes out at the latest when the
		// last pong is half the node timeout old.
		assert.True(t, c.tl.pfail > nt-c.slack && c.tl.pfail <= nt+nt/2+2*cron+c.slack, "%s: PFAIL %v after the kill, want node timeout %v after the first unanswered ping", c.who, c.tl.pfail, nt)
		// FAIL needs a report from a second master: gossip in pings that go
		// out at least once a second, and to every node whose pong is older
		// than half the node timeout.
		assert.True(t, c.tl.fail >= c.tl.pfail-c.slack && c.tl.fail <= c.tl.pfail+nt/2+cron+c.slack, "%s: FAIL %v after PFAIL %v", c.who, c.tl.fail, c.tl.pfail)
		elect := c.tl.promoted - c.tl.fail
		assert.True(t, elect >= 500*time.Millisecond-c.slack && elect <= time.Second+2*cron+c.slack, "%s: promotion %v after FAIL, want 500ms + 0..500ms + a cron tick and a vote", c.who, elect)
	}
}

// realCluster is a real Redis Cluster started by startRealCluster.
type realCluster struct {
	srv map[string]*launch.Server
	cli map[string]*goredis.Client
	ids map[string]string // node ids (CLUSTER MYID)
}

// startRealCluster starts members as redis-server processes on loopback
// addresses in a temp dir (stopped by PID at cleanup) with node timeout nt
// and the extra config lines, and joins them as redis-cli --cluster create
// does: slots, config epochs, MEET, then REPLICATE once the nodes know
// each other; it returns once the cluster is ok and every replica in sync.
func startRealCluster(t *testing.T, bin string, members []ClusterMember, nt time.Duration, extra ...string) *realCluster {
	t.Helper()
	dir := t.TempDir() // before StopAll's cleanup: removed after the servers stop
	g := launch.NewGroup()
	t.Cleanup(g.StopAll)
	pool := launch.NewAddrPool()
	ctx := context.Background()
	rc := &realCluster{srv: map[string]*launch.Server{}, cli: map[string]*goredis.Client{}, ids: map[string]string{}}
	srv, cli := rc.srv, rc.cli
	for _, m := range members {
		ip, err := pool.Next()
		require.NoError(t, err)
		s, err := g.StartRedis(launch.RedisOptions{Name: m.Name, Bin: bin, IP: ip, Dir: filepath.Join(dir, m.Name),
			BindSourceAddr: ip,
			ExtraConfig: append([]string{"cluster-enabled yes", "cluster-config-file nodes.conf",
				fmt.Sprintf("cluster-node-timeout %d", nt.Milliseconds()), "repl-diskless-sync-delay 0"}, extra...)})
		require.NoError(t, err, "start %s", m.Name)
		srv[m.Name] = s
		c := goredis.NewClient(&goredis.Options{Addr: s.Addr(), Protocol: 2, MaxRetries: -1, DisableIdentity: true})
		t.Cleanup(func() { _ = c.Close() })
		cli[m.Name] = c
	}
	for _, m := range members {
		c := cli[m.Name]
		for _, r := range m.Slots {
			require.NoError(t, c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", r.From, r.To).Err())
		}
		require.NoError(t, c.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", m.ConfigEpoch).Err())
	}
	first := srv[members[0].Name]
	for _, m := range members[1:] {
		require.NoError(t, cli[m.Name].Do(ctx, "CLUSTER", "MEET", first.IP(), first.Port()).Err())
	}
	known := fmt.Sprintf("cluster_known_nodes:%d", len(members))
	waitUntil(t, 20*time.Second, "every node knows the others", func() bool {
		for _, m := range members {
			info, err := cli[m.Name].Do(ctx, "CLUSTER", "INFO").Text()
			if err != nil || !strings.Contains(info, known) {
				return false
			}
		}
		return true
	})
	for _, m := range members {
		id, err := cli[m.Name].Do(ctx, "CLUSTER", "MYID").Text()
		require.NoError(t, err)
		rc.ids[m.Name] = id
	}
	for _, m := range members {
		if m.ReplicaOf != "" {
			require.NoError(t, cli[m.Name].Do(ctx, "CLUSTER", "REPLICATE", rc.ids[m.ReplicaOf]).Err())
		}
	}
	waitUntil(t, 30*time.Second, "cluster ok and replicas in sync", func() bool {
		for _, m := range members {
			info, err := cli[m.Name].Do(ctx, "CLUSTER", "INFO").Text()
			if err != nil || !strings.Contains(info, "cluster_state:ok") {
				return false
			}
			if m.ReplicaOf != "" {
				repl, err := cli[m.Name].Info(ctx, "replication").Result()
				if err != nil || !strings.Contains(repl, "master_link_status:up") {
					return false
				}
			}
		}
		return true
	})
	return rc
}

// realClusterTimeline runs the failover on real servers.
func realClusterTimeline(t *testing.T, bin string, members []ClusterMember, nt time.Duration) failoverTimeline {
	t.Helper()
	ctx := context.Background()
	rc := startRealCluster(t, bin, members, nt)
	srv, cli, ids := rc.srv, rc.cli, rc.ids
	// Let the bus settle (every node pinged every other) before the kill.
	time.Sleep(nt)
	victim, replica, observer := "n2", "n6", "n1"
	id := ids[victim]
	require.NoError(t, srv[victim].Kill())
	start := time.Now()
	var tl failoverTimeline
	deadline := start.Add(6 * nt)
	for time.Now().Before(deadline) && tl.promoted == 0 {
		now := time.Since(start)
		nodes, err := cli[observer].Do(ctx, "CLUSTER", "NODES").Text()
		if err == nil {
			for _, line := range strings.Split(nodes, "\n") {
				f := strings.Fields(line)
				if len(f) < 3 || f[0] != id {
					continue
				}
				if tl.pfail == 0 && (strings.Contains(f[2], "fail?") || strings.Contains(f[2], "fail")) {
					tl.pfail = now
				}
				if tl.fail == 0 && strings.Contains(","+f[2]+",", ",fail,") {
					tl.fail = now
				}
			}
		}
		if role, err := cli[replica].Do(ctx, "ROLE").Slice(); err == nil && len(role) > 0 && role[0] == "master" {
			tl.promoted = now
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NotZero(t, tl.promoted, "the real replica %s was not promoted within %v (log: %s)", replica, 6*nt, filepath.Join(srv[replica].Dir(), "redis.log"))
	return tl
}

// modelClusterTimeline runs the same failover in the model.
func modelClusterTimeline(t *testing.T, members []ClusterMember, nt time.Duration) failoverTimeline {
	t.Helper()
	names := make([]string, len(members))
	for i, m := range members {
		names[i] = m.Name
	}
	w, _ := clusterWorld(t, nt, 1, names...)
	w.Advance(2 * nt)
	at := w.K.Now()
	w.K.Crash(w.ID("n2"), sim.CrashProcess)
	w.Advance(6 * nt)
	since := func(ts []time.Duration) time.Duration {
		require.NotEmpty(t, ts)
		return ts[0] - time.Duration(at)
	}
	return failoverTimeline{
		pfail:    since(eventTimes(w, EventClusterPFail, "n1", "n2 ")),
		fail:     since(eventTimes(w, EventClusterFail, "n1", "n2 marked FAIL")),
		promoted: since(eventTimes(w, EventClusterFailover, "n6", "took the slots of n2")),
	}
}

func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "timed out waiting: %s", what)
		time.Sleep(50 * time.Millisecond)
	}
}
