package launch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/realmode/clockshift"
)

// needRedis fails under CI=true and skips loudly otherwise when a binary
// is missing.
func needRedis(t *testing.T, bins ...string) {
	t.Helper()
	simtest.NeedBinaries(t, "the real-server launch test", "apt-get install -y redis-server redis-sentinel", append([]string{"redis-server"}, bins...)...)
}

// alive reports whether a process with this PID exists (a reaped child
// does not).
func alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

// group returns a group stopped at the end of the test, which then checks
// that no process survived. NB: give its servers directories from
// serverDir, not t.TempDir(): cleanups run last-registered first, so a
// temporary directory made after the group would be removed while its
// server still runs and writes there (a replica's RDB, a sentinel's
// config), which fails the test with "directory not empty" on a loaded
// machine.
func group(t *testing.T) *Group {
	base := t.TempDir() // removed after the group's cleanup below
	g := NewGroup()
	groupDirs.Lock()
	groupDirs.m[g] = base
	groupDirs.Unlock()
	t.Cleanup(func() {
		pids := g.PIDs()
		g.StopAll()
		for _, p := range pids {
			assert.False(t, alive(p), "PID %d survived StopAll", p)
		}
	})
	return g
}

var groupDirs = struct {
	sync.Mutex
	m map[*Group]string
}{m: map[*Group]string{}}

// serverDir returns a fresh directory for a server of g, removed only after
// g's servers are stopped.
func serverDir(t *testing.T, g *Group) string {
	t.Helper()
	groupDirs.Lock()
	base := groupDirs.m[g]
	groupDirs.Unlock()
	require.NotEmpty(t, base, "serverDir needs a group made by group(t)")
	dir, err := os.MkdirTemp(base, "server")
	require.NoError(t, err)
	return dir
}

func client(t *testing.T, s *Server) *goredis.Client {
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr(), Protocol: 2, DisableIdentity: true, MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: time.Second})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func nextIP(t *testing.T, p *AddrPool) string {
	ip, err := p.Next()
	require.NoError(t, err)
	return ip
}

func TestAddrPool(t *testing.T) {
	a, b := NewAddrPool(), NewAddrPool()
	seen := map[string]bool{}
	for i := 0; i < 300; i++ {
		for _, p := range []*AddrPool{a, b} {
			ip := nextIP(t, p)
			require.False(t, seen[ip], "address %s handed out twice", ip)
			seen[ip] = true
			parsed := net.ParseIP(ip).To4()
			require.NotNil(t, parsed)
			assert.Equal(t, byte(127), parsed[0])
			assert.NotEqual(t, "127.0.0.1", ip)
			assert.NotContains(t, []byte{0, 255}, parsed[3])
		}
	}
}

func TestFreePort(t *testing.T) {
	ip := nextIP(t, NewAddrPool())
	p, err := FreePort(ip)
	require.NoError(t, err)
	l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(p)))
	require.NoError(t, err, "the port FreePort returned is bindable")
	require.NoError(t, l.Close())
	_, err = FreePort("10.1.2.3")
	assert.ErrorIs(t, err, ErrBadOption)
}

