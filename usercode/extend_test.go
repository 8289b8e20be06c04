package usercode

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/scenarios"
)

// getExpireLock extends in two round trips: GET the key, and if it still
// holds the lock's value, PEXPIRE it. A pause between the two lets the key
// expire and another client take it; the PEXPIRE then extends the other
// client's lock, and answers 1, so the former holder believes it still
// holds its own.
type getExpireLock struct{ *ownLock }

func (g getExpireLock) Extend(ctx context.Context, h *Held) error {
	v, err := g.rdb.Get(ctx, g.key).Result()
	if err != nil {
		return err
	}
	if v != h.Value {
		return errors.New("the key holds another value")
	}
	ok, err := g.rdb.PExpire(ctx, g.key, g.ttl).Result()
	if err == nil && !ok {
		err = errors.New("the key is gone")
	}
	return err
}

// getExpireWorld: c1 extends every second; a pause of c1 falls between its
// first extension's GET and PEXPIRE (the GET left at 1.002s, its reply
// lands during the pause), long enough for the key to expire and c2 to
// take it.
const getExpireWorld = `name: get-pause-pexpire
title: A two-step extension lands on the next holder's key
seed: 1
duration: 20s
network:
  latency: 1ms
redis:
  - name: A
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 3s, extend_every: 1s}
    workload: {start: 0s, cycles: 1, hold: 10s}
  - name: c2
    lock: {algorithm: redis-single, node: A, ttl: 3s, tries: 100, retry_delay: 200ms}
    workload: {start: 500ms, cycles: 1, hold: 5s}
faults:
  - on: {event: acquired, client: c1}
    after: 1001500us
    kind: pause
    node: c1
    for: 5s
`

// TestExtendIsAStepAndItsPEXPIREIsNamed: the team binds its Extend as a
// method of its lock, the workload drives it every extend_every, and the
// explanation of the overlap names the former holder's PEXPIRE that acted
// on the new holder's key.
func TestExtendIsAStepAndItsPEXPIREIsNamed(t *testing.T) {
	s, err := scenarios.Parse("get-pause-pexpire.yaml", []byte(getExpireWorld))
	require.NoError(t, err)
	bind := func(p *Proc) Lock { return getExpireLock{newOwnLock(p).(*ownLock)} }
	o, err := Run(t, s, Options{KeepTrace: true, Clients: map[string]func(*Proc) Lock{"c1": bind, "c2": newOwnLock}})
	require.NoError(t, err)
	var pexpires int
	for _, e := range o.Trace {
		if e.Proc == "c1" && strings.Contains(e.Text, "pexpire") {
			pexpires++
		}
	}
	require.Positive(t, pexpires, "the workload called Extend")
	require.Equal(t, checker.Violated, o.Verdicts.Of(checker.LockSafety))
	require.NotEmpty(t, o.Violations)
	ex := o.Violations[0].Explanation
	t.Log(ex)
	assert.Regexp(t, `c1's PEXPIRE at 6\.0\d+s acted on the lock key "lock" that c2 had set \(on A\)`, ex)
}

// failingExtendLock's extension always fails: the workload ends the
// belief there (the lost-lock path is built in).
type failingExtendLock struct{ *ownLock }

func (failingExtendLock) Extend(context.Context, *Held) error { return errors.New("refused") }

func TestFailedExtendLosesTheLock(t *testing.T) {
	s, err := scenarios.Parse("get-pause-pexpire.yaml", []byte(getExpireWorld))
	require.NoError(t, err)
	bind := func(p *Proc) Lock { return failingExtendLock{newOwnLock(p).(*ownLock)} }
	o, err := Run(t, s, Options{KeepTrace: true, Clients: map[string]func(*Proc) Lock{"c1": bind, "c2": newOwnLock}})
	require.NoError(t, err)
	var lost bool
	for _, e := range o.Trace {
		if e.Proc == "c1" && strings.Contains(e.Text, "lock lost: extend failed: refused") {
			lost = true
		}
	}
	require.True(t, lost)
}
