package realmode

import (
	"bufio"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/realmode/launch"
)

// startZK starts a standalone ZooKeeper for a test, stopped at its end;
// it skips loudly (fails under CI=true) when ZooKeeper is missing.
func startZK(t *testing.T, tick time.Duration) *launch.Server {
	t.Helper()
	if why := zkMissing(); why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("ZooKeeper is required under CI=true: %s", why)
		}
		t.Skipf("SKIPPED: %s", why)
	}
	ip, err := launch.NewAddrPool().Next()
	require.NoError(t, err)
	g := launch.NewGroup()
	dir := t.TempDir()
	t.Cleanup(g.StopAll) // before the directory is removed
	s, err := g.StartZooKeeper(launch.ZooKeeperOptions{IP: ip, Dir: dir, TickTime: tick})
	require.NoError(t, err)
	return s
}

// zkTestConn is a synchronous wire-protocol client for tests.
type zkTestConn struct {
	t       *testing.T
	nc      net.Conn
	r       *zkReader
	session int64
	timeout time.Duration
	xid     int32
}

func zkDial(t *testing.T, addr string, timeout time.Duration) *zkTestConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	c := &zkTestConn{t: t, nc: nc, r: &zkReader{br: bufio.NewReader(nc)}}
	_, err = nc.Write(zkConnectRequest(0, int32(timeout.Milliseconds()), 0, nil))
	require.NoError(t, err)
	rec := c.next()
	rec.int()
	ms, session := rec.int(), rec.long()
	rec.buffer()
	require.NoError(t, rec.err)
	c.session, c.timeout = session, time.Duration(ms)*time.Millisecond
	return c
}

func (c *zkTestConn) next() *zkRec {
	c.t.Helper()
	require.NoError(c.t, c.nc.SetReadDeadline(time.Now().Add(5*time.Second)))
	rec, err := c.r.next()
	require.NoError(c.t, err)
	return &zkRec{b: append([]byte(nil), rec.b...)}
}

// do sends a request and returns the reply's header and body (skipping
// notifications, which it returns separately).
func (c *zkTestConn) do(op int32, body func(w *zkBuf)) (zxid int64, code int32, rec *zkRec, notes []*zkRec) {
	c.t.Helper()
	c.xid++
	_, err := c.nc.Write(zkRequest(c.xid, op, body))
	require.NoError(c.t, err)
	for {
		rec := c.next()
		xid, zxid, code := rec.int(), rec.long(), rec.int()
		require.NoError(c.t, rec.err)
		if xid == zkXidNotification {
			notes = append(notes, rec)
			continue
		}
		require.Equal(c.t, c.xid, xid)
		return zxid, code, rec, notes
	}
}

func create2(path string, flags int32) func(w *zkBuf) {
	return func(w *zkBuf) { w.str(path); w.buffer(nil); zkOpenACL(w); w.int(flags) }
}

