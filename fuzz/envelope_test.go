package fuzz

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/nodes/zookeeper"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// zkExpiry is ZooKeeper's session expiry rule (3.9.5): the negotiated
// timeout is the requested one clamped into [minSessionTimeout,
// maxSessionTimeout], by default [2, 20] ticks (ZooKeeperServer.java:1393-1405),
// and a session last touched at t expires in the bucket after t + timeout:
// the next multiple of tickTime (ExpiryQueue.java:53-55 roundToNextInterval,
// 84-87 update).
func zkExpiry(touch sim.Time, requested, tick time.Duration) sim.Time {
	timeout := min(max(requested, 2*tick), 20*tick)
	t := int64(touch) + int64(timeout)
	return sim.Time((t/int64(tick) + 1) * int64(tick))
}

// TestEnvelopeZooKeeperSession compares the pause envelope of a ZooKeeper
// lock holder with the session expiry formula. c1's session (1s requested,
// clamped to 2 ticks of 1500ms) expires at zkExpiry(last request the server
// heard from c1); c2, watching c1's znode, is granted after a watch event
// and a get-children round trip; lock safety is violated exactly when c1's
// pause outlasts that grant. So the boundary is
// zkExpiry(touch) + (c2's grant - the expiry) - the pause's start, where the
// expiry instant is the formula's, not read from the run. The run's own
// session-expired event must fall on the formula's instant too.
//
// The client's read timeout (2/3 of the negotiated timeout,
// nodes/zookeeper/session.go ReadTimeout) does not bound a pause: a paused
// client cannot time out; on resume it finds the read timeout passed and
// reconnects at once, which keeps the session only if that reconnect reaches
// the server before zkExpiry(touch).
func TestEnvelopeZooKeeperSession(t *testing.T) {
	s, err := scenarios.Load("testdata/zk-envelope-clamp.yaml")
	require.NoError(t, err)
	r, err := Envelope(EnvelopeConfig{Base: s, Param: "pause.for", Lo: time.Millisecond, Hi: 20 * time.Second, Step: time.Millisecond})
	require.NoError(t, err)
	require.True(t, r.Found)
	require.Equal(t, "c1", r.Violates.Node)

	tick := s.ZK().TickTime
	requested := s.Clients[0].Lock.SessionTimeout
	require.Equal(t, requested, s.Clients[1].Lock.SessionTimeout)
	at := r.Violates.At.Lo

	evs := baseRun(t, s, append(append([]faults.Spec{}, r.Env...), r.Violates))
	var touch, expired, grant sim.Time = -1, -1, -1
	for _, e := range evs {
		switch {
		case e.Kind == zookeeper.KindSessionExpired && expired < 0:
			expired = e.At
		case e.Kind == sim.KindDeliver && e.Proc == "zk" && e.Peer == "c1" && expired < 0:
			touch = e.At // the server's clock is true time here (no clock section)
		case e.Kind == sim.KindAcquired && e.Proc == "c2" && grant < 0:
			grant = e.At
		}
	}
	require.Positive(t, touch)
	require.Positive(t, expired)
	require.Greater(t, grant, expired)
	want := zkExpiry(touch, requested, tick)
	assert.Equal(t, want, expired, "the run's session expiry follows the formula")
	boundary := time.Duration(want+(grant-expired)) - at
	assert.InDelta(t, float64(boundary), float64(r.Value), float64(r.Step), "envelope %s, formula %s", r.Value, boundary)
	t.Logf("envelope %s at %s; last request %s, expiry %s (formula %s), c2 granted %s: formula boundary %s",
		r.Value, at, touch, expired, want, grant, boundary)
}

