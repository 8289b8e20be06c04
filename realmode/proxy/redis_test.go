package proxy

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/realmode/launch"
)

// replicated is a master A and a replica B whose replication link runs
// through the proxy: B connects from its own address (bind-source-addr) to
// A's front.
type replicated struct {
	p    *Proxy
	a, b *launch.Server
	ac   *goredis.Client
	bc   *goredis.Client
}

func startReplicated(t *testing.T, masterExtra, replicaExtra []string) *replicated {
	t.Helper()
	simtest.NeedBinaries(t, "the proxy test with real Redis", "apt-get install -y redis-server", "redis-server")
	pool := launch.NewAddrPool()
	ip := func() string {
		a, err := pool.Next()
		require.NoError(t, err)
		return a
	}
	// The directories first: t.TempDir's removal, registered at its first
	// call, must run after the servers stop (cleanups run last-registered
	// first). Removed under a running server, a directory can fill again
	// (Redis opens its log file for every line it logs, a replica writes
	// its RDB there) and the removal fails with "directory not empty".
	aDir, bDir := t.TempDir(), t.TempDir()
	g := launch.NewGroup()
	t.Cleanup(g.StopAll)
	r := &replicated{p: New()}
	t.Cleanup(func() { r.p.Close() })
	aIP, bIP, frontIP := ip(), ip(), ip()
	var err error
	// repl-diskless-sync-delay 0: no 5 s wait for more replicas before a
	// full sync (its 7.0 default, src/config.c).
	masterExtra = append([]string{"repl-diskless-sync-delay 0"}, masterExtra...)
	r.a, err = g.StartRedis(launch.RedisOptions{Name: "A", IP: aIP, Dir: aDir, ExtraConfig: masterExtra})
	require.NoError(t, err)
	require.NoError(t, r.p.Register(aIP, "A"))
	require.NoError(t, r.p.Register(bIP, "B"))
	front, err := r.p.Listen("A", frontIP+":0", r.a.Addr())
	require.NoError(t, err)
	r.b, err = g.StartRedis(launch.RedisOptions{Name: "B", IP: bIP, Dir: bDir, ReplicaOf: front,
		BindSourceAddr: bIP, ExtraConfig: replicaExtra})
	require.NoError(t, err)
	opts := func(s *launch.Server) *goredis.Options {
		return &goredis.Options{Addr: s.Addr(), Protocol: 2, DisableIdentity: true, MaxRetries: -1}
	}
	r.ac, r.bc = goredis.NewClient(opts(r.a)), goredis.NewClient(opts(r.b))
	t.Cleanup(func() { r.ac.Close(); r.bc.Close() })
	eventually(t, "B syncs with A", func() bool {
		return stat(t, r.bc, "replication", "master_link_status") == "up"
	})
	return r
}

// stat reads one field of INFO section.
func stat(t *testing.T, c *goredis.Client, section, field string) string {
	info, err := c.Info(context.Background(), section).Result()
	if err != nil {
		return ""
	}
	m := regexp.MustCompile(`(?m)^` + field + `:(\S*)`).FindStringSubmatch(info)
	if m == nil {
		return ""
	}
	return m[1]
}

func statInt(t *testing.T, c *goredis.Client, section, field string) int {
	n, err := strconv.Atoi(stat(t, c, section, field))
	require.NoError(t, err, "INFO %s %s", section, field)
	return n
}

func write(t *testing.T, c *goredis.Client, prefix string, n int) {
	ctx := context.Background()
	for i := 0; i < n; i++ {
		require.NoError(t, c.Set(ctx, fmt.Sprintf("%s:%d", prefix, i), "v", 0).Err())
	}
}

