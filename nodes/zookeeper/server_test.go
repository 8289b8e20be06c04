package zookeeper

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

func TestNegotiate(t *testing.T) {
	tests := []struct {
		name      string
		cfg       Config
		requested time.Duration
		want      time.Duration
	}{
		{"below the minimum", DefaultConfig(), time.Second, 4 * time.Second},
		{"zero", DefaultConfig(), 0, 4 * time.Second},
		{"inside", DefaultConfig(), 10 * time.Second, 10 * time.Second},
		// Curator asks for 60 s and gets 40 s (reference section 6.4).
		{"above the maximum", DefaultConfig(), 60 * time.Second, 40 * time.Second},
		{"derived bounds", Config{TickTime: time.Second}, time.Second, 2 * time.Second},
		{"derived maximum", Config{TickTime: time.Second}, time.Minute, 20 * time.Second},
		{"explicit bounds", Config{TickTime: time.Second, MinSessionTimeout: 5 * time.Second, MaxSessionTimeout: 8 * time.Second}, 9 * time.Second, 8 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, tt.cfg.Validate())
			assert.Equal(t, tt.want, tt.cfg.Negotiate(tt.requested))
		})
	}
	t.Run("on the wire", func(t *testing.T) {
		k, _ := newWorld(t, DefaultConfig())
		c := addRaw(k, "c", connect(0, time.Minute))
		require.NoError(t, k.Run(sim.At(time.Second)))
		assert.Equal(t, 40*time.Second, c.reply(t, 0).Timeout)
	})
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // "" for valid
	}{
		{"default", DefaultConfig(), ""},
		{"lock-delay", Config{TickTime: time.Second, LockDelay: time.Minute}, ""},
		{"no tick", Config{}, "TickTime must be positive"},
		{"negative min", Config{TickTime: time.Second, MinSessionTimeout: -1}, "MinSessionTimeout must be >= 0"},
		{"negative max", Config{TickTime: time.Second, MaxSessionTimeout: -1}, "MaxSessionTimeout must be >= 0"},
		{"negative lock-delay", Config{TickTime: time.Second, LockDelay: -time.Second}, "LockDelay must be >= 0"},
		{"min above max", Config{TickTime: time.Second, MinSessionTimeout: 30 * time.Second}, "must not exceed MaxSessionTimeout (20s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	assert.Panics(t, func() { New(Config{}) })
}

// TestSessionExpiry: the server expires a session it has not heard from for
// its timeout, at the next tick boundary (ExpiryQueue.roundToNextInterval):
// with tickTime 2 s, a session last heard at t expires at the first multiple
// of 2 s after t + timeout.
func TestSessionExpiry(t *testing.T) {
	tests := []struct {
		name    string
		steps   []rawStep
		expired string // true time of the session-expired event
	}{
		// Heard at 0.001 (the connect): 4.001 rounds up to 6 s.
		{"no pings", one(connect(0, 4*time.Second)), "6.000s"},
		// Heard at 0.001: 10.001 rounds up to 12 s.
		{"longer timeout", one(connect(0, 10*time.Second)), "12.000s"},
		// Heard at 20.001 (the last ping): 24.001 rounds up to 26 s.
		{"pings keep it alive", steps(one(connect(0, 4*time.Second)), pings(time.Second, 20*time.Second, time.Second)), "26.000s"},
		// A ping every 3.9 s keeps a 4 s session alive: it is due at the
		// bucket after now + 4 s, always later than the next ping.
		{"pings just in time", steps(one(connect(0, 4*time.Second)), pings(3900*ms, 39*time.Second, 3900*ms)), "44.000s"},
		// Any request renews the session, not only pings.
		{"requests renew", one(connect(0, 4*time.Second), op(3*time.Second, OpGetChildren, "/"), op(6*time.Second, OpExists, "/x")), "12.000s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, _ := newWorld(t, DefaultConfig())
			late := rawStep{at: 60 * time.Second, req: Request{Op: OpPing}}
			c := addRaw(k, "c", append(tt.steps, late)...)
			require.NoError(t, k.Run(sim.At(61*time.Second)))
			exp := traceOf(k, KindSessionExpired)
			require.Len(t, exp, 1)
			assert.Equal(t, tt.expired+" s1 timeout "+c.reply(t, 0).Timeout.String(), exp[0])
			// The client is told at once, and a later request gets SESSIONEXPIRED.
			assert.Contains(t, c.log, mustParse(t, tt.expired).Add(ms).String()+" session-expired")
			assert.Equal(t, ErrSessionExpired, c.reply(t, len(tt.steps)).Err)
		})
	}
}

