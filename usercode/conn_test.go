package usercode

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/scenarios"
)

// probe is user code that runs f once, at its first Obtain, and records
// what it saw.
type probe struct {
	p    *Proc
	rdb  *goredis.Client
	f    func(ctx context.Context, p *Proc, rdb *goredis.Client)
	once *sync.Once
}

func (pr *probe) Obtain(ctx context.Context) (*Held, error) {
	pr.once.Do(func() { pr.f(ctx, pr.p, pr.rdb) })
	return nil, errors.New("probe done")
}

func (pr *probe) Release(context.Context, *Held) error { return nil }

func probeClient(f func(ctx context.Context, p *Proc, rdb *goredis.Client)) func(*Proc) Lock {
	once := &sync.Once{}
	return func(p *Proc) Lock {
		return &probe{p: p, rdb: p.Redis(p.Lock().Node), f: f, once: once}
	}
}

func parse(t *testing.T, yaml string) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Parse("test.yaml", []byte(yaml))
	require.NoError(t, err)
	return s
}

// oneClient is a world of one Redis node A and one client c1 that starts
// at start, with extra faults.
func oneClient(start, faults string) string {
	return `
name: conn-probe
duration: 20s
network: {latency: 1ms}
redis: [{name: A}]
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 10s, tries: 1}
    workload: {start: ` + start + `, cycles: 1, think: 30s}
faults:
` + faults
}

func TestConnPipelineKeepsOrder(t *testing.T) {
	var got []string
	s := parse(t, oneClient("0s", "  []"))
	_, err := Run(t, s, Options{Clients: map[string]func(*Proc) Lock{"c1": probeClient(func(ctx context.Context, p *Proc, rdb *goredis.Client) {
		cmds, err := rdb.Pipelined(ctx, func(pp goredis.Pipeliner) error {
			pp.Set(ctx, "k", "1", 0)
			pp.Incr(ctx, "k")
			pp.IncrBy(ctx, "k", 10)
			pp.Get(ctx, "k")
			return nil
		})
		require.NoError(t, err)
		for _, c := range cmds {
			got = append(got, c.String())
		}
	})}})
	require.NoError(t, err)
	assert.Equal(t, []string{"set k 1: OK", "incr k: 2", "incrby k 10: 12", "get k: 12"}, got)
}

func TestConnStallsAcrossHeal(t *testing.T) {
	var elapsed time.Duration
	var val string
	var gerr error
	s := parse(t, oneClient("1200ms", `
  - at: 1s
    kind: partition
    groups: [[c1], [A]]
    heal_after: 1s
`))
	_, err := Run(t, s, Options{Clients: map[string]func(*Proc) Lock{"c1": probeClient(func(ctx context.Context, p *Proc, rdb *goredis.Client) {
		start := time.Now()
		val, gerr = rdb.Get(ctx, "k").Result()
		elapsed = time.Since(start)
	})}})
	require.NoError(t, err)
	require.ErrorIs(t, gerr, goredis.Nil) // the reply came: no key
	assert.Equal(t, "", val)
	// Linux retransmits at 200 ms, then 400 ms, 800 ms after the first
	// send (sim/conn.go): the heal at 2 s lets the third retransmission,
	// at 1.2 + 1.4 = 2.6 s, through.
	assert.GreaterOrEqual(t, elapsed, 800*time.Millisecond)
	assert.Less(t, elapsed, 2*time.Second)
}

func TestConnResetOnServerCrash(t *testing.T) {
	var errs []error
	var after string
	s := parse(t, oneClient("500ms", `
  - at: 1s
    kind: crash
    node: A
    restart_after: 300ms
`))
	_, err := Run(t, s, Options{Clients: map[string]func(*Proc) Lock{"c1": probeClient(func(ctx context.Context, p *Proc, rdb *goredis.Client) {
		errs = append(errs, rdb.Set(ctx, "k", "v", 0).Err())
		time.Sleep(time.Second) // A crashes and restarts meanwhile
		errs = append(errs, rdb.Get(ctx, "k").Err())
		// go-redis dials again: the restarted node lost the key.
		var e error
		after, e = rdb.Get(ctx, "k").Result()
		errs = append(errs, e)
	})}})
	require.NoError(t, err)
	require.Len(t, errs, 3)
	assert.NoError(t, errs[0])
	require.Error(t, errs[1])
	assert.Contains(t, errs[1].Error(), "EOF") // the process crash closed its sockets with a FIN
	assert.ErrorIs(t, errs[2], goredis.Nil)
	assert.Equal(t, "", after)
}

func TestConnReadDeadlineInVirtualTime(t *testing.T) {
	var elapsed time.Duration
	var gerr error
	s := parse(t, oneClient("1500ms", `
  - at: 1s
    kind: partition
    groups: [[c1], [A]]
`))
	_, err := Run(t, s, Options{Clients: map[string]func(*Proc) Lock{"c1": probeClient(func(ctx context.Context, p *Proc, rdb *goredis.Client) {
		ctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		gerr = rdb.Get(ctx, "k").Err()
		elapsed = time.Since(start)
	})}})
	require.NoError(t, err)
	require.Error(t, gerr)
	assert.True(t, errors.Is(gerr, os.ErrDeadlineExceeded) || errors.Is(gerr, context.DeadlineExceeded), "%v", gerr)
	assert.Equal(t, 300*time.Millisecond, elapsed)
}
