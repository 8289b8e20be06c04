package locksim_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim"
)

// docs/guide/user-code.md, "Your own lock code in the simulation". The
// code between the markers is the guide's example, word for word
// (TestUserCodeGuideExample checks it).

// readme-user-example-begin

// myLock is a team's own lock on go-redis: SET NX PX on each of its nodes
// in turn, held on a majority within the validity, released by script.
type myLock struct {
	nodes []*redis.Client
	key   string
	ttl   time.Duration
	rnd   *rand.Rand
}

var unlock = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then
  return redis.call("del", KEYS[1]) else return 0 end`)

func (l *myLock) Obtain(ctx context.Context) (*locksim.Held, error) {
	value, start, got := strconv.FormatUint(l.rnd.Uint64(), 36), time.Now(), 0
	for _, n := range l.nodes {
		c, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		if ok, err := n.SetNX(c, l.key, value, l.ttl).Result(); err == nil && ok {
			got++
		}
		cancel()
	}
	h := &locksim.Held{Value: value, Until: start.Add(l.ttl - l.ttl/100)}
	if got <= len(l.nodes)/2 || time.Now().After(h.Until) {
		return nil, l.Release(ctx, h)
	}
	return h, nil
}

func (l *myLock) Release(ctx context.Context, h *locksim.Held) error {
	for _, n := range l.nodes {
		unlock.Run(ctx, n, []string{l.key}, h.Value)
	}
	return nil
}

func newMyLock(p *locksim.Proc) locksim.UserLock {
	l := &myLock{key: p.Lock().Key, ttl: p.Lock().TTL, rnd: p.Rand()}
	for _, node := range append(p.Lock().Nodes, p.Lock().Node) {
		if node != "" {
			l.nodes = append(l.nodes, p.Redis(node))
		}
	}
	return l
}

func TestMyLock(t *testing.T) {
	for _, name := range []string{"single-gc-pause", "redlock-clock-jump"} {
		s, err := locksim.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		res, err := locksim.RunUser(t, s, locksim.UserOptions{
			Clients:          map[string]func(*locksim.Proc) locksim.UserLock{"c1": newMyLock, "c2": newMyLock},
			CheckDeterminism: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: lock safety %s, resource safety %s", name, res.LockSafety, res.ResourceSafety)
		for _, e := range res.Explanations {
			t.Log(e)
		}
	}
}

// readme-user-example-end
