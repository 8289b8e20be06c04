package libs

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim"
)

// extendWorld is a single Redis with two clients that extend their lock
// every 300ms while holding it for 2s, cycle after cycle: the library's
// extension (on the first node's go-redis client) is often in flight when
// the workload releases on the same client, the shape that made go-redis
// take a timer from its process-global pool in one run's bubble and hand
// it to the next run (a fatal error of the runtime). model is redsync or
// redis-single.
func extendWorld(t testing.TB, model string) *locksim.Scenario {
	node := "node: A"
	if model == "redsync" {
		node = "nodes: [A]"
	}
	yaml := `name: extend-while-releasing
title: Extensions in flight when the workload releases
seed: 1
duration: 10s
network:
  latency: 1ms..3ms
redis:
  - name: A
clients:
  - name: c1
    lock: {algorithm: ` + model + `, ` + node + `, ttl: 1s, extend_every: 300ms, tries: 1000, retry_delay: 50ms}
    workload: {start: 0s, cycles: 0, hold: 2s, think: 10ms}
  - name: c2
    lock: {algorithm: ` + model + `, ` + node + `, ttl: 1s, extend_every: 300ms, tries: 1000, retry_delay: 50ms}
    workload: {start: 5ms, cycles: 0, hold: 2s, think: 10ms}
`
	s, err := locksim.Parse("extend-while-releasing.yaml", []byte(yaml))
	require.NoError(t, err)
	return s
}

// campaignRuns is the schedules of each library's campaign: 2,000 with
// LOCKSIM_LONG=1, else a short version for CI.
func campaignRuns() int {
	if os.Getenv("LOCKSIM_LONG") == "1" {
		return 2000
	}
	return 60
}

// TestCampaignsDoNotCrash: FuzzUser campaigns on redsync and redislock
// run their schedules in one process without the runtime's fatal error
// (a campaign that died killed the whole test binary). A campaign stops at
// its first finding; it is started again with the next seed until the
// schedules are spent.
func TestCampaignsDoNotCrash(t *testing.T) {
	for _, tc := range []struct {
		name    string
		model   string
		factory func(*locksim.Proc) locksim.UserLock
	}{
		{"redsync", "redsync", Redsync},
		{"redislock", "redis-single", Redislock},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := extendWorld(t, tc.model)
			total, findings := 0, 0
			for seed := uint64(1); total < campaignRuns(); seed++ {
				left := campaignRuns() - total
				f, err := locksim.FuzzUser(t, s, locksim.FuzzUserOptions{
					Clients:    bindAll(t, s, tc.factory),
					Runs:       left,
					Seed:       seed,
					Checks:     []string{"lock_safety"},
					ShrinkRuns: 5,
					OutDir:     t.TempDir(),
				})
				require.NoError(t, err)
				if f == nil {
					total += left
					continue
				}
				findings++
				total += f.Run + 1
			}
			t.Logf("%s: %d schedules, %d findings", tc.name, total, findings)
		})
	}
}
