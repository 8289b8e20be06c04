package clients

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/nodes/sentinel"
	"github.com/locksim/locksim/nodes/storage"
	"github.com/locksim/locksim/sim"
)

// servers adds the servers algorithm needs and points lc at them: Redis A
// (A, B, C for redlock and redsync), or ZooKeeper Z.
func servers(w *world, lc *LockConfig) {
	switch lc.Algorithm {
	case Redlock, Redsync:
		w.redis("A", "B", "C")
		lc.Nodes = []string{"A", "B", "C"}
	case ZooKeeper:
		w.zookeeper("Z")
		lc.Node = "Z"
	case MemcachedAdd:
		w.memcached("M", nil)
		lc.Node = "M"
	case MySQLInsert, MySQLForUpdate:
		w.mysql("D", nil)
		lc.Node = "D"
	default:
		w.redis("A")
		lc.Node = "A"
	}
}

// clientConfig is a client of lc on resource S.
func clientConfig(name string, lc LockConfig, wl Workload) Config {
	return Config{Name: name, Lock: lc, Workload: wl, Resource: "S"}
}

// Every algorithm: a clean acquire, critical section and release, twice.
func TestCleanAcquireRelease(t *testing.T) {
	for _, alg := range Algorithms {
		t.Run(alg, func(t *testing.T) {
			w := newWorld(t)
			lc := lockConfig(t, alg, nil)
			servers(w, &lc)
			w.storage(storage.FencingNone)
			w.client(clientConfig("c1", lc, Workload{Cycles: 2, Hold: 100 * time.Millisecond, Think: 100 * time.Millisecond}))
			h := w.run(10 * time.Second)

			bs := beliefs(h, "c1")
			require.Len(t, bs, 2, w.dumpTrace())
			for _, b := range bs {
				assert.Equal(t, sim.EndReleased, b.Reason)
				assert.Less(t, b.Start, b.End)
			}
			ss := sections(h, "c1")
			require.Len(t, ss, 2)
			for i, s := range ss {
				assert.True(t, s.Read)
				assert.Equal(t, int64(i), s.ReadValue)
				assert.Equal(t, sim.WriteAccepted, s.Outcome)
				assert.Equal(t, bs[i].ID, s.BeliefID)
				assert.Greater(t, s.ResultAt, s.WriteSent)
				// The write left after the hold.
				assert.GreaterOrEqual(t, s.WriteSent.Sub(s.ReadSent), 100*time.Millisecond)
			}
			ws := wants(h, "c1")
			require.Len(t, ws, 2)
			for _, x := range ws {
				assert.True(t, x.Got)
			}
			assert.True(t, w.TraceHas(KindClient, "c1", "workload done after 2 cycles"))
		})
	}
}

// Every algorithm: two clients contend; their beliefs never overlap and no
// update is lost.
func TestContention(t *testing.T) {
	for _, alg := range Algorithms {
		t.Run(alg, func(t *testing.T) {
			w := newWorld(t)
			lc := lockConfig(t, alg, nil)
			servers(w, &lc)
			w.storage(storage.FencingNone)
			wl := Workload{Cycles: 3, Hold: 50 * time.Millisecond, Think: 20 * time.Millisecond}
			w.client(clientConfig("c1", lc, wl))
			w.client(clientConfig("c2", lc, wl))
			h := w.run(60 * time.Second)

			assert.Empty(t, overlaps(h))
			assert.False(t, lostUpdate(h))
			for _, c := range []string{"c1", "c2"} {
				bs := beliefs(h, c)
				require.Len(t, bs, 3, "%s\n%s", c, w.dumpTrace())
				for _, b := range bs {
					assert.Equal(t, sim.EndReleased, b.Reason)
				}
			}
			accepted := 0
			for _, s := range h.Sections {
				if s.Outcome == sim.WriteAccepted {
					accepted++
				}
			}
			assert.Equal(t, 6, accepted)
		})
	}
}

