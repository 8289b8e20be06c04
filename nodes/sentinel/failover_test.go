package sentinel

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// fastConfig is the default config with down-after-milliseconds 5 s, the
// value the scenario format's example uses.
func fastConfig() Config {
	c := DefaultConfig()
	c.DownAfter = 5 * time.Second
	return c
}

// Reference: redis-and-lock-clients.md §3.4 steps 1-6; sentinel.c
// sentinelSelectSlave and compareSlavesForPromotion.
func TestFailoverPromotesBestReplica(t *testing.T) {
	tests := []struct {
		name  string
		nodes []fakeNode
		want  string
	}{
		{"larger offset wins at equal priority", []fakeNode{
			{name: "A"},
			{name: "B", replicaOf: "A", priority: 100, offset: 90},
			{name: "C", replicaOf: "A", priority: 100, offset: 100},
		}, "C"},
		{"lower priority wins over larger offset", []fakeNode{
			{name: "A"},
			{name: "B", replicaOf: "A", priority: 50, offset: 10},
			{name: "C", replicaOf: "A", priority: 100, offset: 100},
		}, "B"},
		{"priority 0 is never promoted", []fakeNode{
			{name: "A"},
			{name: "B", replicaOf: "A", priority: -1, offset: 100},
			{name: "C", replicaOf: "A", priority: 100, offset: 10},
		}, "C"},
		{"smaller run id breaks a tie", []fakeNode{
			{name: "A"},
			{name: "B", replicaOf: "A", priority: 100, offset: 100, runID: "ffff"},
			{name: "C", replicaOf: "A", priority: 100, offset: 100, runID: "0aaa"},
		}, "C"},
		{"process name breaks a tie without run ids", []fakeNode{
			{name: "A"},
			{name: "C", replicaOf: "A", priority: 100, offset: 100},
			{name: "B", replicaOf: "A", priority: 100, offset: 100},
		}, "B"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newFakeWorld(t, 1, fastConfig(), tt.nodes, 3)
			w.At(10*time.Second, func() { w.K.Crash(w.ID("A"), sim.CrashProcess) })
			w.RunTo(sim.At(30 * time.Second))

			promoted := w.Events("promoted", "")
			require.Len(t, promoted, 1, "exactly one replica is promoted")
			assert.Equal(t, tt.want, promoted[0].Proc)
			assert.Len(t, w.Events(KindElected, ""), 1, "exactly one leader")
			for _, s := range w.sentinels {
				assert.Equal(t, tt.want, w.sentinel(t, s).MasterAddr(), "sentinel %s", s)
				assert.NotEqual(t, sim.Time(-1), w.first(KindSwitchMaster, s), "sentinel %s switched", s)
			}
			for _, nd := range tt.nodes {
				if nd.name == "A" || nd.name == tt.want {
					continue
				}
				ev := w.Events("replicaof", nd.name)
				require.NotEmpty(t, ev, "%s is reconfigured", nd.name)
				assert.Equal(t, "fake replicaof "+tt.want, ev[len(ev)-1].Text)
			}
		})
	}
}

// promotionDelay runs one failover of a crashed master and returns how long
// after the crash the replica received REPLICAOF NO ONE, and how long until
// the leader saw the promotion in INFO.
func promotionDelay(t *testing.T, seed uint64, cfg Config, crashAt, runFor time.Duration) (applied, observed time.Duration) {
	w := newFakeWorld(t, seed, cfg, standardFakes(), 3)
	w.At(crashAt, func() { w.K.Crash(w.ID("A"), sim.CrashProcess) })
	w.RunTo(sim.At(runFor))
	p := w.first("promoted", "B")
	o := w.first(KindPromotedReplica, "")
	require.NotEqual(t, sim.Time(-1), p, "seed %d: B promoted", seed)
	require.NotEqual(t, sim.Time(-1), o, "seed %d: promotion observed", seed)
	return p.Sub(sim.At(crashAt)), o.Sub(sim.At(crashAt))
}

