package proxy

import (
	"errors"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/realmode/launch"
)

// host is an echo server that can be killed (its listener and sockets
// closed, as the kernel closes a killed process's sockets: FIN) and
// started again on the same address.
type host struct {
	t     *testing.T
	addr  string
	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
	wg    sync.WaitGroup
}

func startHost(t *testing.T, addr string) *host {
	h := &host{t: t, addr: addr}
	h.start()
	t.Cleanup(h.kill)
	return h
}

func (h *host) start() {
	ln, err := net.Listen("tcp", h.addr)
	require.NoError(h.t, err)
	h.mu.Lock()
	h.ln, h.addr = ln, ln.Addr().String()
	h.mu.Unlock()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			h.conns = append(h.conns, c)
			h.mu.Unlock()
			h.wg.Add(1)
			go func() {
				defer h.wg.Done()
				buf := make([]byte, 1024)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						_, _ = c.Write(buf[:n])
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
}

func (h *host) kill() {
	h.mu.Lock()
	ln, cs := h.ln, h.conns
	h.ln, h.conns = nil, nil
	h.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	for _, c := range cs {
		c.Close()
	}
	h.wg.Wait()
}

// TestPowerOffIsABlackHole: a powered-off host sends nothing. Its peers'
// connections stay open, without FIN or RST, even though its process is
// gone; what it sent that a cut held is lost; what they send is held. A
// connection opened to it meanwhile stays silent. Once it is back, a peer
// that sends on an old connection gets RST (the rebooted host does not
// know the connection), one that sends nothing keeps it, and the silent
// new connection reaches the restarted server.
func TestPowerOffIsABlackHole(t *testing.T) {
	pool := launch.NewAddrPool()
	ip := func() string {
		a, err := pool.Next()
		require.NoError(t, err)
		return a
	}
	p := New()
	t.Cleanup(func() { require.NoError(t, p.Close()) })
	ipC, ipD, sIP, fIP := ip(), ip(), ip(), ip()
	require.NoError(t, p.Register(ipC, "C"))
	require.NoError(t, p.Register(ipD, "D"))
	h := startHost(t, sIP+":0")
	front, err := p.Listen("S", fIP+":0", h.addr)
	require.NoError(t, err)
	dial := func(ip string) *net.TCPConn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		c, err := d.Dial("tcp", front)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c.(*net.TCPConn)
	}
	roundTrip := func(c net.Conn, s string) {
		_, err := c.Write([]byte(s))
		require.NoError(t, err)
		got, err := readN(t, c, len(s), 10*time.Second)
		require.NoError(t, err)
		require.Equal(t, s, string(got))
	}
	c, idle := dial(ipC), dial(ipD)
	roundTrip(c, "1")
	roundTrip(idle, "1")

	// S's echo of "2" is held by a one-way cut when the power goes.
	cut := p.Cut("S", "C")
	_, err = c.Write([]byte("2"))
	require.NoError(t, err)
	eventually(t, "the echo is held", func() bool { return p.Held("S", "C") == 1 })
	p.PowerOff("S")
	h.kill() // its process's sockets close: FIN, which nobody must see
	p.Uncut(cut)

	_, err = readN(t, c, 1, 500*time.Millisecond)
	assert.True(t, isTimeout(err), "no byte, FIN or RST from a powered-off host (the held echo died with it): %v", err)
	_, err = c.Write([]byte("3"))
	assert.NoError(t, err, "the peer's writes go into the void")
	eventually(t, "the proxy holds what C sends", func() bool { return p.Held("C", "S") == 1 })
	_, err = readN(t, idle, 1, 100*time.Millisecond)
	assert.True(t, isTimeout(err), "an idle peer sees nothing either: %v", err)
	fresh := dial(ipD)
	_, err = fresh.Write([]byte("x"))
	require.NoError(t, err)
	_, err = readN(t, fresh, 1, 300*time.Millisecond)
	assert.True(t, isTimeout(err), "a connection opened to a powered-off host stays silent: %v", err)

	// Back, its server listening by the time the peers' segments arrive.
	h.start()
	p.PowerOn("S")
	_, err = readN(t, c, 1, 10*time.Second)
	assert.True(t, errors.Is(err, syscall.ECONNRESET), "the rebooted host resets the connection the peer retransmits on: %v", err)
	got, err := readN(t, fresh, 1, 10*time.Second)
	require.NoError(t, err, "the connection opened during the outage reaches the restarted server")
	assert.Equal(t, "x", string(got))
	_, err = readN(t, idle, 1, 200*time.Millisecond)
	assert.True(t, isTimeout(err), "a peer that sends nothing learns nothing: %v", err)
	_, err = idle.Write([]byte("y"))
	require.NoError(t, err)
	_, err = readN(t, idle, 1, 10*time.Second)
	assert.True(t, errors.Is(err, syscall.ECONNRESET), "its first segment after the reboot gets RST: %v", err)
}

func TestRetransmitAt(t *testing.T) {
	start := time.Unix(1000, 0)
	ms := func(n int) time.Time { return start.Add(time.Duration(n) * time.Millisecond) }
	for _, tt := range []struct{ now, want int }{
		{0, 200}, {200, 200}, {201, 600}, {1000, 1400}, {1401, 3000},
		// 20 s: the README's example, 25.4 s after the first held segment.
		{20000, 25400},
		// The RTO stops doubling at 120 s: 0.2 s * (2^10 - 1) = 204.6 s,
		// then 204.6 + 120 = 324.6 s.
		{204601, 324600},
	} {
		assert.Equal(t, ms(tt.want), retransmitAt(start, ms(tt.now)), "now %dms", tt.now)
	}
}

// TestHealDeliversAtTheNextRetransmission: what a cut held arrives at the
// sender's first retransmission after the heal (its RTO doubling from
// 200 ms since the first held segment), as in the model's network, not at
// the heal: a real sender learns of the heal only when it retransmits.
func TestHealDeliversAtTheNextRetransmission(t *testing.T) {
	n := setup(t)
	c := n.dial(t, n.ipC)
	_, err := c.Write([]byte("0"))
	require.NoError(t, err)
	_, err = readN(t, c, 1, 10*time.Second)
	require.NoError(t, err)
	id := n.p.Cut("C", "S")
	wrote := time.Now()
	_, err = c.Write([]byte("a"))
	require.NoError(t, err)
	eventually(t, "the proxy holds the byte", func() bool { return n.p.Held("C", "S") == 1 })
	held := time.Now()
	// The proxy read the byte between wrote and held. Retransmissions come
	// 1.4 s and 3.0 s after it: heal in between, with room on both sides
	// for a slow machine (the read's lateness, the sleep's overshoot).
	require.Less(t, held.Sub(wrote), time.Second, "the proxy took too long to read a byte")
	time.Sleep(time.Until(held.Add(1500 * time.Millisecond)))
	healed := time.Now()
	n.p.Uncut(id)
	got, err := readN(t, c, 1, 30*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "a", string(got))
	assert.GreaterOrEqual(t, time.Since(healed), 300*time.Millisecond,
		"the held byte waits for the retransmission 3.0 s after it was sent (healed %v after it)", healed.Sub(wrote))
}
