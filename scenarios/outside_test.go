package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/sim"
)

// TestOutsideScenarios runs the scenarios in testdata/outside, written by
// an outside user from the scenario guide (docs/guide/scenarios.md) and the reference notes
// only, before reading the catalogue (issue 26's "scenarios you have not
// seen"), on seeds 1-3: each must match its expect block, whose story its
// why: tells, and parse without warnings. Predicted, simulated and real
// (simrun twin, 2 runs each, when written; "refused" where real mode
// cannot run it):
//
//	file                                  predicted          model              real
//	cluster-paused-master                 holds              holds              holds
//	cluster-paused-master-cut-replica     violated           violated           violated
//	fencing-monotonic-read-before-write   resource violated  resource violated  resource violated
//	fencing-mark-read-before-write        resource holds     resource holds     resource holds
//	fencing-token-cas-read-before-write   resource holds     resource holds     resource holds
//	min-replicas-partition                holds              holds              holds (c2 at 21s, model 27s: proxy releases at the heal)
//	memcached-add-eviction-slab-class     violated           violated           violated
//	memcached-cas-release-restart         violated           violated           violated (c3 after c2's release in both)
//	memcached-add-restart-500ms           violated           violated           violated
//	mysql-for-update-lock-wait            holds              holds              holds
//	mysql-for-update-wait-timeout         violated           violated           violated
//	mysql-insert-power-trx0               violated           violated           refused (power loss with trx_commit 0)
//	mysql-insert-power-trx1               holds              holds, liveness violated  holds
//	redis-maxmemory-allkeys-lru           violated           violated           violated
//	redis-maxmemory-contender-keeps-hot   violated           holds              holds
//	redis-maxmemory-noeviction            holds              holds              holds
//	redis-maxmemory-volatile-ttl          violated           violated           violated
//	redisson-watchdog-pause-40s           violated           violated           violated
//	redisson-watchdog-short-pause         holds              holds              holds
//	redisson-watchdog-partition-45s       violated           violated           violated
//	redlock-restart-explicit              violated           violated           violated
//	redlock-delayed-restart-explicit      holds              holds              holds
//	redsync-pools-clock-jump              violated           violated           violated
//	zk-partition-short                    holds              holds              holds
//	zk-partition-20s-lost-on-disconnect   holds              holds              holds
//
// Left out: a volatile-ttl story whose cache keys had no TTL (the model
// refuses c2's SET NX with OOM once the lock key is evicted; real Redis
// took it, its client buffers moving used_memory under the limit: a margin
// of bytes, docs/guide/real-and-twin.md), and a cluster cut at 0s (the
// initial-sync warning, TestInitialSyncWarning).
func TestOutsideScenarios(t *testing.T) {
	dir := filepath.Join("testdata", "outside")
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.NotEmpty(t, ents)
	evicted := func(o *Outcome, key string) bool {
		for _, e := range o.Trace {
			if (e.Kind == "key-evicted" || e.Kind == "item-evicted") && strings.Contains(e.Text, key) {
				return true
			}
		}
		return false
	}
	story := map[string]func(t *testing.T, o *Outcome){
		"redis-maxmemory-allkeys-lru.yaml": func(t *testing.T, o *Outcome) {
			assert.True(t, evicted(o, `"lock"`), "the idle lock key was not evicted")
		},
		"redis-maxmemory-contender-keeps-hot.yaml": func(t *testing.T, o *Outcome) {
			assert.False(t, evicted(o, `"lock"`), "the lock key touched by c2's SET NX was evicted")
			assert.Equal(t, 2, o.Stats.Grants)
		},
		"memcached-cas-release-restart.yaml": func(t *testing.T, o *Outcome) {
			// c1's cas release leaves c2's item: c3 is granted only
			// after c2's own release.
			var c2Released, c3Acquired sim.Time
			for _, e := range o.Trace {
				switch {
				case e.Kind == sim.KindReleased && e.Proc == "c2":
					c2Released = e.At
				case e.Kind == sim.KindAcquired && e.Proc == "c3":
					c3Acquired = e.At
				}
			}
			require.NotZero(t, c3Acquired)
			assert.Greater(t, c3Acquired, c2Released)
		},
		"memcached-add-eviction-slab-class.yaml": func(t *testing.T, o *Outcome) {
			assert.True(t, evicted(o, "lock"), "the add-lock item was not evicted")
		},
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			s, err := Parse(e.Name(), data)
			require.NoError(t, err)
			assert.Empty(t, s.Warnings)
			for seed := uint64(1); seed <= 3; seed++ {
				o, err := Run(s, seed, Options{KeepTrace: story[e.Name()] != nil})
				require.NoError(t, err)
				require.True(t, o.Matched, "seed %d: %v", seed, o.Verdicts)
				assert.NotEqual(t, checker.Unknown, o.Verdicts.Of(checker.LockSafety))
				if f := story[e.Name()]; f != nil {
					f(t, o)
				}
			}
		})
	}
}
