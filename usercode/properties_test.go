package usercode

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/scenarios"
)

// fencedLock takes a fencing token with INCR <key>:token after the lock.
type fencedLock struct{ *ownLock }

func (f fencedLock) Obtain(ctx context.Context) (*Held, error) {
	h, err := f.ownLock.Obtain(ctx)
	if h == nil || err != nil {
		return h, err
	}
	t, err := f.rdb.Incr(ctx, f.key+":token").Result()
	if err != nil {
		return nil, err
	}
	h.Token, h.HasToken = t, true
	return h, nil
}

func newFencedLock(p *Proc) Lock { return fencedLock{newOwnLock(p).(*ownLock)} }

// TestFuzzTokenOrderOfUserCode: token order is a property a campaign on
// user code can target: crashes of the counter's Redis, which keeps no
// AOF, hand out a token twice, and the finding is explained by the
// token-order text, not another property's.
func TestFuzzTokenOrderOfUserCode(t *testing.T) {
	s := builtin(t, "fencing-counter-restart")
	f, err := Fuzz(t, s, FuzzOptions{
		Options:    Options{Clients: map[string]func(*Proc) Lock{"c1": newFencedLock, "c2": newFencedLock}},
		Kinds:      []string{"crash"},
		Checks:     []string{checker.KindTokenOrder},
		Runs:       100,
		ShrinkRuns: 30,
		OutDir:     t.TempDir(),
	})
	require.NoError(t, err)
	require.NotNil(t, f, "no token-order violation in 100 schedules")
	assert.Equal(t, checker.KindTokenOrder, f.Kind)
	assert.Contains(t, f.Explanation, "token")
	t.Log(f)
}

// TestFindingExplainedByItsOwnProperty: the explanation of a finding is
// that of the property found violated, even when the run violated
// another property first in the registry's order.
func TestFindingExplainedByItsOwnProperty(t *testing.T) {
	s := builtin(t, "single-gc-pause")
	f, err := Fuzz(t, s, FuzzOptions{
		Options:    Options{Clients: map[string]func(*Proc) Lock{"c1": newOwnLock, "c2": newOwnLock}},
		Kinds:      []string{"pause"},
		Checks:     []string{checker.KindResourceSafety},
		Runs:       100,
		ShrinkRuns: 30,
		OutDir:     t.TempDir(),
	})
	require.NoError(t, err)
	require.NotNil(t, f)
	assert.Equal(t, checker.KindResourceSafety, f.Kind)
	assert.NotContains(t, f.Explanation, "believed it held the lock")
	t.Log(f.Explanation)
}

// blockingLock's Obtain waits on a channel no one sends on and ignores
// its context.
type blockingLock struct{ *ownLock }

func (blockingLock) Obtain(ctx context.Context) (*Held, error) {
	<-make(chan struct{})
	return nil, nil
}

// TestBlockedCodeIsReportedLikeAHang: code blocked inside the simulation
// made synctest's deadlock panic kill the test binary at the end of the
// run; it is now an error naming the client, the call, when it was made
// and what it waits on. The next run in the process works.
func TestBlockedCodeIsReportedLikeAHang(t *testing.T) {
	s := builtin(t, "single-gc-pause")
	block := func(p *Proc) Lock { return blockingLock{newOwnLock(p).(*ownLock)} }
	_, err := Run(t, s, Options{Clients: map[string]func(*Proc) Lock{"c1": newOwnLock, "c2": block}})
	var be *BlockedError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, []string{"client c2: Obtain, called at virtual time 1s"}, be.Calls)
	assert.Contains(t, be.Goroutines, "chan receive")
	assert.Contains(t, be.Goroutines, "blockingLock.Obtain")
	o, err := Run(t, s, Options{Clients: map[string]func(*Proc) Lock{"c1": newOwnLock, "c2": newOwnLock}})
	require.NoError(t, err)
	assert.Equal(t, checker.Violated, o.Verdicts.Of(checker.LockSafety))
}

// ctxBlockLock's Obtain waits on a channel no one sends on, but honours
// its context.
type ctxBlockLock struct{ *ownLock }

func (ctxBlockLock) Obtain(ctx context.Context) (*Held, error) {
	select {
	case <-make(chan struct{}):
	case <-ctx.Done():
	}
	return nil, ctx.Err()
}

const liveWorld = `name: obtain-never-returns
title: c2's Obtain waits on something that never comes
seed: 1
duration: 30s
network:
  latency: 1ms
redis:
  - name: A
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 2s}
    workload: {start: 0s, cycles: 1, hold: 1s}
  - name: c2
    lock: {algorithm: redis-single, node: A, ttl: 2s}
    workload: {start: 3s, cycles: 1, hold: 1s}
`

// TestLivenessNamesTheCallThatNeverReturned: code that honours its
// context returns when the run ends; the liveness violation then says
// the lock stood free and names the call that never returned, not a
// holder or a release.
func TestLivenessNamesTheCallThatNeverReturned(t *testing.T) {
	s, err := scenarios.Parse("obtain-never-returns.yaml", []byte(liveWorld))
	require.NoError(t, err)
	block := func(p *Proc) Lock { return ctxBlockLock{newOwnLock(p).(*ownLock)} }
	o, err := Run(t, s, Options{Clients: map[string]func(*Proc) Lock{"c1": newOwnLock, "c2": block}})
	require.NoError(t, err)
	require.Equal(t, checker.Violated, o.Verdicts.Of(checker.Liveness))
	ex := explanationOf(o, checker.KindLiveness)
	assert.Contains(t, ex, "nobody held it")
	assert.Contains(t, ex, "the user code's call had not returned when the run ended (its context was cancelled then): c2: Obtain, called at virtual time 3s")
	assert.NotContains(t, ex, "release")
}