// TestEnvelopeRedissonWatchdog compares the pause envelope of a Redisson
// holder with the watchdog's formula. The watchdog renews the key to the
// full lease every lease/3 (RedissonBaseLock.renewExpiration; LockTask.java:84-93
// pexpire(lease)), so the key expires at r + lease, r being the last time
// Redis heard c1's lock or renewal script, and a pause starting at `at`
// survives at most lease - (at - r). The worst placement is just before a
// renewal is sent, when at - r is the renewal period lease/3 (plus the
// script's trip to Redis). The test reads r, the key-expired deadline and
// c2's grant from the violating run and requires: the deadline to be
// r + lease; the placement to lie a renewal period lease/3 after r (within
// the network's latency bound); and the boundary to be at least
// lease - (at - r) less one step (a pause the key survives cannot violate)
// and at most a round trip more (c1 resumes, c2's next retry and c1's
// renewal race to Redis: whichever arrives first after the deadline decides,
// so lock safety flips up to one round trip after the key's expiry, not at
// it; c2 retries on its own schedule, not on a notification).
func TestEnvelopeRedissonWatchdog(t *testing.T) {
	s, err := scenarios.Load("testdata/redisson-envelope-watchdog.yaml")
	require.NoError(t, err)
	r, err := Envelope(EnvelopeConfig{Base: s, Param: "pause.for", Lo: time.Millisecond, Hi: 20 * time.Second, Step: time.Millisecond})
	require.NoError(t, err)
	require.True(t, r.Found)
	require.Equal(t, "c1", r.Violates.Node)

	lease := s.Clients[0].Lock.Lease
	renewEvery := lease / 3
	at := r.Violates.At.Lo

	evs := baseRun(t, s, append(append([]faults.Spec{}, r.Env...), r.Violates))
	// r is when Redis last ran c1's lock or renewal script: a request of
	// c1 that A answered with anything but -NOSCRIPT (Redisson sends
	// EVALSHA first and the script itself after -NOSCRIPT).
	var renewed, heard, grant, deadline sim.Time = -1, -1, -1, -1
	for _, e := range evs {
		switch {
		case e.Kind == redis.EventKeyExpired && e.Proc == "A" && deadline < 0:
			var dl, now int64
			for _, f := range e.Fields {
				switch f.Key {
				case "deadline":
					dl = f.Int
				case "now":
					now = f.Int
				}
			}
			// Redis keeps deadlines in milliseconds of its wall clock
			// (mstime() + pexpire's argument); A's clock runs at true rate.
			deadline = sim.At(time.Duration(e.At).Truncate(time.Millisecond) - time.Duration(now-dl)*time.Millisecond)
		case e.Kind == sim.KindDeliver && e.Proc == "A" && e.Peer == "c1" && deadline < 0:
			heard = e.At
		case e.Kind == sim.KindSend && e.Proc == "A" && e.Peer == "c1" && deadline < 0 && heard >= 0:
			if !strings.Contains(e.Text, "NOSCRIPT") {
				renewed = heard
			}
			heard = -1
		case e.Kind == sim.KindAcquired && e.Proc == "c2" && grant < 0:
			grant = e.At
		}
	}
	require.Positive(t, renewed)
	require.Positive(t, deadline, "c1's key expired")
	require.Less(t, renewed, sim.At(at), "the last renewal reached Redis before the pause")
	expiry := sim.At(time.Duration(renewed).Truncate(time.Millisecond) + lease)
	assert.Equal(t, expiry, deadline, "the key expires a lease after the last renewal")
	require.GreaterOrEqual(t, grant, expiry)
	maxLatency := s.Network.Latency.Hi
	survives := lease - (time.Duration(at) - time.Duration(renewed))
	assert.GreaterOrEqual(t, r.Value, survives-r.Step, "a pause the key survives cannot violate (formula %s)", survives)
	assert.LessOrEqual(t, r.Value, survives+2*maxLatency+r.Step, "a pause past the key's expiry by a round trip violates (formula %s)", survives)
	assert.InDelta(t, float64(renewEvery), float64(time.Duration(at)-time.Duration(renewed)), float64(4*maxLatency),
		"the worst pause starts a renewal period after the last renewal")
	t.Logf("envelope %s at %s; last renewal at Redis %s, key deadline %s (formula %s), c2 granted %s: key survives a pause up to lease %[8]s - %[9]s since the renewal = %[7]s",
		r.Value, at, renewed, deadline, expiry, grant, survives, lease, time.Duration(at)-time.Duration(renewed))
}