// Reference: redis-and-lock-clients.md §3.4, "Duration with defaults":
// roughly 31-35 s from master death to promotion with down_after 30 s.
func TestPromotionDelay(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		lo, hi time.Duration
	}{
		{"defaults: down_after 30s", DefaultConfig(), 30 * time.Second, 35 * time.Second},
		{"down_after 5s", fastConfig(), 5 * time.Second, 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var figures []string
			for seed := uint64(1); seed <= 8; seed++ {
				applied, observed := promotionDelay(t, seed, tt.cfg, 20*time.Second, 20*time.Second+tt.cfg.DownAfter+15*time.Second)
				figures = append(figures, fmt.Sprintf("seed %d: %.2fs (observed %.2fs)", seed, applied.Seconds(), observed.Seconds()))
				assert.GreaterOrEqual(t, applied, tt.lo, "seed %d", seed)
				assert.LessOrEqual(t, observed, tt.hi, "seed %d", seed)
			}
			t.Logf("master crash to promotion: %s", strings.Join(figures, "; "))
		})
	}
}

// Reference: sentinel.c:4008-4022 (get-master-addr-by-name) and
// sentinelGetCurrentMasterAddress (sentinel.c:1665-1679).
func TestGetMasterAddrByName(t *testing.T) {
	w := newFakeWorld(t, 3, fastConfig(), standardFakes(), 3)
	queriers := map[string]*querier{}
	for _, s := range w.sentinels {
		q := &querier{sentinel: s, master: "mymaster"}
		queriers[s] = q
		w.K.Add("q"+s, func() sim.Process { return q }, sim.ClockSpec{})
	}
	unknown := &querier{sentinel: "S1", master: "othermaster"}
	w.K.Add("qx", func() sim.Process { return unknown }, sim.ClockSpec{})
	w.At(10*time.Second, func() { w.K.Crash(w.ID("A"), sim.CrashProcess) })

	w.RunTo(sim.At(9 * time.Second))
	for _, s := range w.sentinels {
		assert.Equal(t, redis.Array(redis.Bulk("A"), redis.Bulk("6379")), queriers[s].last, "before the failover, %s", s)
	}
	assert.Equal(t, redis.Nil(), unknown.last, "an unknown master name gives a null reply")

	w.RunTo(sim.At(30 * time.Second))
	for _, s := range w.sentinels {
		assert.Equal(t, redis.Array(redis.Bulk("B"), redis.Bulk("6379")), queriers[s].last, "after the failover, %s", s)
	}
	// The leader answers with the new master as soon as it saw the
	// promotion, before +switch-master.
	leader := w.Events(KindElected, "")[0].Proc
	assert.Less(t, w.first(KindPromotedReplica, leader), w.first(KindSwitchMaster, leader))
}

// Reference: redis-and-lock-clients.md §3.4 step 7 and sentinel.c:2704-2718:
// an old master that comes back claiming to be master is converted after the
// wrong role was reported for more than 4*publish_period = 8 s.
func TestReturningOldMasterIsConverted(t *testing.T) {
	w := newFakeWorld(t, 5, fastConfig(), standardFakes(), 3)
	a := w.ID("A")
	w.At(10*time.Second, func() { w.K.Crash(a, sim.CrashProcess) })
	w.At(30*time.Second, func() { w.K.Restart(a) })
	w.RunTo(sim.At(60 * time.Second))

	require.NotEqual(t, sim.Time(-1), w.first(KindSwitchMaster, ""), "failover happened")
	conv := w.Events(KindConvertToReplica, "")
	require.NotEmpty(t, conv, "A is converted")
	assert.Contains(t, conv[0].Text, "+convert-to-slave A")
	got := w.Events("replicaof", "A")
	require.NotEmpty(t, got, "A received REPLICAOF")
	assert.Equal(t, "fake replicaof B", got[0].Text)
	delay := got[0].At.Sub(sim.At(30 * time.Second))
	t.Logf("old master restarted at 30s, converted %.2fs later", delay.Seconds())
	assert.Greater(t, delay, 8*time.Second, "never before 8 s of wrong role")
	// The wrong role is noticed at the first INFO after the restart and
	// acted on at the first INFO more than 8 s later, which comes with the
	// 10 s INFO period. The first INFO may wait up to ~7 s more: while A was
	// down its link filled up with 100 unanswered commands, and it is
	// re-opened only when it is 15 s old (sentinel.c:4549-4560).
	assert.Less(t, delay, 18*time.Second)
}