// Fencing tokens: incr (a Redis counter) and zxid grow with every grant and
// travel with the resource requests; a monotonic resource accepts them.
func TestFencingTokens(t *testing.T) {
	tests := []struct {
		alg, token string
	}{
		{RedisSingle, FencingIncr},
		{RedisSetNXExpire, FencingIncr},
		{Redlock, FencingIncr},
		{Redsync, FencingIncr},
		{Redisson, FencingIncr},
		{ZooKeeper, FencingZxid},
	}
	for _, tt := range tests {
		t.Run(tt.alg, func(t *testing.T) {
			w := newWorld(t)
			lc := lockConfig(t, tt.alg, func(c *LockConfig) { c.FencingToken = tt.token })
			servers(w, &lc)
			w.storage(storage.FencingMonotonic)
			cfg := clientConfig("c1", lc, Workload{Cycles: 2, Hold: 10 * time.Millisecond})
			cfg.ResourceFencing = storage.FencingMonotonic
			w.client(cfg)
			h := w.run(10 * time.Second)

			bs := beliefs(h, "c1")
			require.Len(t, bs, 2)
			assert.True(t, bs[0].HasToken)
			assert.Less(t, bs[0].Token, bs[1].Token)
			for i, s := range sections(h, "c1") {
				assert.Equal(t, bs[i].Token, s.Token)
				assert.Equal(t, sim.WriteAccepted, s.Outcome)
			}
		})
	}
}

// token-cas: the section sets the resource's lock field first; the writes
// of a clean run are accepted.
func TestTokenCAS(t *testing.T) {
	w := newWorld(t)
	lc := lockConfig(t, RedisSingle, nil)
	servers(w, &lc)
	w.storage(storage.FencingTokenCAS)
	cfg := clientConfig("c1", lc, Workload{Cycles: 2, Hold: 10 * time.Millisecond})
	cfg.ResourceFencing = storage.FencingTokenCAS
	w.client(cfg)
	h := w.run(5 * time.Second)
	ss := sections(h, "c1")
	require.Len(t, ss, 2)
	for _, s := range ss {
		assert.Equal(t, sim.WriteAccepted, s.Outcome)
	}
	assert.True(t, w.TraceHas(sim.KindSend, "c1", "set-lock"))
}

// The non-atomic releases: redis-get-del's GET ... DEL and redis-fixed-value's
// DEL delete another client's lock; the compare-and-delete script does not.
func TestNonAtomicReleaseDeletesAnotherClientsLock(t *testing.T) {
	const ttl = time.Second
	t.Run("get-del: expiry between GET and DEL", func(t *testing.T) {
		tests := []struct {
			alg         string
			wantOverlap bool
		}{
			{RedisGetDel, true},
			{RedisSingle, false},
		}
		for _, tt := range tests {
			t.Run(tt.alg, func(t *testing.T) {
				w := newWorld(t)
				lc := lockConfig(t, tt.alg, func(c *LockConfig) { c.TTL = ttl })
				servers(w, &lc)
				w.storage(storage.FencingNone)
				// c1's release starts (its GET or script is sent) at about
				// 100 ms; c1 pauses at once, so it reads the GET's answer
				// (its own value) 2 s later, after the key expired and c2
				// took the lock.
				w.client(clientConfig("c1", lc, Workload{Cycles: 2, Hold: 100 * time.Millisecond, Think: 50 * time.Millisecond}))
				// c2 holds longer and with a longer TTL, so that its key is
				// still there when c1 comes back.
				lc2 := lc
				lc2.TTL = 5 * time.Second
				w.client(clientConfig("c2", lc2, Workload{Start: 200 * time.Millisecond, Cycles: 1, Hold: 3 * time.Second, Think: 50 * time.Millisecond}))
				w.On(sim.KindReleased, "c1", func() { w.K.Pause(w.ID("c1"), 2*time.Second) })
				h := w.run(20 * time.Second)

				c1 := beliefs(h, "c1")
				require.Len(t, c1, 2, w.dumpTrace())
				assert.False(t, overlapsWith(h, c1[0]), "the first belief is clean")
				assert.Equal(t, tt.wantOverlap, overlapsWith(h, c1[1]), "c1's second belief overlaps c2's\n%s", w.dumpTrace())
			})
		}
	})
	t.Run("fixed-value: DEL after a pause", func(t *testing.T) {
		tests := []struct {
			alg         string
			wantOverlap bool
		}{
			{RedisFixedValue, true},
			{RedisSingle, false},
		}
		for _, tt := range tests {
			t.Run(tt.alg, func(t *testing.T) {
				w := newWorld(t)
				lc := lockConfig(t, tt.alg, func(c *LockConfig) { c.TTL = ttl })
				servers(w, &lc)
				w.storage(storage.FencingNone)
				// c1 pauses while it holds the lock (no validity check: it
				// still believes), the key expires, c2 takes it; c1 resumes,
				// writes, releases, and comes back for a second cycle.
				w.client(clientConfig("c1", lc, Workload{Cycles: 2, Hold: 500 * time.Millisecond, Think: 50 * time.Millisecond}))
				// c2 holds longer and with a longer TTL, so that its key is
				// still there when c1 comes back.
				lc2 := lc
				lc2.TTL = 5 * time.Second
				w.client(clientConfig("c2", lc2, Workload{Start: 200 * time.Millisecond, Cycles: 1, Hold: 3 * time.Second, Think: 50 * time.Millisecond}))
				w.At(100*time.Millisecond, func() { w.K.Pause(w.ID("c1"), 2*time.Second) })
				h := w.run(20 * time.Second)

				c1 := beliefs(h, "c1")
				require.Len(t, c1, 2, w.dumpTrace())
				assert.True(t, overlapsWith(h, c1[0]), "a paused naive client keeps believing")
				assert.Equal(t, tt.wantOverlap, overlapsWith(h, c1[1]), "after c1's DEL, c1 takes c2's lock\n%s", w.dumpTrace())
			})
		}
	})
}