func mustParse(t *testing.T, s string) sim.Time {
	t.Helper()
	d, err := time.ParseDuration(s)
	require.NoError(t, err)
	return sim.At(d)
}

// TestRequestErrors: an operation the service does not know is refused
// (the other refusals are in testdata/interactions/errors.txt), and the
// parents a create made implicitly are persistent: an ephemeral child
// goes with its session, its parents stay.
func TestRequestErrors(t *testing.T) {
	t.Run("unknown op", func(t *testing.T) {
		k, _ := newWorld(t, DefaultConfig())
		c := addRaw(k, "c", connect(0, 10*time.Second), rawStep{at: 20 * ms, req: Request{Op: Op(99)}})
		require.NoError(t, k.Run(sim.At(time.Second)))
		assert.Equal(t, ErrUnimplemented, c.reply(t, 1).Err)
	})
	t.Run("implicit parents are persistent and listed", func(t *testing.T) {
		k, _ := newWorld(t, DefaultConfig())
		c := addRaw(k, "c", connect(0, 4*time.Second), create(10*ms, "/x/y/z", true, false), op(20*ms, OpGetChildren, "/x"))
		require.NoError(t, k.Run(sim.At(10*time.Second)))
		assert.Equal(t, []string{"y"}, c.reply(t, 2).Children)
		// The session expired; z went with it, its parents stayed.
		assert.Equal(t, []string{"6.000s /x/y/z zxid 3 expired s1"}, traceOf(k, KindZnodeDeleted))
	})
}

// TestZxid: every change takes the next zxid (createSession, create,
// delete, closeSession), reads and pings do not, and a create's reply
// carries the node's creation zxid.
func TestZxid(t *testing.T) {
	k, zk := newWorld(t, DefaultConfig())
	a := addRaw(k, "a",
		connect(0, 10*time.Second),                // 1
		create(10*ms, "/lock/n-", true, true),     // 2 (and its parent)
		create(20*ms, "/lock/n-", true, true),     // 3
		op(30*ms, OpExists, "/lock"),              // 3
		ping(40*ms),                               // 3
		op(50*ms, OpDelete, "/lock/n-0000000000"), // 4
		op(60*ms, OpGetChildren, "/lock"),         // 4
		op(70*ms, OpClose, ""),                    // 5
	)
	b := addRaw(k, "b", connect(80*ms, 10*time.Second)) // 6
	require.NoError(t, k.Run(sim.At(time.Second)))
	want := []int64{1, 2, 3, 3, 3, 4, 4, 5}
	for i, z := range want {
		assert.Equal(t, z, a.reply(t, i).Zxid, "step %d (%s)", i, a.reply(t, i).Op)
	}
	assert.Equal(t, int64(6), b.reply(t, 0).Zxid)
	assert.Equal(t, int64(6), k.Process(zk).(*Server).Zxid())
	// The close deleted the remaining ephemeral in its own transaction.
	assert.Equal(t, []string{"0.051s /lock/n-0000000000 zxid 4 deleted", "0.071s /lock/n-0000000001 zxid 5 closed s1"}, traceOf(k, KindZnodeDeleted))

	t.Run("across a restart", func(t *testing.T) {
		k, zk := newWorld(t, DefaultConfig())
		c := addRaw(k, "c", connect(0, 10*time.Second), create(10*ms, "/a", false, false), ping(2*time.Second), create(3*time.Second, "/b", false, false),
			create(3500*ms, "/a", false, false))
		d := addRaw(k, "d", connect(2500*ms, 10*time.Second))
		k.At(sim.At(time.Second), func() { k.Crash(zk, sim.CrashPower) })
		k.At(sim.At(2*time.Second), func() { k.Restart(zk) })
		require.NoError(t, k.Run(sim.At(4*time.Second)))
		// The ping at 2 s went on the connection of the crashed service: its
		// host, back up, reset it. The restarted service recovered the
		// session and /a from its disk (every transaction is fsynced before
		// it is answered, so even a power loss keeps them), and its zxids
		// and session ids are higher than any before.
		assert.Contains(t, c.log, "2.002s conn-end reset")
		r := d.reply(t, 0)
		assert.Greater(t, r.Zxid, c.reply(t, 1).Zxid)
		assert.Equal(t, int64(1)<<32+1, r.Zxid)
		assert.Equal(t, int64(1)<<32+1, r.Session)
		assert.Empty(t, c.reply(t, 3).Err, "c's session survived the restart")
		assert.Equal(t, int64(1)<<32+2, c.reply(t, 3).Zxid)
		assert.Equal(t, ErrNodeExists, c.reply(t, 4).Err, "/a survived the power loss")
	})
}