func TestStartErrors(t *testing.T) {
	needRedis(t)
	dir := t.TempDir()
	ip := nextIP(t, NewAddrPool())
	l, err := net.Listen("tcp", ip+":0")
	require.NoError(t, err)
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port
	tests := []struct {
		name string
		opts RedisOptions
		want error
		msg  string
	}{
		{"missing binary", RedisOptions{Bin: "no-such-redis-server", Dir: dir}, ErrNoBinary, "no-such-redis-server"},
		{"port in use", RedisOptions{Name: "A", IP: ip, Port: busy, Dir: dir}, ErrPortInUse, fmt.Sprintf("%s:%d", ip, busy)},
		{"not loopback", RedisOptions{IP: "192.0.2.1", Dir: dir}, ErrBadOption, "127.0.0.0/8"},
		{"no dir", RedisOptions{}, ErrBadOption, "Dir"},
		{"bad fsync", RedisOptions{Dir: dir, AppendFsync: "sometimes"}, ErrBadOption, "sometimes"},
		{"bad master", RedisOptions{Dir: dir, ReplicaOf: "nowhere"}, ErrBadOption, "ReplicaOf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := StartRedis(tt.opts)
			if s != nil {
				defer s.Stop()
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
	_, err = StartSentinel(SentinelOptions{Bin: "no-such-sentinel", Dir: dir, MasterAddr: "127.0.0.1:1"})
	assert.ErrorIs(t, err, ErrNoBinary)
	_, err = StartSentinel(SentinelOptions{Dir: dir})
	assert.ErrorIs(t, err, ErrBadOption)
}

func TestStartFailsWithLog(t *testing.T) {
	needRedis(t)
	s, err := StartRedis(RedisOptions{Dir: t.TempDir(), ExtraConfig: []string{"no-such-directive yes"}})
	if s != nil {
		defer s.Stop()
	}
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no-such-directive", "the error carries the server's own complaint")
	assert.Zero(t, s.PID())
}

func TestRedisLifecycle(t *testing.T) {
	needRedis(t)
	g := group(t)
	ctx := context.Background()
	s, err := g.StartRedis(RedisOptions{Name: "A", IP: nextIP(t, NewAddrPool()), Dir: serverDir(t, g),
		AppendOnly: true, AppendFsync: "always"})
	require.NoError(t, err)
	c := client(t, s)
	require.NoError(t, c.Set(ctx, "k", "1", 0).Err())

	t.Run("kill and restart keep an fsynced key", func(t *testing.T) {
		pid := s.PID()
		require.NoError(t, s.Kill())
		assert.False(t, alive(pid))
		assert.False(t, s.Running())
		require.Error(t, c.Ping(ctx).Err(), "nothing listens after a kill")
		require.NoError(t, s.Restart())
		assert.NotEqual(t, pid, s.PID())
		assert.Equal(t, "1", c.Get(ctx, "k").Val())
	})
	t.Run("pause holds replies, resume releases them", func(t *testing.T) {
		require.NoError(t, s.Pause())
		requireStopped(t, s.PID(), "a paused redis-server")
		short := goredis.NewClient(&goredis.Options{Addr: s.Addr(), Protocol: 2, DisableIdentity: true,
			MaxRetries: -1, ReadTimeout: 200 * time.Millisecond})
		defer short.Close()
		err := short.Ping(ctx).Err()
		require.Error(t, err)
		var ne net.Error
		assert.True(t, errors.As(err, &ne) && ne.Timeout(), "a paused server accepts but does not answer: %v", err)
		require.NoError(t, s.Resume())
		assert.NoError(t, c.Ping(ctx).Err())
	})
	t.Run("restart refuses a running server", func(t *testing.T) {
		assert.ErrorContains(t, s.Restart(), "still running")
	})
	t.Run("shutdown and restart", func(t *testing.T) {
		require.NoError(t, c.Set(ctx, "k2", "2", 0).Err())
		pid := s.PID()
		require.NoError(t, s.Shutdown())
		assert.False(t, alive(pid))
		require.NoError(t, s.Restart())
		assert.Equal(t, "2", c.Get(ctx, "k2").Val())
	})
	t.Run("stop is idempotent and final", func(t *testing.T) {
		pid := s.PID()
		require.NoError(t, s.Pause())
		s.Stop()
		s.Stop()
		assert.False(t, alive(pid), "a paused server is stopped too")
		assert.Error(t, s.Restart())
		assert.Error(t, s.Kill())
	})
}

func TestRDBSavePoints(t *testing.T) {
	needRedis(t)
	g := group(t)
	ctx := context.Background()
	dir := serverDir(t, g)
	s, err := g.StartRedis(RedisOptions{Dir: dir, IP: nextIP(t, NewAddrPool()), Save: []string{"3600 1"}})
	require.NoError(t, err)
	c := client(t, s)
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
	require.NoError(t, s.Kill())
	require.NoError(t, s.Restart())
	assert.Equal(t, goredis.Nil, c.Get(ctx, "k").Err(), "killed before any save point: the key is lost")
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
	require.NoError(t, s.Shutdown())
	_, err = os.Stat(filepath.Join(dir, "dump.rdb"))
	require.NoError(t, err, "SHUTDOWN saves when save points are configured")
	require.NoError(t, s.Restart())
	assert.Equal(t, "v", c.Get(ctx, "k").Val())
}

// clientAddrs returns the addr= fields of CLIENT LIST.
func clientAddrs(t *testing.T, c *goredis.Client) []string {
	list, err := c.ClientList(context.Background()).Result()
	require.NoError(t, err)
	var out []string
	for _, line := range strings.Split(list, "\n") {
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "addr=") {
				h, _, err := net.SplitHostPort(strings.TrimPrefix(f, "addr="))
				require.NoError(t, err)
				out = append(out, h)
			}
		}
	}
	return out
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 1500; i++ { // 30 s: a bound for busy machines, not a timing check
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("never: %s", what)
}

func TestReplicaAndSentinelAddresses(t *testing.T) {
	needRedis(t)
	g := group(t)
	pool := NewAddrPool()
	ctx := context.Background()
	mIP, rIP, sIP, announce := nextIP(t, pool), nextIP(t, pool), nextIP(t, pool), nextIP(t, pool)
	m, err := g.StartRedis(RedisOptions{Name: "m", IP: mIP, Dir: serverDir(t, g), MinReplicasToWrite: 1, MinReplicasMaxLag: 5})
	require.NoError(t, err)
	mc := client(t, m)
	assert.ErrorContains(t, mc.Set(ctx, "k", "v", 0).Err(), "NOREPLICAS", "min-replicas-to-write applies")
	r, err := g.StartRedis(RedisOptions{Name: "r", IP: rIP, Dir: serverDir(t, g), ReplicaOf: m.Addr(),
		BindSourceAddr: rIP, AnnounceIP: announce, AnnouncePort: 7777})
	require.NoError(t, err)
	eventually(t, "the replica is online", func() bool {
		info := mc.Info(ctx, "replication").Val()
		return strings.Contains(info, "state=online")
	})
	info := mc.Info(ctx, "replication").Val()
	assert.Contains(t, info, fmt.Sprintf("ip=%s,port=7777", announce), "the master lists the announced address")
	assert.Contains(t, clientAddrs(t, mc), rIP, "the replica connects from its own address")
	require.NoError(t, mc.Set(ctx, "k", "v", 0).Err())
	eventually(t, "the write reaches the replica", func() bool { return client(t, r).Get(ctx, "k").Val() == "v" })

	s, err := g.StartSentinel(SentinelOptions{IP: sIP, Dir: serverDir(t, g), MasterAddr: m.Addr(), Quorum: 1,
		DownAfter: time.Second, FailoverTimeout: 10 * time.Second, BindSourceAddr: sIP, AnnounceIP: sIP})
	require.NoError(t, err)
	sc := client(t, s)
	addr, err := sc.Do(ctx, "SENTINEL", "get-master-addr-by-name", "mymaster").StringSlice()
	require.NoError(t, err)
	assert.Equal(t, []string{mIP, strconv.Itoa(m.Port())}, addr)
	eventually(t, "the sentinel connects to the master from its own address", func() bool {
		for _, a := range clientAddrs(t, mc) {
			if a == sIP {
				return true
			}
		}
		return false
	})
}

func TestClockOption(t *testing.T) {
	needRedis(t)
	if _, err := exec.LookPath("cc"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("cc not found and CI=true (apt-get install -y gcc)")
		}
		t.Skip("cc not found: SKIPPING the clock option test (apt-get install -y gcc)")
	}
	dir := t.TempDir()
	so, err := clockshift.Build(dir)
	require.NoError(t, err)
	ctl, err := clockshift.NewControl(filepath.Join(dir, "clock"))
	require.NoError(t, err)
	defer ctl.Close()
	g := group(t)
	s, err := g.StartRedis(RedisOptions{Dir: serverDir(t, g), IP: nextIP(t, NewAddrPool()), Clock: &Clock{Control: ctl, Lib: so}})
	require.NoError(t, err)
	c := client(t, s)
	ctx := context.Background()
	require.NoError(t, c.Set(ctx, "k", "v", 30*time.Second).Err())
	ctl.Jump(40 * time.Second)
	assert.Equal(t, goredis.Nil, c.Get(ctx, "k").Err())
	// The clock survives a restart: the new process maps the same file.
	require.NoError(t, s.Kill())
	require.NoError(t, s.Restart())
	tm, err := c.Time(ctx).Result()
	require.NoError(t, err)
	assert.InDelta(t, float64(ctl.Now()), float64(tm.UnixNano()), float64(5*time.Second))
	assert.Greater(t, tm.UnixNano(), time.Now().Add(30*time.Second).UnixNano())
}

// TestStopOnSignal runs this test binary as a child that starts a server
// and waits; SIGINT must stop the server before the child dies of it.
func TestStopOnSignal(t *testing.T) {
	if os.Getenv("LOCKSIM_LAUNCH_CHILD") != "" {
		signalChild()
		return
	}
	needRedis(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestStopOnSignal$")
			cmd.Env = append(os.Environ(), "LOCKSIM_LAUNCH_CHILD="+t.TempDir())
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			sc := bufio.NewScanner(out)
			pid := 0
			for sc.Scan() {
				if p, ok := strings.CutPrefix(sc.Text(), "PID "); ok {
					pid, err = strconv.Atoi(p)
					require.NoError(t, err)
					break
				}
			}
			require.NotZero(t, pid, "the child did not start its server")
			require.True(t, alive(pid))
			if signal.Ignored(sig) {
				// This test runs with the signal ignored (a shell's
				// background job ignores SIGINT), and so does its child:
				// StopOnSignal leaves it ignored, and the child and its
				// server go on; SIGTERM then ends them.
				require.NoError(t, cmd.Process.Signal(sig))
				time.Sleep(200 * time.Millisecond)
				require.True(t, alive(cmd.Process.Pid), "the child ended on an ignored %v", sig)
				require.True(t, alive(pid), "the child stopped its server on an ignored %v", sig)
				sig = syscall.SIGTERM
			}
			require.NoError(t, cmd.Process.Signal(sig))
			err = cmd.Wait()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee)
			ws := ee.Sys().(syscall.WaitStatus)
			assert.True(t, ws.Signaled() && ws.Signal() == sig, "the child dies of the signal after cleaning up: %v", ws)
			assert.False(t, alive(pid), "redis-server %d survived the child's %v", pid, sig)
		})
	}
}