// SETNX then EXPIRE: a crash between the two commands leaves a key without a
// TTL that blocks every other client forever; SET NX PX is one command.
func TestSetNXWithoutExpireAfterCrash(t *testing.T) {
	tests := []struct {
		alg     string
		wantGot bool
	}{
		{RedisSetNXExpire, false},
		{RedisSingle, true},
	}
	for _, tt := range tests {
		t.Run(tt.alg, func(t *testing.T) {
			w := newWorld(t)
			lc := lockConfig(t, tt.alg, func(c *LockConfig) { c.TTL = time.Second })
			servers(w, &lc)
			w.storage(storage.FencingNone)
			w.client(clientConfig("c1", lc, Workload{Cycles: 1, Hold: 100 * time.Millisecond}))
			w.client(clientConfig("c2", lc, Workload{Start: 100 * time.Millisecond, Cycles: 1, Hold: 100 * time.Millisecond, Think: 100 * time.Millisecond}))
			// The first command reaches A at 1 ms; its answer would reach c1
			// at 2 ms: c1 crashes in between.
			w.At(1500*time.Microsecond, func() { w.K.Crash(w.ID("c1"), sim.CrashProcess) })
			h := w.run(20 * time.Second)

			assert.Empty(t, beliefs(h, "c1"))
			got := len(beliefs(h, "c2")) > 0
			assert.Equal(t, tt.wantGot, got, w.dumpTrace())
			if !tt.wantGot {
				gaveUp := 0
				for _, x := range wants(h, "c2") {
					if x.Reason == "gave-up" {
						gaveUp++
					}
				}
				assert.Greater(t, gaveUp, 10, "c2 keeps trying and giving up")
			}
		})
	}
}

// Redlock's validity check (Kleppmann's S5, antirez's answer): the client
// pauses while the replies of a parallel round are in flight; when it reads
// them the keys have expired and another client holds the lock. With the
// check the attempt fails; without it the client believes.
func TestRedlockValidityCatchesPauseBeforeReplies(t *testing.T) {
	tests := []struct {
		name          string
		validityCheck bool
		wantOverlap   bool
	}{
		{"validity_check true", true, false},
		{"validity_check false", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			lc := lockConfig(t, Redlock, func(c *LockConfig) {
				c.TTL = time.Second
				c.Fanout = FanoutParallel
				c.ValidityCheck = tt.validityCheck
			})
			servers(w, &lc)
			w.storage(storage.FencingNone)
			w.client(clientConfig("c1", lc, Workload{Cycles: 1, Hold: 100 * time.Millisecond}))
			// c2's lock lives and is held past c1's resumption.
			lc2 := lc
			lc2.TTL = 5 * time.Second
			w.client(clientConfig("c2", lc2, Workload{Start: 100 * time.Millisecond, Cycles: 1, Hold: 2 * time.Second, Think: 50 * time.Millisecond}))
			// The SETs reach A, B, C at 1 ms; the replies reach c1 at 2 ms.
			w.At(1500*time.Microsecond, func() { w.K.Pause(w.ID("c1"), 1500*time.Millisecond) })
			h := w.run(10 * time.Second)

			c2 := beliefs(h, "c2")
			require.NotEmpty(t, c2)
			require.Less(t, c2[0].Start, sim.At(1500*time.Millisecond), "c2 got the lock during c1's pause")
			c1 := beliefs(h, "c1")
			assert.Equal(t, tt.wantOverlap, len(c1) > 0 && overlapsWith(h, c1[0]), w.dumpTrace())
			if tt.validityCheck {
				// c1's first attempt failed on validity; it got the lock later.
				assert.False(t, h.Attempts[attemptsOf(h, "c1")[0]].OK)
				assert.True(t, w.TraceHas(KindClient, "c1", "3/3 nodes, validity -"))
			}
		})
	}
}