// TestZKWire checks the gateway's encoding of each request it sends, and
// its decoding of the replies, against a real ZooKeeper: connect (the
// negotiated timeout), create2 (NONODE under a missing parent; an
// ephemeral-sequential node's path and czxid), getChildren, exists with a
// watch, delete (which fires the other session's watch as a NodeDeleted
// notification), ping, closeSession.
func TestZKWire(t *testing.T) {
	s := startZK(t, 500*time.Millisecond)
	a := zkDial(t, s.Addr(), 30*time.Second)
	assert.Equal(t, 10*time.Second, a.timeout, "30s is clamped to 20 ticks of 500ms")
	assert.NotZero(t, a.session)
	b := zkDial(t, s.Addr(), 100*time.Millisecond)
	assert.Equal(t, time.Second, b.timeout, "100ms is raised to 2 ticks")

	_, code, _, _ := a.do(zkOpCreate2, create2("/lock/n-", zkFlagEphemeral|zkFlagSequential))
	assert.Equal(t, "NONODE", zkErrName(code), "ZooKeeper does not create parents")
	_, code, _, _ = a.do(zkOpCreate2, create2("/lock", 0))
	require.Zero(t, code)
	zxid, code, rec, _ := a.do(zkOpCreate2, create2("/lock/n-", zkFlagEphemeral|zkFlagSequential))
	require.Zero(t, code)
	p, czxid := rec.str(), rec.stat()
	require.NoError(t, rec.err)
	assert.Equal(t, "/lock/n-0000000000", p)
	assert.Equal(t, zxid, czxid, "the create's zxid is the node's creation zxid")

	_, code, rec, _ = b.do(zkOpGetChildren, func(w *zkBuf) { w.str("/lock"); w.bool(false) })
	require.Zero(t, code)
	assert.Equal(t, []string{"n-0000000000"}, rec.strs())
	_, code, _, _ = b.do(zkOpExists, func(w *zkBuf) { w.str(p); w.bool(true) })
	require.Zero(t, code)
	_, code, _, _ = b.do(zkOpExists, func(w *zkBuf) { w.str("/lock/none"); w.bool(false) })
	assert.Equal(t, "NONODE", zkErrName(code))

	_, code, _, _ = a.do(zkOpDelete, func(w *zkBuf) { w.str(p); w.int(-1) })
	require.Zero(t, code)
	// b's watch fires: the notification arrives before the reply to b's
	// next request.
	_, _, _, notes := b.do(zkOpGetChildren, func(w *zkBuf) { w.str("/lock"); w.bool(false) })
	require.Len(t, notes, 1)
	typ, _, path := notes[0].int(), notes[0].int(), notes[0].str()
	assert.Equal(t, int32(zkEventNodeDeleted), typ)
	assert.Equal(t, p, path)

	_, err := b.nc.Write(zkRequest(zkXidPing, zkOpPing, nil))
	require.NoError(t, err)
	rec = b.next()
	assert.Equal(t, int32(zkXidPing), rec.int())

	_, code, _, _ = a.do(zkOpCloseSession, nil)
	assert.Zero(t, code)
}

// TestZKExpiryBuckets compares the model's session expiry (nodes/zookeeper
// Server: a session expires at the first multiple of tickTime after the
// last request it sent plus its timeout, so between timeout and
// timeout+tick of silence; ExpiryQueue.java:53-55 and 84-87 at 3.8.0) with
// a real server: sessions opened at different phases of the tick and then
// silent are closed by the server no earlier than their timeout after the
// connect and no later than a tick (and the closeSession transaction's own
// time) after it, and not all at the timeout itself.
func TestZKExpiryBuckets(t *testing.T) {
	const tick = 500 * time.Millisecond
	s := startZK(t, tick)
	const n = 6
	// The server touched each session while the test dialed it, at a time
	// the test cannot read: between dialing (before the connect request
	// went out) and hearing the reply (after the server answered). A
	// session's lifetime is bounded from above by the time since dialing
	// and from below by the time since hearing, however long the machine's
	// load held the test between the two (a loaded machine did hold it
	// 50 ms and more).
	type lifetime struct{ sinceDial, sinceHeard time.Duration }
	res := make(chan lifetime, n)
	for i := 0; i < n; i++ {
		dialed := time.Now() // before the connect request touched the session
		c := zkDial(t, s.Addr(), 2*tick)
		heard := time.Now() // after it
		require.Equal(t, 2*tick, c.timeout)
		go func() {
			_ = c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			var b [64]byte
			for {
				if _, err := c.nc.Read(b[:]); err != nil {
					res <- lifetime{time.Since(dialed), time.Since(heard)}
					return
				}
			}
		}()
		time.Sleep(tick / 7)
	}
	above := 0
	for i := 0; i < n; i++ {
		lived := <-res
		t.Logf("a silent 1s session lived %v to %v", lived.sinceHeard.Round(time.Millisecond), lived.sinceDial.Round(time.Millisecond))
		// ZooKeeper reads its clock in whole milliseconds (Time.java):
		// a few of them of slack.
		assert.GreaterOrEqual(t, lived.sinceDial, 2*tick-5*time.Millisecond, "expired before its timeout")
		assert.LessOrEqual(t, lived.sinceHeard, 3*tick+time.Second, "expired more than a tick (plus a loaded machine's second) after its timeout")
		if lived.sinceHeard > 2*tick+tick/5 {
			above++
		}
	}
	assert.Positive(t, above, "every session expired right at its timeout: no tick-sized buckets")
}