// TestLockDelay: with a lock-delay, the ephemeral node of an EXPIRED
// session stays for LockDelay (still listed, still existing, its watches
// waiting), then goes; a clean delete or close frees it at once.
func TestLockDelay(t *testing.T) {
	tests := []struct {
		name      string
		lockDelay time.Duration
		end       []rawStep // how the holder a ends
		watchAt   string    // when b hears the node is gone
		losses    []string  // the key losses in the history
	}{
		// a last heard at 0.011: 4.011 rounds up to 6 s; the tombstone stays 10 s.
		{"expiry with lock-delay", 10 * time.Second, nil, "16.001s", []string{"6.000s a /lock/n-0000000000 session-expired session s1 timeout 4s, held back for lock-delay 10s"}},
		{"expiry without lock-delay", 0, nil, "6.001s", []string{"6.000s a /lock/n-0000000000 session-expired session s1 timeout 4s"}},
		// Asked for by the client: no loss.
		{"close frees at once", 10 * time.Second, one(op(3*time.Second, OpClose, "")), "3.002s", nil},
		{"delete frees at once", 10 * time.Second, one(op(3*time.Second, OpDelete, "/lock/n-0000000000")), "3.002s", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.LockDelay = tt.lockDelay
			k, _ := newWorld(t, cfg)
			addRaw(k, "a", append([]rawStep{connect(0, 4*time.Second), create(10*ms, "/lock/n-", true, true)}, tt.end...)...)
			b := addRaw(k, "b", steps(
				one(connect(0, 40*time.Second), create(20*ms, "/lock/n-", true, true), watch(30*ms, "/lock/n-0000000000")),
				one(op(8*time.Second, OpGetChildren, "/lock"), op(8*time.Second, OpExists, "/lock/n-0000000000")),
				one(create(8*time.Second, "/lock/n-0000000000", true, false), op(8*time.Second, OpDelete, "/lock/n-0000000000")),
				one(op(20*time.Second, OpGetChildren, "/lock")),
			)...)
			require.NoError(t, k.Run(sim.At(21*time.Second)))
			assert.True(t, b.reply(t, 2).Exists)
			assert.Contains(t, b.log, tt.watchAt+" watch /lock/n-0000000000")
			assert.Equal(t, []string{"n-0000000001"}, b.reply(t, 7).Children)
			var losses []string
			for _, l := range k.History().KeyLosses {
				losses = append(losses, l.At.String()+" "+l.Holder+" "+l.Key+" "+string(l.Cause)+" "+l.Detail)
			}
			assert.Equal(t, tt.losses, losses)
			if tt.name == "expiry with lock-delay" {
				// At 8 s the tombstone still blocks: listed, existing, not
				// re-creatable, not deletable.
				assert.Equal(t, []string{"n-0000000000", "n-0000000001"}, b.reply(t, 3).Children)
				assert.True(t, b.reply(t, 4).Exists)
				assert.Equal(t, ErrNodeExists, b.reply(t, 5).Err)
				assert.Equal(t, ErrLockDelay, b.reply(t, 6).Err)
				assert.Equal(t, []string{"6.000s /lock/n-0000000000 of s1 held for 10s"}, traceOf(k, KindLockDelay))
				assert.Equal(t, []string{"16.000s /lock/n-0000000000 zxid 6 lock-delay over"}, traceOf(k, KindZnodeDeleted)[:1])
			} else {
				assert.Empty(t, traceOf(k, KindLockDelay))
			}
		})
	}
}

