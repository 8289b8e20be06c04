package usercode

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A paused client's replies wait for its resume; its clocks run on.
func TestPauseHoldsReplies(t *testing.T) {
	var elapsed time.Duration
	s := parse(t, oneClient("400ms", `
  - at: 401ms
    kind: pause
    node: c1
    for: 5s
`))
	_, err := Run(t, s, Options{Clients: map[string]func(*Proc) Lock{"c1": probeClient(func(ctx context.Context, p *Proc, rdb *goredis.Client) {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		start := time.Now()
		require.ErrorIs(t, rdb.Get(ctx, "k").Err(), goredis.Nil)
		elapsed = time.Since(start)
	})}})
	require.NoError(t, err)
	// The GET left at 400 ms, its reply arrived at about 402 ms while c1
	// was paused, and was handled after the resume at 5.401 s.
	assert.GreaterOrEqual(t, elapsed, 5*time.Second)
	assert.Less(t, elapsed, 5010*time.Millisecond)
}

// A crash ends the incarnation (its calls see their context cancelled, its
// connections fail) and a restart runs a fresh instance from the factory.
func TestCrashAndRestartRunFreshInstance(t *testing.T) {
	var mu sync.Mutex
	var starts []time.Duration
	var cancelled []error
	s := parse(t, `
name: crash-user
duration: 10s
network: {latency: 1ms}
redis: [{name: A}]
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 10s, tries: 1}
    workload: {start: 0s, cycles: 1, think: 30s}
faults:
  - at: 1s
    kind: crash
    node: c1
    restart_after: 1s
`)
	o, err := Run(t, s, Options{KeepTrace: true, Clients: map[string]func(*Proc) Lock{"c1": func(p *Proc) Lock {
		mu.Lock()
		starts = append(starts, p.Mono())
		mu.Unlock()
		return &probe{p: p, rdb: p.Redis("A"), once: &sync.Once{}, f: func(ctx context.Context, p *Proc, rdb *goredis.Client) {
			select {
			case <-ctx.Done():
				cancelled = append(cancelled, ctx.Err())
			case <-time.After(5 * time.Second):
			}
		}}
	}}})
	require.NoError(t, err)
	require.Len(t, starts, 2, "one instance per incarnation")
	assert.Equal(t, []error{context.Canceled}, cancelled, "the first instance's Obtain saw the crash; the second ran to its end")
	var restarted bool
	for _, e := range o.Trace {
		if e.Kind == "restart" && e.Proc == "c1" {
			restarted = true
		}
	}
	assert.True(t, restarted)
}

// Clock faults of a client reach the clocks it reads through its Proc
// (with ProcClock, which says the code reads them).
func TestClockJumpReachesProcNow(t *testing.T) {
	var wall, mono time.Duration
	s := parse(t, oneClient("500ms", `
  - at: 1s
    kind: clock-jump
    node: c1
    by: +30s
`))
	_, err := Run(t, s, Options{ProcClock: true, Clients: map[string]func(*Proc) Lock{"c1": probeClient(func(ctx context.Context, p *Proc, rdb *goredis.Client) {
		w0, m0 := p.Now(), p.Mono()
		time.Sleep(time.Second)
		wall, mono = p.Now().Sub(w0), p.Mono()-m0
	})}})
	require.NoError(t, err)
	assert.Equal(t, 31*time.Second, wall)
	assert.Equal(t, time.Second, mono)
}

// Proc.Logf lines land in the trace at the virtual time they were written.
func TestLogfInTrace(t *testing.T) {
	s := parse(t, oneClient("1s", "  []"))
	o, err := Run(t, s, Options{KeepTrace: true, Clients: map[string]func(*Proc) Lock{"c1": probeClient(func(ctx context.Context, p *Proc, rdb *goredis.Client) {
		time.Sleep(250 * time.Millisecond)
		p.Logf("hello from %s", p.Name())
	})}})
	require.NoError(t, err)
	var found bool
	for _, e := range o.Trace {
		if e.Kind == KindUser && strings.Contains(e.Text, "hello from c1") {
			found = true
			assert.Equal(t, 1250*time.Millisecond, time.Duration(e.At))
		}
	}
	assert.True(t, found)
}

// Proc.After is a timer of the client process: a pause delays it past the
// resume, where time.After (the bubble's clock) fires during the pause.
func TestAfterWaitsThroughPause(t *testing.T) {
	var viaProc, viaTime time.Duration
	s := parse(t, oneClient("100ms", `
  - at: 200ms
    kind: pause
    node: c1
    for: 3s
`))
	_, err := Run(t, s, Options{Clients: map[string]func(*Proc) Lock{"c1": probeClient(func(ctx context.Context, p *Proc, rdb *goredis.Client) {
		start := time.Now()
		done := make(chan struct{})
		go func() {
			<-time.After(time.Second)
			viaTime = time.Since(start)
			close(done)
		}()
		<-p.After(time.Second)
		viaProc = time.Since(start)
		<-done
	})}})
	require.NoError(t, err)
	assert.Equal(t, time.Second, viaTime)
	assert.Equal(t, 3100*time.Millisecond, viaProc) // due at 1.1 s, handled at the resume at 3.2 s
}

// A panic in a goroutine of Proc.Go stops the run naming the client.
func TestPanicInProcGo(t *testing.T) {
	s := parse(t, oneClient("0s", "  []"))
	_, err := Run(t, s, Options{Clients: map[string]func(*Proc) Lock{"c1": probeClient(func(ctx context.Context, p *Proc, rdb *goredis.Client) {
		p.Go(func(context.Context) {
			time.Sleep(2 * time.Second)
			panic("watchdog bug")
		})
	})}})
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "c1", pe.Client)
	assert.Equal(t, "a goroutine of Proc.Go", pe.What)
	assert.Equal(t, 2*time.Second, pe.At)
}
