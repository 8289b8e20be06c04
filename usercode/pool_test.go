package usercode

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
)

// sharedClientLock is the most common shape of a real lock: one go-redis
// client, used at once by a watchdog goroutine (here a loop of PTTLs that
// never pauses, so every Obtain and Release overlaps one of its commands)
// and by the workload's calls. With the client's PoolSize 1, the second
// caller waits for a turn on go-redis' slow path, which takes a timer
// from the process-global pool in internal/semaphore.go (go-redis
// v9.23.0).
type sharedClientLock struct {
	p   *Proc
	rdb *goredis.Client
	key string
	ttl time.Duration
	n   int
}

func newSharedClientLock(p *Proc) Lock {
	l := p.Lock()
	return &sharedClientLock{p: p, rdb: p.Redis(l.Node), key: l.Key, ttl: l.TTL}
}

func (s *sharedClientLock) Obtain(ctx context.Context) (*Held, error) {
	s.n++
	val := fmt.Sprintf("%s-%d", s.p.Name(), s.n)
	ok, err := s.rdb.SetNX(ctx, s.key, val, s.ttl).Result()
	if err != nil || !ok {
		return nil, err
	}
	return &Held{Value: val}, nil
}

// Release races the watchdog's last extension (a PEXPIRE from another
// goroutine) on the one client.
func (s *sharedClientLock) Release(ctx context.Context, h *Held) error {
	done := make(chan struct{})
	s.p.Go(func(ctx context.Context) {
		defer close(done)
		s.rdb.PExpire(ctx, s.key, s.ttl)
	})
	err := ownRelease.Run(ctx, s.rdb, []string{s.key}, h.Value).Err()
	<-done
	return err
}

// TestManyRunsShareOneProcess: go-redis keeps timers made in one run's
// bubble in a process-global pool; a later run that took one died with
// "fatal error: select on synctest channel from outside bubble", killing
// the test binary. Many runs in one process, each with one client shared
// by two goroutines, now all finish. LOCKSIM_LONG=1 runs 1,000.
func TestManyRunsShareOneProcess(t *testing.T) {
	runs := 50
	if os.Getenv("LOCKSIM_LONG") == "1" {
		runs = 1000
	}
	s := builtin(t, "single-gc-pause")
	bind := map[string]func(*Proc) Lock{"c1": newSharedClientLock, "c2": newSharedClientLock}
	for i := range runs {
		o, err := Run(t, s, Options{Seed: uint64(i + 1), Clients: bind})
		require.NoError(t, err, "run %d", i)
		require.NotEmpty(t, o.TraceHash)
	}
}

// staleProc is a Proc a test kept from an earlier run (in a package
// variable, as a team might to reuse a client).
var staleProc *Proc

// TestProcOfEndedRunIsRefused: a Proc kept from an ended run and used in
// the next run would operate on channels of the ended bubble (a fatal
// error of the runtime); the use is caught first and fails the run,
// naming the client and saying what to do.
func TestProcOfEndedRunIsRefused(t *testing.T) {
	s := builtin(t, "single-gc-pause")
	keep := func(p *Proc) Lock {
		staleProc = p
		return newOwnLock(p)
	}
	_, err := Run(t, s, Options{Clients: map[string]func(*Proc) Lock{"c1": keep, "c2": newOwnLock}})
	require.NoError(t, err)
	require.NotNil(t, staleProc)
	reuse := func(p *Proc) Lock { return staleLock{newOwnLock(p).(*ownLock)} }
	_, err = Run(t, s, Options{Clients: map[string]func(*Proc) Lock{"c1": reuse, "c2": newOwnLock}})
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "c1", pe.Client)
	require.Contains(t, pe.Value, "Proc.Logf of client c1, from a run that has ended")
	require.Contains(t, pe.Value, "build everything a run uses in the factory")
}

type staleLock struct{ *ownLock }

func (s staleLock) Obtain(ctx context.Context) (*Held, error) {
	staleProc.Logf("obtaining")
	return s.ownLock.Obtain(ctx)
}

// objectLock asks OBJECT ENCODING of its key before taking it: a command
// of real Redis the simulated node does not implement.
type objectLock struct{ *ownLock }

func (o objectLock) Obtain(ctx context.Context) (*Held, error) {
	o.rdb.Do(ctx, "OBJECT", "ENCODING", o.key)
	return o.ownLock.Obtain(ctx)
}

// TestUnmodelledCommandIsInconclusive: a real Redis command the node does
// not model makes the run inconclusive (never a verdict), and stops a
// fuzz campaign with the error, naming the client, the command and the
// time.
func TestUnmodelledCommandIsInconclusive(t *testing.T) {
	s := builtin(t, "single-gc-pause")
	bind := map[string]func(*Proc) Lock{"c1": newOwnLock, "c2": func(p *Proc) Lock { return objectLock{newOwnLock(p).(*ownLock)} }}
	o, err := Run(t, s, Options{Clients: bind})
	var ue *UnsupportedError
	require.ErrorAs(t, err, &ue)
	require.Equal(t, "c2", ue.Replies[0].Client)
	require.Equal(t, "OBJECT ENCODING lock", ue.Replies[0].Command)
	require.Contains(t, ue.Replies[0].Reply, "ERR locksim: OBJECT is not modelled")
	// c2 starts at 1s; the reply comes a round trip later.
	require.Greater(t, ue.Replies[0].At, time.Second)
	require.Less(t, ue.Replies[0].At, time.Second+10*time.Millisecond)
	require.True(t, o.Inconclusive)
	require.Equal(t, checker.Unknown, o.Verdicts.Of(checker.LockSafety))

	_, err = Fuzz(t, s, FuzzOptions{Options: Options{Clients: bind}, Runs: 3, OutDir: t.TempDir()})
	require.ErrorAs(t, err, &ue)
}
