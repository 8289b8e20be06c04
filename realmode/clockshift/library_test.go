package clockshift

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// need returns the path of a tool the test needs: missing, it fails the
// test under CI=true and skips it loudly otherwise.
func need(t *testing.T, tool, install string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not found in PATH and CI=true (install it: %s)", tool, install)
		}
		t.Skipf("%s not found in PATH: SKIPPING the real-process clockshift test (install it: %s)", tool, install)
	}
	return p
}

// buildLib builds the library once per test into a temporary directory.
func buildLib(t *testing.T) string {
	t.Helper()
	need(t, "cc", "apt-get install -y gcc")
	so, err := Build(t.TempDir())
	require.NoError(t, err)
	return so
}

type sample struct{ raw1, sh, tvUs, tt, coarse, raw2, mono, rawMono int64 }

// probe runs testdata/probe.c under the library.
type probe struct {
	in  io.WriteCloser
	out *bufio.Scanner
}

func startProbe(t *testing.T, so string, env []string) *probe {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "probe")
	out, err := exec.Command("cc", "-O2", "-o", bin, "testdata/probe.c").CombinedOutput()
	require.NoError(t, err, "%s", out)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), env...)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = in.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return &probe{in: in, out: bufio.NewScanner(stdout)}
}

func (p *probe) sample(t *testing.T) sample {
	t.Helper()
	_, err := io.WriteString(p.in, "\n")
	require.NoError(t, err)
	require.True(t, p.out.Scan(), "probe exited: %v", p.out.Err())
	f := strings.Fields(p.out.Text())
	require.Len(t, f, 8)
	v := make([]int64, 8)
	for i := range f {
		v[i], err = strconv.ParseInt(f[i], 10, 64)
		require.NoError(t, err)
	}
	return sample{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]}
}

// TestLibraryReadings checks every intercepted call against the Go side's
// formula: the shifted reading must lie between the formula applied to the
// real clock read just before and just after it, which holds however loaded
// the machine is.
func TestLibraryReadings(t *testing.T) {
	so := buildLib(t)
	c, err := NewControl(filepath.Join(t.TempDir(), "clock"))
	require.NoError(t, err)
	defer c.Close()
	p := startProbe(t, so, Env(so, c))

	const ms = int64(time.Millisecond)
	steps := []struct {
		name   string
		change func()
		frozen bool
	}{
		{"identity", func() {}, false},
		{"offset +40s", func() { require.NoError(t, c.Set(40*time.Second, 0)) }, false},
		{"jump back an hour", func() { c.Jump(-time.Hour) }, false},
		{"drift 50% fast for 60ms", func() {
			require.NoError(t, c.Set(0, 500_000_000))
			time.Sleep(60 * time.Millisecond)
		}, false},
		{"drift 50% slow for 60ms", func() {
			require.NoError(t, c.SetRate(-500_000_000))
			time.Sleep(60 * time.Millisecond)
		}, false},
		{"frozen", func() { c.Freeze(1_800_000_000_123_456_789) }, true},
		{"frozen, stepped", func() { c.Jump(1500 * time.Millisecond) }, true},
		{"unfrozen", func() { c.Unfreeze(); time.Sleep(10 * time.Millisecond) }, false},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.change()
			s := c.read()
			got := p.sample(t)
			lo, hi := s.shifted(got.raw1), s.shifted(got.raw2)
			if st.frozen {
				assert.Equal(t, s.frozenNs, got.sh)
				assert.Equal(t, s.frozenNs, got.coarse)
			} else {
				assert.GreaterOrEqual(t, got.sh, lo)
				assert.LessOrEqual(t, got.sh, hi)
				// The coarse clock lags the fine one by up to a tick.
				assert.GreaterOrEqual(t, got.coarse, s.shifted(got.raw1-50*ms))
				assert.LessOrEqual(t, got.coarse, hi)
			}
			assert.GreaterOrEqual(t, got.tvUs, lo/1000)
			assert.LessOrEqual(t, got.tvUs, hi/1000)
			assert.GreaterOrEqual(t, got.tt, lo/1_000_000_000)
			assert.LessOrEqual(t, got.tt, hi/1_000_000_000)
			// CLOCK_MONOTONIC passes through: read just before the raw one.
			assert.LessOrEqual(t, got.mono, got.rawMono)
			assert.Greater(t, got.mono, got.rawMono-int64(time.Second))
		})
	}
}

func TestLibraryRefusesBadControlFile(t *testing.T) {
	so := buildLib(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "probe")
	out, err := exec.Command("cc", "-O2", "-o", bin, "testdata/probe.c").CombinedOutput()
	require.NoError(t, err, "%s", out)
	notControl := filepath.Join(dir, "not-a-control-file")
	require.NoError(t, os.WriteFile(notControl, make([]byte, 4096), 0o644))
	for _, path := range []string{filepath.Join(dir, "missing"), notControl} {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "LD_PRELOAD="+so, EnvVar+"="+path)
		cmd.Stdin = strings.NewReader("\n")
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "the child must not run on the real clock when its control file is unusable")
		assert.Contains(t, string(out), "clockshift: cannot use the control file")
	}
}

func TestBuildWithoutCompiler(t *testing.T) {
	t.Setenv("CC", "no-such-compiler-locksim")
	_, err := Build(t.TempDir())
	require.ErrorIs(t, err, ErrNoCompiler)
	assert.Contains(t, err.Error(), "no-such-compiler-locksim")
}

func TestBuildReuses(t *testing.T) {
	need(t, "cc", "apt-get install -y gcc")
	dir := t.TempDir()
	a, err := Build(dir)
	require.NoError(t, err)
	st1, err := os.Stat(a)
	require.NoError(t, err)
	b, err := Build(dir)
	require.NoError(t, err)
	st2, err := os.Stat(b)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.Equal(t, st1.ModTime(), st2.ModTime(), "the second build reuses the library")
}

