package launch

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/simtest"
)

// mc sends one text-protocol command line (and data block) to s on a fresh
// connection and returns the reply's first line.
func mc(t *testing.T, s *Server, cmd string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", s.Addr(), time.Second)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(2*time.Second)))
	_, err = c.Write([]byte(cmd))
	require.NoError(t, err)
	line, err := bufio.NewReader(c).ReadString('\n')
	require.NoError(t, err)
	return strings.TrimSpace(line)
}

// TestMemcachedLifecycle: memcached starts on its loopback address with
// the options' flags; a kill and a restart lose every item (memcached
// keeps nothing on disk); a pause holds replies; Shutdown is SIGTERM; Stop
// leaves no process.
func TestMemcachedLifecycle(t *testing.T) {
	simtest.NeedBinaries(t, "the memcached launch test", "apt-get install -y memcached", MemcachedProgram)
	g := group(t)
	ip := nextIP(t, NewAddrPool())
	s, err := g.StartMemcached(MemcachedOptions{Name: "M", IP: ip, Dir: serverDir(t, g), MemoryMB: 2, ItemSizeMax: 512 * 1024, NoEvictions: true})
	require.NoError(t, err)
	assert.Equal(t, ip, s.IP())
	assert.Equal(t, "STORED", mc(t, s, "add lock 0 30 2\r\nv1\r\n"))
	assert.Equal(t, "NOT_STORED", mc(t, s, "add lock 0 30 2\r\nv2\r\n"))
	assert.Equal(t, "SERVER_ERROR object too large for cache", mc(t, s, "set big 0 0 600000\r\n"+strings.Repeat("x", 600000)+"\r\n"), "-I 512k is passed")

	t.Run("kill and restart lose every item", func(t *testing.T) {
		pid := s.PID()
		require.NoError(t, s.Kill())
		assert.False(t, alive(pid))
		require.NoError(t, s.Restart())
		assert.NotEqual(t, pid, s.PID())
		assert.Equal(t, "END", mc(t, s, "get lock\r\n"))
	})
	t.Run("pause holds replies", func(t *testing.T) {
		require.NoError(t, s.Pause())
		requireStopped(t, s.PID(), "a paused memcached")
		c, err := net.DialTimeout("tcp", s.Addr(), time.Second)
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.SetReadDeadline(time.Now().Add(200*time.Millisecond)))
		_, err = c.Write([]byte("version\r\n"))
		require.NoError(t, err)
		_, err = bufio.NewReader(c).ReadString('\n')
		require.Error(t, err, "a paused memcached does not answer")
		require.NoError(t, s.Resume())
		assert.True(t, strings.HasPrefix(mc(t, s, "version\r\n"), "VERSION "))
	})
	t.Run("shutdown is SIGTERM, and stop is final", func(t *testing.T) {
		pid := s.PID()
		require.NoError(t, s.Shutdown())
		assert.False(t, alive(pid))
		require.NoError(t, s.Restart())
		pid = s.PID()
		s.Stop()
		assert.False(t, alive(pid))
		assert.Error(t, s.Restart())
	})
}