func attemptsOf(h *sim.History, client string) []int {
	var out []int
	for i, a := range h.Attempts {
		if a.Client == client {
			out = append(out, i)
		}
	}
	return out
}

// A reply lost on its way back: the node set the key, the client counts it
// as not granted. release=acquired leaves that key to expire, and the
// client's own retries fail against it; release=all cleans it up.
func TestRedlockLostReplyLeavesStaleKey(t *testing.T) {
	tests := []struct {
		release string
		wantGot bool // the first want gets the lock
	}{
		{ReleaseAcquired, false},
		{ReleaseAll, true},
	}
	for _, tt := range tests {
		t.Run(tt.release, func(t *testing.T) {
			w := newWorld(t)
			lc := lockConfig(t, Redlock, func(c *LockConfig) {
				c.TTL = 2 * time.Second
				c.Release = tt.release
			})
			servers(w, &lc)
			w.storage(storage.FencingNone)
			w.client(clientConfig("c1", lc, Workload{Cycles: 1, Hold: 10 * time.Millisecond, Think: 100 * time.Millisecond}))
			w.At(0, func() {
				w.K.DropNext(w.ID("A"), w.ID("c1"), 1)
				w.K.DropNext(w.ID("B"), w.ID("c1"), 1)
			})
			h := w.run(10 * time.Second)

			ws := wants(h, "c1")
			require.NotEmpty(t, ws)
			assert.Equal(t, tt.wantGot, ws[0].Got, w.dumpTrace())
			bs := beliefs(h, "c1")
			require.Len(t, bs, 1, "c1 gets the lock in the end")
			if !tt.wantGot {
				assert.GreaterOrEqual(t, bs[0].Start, sim.At(2*time.Second), "only after the stale keys expired")
			}
		})
	}
}

// Redisson's watchdog stops silently: the holder pauses longer than the
// lease, the key expires, another client takes the lock; on resume the
// renewal finds the key gone and stops without telling the holder, which
// goes on to write.
func TestRedissonWatchdogStopsSilently(t *testing.T) {
	w := newWorld(t)
	lc := lockConfig(t, Redisson, func(c *LockConfig) { c.Lease = 3 * time.Second })
	servers(w, &lc)
	w.storage(storage.FencingNone)
	w.client(clientConfig("c1", lc, Workload{Cycles: 1, Hold: 6 * time.Second}))
	w.client(clientConfig("c2", lc, Workload{Start: 2 * time.Second, Cycles: 1, Hold: 3 * time.Second}))
	w.At(1500*time.Millisecond, func() { w.K.Pause(w.ID("c1"), 4*time.Second) })
	h := w.run(15 * time.Second)

	c1, c2 := beliefs(h, "c1"), beliefs(h, "c2")
	require.Len(t, c1, 1, w.dumpTrace())
	require.Len(t, c2, 1)
	assert.Less(t, c2[0].Start, sim.At(5500*time.Millisecond), "c2 got the lock while c1 was paused")
	assert.Equal(t, sim.EndReleased, c1[0].Reason, "c1 was never told")
	assert.True(t, overlapsWith(h, c1[0]))
	assert.True(t, w.TraceHas(KindClient, "c1", "renewal cancelled silently"))
	assert.True(t, lostUpdate(h), "both read 0 and wrote 1")
	// Before the pause the watchdog renewed the lease once (at 1 s).
	renewals := 0
	for _, e := range w.K.Trace() {
		if e.Kind == sim.KindTimer && e.Proc == "c1" && strings.HasPrefix(e.Text, "renew") && e.At < sim.At(1500*time.Millisecond) {
			renewals++
		}
	}
	assert.Equal(t, 1, renewals)
}