// Reference: sentinelCheckTiltCondition (sentinel.c:5458-5468) and
// redis-and-lock-clients.md §3.4 "TILT".
func TestTilt(t *testing.T) {
	tests := []struct {
		name   string
		fault  func(w *world)
		tilted []string
		// failover is the window in which the promotion must happen
		lo, hi time.Duration
	}{
		{"no fault: failover after ~5-8s", func(w *world) {}, nil, 15 * time.Second, 18 * time.Second},
		{"+10s wall jump on every sentinel: no action for 30s", func(w *world) {
			for _, s := range w.sentinels {
				w.K.JumpWall(w.ID(s), 10*time.Second)
			}
		}, []string{"S1", "S2", "S3"}, 40 * time.Second, 43 * time.Second},
		{"-1s wall jump on every sentinel also tilts", func(w *world) {
			for _, s := range w.sentinels {
				w.K.JumpWall(w.ID(s), -time.Second)
			}
		}, []string{"S1", "S2", "S3"}, 40 * time.Second, 43 * time.Second},
		{"3s pause of every sentinel tilts", func(w *world) {
			for _, s := range w.sentinels {
				w.K.Pause(w.ID(s), 3*time.Second)
			}
		}, []string{"S1", "S2", "S3"}, 43 * time.Second, 46 * time.Second},
		{"+10s jump on two of three: the third gets no quorum", func(w *world) {
			w.K.JumpWall(w.ID("S2"), 10*time.Second)
			w.K.JumpWall(w.ID("S3"), 10*time.Second)
		}, []string{"S2", "S3"}, 40 * time.Second, 43 * time.Second},
		{"+10s jump on one of three: the others fail over", func(w *world) {
			w.K.JumpWall(w.ID("S3"), 10*time.Second)
		}, []string{"S3"}, 15 * time.Second, 18 * time.Second},
		{"1.5s pause does not tilt", func(w *world) {
			for _, s := range w.sentinels {
				w.K.Pause(w.ID(s), 1500*time.Millisecond)
			}
		}, nil, 15 * time.Second, 18 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newFakeWorld(t, 7, fastConfig(), standardFakes(), 3)
			w.At(10*time.Second, func() {
				tt.fault(w)
				w.K.Crash(w.ID("A"), sim.CrashProcess)
			})
			w.RunTo(sim.At(60 * time.Second))
			var tilted []string
			for _, s := range w.sentinels {
				if ev := w.Events(KindTilt, s); len(ev) > 0 {
					tilted = append(tilted, s)
					end := w.Events(KindTiltEnd, s)
					require.NotEmpty(t, end, "%s leaves TILT", s)
					assert.InDelta(t, 30, end[0].At.Sub(ev[0].At).Seconds(), 0.2, "%s: TILT lasts 30 s", s)
				}
			}
			assert.Equal(t, tt.tilted, tilted)
			p := w.first("promoted", "")
			require.NotEqual(t, sim.Time(-1), p, "a replica is promoted")
			assert.GreaterOrEqual(t, p, sim.At(tt.lo))
			assert.LessOrEqual(t, p, sim.At(tt.hi))
			// No sentinel acts while it is in TILT.
			for _, s := range tilted {
				start := w.Events(KindTilt, s)[0].At
				end := w.Events(KindTiltEnd, s)[0].At
				for _, k := range []sim.Kind{KindSDown, KindODown, KindFailoverStart, KindElected, KindConvertToReplica} {
					for _, e := range w.Events(k, s) {
						assert.False(t, e.At > start && e.At < end, "%s logged %s at %v during TILT", s, k, e.At)
					}
				}
			}
		})
	}
}

