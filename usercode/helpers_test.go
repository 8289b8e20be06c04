package usercode

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/scenarios"
)

// ownLock is a team's own single-node lock: SET NX PX with a random value,
// released by the compare-and-delete script (their copy, their layout).
type ownLock struct {
	p   *Proc
	rdb *goredis.Client
	key string
	ttl time.Duration
	rnd *rand.Rand
}

var ownRelease = goredis.NewScript(`
  if redis.call("get", KEYS[1]) == ARGV[1] then
    return redis.call("del", KEYS[1])
  else
    return 0
  end`)

func newOwnLock(p *Proc) Lock {
	l := p.Lock()
	return &ownLock{p: p, rdb: p.Redis(l.Node), key: l.Key, ttl: l.TTL, rnd: p.Rand()}
}

func (o *ownLock) Obtain(ctx context.Context) (*Held, error) {
	val := fmt.Sprintf("%s-%x", o.p.Name(), o.rnd.Uint64())
	ok, err := o.rdb.SetNX(ctx, o.key, val, o.ttl).Result()
	if err != nil || !ok {
		return nil, err
	}
	return &Held{Value: val}, nil
}

func (o *ownLock) Release(ctx context.Context, h *Held) error {
	return ownRelease.Run(ctx, o.rdb, []string{o.key}, h.Value).Err()
}

func builtin(t *testing.T, name string) *scenarios.Scenario {
	s, err := scenarios.Builtin(name)
	require.NoError(t, err)
	return s
}

// quorumLock is a team's own Redlock: SET NX PX on every node in parallel
// goroutines, a majority within the validity.
type quorumLock struct {
	p     *Proc
	nodes []*goredis.Client
	key   string
	ttl   time.Duration
	rnd   *rand.Rand
	value func(r *rand.Rand) string
}

func newQuorumLock(p *Proc) Lock {
	l := p.Lock()
	q := &quorumLock{p: p, key: l.Key, ttl: l.TTL, rnd: p.Rand()}
	for _, n := range l.Nodes {
		q.nodes = append(q.nodes, p.Redis(n))
	}
	return q
}

func (q *quorumLock) Obtain(ctx context.Context) (*Held, error) {
	val := fmt.Sprintf("%s-%x", q.p.Name(), q.rnd.Uint64())
	if q.value != nil {
		val = q.value(q.rnd)
	}
	start := time.Now()
	oks := make(chan bool, len(q.nodes))
	for _, n := range q.nodes {
		go func() {
			c, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			ok, err := n.SetNX(c, q.key, val, q.ttl).Result()
			oks <- err == nil && ok
		}()
	}
	got := 0
	for range q.nodes {
		if <-oks {
			got++
		}
	}
	until := start.Add(q.ttl - time.Since(start) - q.ttl/100)
	h := &Held{Value: val, Until: until}
	if got > len(q.nodes)/2 && time.Now().Before(until) {
		return h, nil
	}
	_ = q.Release(ctx, h)
	return nil, nil
}

func (q *quorumLock) Release(ctx context.Context, h *Held) error {
	var wg sync.WaitGroup
	for _, n := range q.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			ownRelease.Run(c, n, []string{q.key}, h.Value)
		}()
	}
	wg.Wait()
	return nil
}