// Redisson with a replica: a lock write that no replica acknowledges (WAIT
// answers 0) fails the acquire, which unlocks; once the replica is back the
// client gets the lock.
func TestRedissonFailsWhenNoReplicaSynced(t *testing.T) {
	w := newWorld(t)
	lc := lockConfig(t, Redisson, func(c *LockConfig) { c.Node = "A" })
	w.redis("A")
	w.replica("R", "A")
	w.storage(storage.FencingNone)
	w.client(clientConfig("c1", lc, Workload{Start: 3 * time.Second, Cycles: 1, Hold: 10 * time.Millisecond}))
	// Cut the replica off (after its initial sync) until 6 s.
	var cut int
	w.At(2*time.Second, func() { cut = w.K.Partition([][]sim.ProcID{{w.ID("R")}, {w.ID("A"), w.ID("c1"), w.ID("S")}}) })
	w.At(6*time.Second, func() { w.K.Unpartition(cut) })
	h := w.run(20 * time.Second)

	ids := attemptsOf(h, "c1")
	require.NotEmpty(t, ids)
	assert.False(t, h.Attempts[ids[0]].OK, "no replica in sync: the acquire fails\n%s", w.dumpTrace())
	assert.True(t, w.TraceHas(KindClient, "c1", "no replica in sync"))
	bs := beliefs(h, "c1")
	require.Len(t, bs, 1)
	assert.Greater(t, bs[0].Start, sim.At(6*time.Second))
}

// redsync's Extend with SetNXOnExtend: the holder pauses past its expiry,
// another client takes and releases the lock; on resume the extension finds
// the key gone and re-creates it, so the holder goes on and writes (a lost
// update). Without the option the extension fails and the holder abandons
// its section.
func TestRedsyncSetNXOnExtendReacquiresSilently(t *testing.T) {
	tests := []struct {
		setNX     bool
		wantWrite bool
	}{
		{true, true},
		{false, false},
	}
	for _, tt := range tests {
		t.Run(map[bool]string{true: "set_nx_on_extend", false: "touch only"}[tt.setNX], func(t *testing.T) {
			w := newWorld(t)
			lc := lockConfig(t, Redsync, func(c *LockConfig) {
				c.TTL = 2 * time.Second
				c.ExtendEvery = 500 * time.Millisecond
				c.SetNXOnExtend = tt.setNX
			})
			servers(w, &lc)
			w.storage(storage.FencingNone)
			w.client(clientConfig("c1", lc, Workload{Cycles: 1, Hold: 5 * time.Second}))
			w.client(clientConfig("c2", lc, Workload{Start: time.Second, Cycles: 1, Hold: 200 * time.Millisecond}))
			w.At(800*time.Millisecond, func() { w.K.Pause(w.ID("c1"), 3*time.Second) })
			h := w.run(15 * time.Second)

			c1, c2 := beliefs(h, "c1"), beliefs(h, "c2")
			require.Len(t, c1, 1, w.dumpTrace())
			require.Len(t, c2, 1)
			require.Less(t, c2[0].End, sim.At(3800*time.Millisecond), "c2 held and released during c1's pause")
			s := sections(h, "c1")
			require.Len(t, s, 1)
			assert.Equal(t, tt.wantWrite, s[0].Written, w.dumpTrace())
			assert.Equal(t, tt.wantWrite, lostUpdate(h))
			if tt.setNX {
				assert.Equal(t, sim.EndReleased, c1[0].Reason)
			} else {
				assert.Equal(t, sim.EndLost, c1[0].Reason)
			}
		})
	}
}

// Kleppmann's S1 with a validity check: the client checks its validity right
// before the write, then pauses between the check and the write; the write
// goes out after the lock expired. The check and the write are separate
// steps, and the write step does not check again.
func TestPauseBetweenCheckAndWrite(t *testing.T) {
	w := newWorld(t)
	lc := lockConfig(t, Redsync, func(c *LockConfig) { c.TTL = time.Second })
	servers(w, &lc)
	w.storage(storage.FencingNone)
	w.client(clientConfig("c1", lc, Workload{Cycles: 1, Hold: 300 * time.Millisecond}))
	w.client(clientConfig("c2", lc, Workload{Start: 100 * time.Millisecond, Cycles: 1, Hold: time.Second}))
	// Pause c1 in the instant of its check (the hold timer), before the
	// write step runs.
	hold := false
	w.K.Observe(func(e sim.ObservedEvent) {
		if !hold && e.Kind == sim.KindTimer && e.Proc == w.ID("c1") && w.K.Now() >= sim.At(300*time.Millisecond) {
			hold = true
			w.K.At(e.At, func() { w.K.Pause(w.ID("c1"), 2*time.Second) })
		}
	})
	h := w.run(10 * time.Second)
	s := sections(h, "c1")
	require.Len(t, s, 1)
	assert.True(t, s[0].Written, w.dumpTrace())
	assert.Greater(t, s[0].WriteSent, sim.At(2*time.Second))
	assert.True(t, overlapsWith(h, beliefs(h, "c1")[0]))
}

