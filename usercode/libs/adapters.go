package libs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	rsredis "github.com/go-redsync/redsync/v4/redis"
	rsgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim"
)

// Redsync returns the factory of a redsync v4 client on the scenario
// lock's nodes (nodes, or node for a single-node lock; through the
// sentinels when the node is a monitored master).
//
// Options from the scenario: WithExpiry(ttl), WithTries(1) (the
// workload's tries and retry_delay retry, as for the model),
// WithDriftFactor and WithTimeoutFactor, WithSetNXOnExtend; lock values
// from the client's seeded stream (WithGenValueFunc: redsync's default
// draws from crypto/rand, mutex.go genValue) and a seeded retry delay
// (WithRetryDelayFunc: its default draws from the global math/rand).
// With extend_every, the workload calls Extend (Mutex.ExtendContext) while
// the lock is held, and a failed extension loses the lock. With fencing_token incr, the
// token is INCR <key>:token on the first node after the lock is taken (the
// model's "first node that granted", which redsync does not tell: on a
// single node they agree).
func Redsync(p *locksim.Proc) locksim.UserLock {
	l := p.Lock()
	nodes := l.Nodes
	if len(nodes) == 0 {
		nodes = []string{l.Node}
	}
	var clients []*redis.Client
	var pools []rsredis.Pool
	for _, n := range nodes {
		c := p.Redis(n)
		if l.MasterName != "" && n == l.Master {
			c = p.Failover()
		}
		clients = append(clients, c)
		pools = append(pools, rsgoredis.NewPool(c))
	}
	rnd := p.Rand()
	opts := []redsync.Option{
		redsync.WithExpiry(l.TTL),
		redsync.WithTries(1),
		redsync.WithGenValueFunc(func() (string, error) { return fmt.Sprintf("%s-%016x", p.Name(), rnd.Uint64()), nil }),
		redsync.WithRetryDelayFunc(func(int) time.Duration { return l.RetryDelay.Lo }),
	}
	if l.DriftFactor > 0 {
		opts = append(opts, redsync.WithDriftFactor(l.DriftFactor))
	}
	if l.TimeoutFactor > 0 {
		opts = append(opts, redsync.WithTimeoutFactor(l.TimeoutFactor))
	}
	if l.SetNXOnExtend {
		opts = append(opts, redsync.WithSetNXOnExtend())
	}
	return &redsyncLock{p: p, l: l, m: redsync.New(pools...).NewMutex(l.Key, opts...), first: clients[0]}
}

type redsyncLock struct {
	p     *locksim.Proc
	l     locksim.LockParams
	m     *redsync.Mutex
	first *redis.Client
}

func (r *redsyncLock) Obtain(ctx context.Context) (*locksim.Held, error) {
	if err := r.m.LockContext(ctx); err != nil {
		return nil, err
	}
	h := &locksim.Held{Value: r.m.Value(), UntilFunc: r.m.Until}
	if err := fence(ctx, r.l, r.first, h); err != nil {
		_, _ = r.m.UnlockContext(ctx)
		return nil, err
	}
	return h, nil
}

// Extend is the workload's extension step (extend_every): redsync's
// Mutex.ExtendContext, a failure when it extended on too few nodes.
func (r *redsyncLock) Extend(ctx context.Context, h *locksim.Held) error {
	ok, err := r.m.ExtendContext(ctx)
	if err == nil && !ok {
		err = errors.New("not extended")
	}
	return err
}

func (r *redsyncLock) Release(ctx context.Context, h *locksim.Held) error {
	_, err := r.m.UnlockContext(ctx)
	return err
}

// Redislock returns the factory of a bsm/redislock client on the scenario
// lock's node (through the sentinels when it is a monitored master).
// Obtain makes one attempt (redislock's default retry strategy, NoRetry);
// the token comes from the client's seeded stream (Options.Token: its
// default reads crypto/rand, redislock.go randomToken). Fencing and
// extension as for Redsync (Extend is Lock.Refresh with the TTL).
func Redislock(p *locksim.Proc) locksim.UserLock {
	l := p.Lock()
	c := p.Redis(l.Node)
	if l.MasterName != "" {
		c = p.Failover()
	}
	return &redislockLock{p: p, l: l, c: c, client: redislock.New(c), rnd: p.Rand()}
}

type redislockLock struct {
	p      *locksim.Proc
	l      locksim.LockParams
	c      *redis.Client
	client *redislock.Client
	rnd    interface{ Uint64() uint64 }
	lock   *redislock.Lock
}

func (r *redislockLock) Obtain(ctx context.Context) (*locksim.Held, error) {
	token := fmt.Sprintf("%s-%016x", r.p.Name(), r.rnd.Uint64())
	lk, err := r.client.Obtain(ctx, r.l.Key, r.l.TTL, &redislock.Options{Token: token})
	if err != nil {
		return nil, err
	}
	r.lock = lk
	h := &locksim.Held{Value: token}
	if err := fence(ctx, r.l, r.c, h); err != nil {
		_ = lk.Release(ctx)
		return nil, err
	}
	return h, nil
}

// Extend is the workload's extension step (extend_every): redislock's
// Lock.Refresh with the TTL.
func (r *redislockLock) Extend(ctx context.Context, h *locksim.Held) error {
	return r.lock.Refresh(ctx, r.l.TTL, nil)
}

func (r *redislockLock) Release(ctx context.Context, h *locksim.Held) error {
	return r.lock.Release(ctx)
}

// fence takes the fencing token the scenario asks for: INCR <key>:token.
func fence(ctx context.Context, l locksim.LockParams, c *redis.Client, h *locksim.Held) error {
	if l.Fencing != "incr" {
		return nil
	}
	t, err := c.Incr(ctx, l.Key+":token").Result()
	if err != nil {
		return err
	}
	h.Token, h.HasToken = t, true
	return nil
}
