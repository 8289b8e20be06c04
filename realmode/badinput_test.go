package realmode

import (
	"context"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/realmode/launch"
	"github.com/locksim/locksim/scenarios"
)

// portTaker takes, just before it starts, the port of the server named
// victim (the address is the one real mode picked a moment before, so only
// a listener of our own can hold it), and records the PID of every server
// that did start.
type portTaker struct {
	t      *testing.T
	victim string
	mu     sync.Mutex
	taken  string
	pids   []int
}

func (p *portTaker) before(name, addr string) {
	if name != p.victim {
		return
	}
	ln, err := net.Listen("tcp", addr)
	require.NoError(p.t, err)
	p.t.Cleanup(func() { ln.Close() })
	p.mu.Lock()
	p.taken = addr
	p.mu.Unlock()
}

func (p *portTaker) started(srv *server) {
	p.mu.Lock()
	p.pids = append(p.pids, srv.pid())
	p.mu.Unlock()
}

// TestRealPortInUse: a port taken between real mode's choice and the
// server's start is ErrStart (exit 2 in simrun) naming the server and the
// address, in a real run and in a twin's real run, and every server
// started before it (the master when the replica's port is taken) is
// stopped when Run returns.
func TestRealPortInUse(t *testing.T) {
	needServers(t)
	tests := []struct {
		name, scenario, victim string
		before                 int // servers started before the victim
		twin                   bool
	}{
		{name: "real, the only server", scenario: "get-del-release", victim: "A", before: 0},
		{name: "real, a replica after its master", scenario: "failover-replica-clock-synced", victim: "R", before: 1},
		{name: "real, a sentinel after the servers", scenario: "failover-replica-clock-synced", victim: "s1", before: 2},
		{name: "twin", scenario: "get-del-release", victim: "A", before: 0, twin: true},
		{name: "real, memcached", scenario: "memcached-add-restart", victim: "M", before: 0},
		{name: "real, mariadbd", scenario: "mysql-insert-lock-no-expiry", victim: "D", before: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenarios.Builtin(tt.scenario)
			require.NoError(t, err)
			if !haveServers(t, s) {
				return
			}
			p := &portTaker{t: t, victim: tt.victim}
			opt := Options{Dir: t.TempDir(), BeforeStart: p.before, serverStarted: p.started}
			if tt.twin {
				_, err = TwinWith(context.Background(), s, 1, t.TempDir(), nil, opt)
			} else {
				_, err = run(context.Background(), s, 1, opt, nil)
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrStart)
			assert.ErrorIs(t, err, launch.ErrPortInUse)
			require.NotEmpty(t, p.taken, "the victim %s never came to start", tt.victim)
			assert.Contains(t, err.Error(), tt.victim)
			assert.Contains(t, err.Error(), p.taken)
			assert.Contains(t, err.Error(), "port in use")
			assert.Len(t, p.pids, tt.before, "servers started before %s", tt.victim)
			for _, pid := range p.pids {
				assert.False(t, alive(pid), "server pid %d still runs after a failed start", pid)
			}
		})
	}
}

// TestRealMissingMemcached: without memcached on PATH a memcached scenario
// is ErrMissingBinary (exit 2 in simrun), saying what to install, and
// nothing starts.
func TestRealMissingMemcached(t *testing.T) {
	s, err := scenarios.Builtin("memcached-add-restart")
	require.NoError(t, err)
	t.Setenv("PATH", t.TempDir())
	_, err = run(context.Background(), s, 1, Options{Dir: t.TempDir()}, nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrMissingBinary)
	assert.Contains(t, err.Error(), "M: ")
	assert.Contains(t, err.Error(), "apt-get install -y memcached")
}