// A redlock holder paused past its validity finds it passed at the check
// and abandons its section (EndExpired); validity_check false writes.
func TestRedlockExpiredAtCheck(t *testing.T) {
	tests := []struct {
		validityCheck bool
		wantReason    sim.BeliefEnd
	}{
		{true, sim.EndExpired},
		{false, sim.EndReleased},
	}
	for _, tt := range tests {
		t.Run(string(tt.wantReason), func(t *testing.T) {
			w := newWorld(t)
			lc := lockConfig(t, Redlock, func(c *LockConfig) {
				c.TTL = time.Second
				c.ValidityCheck = tt.validityCheck
			})
			servers(w, &lc)
			w.storage(storage.FencingNone)
			w.client(clientConfig("c1", lc, Workload{Cycles: 1, Hold: 500 * time.Millisecond}))
			w.At(100*time.Millisecond, func() { w.K.Pause(w.ID("c1"), time.Second) })
			h := w.run(5 * time.Second)
			bs := beliefs(h, "c1")
			require.Len(t, bs, 1)
			assert.Equal(t, tt.wantReason, bs[0].Reason)
			s := sections(h, "c1")
			require.Len(t, s, 1)
			assert.Equal(t, !tt.validityCheck, s[0].Written)
			if tt.validityCheck {
				// The belief ended when the client checked, after the pause.
				assert.GreaterOrEqual(t, bs[0].End, sim.At(1100*time.Millisecond))
			}
		})
	}
}

// ZooKeeper: the holder pauses past its session timeout; the session
// expires, the node is deleted, c2 takes the lock and writes; c1 resumes,
// its hold timer fires before it handles the expiry message, so its check
// passes, it learns of the expiry, and its write step (which does not check
// again) sends the stale write (S1). The zxid token lets a monotonic resource
// reject it (Kleppmann's fencing, reference §6.1).
func TestZooKeeperSessionExpiry(t *testing.T) {
	w := newWorld(t)
	lc := lockConfig(t, ZooKeeper, func(c *LockConfig) {
		c.SessionTimeout = 4 * time.Second
		c.FencingToken = FencingZxid
	})
	servers(w, &lc)
	w.storage(storage.FencingMonotonic)
	cfg := clientConfig("c1", lc, Workload{Cycles: 1, Hold: 2 * time.Second})
	cfg.ResourceFencing = storage.FencingMonotonic
	w.client(cfg)
	cfg2 := clientConfig("c2", lc, Workload{Start: time.Second, Cycles: 1, Hold: time.Second})
	cfg2.ResourceFencing = storage.FencingMonotonic
	w.client(cfg2)
	w.At(500*time.Millisecond, func() { w.K.Pause(w.ID("c1"), 10*time.Second) })
	h := w.run(30 * time.Second)

	c1, c2 := beliefs(h, "c1"), beliefs(h, "c2")
	require.Len(t, c1, 1, w.dumpTrace())
	require.Len(t, c2, 1)
	assert.Equal(t, sim.EndLost, c1[0].Reason)
	assert.True(t, overlapsWith(h, c1[0]))
	assert.Less(t, c1[0].Token, c2[0].Token)
	s1, s2 := sections(h, "c1"), sections(h, "c2")
	require.Len(t, s1, 1)
	require.Len(t, s2, 1)
	assert.Equal(t, sim.WriteAccepted, s2[0].Outcome)
	assert.True(t, s1[0].Written)
	assert.Equal(t, sim.WriteRejected, s1[0].Outcome, "fenced by the zxid\n%s", w.dumpTrace())
}

// Same seed, same trace.
func TestDeterminism(t *testing.T) {
	hash := func() [32]byte {
		w := newWorld(t)
		lc := lockConfig(t, Redlock, nil)
		servers(w, &lc)
		w.storage(storage.FencingNone)
		wl := Workload{Cycles: 3, Hold: 50 * time.Millisecond, Think: 20 * time.Millisecond}
		w.client(clientConfig("c1", lc, wl))
		w.client(clientConfig("c2", lc, wl))
		w.run(10 * time.Second)
		return w.K.TraceHash()
	}
	assert.Equal(t, hash(), hash())
}

