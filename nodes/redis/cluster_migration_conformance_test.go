package redis

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/sim"
)

// migrationTimeline is what the replicas of the master with two replicas
// did after the only replica of another master died: when each saw it
// FAIL, and when (0: never) each migrated to the orphaned master.
type migrationTimeline struct {
	fail, migrated map[string]time.Duration
	// gap is, for the node that migrated, the time from its FAIL flag on
	// the dead replica to its migration: from its own log on the real
	// side (millisecond stamps, free of the poller's delays), from the
	// trace in the model.
	gap map[string]time.Duration
}

// TestClusterReplicaMigrationConformance starts a real Redis Cluster with
// the layout of migrationMembers (n2 with one replica n5, n3 with two, n6
// and n7), kills n5 and compares what the replicas of n3 do with the
// model, with cluster-migration-barrier 1 (the default) and 2 (C 7.0.15
// cluster.c:3773-3856, 4111-4139, 4226-4234): with 1 the replica of n3
// with the smaller node id (the real ids are random, the model's SHA-1 of
// the name: each side is checked against its own ids) migrates to n2 more
// than CLUSTER_SLAVE_MIGRATION_DELAY (5 s) after it saw n5 FAIL (it
// starts counting at its next cron tick), at most two ticks later; the
// other stays; with 2 none migrates for 7 s after the FAIL. The real side
// is polled every 20 ms through the servers' own addresses (who migrated,
// and when to stop), and the FAIL-to-migration time is read from the
// migrated node's own log, with one second of slack for a loaded machine.
func TestClusterReplicaMigrationConformance(t *testing.T) {
	bin := simtest.NeedBinaries(t, "the Redis Cluster replica migration conformance test", "apt-get install -y redis-server", "redis-server")[0]
	const (
		nt    = 2 * time.Second
		cron  = 100 * time.Millisecond
		delay = slaveMigrationDelay * time.Millisecond
	)
	for _, tc := range []struct {
		barrier int
		migrate bool
	}{{1, true}, {2, false}} {
		t.Run(fmt.Sprintf("barrier %d", tc.barrier), func(t *testing.T) {
			real, realCand := realMigrationTimeline(t, bin, nt, tc.barrier, tc.migrate)
			model := modelMigrationTimeline(t, nt, tc.barrier)
			modelCand, _ := migrationCandidate()
			t.Logf("real:  %+v (candidate %s)", real, realCand)
			t.Logf("model: %+v (candidate %s)", model, modelCand)
			slack := 20*time.Millisecond + time.Second
			for _, c := range []struct {
				who   string
				tl    migrationTimeline
				cand  string
				slack time.Duration
			}{{"model", model, modelCand, 0}, {"real", real, realCand, slack}} {
				for _, r := range []string{"n6", "n7"} {
					require.NotZero(t, c.tl.fail[r], "%s: %s never saw n5 FAIL", c.who, r)
					if r != c.cand || !tc.migrate {
						assert.Zero(t, c.tl.migrated[r], "%s: %s migrated", c.who, r)
						continue
					}
					require.NotZero(t, c.tl.migrated[r], "%s: the candidate %s never migrated", c.who, r)
					d, ok := c.tl.gap[r]
					require.True(t, ok, "%s: no FAIL-to-migration gap for %s", c.who, r)
					assert.True(t, d > delay-c.slack && d <= delay+2*cron+c.slack, "%s: %s migrated %v after it saw n5 FAIL, want more than %v, within two cron ticks", c.who, r, d, delay)
				}
			}
		})
	}
}

// modelMigrationTimeline kills n5 in the model.
func modelMigrationTimeline(t *testing.T, nt time.Duration, barrier int) migrationTimeline {
	t.Helper()
	w := memberWorld(t, nt, migrationMembers(), func(c *ClusterConfig) { c.MigrationBarrier = barrier })
	w.Advance(2 * nt)
	at := w.K.Now()
	w.K.Crash(w.ID("n5"), sim.CrashProcess)
	w.Advance(5*nt + slaveMigrationDelay*time.Millisecond + 2*time.Second)
	tl := migrationTimeline{fail: map[string]time.Duration{}, migrated: map[string]time.Duration{}, gap: map[string]time.Duration{}}
	for _, r := range []string{"n6", "n7"} {
		if ts := eventTimes(w, EventClusterFail, r, "n5 marked FAIL"); len(ts) > 0 {
			tl.fail[r] = ts[0] - time.Duration(at)
		}
		if ts := eventTimes(w, EventClusterFailover, r, "now a replica of n2"); len(ts) > 0 {
			tl.migrated[r] = ts[0] - time.Duration(at)
			tl.gap[r] = tl.migrated[r] - tl.fail[r]
		}
	}
	return tl
}

