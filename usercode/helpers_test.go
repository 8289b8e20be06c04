package usercode

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
	"testing"

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