func signalChild() {
	g := NewGroup()
	release := g.StopOnSignal()
	defer release()
	s, err := g.StartRedis(RedisOptions{Dir: os.Getenv("LOCKSIM_LAUNCH_CHILD")})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	fmt.Printf("PID %d\n", s.PID())
	time.Sleep(time.Minute)
	g.StopAll()
	os.Exit(1)
}

func TestSentinelLifecycle(t *testing.T) {
	needRedis(t)
	g := group(t)
	ctx := context.Background()
	pool := NewAddrPool()
	m, err := g.StartRedis(RedisOptions{Name: "m", IP: nextIP(t, pool), Dir: serverDir(t, g)})
	require.NoError(t, err)
	dir := serverDir(t, g)
	s, err := g.StartSentinel(SentinelOptions{IP: nextIP(t, pool), Dir: dir, MasterName: "lockmaster",
		MasterAddr: m.Addr(), Quorum: 1, DownAfter: 2 * time.Second})
	require.NoError(t, err)
	for _, stop := range []struct {
		name string
		do   func() error
	}{{"kill", s.Kill}, {"shutdown", s.Shutdown}} {
		t.Run(stop.name, func(t *testing.T) {
			pid := s.PID()
			require.NoError(t, stop.do())
			assert.False(t, alive(pid))
			require.NoError(t, s.Restart())
			addr, err := client(t, s).Do(ctx, "SENTINEL", "get-master-addr-by-name", "lockmaster").StringSlice()
			require.NoError(t, err, "the restarted Sentinel monitors the master from its rewritten configuration")
			assert.Equal(t, []string{m.IP(), strconv.Itoa(m.Port())}, addr)
		})
	}
	conf, err := os.ReadFile(filepath.Join(dir, "sentinel.conf"))
	require.NoError(t, err)
	assert.Contains(t, string(conf), "down-after-milliseconds lockmaster 2000")
}