// startRedis starts a redis-server under the library (no persistence) on a
// free loopback port and stops it by PID when the test ends.
func startRedis(t *testing.T, so string, c *Control) *goredis.Client {
	t.Helper()
	bin := need(t, "redis-server", "apt-get install -y redis-server")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", t.TempDir(), "--daemonize", "no")
	cmd.Env = append(os.Environ(), Env(so, c)...)
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	rdb := goredis.NewClient(&goredis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { _ = rdb.Close() })
	for i := 0; ; i++ {
		if rdb.Ping(context.Background()).Err() == nil {
			return rdb
		}
		require.Less(t, i, 250, "redis-server under clockshift did not answer PING:\n%s", stderr.String())
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRedisExpiresAfterJump: the check from issue 17 that libfaketime
// fails (it does not start with Debian's jemalloc-linked redis-server).
func TestRedisExpiresAfterJump(t *testing.T) {
	so := buildLib(t)
	c, err := NewControl(filepath.Join(t.TempDir(), "clock"))
	require.NoError(t, err)
	defer c.Close()
	rdb := startRedis(t, so, c)
	ctx := context.Background()
	require.NoError(t, rdb.Set(ctx, "lock", "v", 30*time.Second).Err())
	require.Equal(t, "v", rdb.Get(ctx, "lock").Val())
	c.Jump(40 * time.Second)
	// Redis expires the key lazily on access (src/db.c expireIfNeeded) by
	// comparing the absolute deadline with the wall clock.
	assert.Equal(t, goredis.Nil, rdb.Get(ctx, "lock").Err(), "the +40s jump expires a 30s key at once")
	// TIME reads the shifted clock too (src/server.c timeCommand).
	tm, err := rdb.Time(ctx).Result()
	require.NoError(t, err)
	assert.InDelta(t, float64(c.Now()), float64(tm.UnixNano()), float64(5*time.Second))
}

func TestRedisFrozenClock(t *testing.T) {
	so := buildLib(t)
	c, err := NewControl(filepath.Join(t.TempDir(), "clock"))
	require.NoError(t, err)
	defer c.Close()
	rdb := startRedis(t, so, c)
	ctx := context.Background()
	frozen := int64(1_900_000_000_000_000_000)
	c.Freeze(frozen)
	require.NoError(t, rdb.Set(ctx, "k", "v", 100*time.Millisecond).Err())
	time.Sleep(time.Second) // real time passes; the server's wall clock does not
	assert.Equal(t, "v", rdb.Get(ctx, "k").Val(), "a frozen clock keeps a 100ms key alive")
	pttl, err := rdb.PTTL(ctx, "k").Result()
	require.NoError(t, err)
	assert.Equal(t, 100*time.Millisecond, pttl, "PTTL is exact on a frozen clock")
	tm, err := rdb.Time(ctx).Result()
	require.NoError(t, err)
	assert.Equal(t, frozen/1000, tm.UnixNano()/1000, "TIME reads the frozen clock (microseconds)")
	c.Jump(99 * time.Millisecond)
	assert.Equal(t, "v", rdb.Get(ctx, "k").Val(), "1ms before the deadline")
	c.Jump(time.Millisecond)
	assert.Equal(t, "v", rdb.Get(ctx, "k").Val(), "at the deadline (Redis expires when now > when)")
	c.Jump(time.Millisecond)
	assert.Equal(t, goredis.Nil, rdb.Get(ctx, "k").Err(), "the step past the deadline expires it")
}

// TestRedisDrift: with the server's clock fast, a key expires in less real
// time than its ttl; slow, it outlives it. Each assertion is made only when
// the client's own measurements prove it must hold: the server handled SET
// and GET at least (GET sent - SET replied) and at most (GET replied - SET
// sent) of real time apart, so load cannot make the test fail.
func TestRedisDrift(t *testing.T) {
	so := buildLib(t)
	c, err := NewControl(filepath.Join(t.TempDir(), "clock"))
	require.NoError(t, err)
	defer c.Close()
	rdb := startRedis(t, so, c)
	ctx := context.Background()
	checked := 0
	for _, tt := range []struct {
		name    string
		rate    int64
		ttl     time.Duration
		sleep   time.Duration
		expired bool
	}{
		{"fast", 500_000_000, 900 * time.Millisecond, 700 * time.Millisecond, true},
		{"slow", -500_000_000, 500 * time.Millisecond, 600 * time.Millisecond, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, c.Set(0, tt.rate))
			factor := 1 + float64(tt.rate)/1e9
			key := "k-" + tt.name
			sent := time.Now()
			require.NoError(t, rdb.Set(ctx, key, "v", tt.ttl).Err())
			replied := time.Now()
			time.Sleep(tt.sleep)
			getSent := time.Now()
			err := rdb.Get(ctx, key).Err()
			getReplied := time.Now()
			minServer := time.Duration(float64(getSent.Sub(replied)) * factor)
			maxServer := time.Duration(float64(getReplied.Sub(sent)) * factor)
			switch {
			case tt.expired && minServer > tt.ttl:
				checked++
				assert.Equal(t, goredis.Nil, err, "server wall time >= %v past a %v ttl", minServer, tt.ttl)
			case !tt.expired && maxServer < tt.ttl:
				checked++
				assert.NoError(t, err, "server wall time <= %v within a %v ttl", maxServer, tt.ttl)
			default:
				t.Logf("machine too slow to decide (server time in [%v, %v]); not checked", minServer, maxServer)
			}
		})
	}
	t.Logf("%d of 2 drift checks decided", checked)
}