// TestRedisReplicaCatchesUpAfterCut: the replication stream from A to B is
// cut and healed. A short cut (within repl-timeout) is only added delay:
// the same connection carries the held writes, no resync of any kind. A
// cut past the replica's repl-timeout makes B drop the link ("MASTER
// timeout", src/replication.c replicationCron) and reconnect; after the
// heal it continues with PSYNC from the backlog (a partial resync,
// masterTryPartialResynchronization) because the writes made during the
// cut fit in it; with a backlog too small for them it needs a full resync.
func TestRedisReplicaCatchesUpAfterCut(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name         string
		replTimeout  int // seconds, on the replica
		backlog      string
		writes       int
		valueBytes   int
		wantPartial  int
		wantFull     int
		waitTimedOut bool
	}{
		{"short cut: held bytes only", 60, "1mb", 50, 1, 0, 1, false},
		{"cut past repl-timeout: partial resync", 1, "1mb", 50, 1, 1, 1, true},
		{"cut past repl-timeout, backlog overrun: full resync", 1, "16kb", 200, 1000, 0, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := startReplicated(t, []string{"repl-backlog-size " + tt.backlog},
				[]string{fmt.Sprintf("repl-timeout %d", tt.replTimeout)})
			write(t, r.ac, "before", 5)
			eventually(t, "B has the first writes", func() bool { return r.bc.Exists(ctx, "before:4").Val() == 1 })
			require.Equal(t, 1, statInt(t, r.ac, "stats", "sync_full"))

			id := r.p.Cut("A", "B")
			value := make([]byte, tt.valueBytes)
			for i := range value {
				value[i] = 'x'
			}
			for i := 0; i < tt.writes; i++ {
				require.NoError(t, r.ac.Set(ctx, fmt.Sprintf("during:%d", i), value, 0).Err())
			}
			time.Sleep(300 * time.Millisecond)
			assert.Zero(t, r.bc.Exists(ctx, "during:0").Val(), "nothing crosses the cut")
			if tt.waitTimedOut {
				eventually(t, "B notices the master timeout", func() bool {
					return stat(t, r.bc, "replication", "master_link_status") == "down"
				})
			}
			r.p.Uncut(id)
			eventually(t, "B catches up", func() bool {
				return r.bc.Exists(ctx, fmt.Sprintf("during:%d", tt.writes-1)).Val() == 1 &&
					stat(t, r.bc, "replication", "master_link_status") == "up"
			})
			assert.Equal(t, int64(5+tt.writes), r.bc.DBSize(ctx).Val())
			assert.Equal(t, tt.wantPartial, statInt(t, r.ac, "stats", "sync_partial_ok"), "partial resyncs")
			assert.Equal(t, tt.wantFull, statInt(t, r.ac, "stats", "sync_full"), "full resyncs")
		})
	}
}

// TestRedisResetReplicaLink: a reset of the A-B connections makes B
// reconnect at once and continue with a partial resync.
func TestRedisResetReplicaLink(t *testing.T) {
	ctx := context.Background()
	r := startReplicated(t, nil, nil)
	write(t, r.ac, "before", 5)
	eventually(t, "B has the first writes", func() bool { return r.bc.Exists(ctx, "before:4").Val() == 1 })
	assert.Equal(t, 1, r.p.Reset("A", "B"))
	write(t, r.ac, "after", 5)
	eventually(t, "B reconnects and catches up", func() bool {
		return r.bc.Exists(ctx, "after:4").Val() == 1 && stat(t, r.bc, "replication", "master_link_status") == "up"
	})
	assert.Equal(t, 1, statInt(t, r.ac, "stats", "sync_partial_ok"))
	assert.Equal(t, 1, statInt(t, r.ac, "stats", "sync_full"))
}

// TestRedisReplicaOfPoweredOffMaster: issue 32. When A loses power, B's
// replication link stays up: B hears nothing, no FIN, no RST, and drops
// the link only when its repl-timeout (here 4 s) passes without a byte
// from A ("MASTER timeout", src/replication.c replicationCron). A kill
// that the proxy let through, or a reset, would end the link at once.
// Once A is back B links up again.
func TestRedisReplicaOfPoweredOffMaster(t *testing.T) {
	ctx := context.Background()
	r := startReplicated(t, nil, []string{"repl-timeout 4"})
	write(t, r.ac, "before", 5)
	eventually(t, "B has the first writes", func() bool { return r.bc.Exists(ctx, "before:4").Val() == 1 })
	r.p.PowerOff("A")
	require.NoError(t, r.a.Kill())
	killed := time.Now()
	// Well inside repl-timeout, however loaded the machine: B's link is
	// still up (it would be down within milliseconds of a FIN or RST).
	for time.Since(killed) < 1500*time.Millisecond {
		require.Equal(t, "up", stat(t, r.bc, "replication", "master_link_status"),
			"B's link to a powered-off master, %v after the power loss", time.Since(killed))
		time.Sleep(100 * time.Millisecond)
	}
	eventually(t, "B drops the link at its repl-timeout", func() bool {
		return stat(t, r.bc, "replication", "master_link_status") == "down"
	})
	assert.GreaterOrEqual(t, time.Since(killed), 3*time.Second, "not before repl-timeout (4 s, checked once a second)")
	require.NoError(t, r.a.Restart())
	r.p.PowerOn("A")
	eventually(t, "B links up with the restarted A", func() bool {
		return stat(t, r.bc, "replication", "master_link_status") == "up"
	})
}