// TestRedisMaxMemoryOverBaseline: maxmemory counts from the server's own
// used_memory at start, the policy and samples reach the server, and a
// restart keeps the limit (CONFIG REWRITE).
func TestRedisMaxMemoryOverBaseline(t *testing.T) {
	needRedis(t)
	g := group(t)
	s, err := g.StartRedis(RedisOptions{Dir: serverDir(t, g), MaxMemory: 4096, MaxMemoryOverBaseline: true,
		MaxMemoryPolicy: "volatile-lru", MaxMemorySamples: 16})
	require.NoError(t, err)
	require.Greater(t, s.Baseline(), int64(100_000), "an empty Redis uses hundreds of KB")
	check := func() {
		c := goredis.NewClient(&goredis.Options{Addr: s.Addr(), Protocol: 2, DisableIdentity: true})
		defer c.Close()
		ctx := context.Background()
		for k, want := range map[string]string{"maxmemory": strconv.FormatInt(s.Baseline()+4096, 10), "maxmemory-policy": "volatile-lru", "maxmemory-samples": "16"} {
			got, err := c.ConfigGet(ctx, k).Result()
			require.NoError(t, err)
			assert.Equal(t, want, got[k], k)
		}
	}
	check()
	s.Kill()
	require.NoError(t, s.Restart())
	check()
}