// TestPingBeforeWatch: a watch event and replies to one session are
// numbered in the order they were sent.
func TestSeqNumbering(t *testing.T) {
	k, _ := newWorld(t, DefaultConfig())
	a := addRaw(k, "a", connect(0, 10*time.Second), create(10*ms, "/x", false, false), op(30*ms, OpDelete, "/x"))
	b := addRaw(k, "b", connect(0, 10*time.Second), watch(20*ms, "/x"), ping(40*ms))
	require.NoError(t, k.Run(sim.At(time.Second)))
	assert.Equal(t, []uint64{1, 2, 3}, []uint64{a.reply(t, 0).Seq, a.reply(t, 1).Seq, a.reply(t, 2).Seq})
	// b: connect 1, exists 2, the watch event 3, the ping 4.
	assert.Equal(t, []uint64{1, 2, 4}, []uint64{b.reply(t, 0).Seq, b.reply(t, 1).Seq, b.reply(t, 2).Seq})
	assert.Equal(t, "0.032s watch /x", b.log[2])
}

// TestRestartRecovers: a restarted service has the tree and the sessions
// it had (ZooKeeper reloads its snapshot and transaction log): an
// ephemeral node of a session nobody reconnects to stays listed, the
// sequence numbers go on from its parent's cversion, and the session is
// tracked anew from the restart, so it expires a timeout (rounded up to a
// tick) after it (SessionTrackerImpl.java:114-118, release-3.8.0), with its
// node. A clean shutdown and a power loss keep the same: every transaction
// is on disk before it is answered.
func TestRestartRecovers(t *testing.T) {
	for _, mode := range []sim.CrashMode{sim.CrashProcess, sim.CrashPower, sim.CrashClean} {
		t.Run(mode.String(), func(t *testing.T) {
			k, zk := newWorld(t, DefaultConfig())
			addRaw(k, "a", connect(0, 4*time.Second), create(10*ms, "/lock/n-", true, true))
			b := addRaw(k, "b", connect(3500*ms, 10*time.Second), create(3600*ms, "/lock/n-", true, true), op(3700*ms, OpGetChildren, "/lock"),
				op(9*time.Second, OpGetChildren, "/lock"))
			k.At(sim.At(time.Second), func() { k.Crash(zk, mode) })
			k.At(sim.At(3*time.Second), func() { k.Restart(zk) })
			require.NoError(t, k.Run(sim.At(10*time.Second)))
			assert.Equal(t, "/lock/n-0000000001", b.reply(t, 1).Path, "the parent's cversion survived")
			assert.Equal(t, []string{"n-0000000000", "n-0000000001"}, b.reply(t, 2).Children)
			// a's session: touched at the restart (3 s), 3 + 4 = 7 s rounds up
			// to the 8 s bucket.
			assert.Equal(t, []string{"8.000s s1 timeout 4s"}, traceOf(k, KindSessionExpired))
			assert.Equal(t, []string{"n-0000000001"}, b.reply(t, 3).Children)
		})
	}
}