// Reference: sentinelCheckObjectivelyDown (sentinel.c:4611-4644) and
// sentinelGetLeader (sentinel.c:4805-4870): ODOWN needs the quorum; the
// leader needs a majority of all known sentinels and the quorum.
func TestQuorumAndMajority(t *testing.T) {
	tests := []struct {
		name     string
		quorum   int
		fault    func(w *world)
		promoted bool
		check    func(t *testing.T, w *world)
	}{
		{"master cut off from one sentinel only: SDOWN there, no ODOWN", 2, func(w *world) {
			w.K.Partition([][]sim.ProcID{{w.ID("S1")}, {w.ID("A")}})
		}, false, func(t *testing.T, w *world) {
			assert.NotEmpty(t, w.Events(KindSDown, "S1"))
			assert.Empty(t, w.Events(KindSDown, "S2"))
			assert.Empty(t, w.Events(KindODown, ""))
		}},
		{"master dead, one sentinel of three isolated, quorum 2: the other two fail over", 2, func(w *world) {
			w.K.Crash(w.ID("A"), sim.CrashProcess)
			w.K.Partition([][]sim.ProcID{{w.ID("S3")}, {w.ID("S1"), w.ID("S2"), w.ID("B"), w.ID("C")}})
		}, true, func(t *testing.T, w *world) {
			assert.Empty(t, w.Events(KindODown, "S3"), "S3 alone cannot reach the quorum")
			assert.Equal(t, "A", w.sentinel(t, "S3").MasterAddr(), "S3 never hears of the new master")
		}},
		{"master dead, one sentinel of three isolated, quorum 3: no ODOWN", 3, func(w *world) {
			w.K.Crash(w.ID("A"), sim.CrashProcess)
			w.K.Partition([][]sim.ProcID{{w.ID("S3")}, {w.ID("S1"), w.ID("S2"), w.ID("B"), w.ID("C")}})
		}, false, func(t *testing.T, w *world) {
			n := 0
			for _, e := range w.Events(KindSDown, "") {
				if strings.HasPrefix(e.Text, "+sdown master A ") {
					n++
				}
			}
			assert.Equal(t, 3, n, "every sentinel sees the master down")
			assert.Empty(t, w.Events(KindODown, ""))
		}},
		{"master dead, two sentinels isolated: the third has no quorum", 2, func(w *world) {
			w.K.Crash(w.ID("A"), sim.CrashProcess)
			w.K.Partition([][]sim.ProcID{{w.ID("S1")}, {w.ID("S2")}, {w.ID("S3")}})
		}, false, func(t *testing.T, w *world) {
			assert.Empty(t, w.Events(KindODown, ""))
		}},
		{"quorum 1, isolated sentinel reaches ODOWN but cannot win the election", 1, func(w *world) {
			w.K.Crash(w.ID("A"), sim.CrashProcess)
			w.K.Partition([][]sim.ProcID{{w.ID("S3")}, {w.ID("S1"), w.ID("S2")}})
		}, true, func(t *testing.T, w *world) {
			assert.NotEmpty(t, w.Events(KindODown, "S3"))
			assert.NotEmpty(t, w.Events(KindFailoverStart, "S3"))
			assert.Empty(t, w.Events(KindElected, "S3"), "1 vote of 3 is no majority")
			abort := w.Events(KindFailoverAbort, "S3")
			require.NotEmpty(t, abort)
			assert.Contains(t, abort[0].Text, "not-elected")
			elapsed := abort[0].At.Sub(w.Events(KindFailoverStart, "S3")[0].At)
			assert.InDelta(t, 10.5, elapsed.Seconds(), 0.7, "abort after the 10 s election timeout plus the start desync")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := fastConfig()
			cfg.Quorum = tt.quorum
			w := newFakeWorld(t, 11, cfg, standardFakes(), 3)
			w.At(10*time.Second, func() { tt.fault(w) })
			w.RunTo(sim.At(45 * time.Second))
			if tt.promoted {
				assert.Len(t, w.Events("promoted", ""), 1)
				assert.Len(t, w.Events(KindElected, ""), 1)
			} else {
				assert.Empty(t, w.Events("promoted", ""))
				assert.Empty(t, w.Events(KindFailoverStart, ""))
			}
			tt.check(t, w)
		})
	}
}

// Reference: sentinelVoteLeader (sentinel.c:4749-4775): the current epoch
// and the vote's epoch survive a restart in the rewritten config.
func TestRestartKeepsEpochAndMaster(t *testing.T) {
	w := newFakeWorld(t, 13, fastConfig(), standardFakes(), 3)
	w.At(10*time.Second, func() { w.K.Crash(w.ID("A"), sim.CrashProcess) })
	w.At(25*time.Second, func() { w.K.Crash(w.ID("S1"), sim.CrashPower) })
	w.At(26*time.Second, func() { w.K.Restart(w.ID("S1")) })
	w.RunTo(sim.At(30 * time.Second))
	s1 := w.sentinel(t, "S1")
	assert.Equal(t, "B", s1.MasterAddr())
	assert.Equal(t, uint64(1), s1.Epoch())
	assert.Equal(t, uint64(1), s1.m.leaderEpoch, "it voted in epoch 1 and will not vote again in it")
	assert.Equal(t, []string{"A", "C"}, names(s1.m.slaves), "the old master is now a replica")
}