// realMigrationTimeline kills n5 in a real cluster and polls n6 and n7; it
// returns their timeline and which of them has the smaller node id.
func realMigrationTimeline(t *testing.T, bin string, nt time.Duration, barrier int, migrate bool) (migrationTimeline, string) {
	t.Helper()
	ctx := context.Background()
	rc := startRealCluster(t, bin, migrationMembers(), nt, fmt.Sprintf("cluster-migration-barrier %d", barrier))
	cand := "n6"
	if rc.ids["n7"] < rc.ids["n6"] {
		cand = "n7"
	}
	// Let the bus settle (every node pinged every other) before the kill.
	time.Sleep(nt)
	require.NoError(t, rc.srv["n5"].Kill())
	start := time.Now()
	tl := migrationTimeline{fail: map[string]time.Duration{}, migrated: map[string]time.Duration{}, gap: map[string]time.Duration{}}
	n2 := rc.srv["n2"]
	// Poll until both saw the FAIL and then, with migration, the candidate
	// migrated and 1 s more; without, 7 s after the later FAIL (the rule
	// fires at 5 s plus a tick). The deadline is a generous bound.
	deadline := start.Add(6*nt + 20*time.Second)
	var done time.Time
	for time.Now().Before(deadline) && (done.IsZero() || time.Now().Before(done)) {
		now := time.Since(start)
		for _, r := range []string{"n6", "n7"} {
			if tl.fail[r] == 0 {
				if nodes, err := rc.cli[r].Do(ctx, "CLUSTER", "NODES").Text(); err == nil {
					for _, line := range strings.Split(nodes, "\n") {
						if f := strings.Fields(line); len(f) > 2 && f[0] == rc.ids["n5"] && strings.Contains(","+f[2]+",", ",fail,") {
							tl.fail[r] = now
						}
					}
				}
			}
			if tl.migrated[r] == 0 {
				if role, err := rc.cli[r].Do(ctx, "ROLE").Slice(); err == nil && len(role) > 2 && role[0] == "slave" &&
					role[1] == n2.IP() && fmt.Sprint(role[2]) == fmt.Sprint(n2.Port()) {
					tl.migrated[r] = now
				}
			}
		}
		if done.IsZero() && tl.fail["n6"] != 0 && tl.fail["n7"] != 0 {
			if migrate && tl.migrated[cand] != 0 {
				done = time.Now().Add(time.Second)
			}
			if !migrate {
				done = time.Now().Add(slaveMigrationDelay*time.Millisecond + 2*time.Second)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, r := range []string{"n6", "n7"} {
		if gap, ok := logGap(t, filepath.Join(rc.srv[r].Dir(), "redis.log"), rc.ids["n5"]); ok {
			tl.gap[r] = gap
		}
	}
	return tl, cand
}

// logGap reads a real node's log for the time from its FAIL flag on the
// node id dead ("Marking node <id> as failing (quorum reached)." or "FAIL
// message received from <x> about <id>", C 7.0.15 cluster.c:1518, :2531)
// to its "Migrating to orphaned master" (:3852); the log's stamps are
// "pid:role day Mon year hh:mm:ss.mmm". It reports false when either line
// is missing.
func logGap(t *testing.T, path, dead string) (time.Duration, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	stamp := func(line string) (time.Time, bool) {
		f := strings.Fields(line)
		if len(f) < 5 {
			return time.Time{}, false
		}
		ts, err := time.Parse("2 Jan 2006 15:04:05.000", strings.Join(f[1:5], " "))
		return ts, err == nil
	}
	var fail, mig time.Time
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case fail.IsZero() && (strings.Contains(line, "Marking node "+dead+" as failing") || strings.Contains(line, "about "+dead)):
			fail, _ = stamp(line)
		case mig.IsZero() && strings.Contains(line, "Migrating to orphaned master"):
			mig, _ = stamp(line)
		}
	}
	if fail.IsZero() || mig.IsZero() {
		return 0, false
	}
	return mig.Sub(fail), true
}