// Sentinel discovery: the lock's node is the monitored master; after it
// crashes and the sentinels promote the replica, the client asks them and
// takes the lock on the new master.
func TestSentinelDiscovery(t *testing.T) {
	w := newWorld(t)
	w.redis("M")
	w.replica("R", "M")
	sc := sentinel.DefaultConfig()
	sc.Master, sc.Replicas, sc.Sentinels = "M", []string{"R"}, []string{"s1", "s2", "s3"}
	sc.DownAfter = 2 * time.Second
	for _, s := range sc.Sentinels {
		w.K.Add(s, func() sim.Process { return sentinel.New(sc) }, sim.ClockSpec{})
	}
	w.storage(storage.FencingNone)
	lc := lockConfig(t, RedisSingle, func(c *LockConfig) { c.Node = "M"; c.TTL = 2 * time.Second })
	cfg := clientConfig("c1", lc, Workload{Hold: 100 * time.Millisecond, Think: 500 * time.Millisecond})
	cfg.Discovery = &Discovery{Master: "M", Sentinels: sc.Sentinels}
	w.client(cfg)
	w.At(5*time.Second, func() { w.K.Crash(w.ID("M"), sim.CrashProcess) })
	h := w.run(40 * time.Second)

	// It learns the new master from the +switch-master it subscribed to
	// (follow.go), or from a sentinel it asks (discover).
	assert.True(t, w.TraceHas(KindClient, "c1", "switch-master: new master R") || w.TraceHas(KindClient, "c1", "discovery: master is R"), w.dumpTrace())
	var after int
	for _, b := range beliefs(h, "c1") {
		if b.Start > sim.At(5*time.Second) {
			after++
		}
	}
	assert.Greater(t, after, 0, "c1 acquires on the promoted replica")
	assert.True(t, w.TraceHas(sim.KindSend, "c1", "SET lock"))
}

// redis-single with wait_replicas: a lock write that the replica does not
// acknowledge fails the attempt, which releases and retries.
func TestRedisSingleWaitReplicas(t *testing.T) {
	w := newWorld(t)
	w.redis("A")
	w.replica("R", "A")
	w.storage(storage.FencingNone)
	lc := lockConfig(t, RedisSingle, func(c *LockConfig) { c.Node = "A"; c.WaitReplicas = 1 })
	w.client(clientConfig("c1", lc, Workload{Start: 3 * time.Second, Cycles: 1, Hold: 10 * time.Millisecond, Think: 100 * time.Millisecond}))
	var cut int
	w.At(2*time.Second, func() { cut = w.K.Partition([][]sim.ProcID{{w.ID("R")}, {w.ID("A"), w.ID("c1"), w.ID("S")}}) })
	w.At(6*time.Second, func() { w.K.Unpartition(cut) })
	h := w.run(20 * time.Second)

	ids := attemptsOf(h, "c1")
	require.NotEmpty(t, ids)
	assert.False(t, h.Attempts[ids[0]].OK, w.dumpTrace())
	assert.True(t, w.TraceHas(KindClient, "c1", "WAIT 1"))
	bs := beliefs(h, "c1")
	require.Len(t, bs, 1)
	assert.Greater(t, bs[0].Start, sim.At(6*time.Second))
}

// Extension keeps a lock alive through a hold longer than its TTL, so a
// contender cannot take it; an extension that finds the key gone (the
// holder paused past its TTL) ends the belief as lost.
func TestExtend(t *testing.T) {
	tests := []struct {
		alg       string
		pause     bool
		wantEnd   sim.BeliefEnd
		wantWrite bool
	}{
		{RedisSingle, false, sim.EndReleased, true},
		{RedisSingle, true, sim.EndLost, false},
		{Redlock, false, sim.EndReleased, true},
		{Redlock, true, sim.EndExpired, false}, // redlock checks its validity before extending
		{Redsync, false, sim.EndReleased, true},
		{Redsync, true, sim.EndLost, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/pause=%v", tt.alg, tt.pause), func(t *testing.T) {
			w := newWorld(t)
			lc := lockConfig(t, tt.alg, func(c *LockConfig) {
				c.TTL = time.Second
				c.ExtendEvery = 300 * time.Millisecond
			})
			servers(w, &lc)
			w.storage(storage.FencingNone)
			w.client(clientConfig("c1", lc, Workload{Cycles: 1, Hold: 3 * time.Second}))
			w.client(clientConfig("c2", lc, Workload{Start: 500 * time.Millisecond, Cycles: 1, Hold: 100 * time.Millisecond}))
			if tt.pause {
				w.At(time.Second, func() { w.K.Pause(w.ID("c1"), 1500*time.Millisecond) })
			}
			h := w.run(20 * time.Second)

			c1 := beliefs(h, "c1")
			require.Len(t, c1, 1, w.dumpTrace())
			assert.Equal(t, tt.wantEnd, c1[0].Reason, w.dumpTrace())
			assert.Equal(t, tt.wantWrite, sections(h, "c1")[0].Written)
			if !tt.pause {
				assert.Empty(t, overlaps(h))
				assert.Greater(t, beliefs(h, "c2")[0].Start, sim.At(3*time.Second))
			}
		})
	}
}