func names(list []*instance) []string {
	var out []string
	for _, ri := range list {
		out = append(out, ri.name)
	}
	return out
}

// Reference: sentinel.c:2555-2595: replicas are learned from the master's
// INFO.
func TestReplicasDiscoveredFromInfo(t *testing.T) {
	w := newFakeWorld(t, 17, fastConfig(), standardFakes(), 3, withoutReplicaList)
	w.At(10*time.Second, func() { w.K.Crash(w.ID("A"), sim.CrashProcess) })
	w.RunTo(sim.At(30 * time.Second))
	assert.Len(t, w.Events(KindDiscovered, ""), 6, "each sentinel learns B and C")
	promoted := w.Events("promoted", "")
	require.Len(t, promoted, 1)
	assert.Equal(t, "B", promoted[0].Proc)
}

func TestDeterminism(t *testing.T) {
	hash := func(seed uint64) string {
		w := newFakeWorld(t, seed, fastConfig(), standardFakes(), 3)
		w.At(10*time.Second, func() { w.K.Crash(w.ID("A"), sim.CrashProcess) })
		w.At(12*time.Second, func() { w.K.JumpWall(w.ID("S2"), 5*time.Second) })
		w.RunTo(sim.At(40 * time.Second))
		return sim.HashString(w.K.TraceHash())
	}
	assert.Equal(t, hash(21), hash(21))
	assert.NotEqual(t, hash(21), hash(22))
}

// Reference: sentinelStartFailoverIfNeeded (sentinel.c:4972-5002) and
// sentinelFailoverWaitStart (sentinel.c:5108-5139): with four sentinels split
// two and two, nobody gets the 3 votes a majority needs; each attempt aborts
// after min(10 s, failover_timeout) and the same sentinel retries only
// 2*failover_timeout after its previous start.
func TestFailedElectionRetriesAfterTwiceFailoverTimeout(t *testing.T) {
	cfg := fastConfig()
	cfg.FailoverTimeout = 8 * time.Second
	w := newFakeWorld(t, 19, cfg, standardFakes(), 4)
	w.At(10*time.Second, func() {
		w.K.Crash(w.ID("A"), sim.CrashProcess)
		w.K.Partition([][]sim.ProcID{{w.ID("S1"), w.ID("S2")}, {w.ID("S3"), w.ID("S4")}})
	})
	w.At(50*time.Second, func() { w.K.Heal() })
	w.RunTo(sim.At(90 * time.Second))

	var before []sim.Event
	for _, e := range w.Events(KindElected, "") {
		if e.At < sim.At(50*time.Second) {
			before = append(before, e)
		}
	}
	assert.Empty(t, before, "no leader while split 2/2")
	retries := 0
	for _, s := range w.sentinels {
		starts := w.Events(KindFailoverStart, s)
		for i := 1; i < len(starts); i++ {
			retries++
			gap := starts[i].At.Sub(starts[i-1].At)
			assert.GreaterOrEqual(t, gap, 2*cfg.FailoverTimeout, "%s retried after %v", s, gap)
		}
	}
	assert.Positive(t, retries, "some sentinel retried")
	assert.NotEmpty(t, w.Events(KindFailoverAbort, ""), "attempts abort as not elected")
	p := w.first("promoted", "")
	require.NotEqual(t, sim.Time(-1), p, "after the heal a leader is elected")
	assert.Greater(t, p, sim.At(50*time.Second))
	assert.Len(t, w.Events("promoted", ""), 1)
}

// BenchmarkFailover measures a whole failover run: three sentinels, a master
// and two replicas, 60 s of virtual time with defaults.
func BenchmarkFailover(b *testing.B) {
	for i := 0; i < b.N; i++ {
		w := newFakeWorld(b, uint64(i), DefaultConfig(), standardFakes(), 3)
		w.At(10*time.Second, func() { w.K.Crash(w.ID("A"), sim.CrashProcess) })
		w.RunTo(sim.At(60 * time.Second))
	}
}
