package usercode

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/scenarios"
)

// delLock releases with a plain DEL: it removes whatever holds the key,
// another client's lock after its own expired.
type delLock struct{ *ownLock }

func (d delLock) Release(ctx context.Context, h *Held) error {
	return d.rdb.Del(ctx, d.key).Err()
}

func newDelLock(p *Proc) Lock { return delLock{newOwnLock(p).(*ownLock)} }

// delWorld: three clients contend for a redis-single lock (compare-and-
// delete), cycle after cycle; the fuzzer draws the faults.
const delWorld = `name: plain-del
title: Three clients contend for one Redis lock
seed: 1
duration: 20s
network:
  latency: 1ms..3ms
redis:
  - name: A
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 2s, tries: 1000, retry_delay: 100ms}
    workload: {start: 0s, cycles: 0, hold: 1s, think: 50ms}
  - name: c2
    lock: {algorithm: redis-single, node: A, ttl: 2s, tries: 1000, retry_delay: 100ms}
    workload: {start: 10ms, cycles: 0, hold: 1s, think: 50ms}
  - name: c3
    lock: {algorithm: redis-single, node: A, ttl: 2s, tries: 1000, retry_delay: 100ms}
    workload: {start: 20ms, cycles: 0, hold: 1s, think: 50ms}
`

// TestFuzzSkipsInherentFindsPlainDEL: with SkipInherent, a campaign on a
// plain-DEL release passes over the schedules on which locksim's model of
// redis-single (compare-and-delete) violates lock safety too (a pause
// longer than the TTL) and finds the DEL bug: a finding that says it is
// the code's own and names the DEL. CI runs one campaign seed;
// LOCKSIM_LONG=1 five, each of 300 schedules, and all must find it.
func TestFuzzSkipsInherentFindsPlainDEL(t *testing.T) {
	s, err := scenarios.Parse("plain-del.yaml", []byte(delWorld))
	require.NoError(t, err)
	seeds := 1
	if os.Getenv("LOCKSIM_LONG") == "1" {
		seeds = 5
	}
	bind := map[string]func(*Proc) Lock{"c1": newDelLock, "c2": newDelLock, "c3": newDelLock}
	found := 0
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		f, err := Fuzz(t, s, FuzzOptions{
			Options:      Options{Clients: bind},
			Checks:       []string{checker.KindLockSafety},
			Runs:         300,
			Seed:         seed,
			SkipInherent: true,
			ShrinkRuns:   40,
			OutDir:       t.TempDir(),
		})
		require.NoError(t, err)
		if f == nil {
			t.Logf("campaign seed %d: no finding in 300 schedules", seed)
			continue
		}
		require.NotNil(t, f.Whose)
		assert.False(t, f.Whose.Inherent)
		assert.Contains(t, f.Whose.Text, "your code: locksim's model of redis-single keeps lock safety")
		assert.Regexp(t, `c\d's DEL at \d+\.\d{3}s removed c\d's key "lock" on A`, f.Whose.Text)
		t.Logf("campaign seed %d: run %d: %s", seed, f.Run, f.Whose.Text)
		found++
	}
	assert.Equal(t, seeds, found)
}

// TestWhoseInherent: the GC pause of single-gc-pause breaks the model of
// redis-single too: a finding there says it is inherent.
func TestWhoseInherent(t *testing.T) {
	s := builtin(t, "single-gc-pause")
	opt := Options{Clients: map[string]func(*Proc) Lock{"c1": newOwnLock, "c2": newOwnLock}}
	o, err := Run(t, s, opt)
	require.NoError(t, err)
	w, err := whose(s, s.Seed, checker.KindLockSafety, opt, o)
	require.NoError(t, err)
	assert.True(t, w.Inherent)
	assert.Contains(t, w.Text, "inherent: locksim's model of redis-single also violates lock safety")
	assert.Contains(t, w.Text, "paused for 30s")
}
