package launch

import (
	"bufio"
	"net"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSlowAnswerIsReady: a server that answers its readiness probe, but
// later than the first probe waits (a JVM, or any server, on a loaded
// machine), is found ready: the probes wait longer each time one runs out
// of time. With a fixed half-second probe a ZooKeeper that served was
// never found ready within 30 s. The "server" is a sleep process; the
// test answers PING on its address after 1.2 s, which no 500 ms probe can
// see.
func TestSlowAnswerIsReady(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	ip := nextIP(t, NewAddrPool())
	ln, err := net.Listen("tcp", ip+":0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
					return
				}
				time.Sleep(1200 * time.Millisecond)
				_, _ = c.Write([]byte("+PONG\r\n"))
			}()
		}
	}()
	s := &Server{name: "slow", bin: sleep, args: []string{"60"}, dir: t.TempDir(), ip: ip,
		port: ln.Addr().(*net.TCPAddr).Port, timeout: 20 * time.Second}
	defer s.Stop()
	start := time.Now()
	require.NoError(t, s.start(), "a server answering its probes in 1.2 s is ready")
	t.Logf("ready after %v", time.Since(start).Round(time.Millisecond))
	assert.True(t, s.Running())
}

func TestNextProbe(t *testing.T) {
	for _, tt := range []struct{ cur, took, want time.Duration }{
		{firstProbe, time.Millisecond, firstProbe},    // refused, or an answer that is not ready: same wait
		{firstProbe, firstProbe, 2 * firstProbe},      // ran out of time: twice as long
		{4 * time.Second, 4 * time.Second, lastProbe}, // up to lastProbe
		{lastProbe, lastProbe, lastProbe},             // and no further
	} {
		assert.Equal(t, tt.want, nextProbe(tt.cur, tt.took), "after a %v probe that took %v", tt.cur, tt.took)
	}
}
