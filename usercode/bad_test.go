package usercode

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/scenarios"
)

func TestCheckDeterminismPassesSeededCode(t *testing.T) {
	s := builtin(t, "single-gc-pause")
	require.NoError(t, CheckDeterminism(t, s, Options{Clients: map[string]func(*Proc) Lock{"c1": newOwnLock, "c2": newOwnLock}}))
}

// Lock values from the global math/rand differ from run to run: the
// double run names the first event where they show.
func TestCheckDeterminismCatchesGlobalRand(t *testing.T) {
	s := builtin(t, "redlock-clock-jump")
	escaping := func(p *Proc) Lock {
		q := newQuorumLock(p).(*quorumLock)
		q.value = func(*mrand.Rand) string { return fmt.Sprintf("v%x", mrand.Uint64()) }
		return q
	}
	err := CheckDeterminism(t, s, Options{Clients: map[string]func(*Proc) Lock{"c1": escaping, "c2": newQuorumLock}})
	var d *DivergenceError
	require.ErrorAs(t, err, &d)
	assert.Contains(t, d.First, "send c1")
	assert.Contains(t, d.First, "set lock v")
	t.Log(err)
}

// Data read from a real socket (here the port the OS gave it) escapes the
// simulation just the same.
func TestCheckDeterminismCatchesRealSocket(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	s := builtin(t, "single-gc-pause")
	escaping := func(p *Proc) Lock {
		o := newOwnLock(p).(*ownLock)
		return &realSocketLock{ownLock: o, addr: ln.Addr().String()}
	}
	err = CheckDeterminism(t, s, Options{Clients: map[string]func(*Proc) Lock{"c1": escaping, "c2": newOwnLock}})
	var d *DivergenceError
	require.ErrorAs(t, err, &d)
	assert.Contains(t, d.First, "c1")
	t.Log(err)
}

// realSocketLock asks a real server for something (its ephemeral port)
// and puts it into the lock value.
type realSocketLock struct {
	*ownLock
	addr string
}

func (r *realSocketLock) Obtain(ctx context.Context) (*Held, error) {
	c, err := net.Dial("tcp", r.addr)
	if err != nil {
		return nil, err
	}
	local := c.LocalAddr().String()
	c.Close()
	ok, err := r.rdb.SetNX(ctx, r.key, local, r.ttl).Result()
	if err != nil || !ok {
		return nil, err
	}
	return &Held{Value: local}, nil
}

type panicLock struct{ *ownLock }

func (p panicLock) Obtain(ctx context.Context) (*Held, error) {
	time.Sleep(1500 * time.Millisecond)
	panic("boom in the team's lock")
}

func TestPanicStopsRunNamingClientAndTime(t *testing.T) {
	s := builtin(t, "single-gc-pause")
	_, err := Run(t, s, Options{Clients: map[string]func(*Proc) Lock{
		"c1": newOwnLock,
		"c2": func(p *Proc) Lock { return panicLock{newOwnLock(p).(*ownLock)} },
	}})
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "c2", pe.Client)
	assert.Equal(t, "Obtain", pe.What)
	assert.Equal(t, 2500*time.Millisecond, pe.At) // c2 starts at 1s
	assert.Equal(t, "boom in the team's lock", pe.Value)
}

// mutexLock blocks forever on a mutex never released: outside what the
// simulation can wait for.
type mutexLock struct {
	*ownLock
	mu *sync.Mutex
}

func (m mutexLock) Obtain(ctx context.Context) (*Held, error) {
	m.mu.Lock()
	return nil, errors.New("unreachable")
}

// socketLock waits for a reply from a real server that never answers.
type socketLock struct {
	*ownLock
	addr string
}

func (s socketLock) Obtain(ctx context.Context) (*Held, error) {
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var b [1]byte
	_, err = c.Read(b[:])
	return nil, err
}

// TestHangIsReported runs itself in a child process (the report ends the
// process: a goroutine blocked outside the simulation cannot be stopped),
// once with a mutex never released and once with a read from a real
// socket that never answers.
func TestHangIsReported(t *testing.T) {
	switch os.Getenv("USERCODE_HANG_CHILD") {
	case "mutex", "socket":
		var c2 func(p *Proc) Lock
		if os.Getenv("USERCODE_HANG_CHILD") == "mutex" {
			mu := &sync.Mutex{}
			mu.Lock()
			c2 = func(p *Proc) Lock { return mutexLock{newOwnLock(p).(*ownLock), mu} }
		} else {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer ln.Close()
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					defer c.Close() // held open, never written
				}
			}()
			c2 = func(p *Proc) Lock { return socketLock{newOwnLock(p).(*ownLock), ln.Addr().String()} }
		}
		s := builtin(t, "single-gc-pause")
		_, _ = Run(t, s, Options{HangAfter: 300 * time.Millisecond, Clients: map[string]func(*Proc) Lock{"c1": newOwnLock, "c2": c2}})
		t.Fatal("the hang was not detected")
		return
	}
	for _, tc := range []struct{ child, frame string }{{"mutex", "mutexLock"}, {"socket", "socketLock"}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHangIsReported$")
		cmd.Env = append(os.Environ(), "USERCODE_HANG_CHILD="+tc.child)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%s", out)
		assert.Equal(t, 3, ee.ExitCode(), tc.child)
		assert.Contains(t, string(out), "user code blocked outside the simulation", tc.child)
		assert.Contains(t, string(out), "client c2: Obtain, called at virtual time 1s", tc.child)
		assert.Contains(t, string(out), "at virtual time 1s", tc.child)
		assert.Contains(t, string(out), tc.frame, tc.child)
	}
}

var _ = goredis.Nil

// TestRedisOfANonRedisNode: Proc.Redis of a misspelt node, or of a server
// of another protocol, was taken: go-redis logged a failed dial on every
// retry for the whole run (or sent RESP to memcached), and the run ended
// with no error (found by outsider3, following the README). It now panics
// at once with what the node is, and the run stops naming the client.
func TestRedisOfANonRedisNode(t *testing.T) {
	mc := `name: t
duration: 10s
memcached: [{name: M}]
redis: [{name: A}]
clients:
  - name: c1
    lock: {algorithm: memcached-add, node: M}
    workload: {cycles: 1, hold: 1s}
`
	tests := []struct {
		name, node, want string
	}{
		{"misspelt", "Z", `locksim: Proc.Redis("Z"): no Redis server or sentinel named "Z" in the scenario (its Redis servers and sentinels: A)`},
		{"memcached", "M", `locksim: Proc.Redis("M"): "M" is a memcached server, not a Redis server or sentinel (the scenario's: A)`},
		{"a client", "c1", `"c1" is a lock client, not a Redis server or sentinel`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenarios.Parse("t.yaml", []byte(mc))
			require.NoError(t, err)
			_, err = Run(t, s, Options{Clients: map[string]func(*Proc) Lock{
				"c1": func(p *Proc) Lock {
					return &ownLock{p: p, rdb: p.Redis(tt.node), key: "lock", ttl: time.Second, rnd: p.Rand()}
				},
			}})
			var pe *PanicError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "c1", pe.Client)
			assert.Contains(t, fmt.Sprint(pe.Value), tt.want)
		})
	}
}