// A crashed client loses its belief (crashed); restarted, it starts its
// workload over.
func TestClientRestart(t *testing.T) {
	w := newWorld(t)
	lc := lockConfig(t, RedisSingle, func(c *LockConfig) { c.TTL = time.Second })
	servers(w, &lc)
	w.storage(storage.FencingNone)
	w.client(clientConfig("c1", lc, Workload{Cycles: 2, Hold: 500 * time.Millisecond, Think: 100 * time.Millisecond}))
	w.At(200*time.Millisecond, func() { w.K.Crash(w.ID("c1"), sim.CrashProcess) })
	w.At(300*time.Millisecond, func() { w.K.Restart(w.ID("c1")) })
	h := w.run(10 * time.Second)

	bs := beliefs(h, "c1")
	require.Len(t, bs, 3, w.dumpTrace())
	assert.Equal(t, sim.EndCrashed, bs[0].Reason)
	// The restarted client waits for the crashed incarnation's key to expire.
	assert.GreaterOrEqual(t, bs[1].Start, sim.At(time.Second))
	assert.Equal(t, sim.EndReleased, bs[2].Reason)
}

// The history records the validity a Redlock or redsync client computed at
// the grant (ttl − elapsed − drift, on its clock) and again at each
// extension; the other algorithms compute none.
func TestBeliefRecordsValidity(t *testing.T) {
	tests := []struct {
		alg      string
		extend   bool
		checked  bool
		drift    time.Duration
		rule     string
		extended bool
	}{
		{alg: Redlock, checked: true, drift: 12 * time.Millisecond, rule: "the drift factor 0.01 × ttl + 2ms, as redlock-rb computes it"},
		{alg: Redsync, checked: true, drift: 10 * time.Millisecond, rule: "the drift factor 0.01 × ttl, as redsync computes it"},
		{alg: Redlock, extend: true, checked: true, drift: 12 * time.Millisecond, rule: "the drift factor 0.01 × ttl + 2ms, as redlock-rb computes it", extended: true},
		{alg: RedisSingle},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/extend=%v", tt.alg, tt.extend), func(t *testing.T) {
			w := newWorld(t)
			lc := lockConfig(t, tt.alg, func(c *LockConfig) {
				c.TTL = time.Second
				if tt.extend {
					c.ExtendEvery = 300 * time.Millisecond
				}
			})
			servers(w, &lc)
			w.storage(storage.FencingNone)
			w.client(clientConfig("c1", lc, Workload{Cycles: 1, Hold: 500 * time.Millisecond}))
			h := w.run(5 * time.Second)
			bs := beliefs(h, "c1")
			require.Len(t, bs, 1)
			v := bs[0].Validity
			if tt.rule == "" {
				assert.False(t, v.Computed(), "%+v", v)
				return
			}
			require.True(t, v.Computed(), "%+v", v)
			assert.Equal(t, time.Second, v.TTL)
			assert.Equal(t, tt.drift, v.Drift)
			assert.Equal(t, tt.rule, v.Rule)
			assert.Equal(t, tt.checked, v.Checked)
			assert.Equal(t, tt.extended, v.Extended)
			// A 1 ms link: the round took a few ms on the client's clock.
			assert.Positive(t, v.Elapsed)
			assert.Less(t, v.Elapsed, 20*time.Millisecond)
			if tt.extended {
				assert.Greater(t, v.At, bs[0].Start)
			} else {
				assert.Equal(t, bs[0].Start, v.At)
			}
			assert.Equal(t, v.At+sim.At(time.Second-v.Elapsed-v.Drift), v.Until())
		})
	}
}
