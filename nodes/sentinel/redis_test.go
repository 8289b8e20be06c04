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

// Integration tests with the simulated Redis node of package redis: a
// master A, replicas B and C, three sentinels.

// redisNode configures one real simulated Redis node.
type redisNode struct {
	name string
	cfg  func(*redis.Config)
}

// newRedisWorld builds real Redis nodes (the first is the master, the others
// replicate it) and n sentinels monitoring them.
func newRedisWorld(t testing.TB, seed uint64, cfg Config, nodes []redisNode, n int) *world {
	w := newWorld(t, seed)
	w.sentinels = sentinelNames(n)
	cfg.Master = nodes[0].name
	cfg.Replicas = nil
	for i, nd := range nodes {
		rc := redis.DefaultConfig()
		if i > 0 {
			rc.ReplicaOf = nodes[0].name
			cfg.Replicas = append(cfg.Replicas, nd.name)
		}
		if nd.cfg != nil {
			nd.cfg(&rc)
		}
		w.Add(nd.name, func() sim.Process { return redis.New(rc) }, sim.ClockSpec{})
	}
	cfg.Sentinels = w.sentinels
	for _, s := range w.sentinels {
		w.Add(s, func() sim.Process { return New(cfg) }, sim.ClockSpec{})
	}
	return w
}

func standardRedis() []redisNode {
	return []redisNode{{name: "A"}, {name: "B"}, {name: "C"}}
}

// writer SETs a key on one node every 200 ms and records each reply with
// the true time it arrived, as a lock client that still talks to an old
// master would.
type writer struct {
	node    string
	n       uint64
	replies []writeReply
	k       *sim.Kernel
}

type writeReply struct {
	at sim.Time
	v  redis.Value
}

func (c *writer) Init(env *sim.Env) { env.After(sim.Mono, 200*time.Millisecond, "write") }

func (c *writer) Fire(env *sim.Env, tag any) {
	id, _ := env.Lookup(c.node)
	c.n++
	env.Send(id, redis.Request{ID: c.n, Args: []string{"SET", "k", fmt.Sprint(c.n)}})
	env.After(sim.Mono, 200*time.Millisecond, "write")
}

func (c *writer) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	if r, ok := msg.(redis.Reply); ok {
		c.replies = append(c.replies, writeReply{at: c.k.Now(), v: r.Value})
	}
}

// Reference: redis-and-lock-clients.md §3.4, "Duration with defaults".
func TestRedisPromotionDelay(t *testing.T) {
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
			for seed := uint64(1); seed <= 6; seed++ {
				w := newRedisWorld(t, seed, tt.cfg, standardRedis(), 3)
				crash := 20 * time.Second
				w.At(crash, func() { w.K.Crash(w.ID("A"), sim.CrashProcess) })
				w.RunTo(sim.At(crash + tt.cfg.DownAfter + 20*time.Second))

				promoted := w.Events(redis.EventPromoted, "")
				require.Len(t, promoted, 1, "seed %d: one replica promoted", seed)
				newMaster := promoted[0].Proc
				delay := promoted[0].At.Sub(sim.At(crash))
				sw := w.first(KindSwitchMaster, "")
				figures = append(figures, fmt.Sprintf("seed %d: %s promoted after %.2fs, first switch-master %.2fs",
					seed, newMaster, delay.Seconds(), sw.Sub(sim.At(crash)).Seconds()))
				assert.GreaterOrEqual(t, delay, tt.lo, "seed %d", seed)
				assert.LessOrEqual(t, delay, tt.hi, "seed %d", seed)
				for _, s := range w.sentinels {
					assert.Equal(t, newMaster, w.sentinel(t, s).MasterAddr(), "seed %d: sentinel %s", seed, s)
				}
				// The other replica now replicates the new master.
				other := "B"
				if newMaster == "B" {
					other = "C"
				}
				syncs := w.Events(redis.EventReplicaSync, other)
				require.NotEmpty(t, syncs, "seed %d: %s resynced", seed, other)
				// A partial resync: the promoted replica inherited the old
				// master's replication id as its replid2 (PSYNC continues).
				assert.True(t, strings.HasPrefix(syncs[len(syncs)-1].Text, "partial resync with "+newMaster+" "), "seed %d: %s", seed, syncs[len(syncs)-1].Text)
			}
			t.Logf("master crash to promotion (REPLICAOF NO ONE applied): %s", strings.Join(figures, "; "))
		})
	}
}

// Reference: redis-and-lock-clients.md §3.4 step 7: the old master comes
// back as master, accepts writes, and is converted after the wrong role was
// seen for more than 8 s; its writes are then discarded by the resync.
func TestRedisReturningOldMasterAcceptsWritesUntilConverted(t *testing.T) {
	w := newRedisWorld(t, 5, fastConfig(), standardRedis(), 3)
	c := &writer{node: "A", k: w.K}
	w.K.Add("c1", func() sim.Process { return c }, sim.ClockSpec{})
	a := w.ID("A")
	w.At(10*time.Second, func() { w.K.Crash(a, sim.CrashProcess) })
	w.At(30*time.Second, func() { w.K.Restart(a) })
	w.RunTo(sim.At(60 * time.Second))

	promoted := w.Events(redis.EventPromoted, "")
	require.Len(t, promoted, 1)
	newMaster := promoted[0].Proc
	conv := w.Events(KindConvertToReplica, "")
	require.NotEmpty(t, conv, "A is converted")
	convAt := conv[0].At
	t.Logf("old master restarted at 30s, converted %.2fs later by %s", convAt.Sub(sim.At(30*time.Second)).Seconds(), conv[0].Proc)
	assert.Greater(t, convAt, sim.At(38*time.Second), "not before 8 s of wrong role")
	// 8 s of wrong role, seen at the 10 s INFO period, after a first INFO
	// that may be late (see TestReturningOldMasterIsConverted).
	assert.Less(t, convAt, sim.At(48*time.Second))

	var okBefore, readonlyAfter int
	for _, r := range c.replies {
		switch {
		case r.at > sim.At(30*time.Second) && r.at < convAt && r.v.IsOK():
			okBefore++
		case r.at > convAt+sim.At(time.Second) && r.v.IsErr() && strings.HasPrefix(r.v.Str, "READONLY"):
			readonlyAfter++
		}
	}
	assert.Positive(t, okBefore, "the returned old master accepts writes until it is converted")
	assert.Positive(t, readonlyAfter, "after the conversion it refuses them")
	syncs := w.Events(redis.EventReplicaSync, "A")
	require.NotEmpty(t, syncs)
	assert.True(t, strings.HasPrefix(syncs[len(syncs)-1].Text, "from "+newMaster+" "), syncs[len(syncs)-1].Text)
}

// Reference: redis-and-lock-clients.md §3.4 "TILT".
func TestRedisTiltDelaysFailover(t *testing.T) {
	w := newRedisWorld(t, 7, fastConfig(), standardRedis(), 3)
	w.At(10*time.Second, func() {
		for _, s := range w.sentinels {
			w.K.JumpWall(w.ID(s), 10*time.Second)
		}
		w.K.Crash(w.ID("A"), sim.CrashProcess)
	})
	w.RunTo(sim.At(50 * time.Second))
	assert.Len(t, w.Events(KindTilt, ""), 3)
	p := w.first(redis.EventPromoted, "")
	require.NotEqual(t, sim.Time(-1), p)
	t.Logf("with a +10s jump at the crash, promotion at %v (TILT until ~40.1s)", p)
	assert.Greater(t, p, sim.At(40*time.Second))
	assert.Less(t, p, sim.At(43*time.Second))
}

// Reference: sentinelCheckObjectivelyDown (sentinel.c:4611-4644).
func TestRedisNoFailoverWithoutQuorum(t *testing.T) {
	tests := []struct {
		name  string
		fault func(w *world)
	}{
		{"master cut off from one sentinel", func(w *world) {
			w.K.Partition([][]sim.ProcID{{w.ID("S1")}, {w.ID("A")}})
		}},
		{"master dead, two of three sentinels cut off", func(w *world) {
			w.K.Crash(w.ID("A"), sim.CrashProcess)
			w.K.Partition([][]sim.ProcID{{w.ID("S1")}, {w.ID("S2")}, {w.ID("S3")}})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newRedisWorld(t, 9, fastConfig(), standardRedis(), 3)
			w.At(10*time.Second, func() { tt.fault(w) })
			w.RunTo(sim.At(40 * time.Second))
			assert.NotEmpty(t, w.Events(KindSDown, "S1"))
			assert.Empty(t, w.Events(KindODown, ""))
			assert.Empty(t, w.Events(redis.EventPromoted, ""))
		})
	}
}

// Reference: sentinelSelectSlave (sentinel.c:5062-5105): priority first,
// then the larger replication offset.
func TestRedisReplicaSelection(t *testing.T) {
	tests := []struct {
		name  string
		nodes []redisNode
		want  string
	}{
		{"replica-priority 0 is never promoted", []redisNode{
			{name: "A"}, {name: "B", cfg: func(c *redis.Config) { c.ReplicaPriority = 0 }}, {name: "C"},
		}, "C"},
		{"lower replica-priority wins", []redisNode{
			{name: "A"}, {name: "B"}, {name: "C", cfg: func(c *redis.Config) { c.ReplicaPriority = 10 }},
		}, "C"},
		{"the replica that received more wins", []redisNode{
			{name: "A"}, {name: "B", cfg: func(c *redis.Config) { c.ReplicationDelay = sim.Fixed(8 * time.Second) }}, {name: "C"},
		}, "C"},
		{"the replica that received more wins (mirrored)", []redisNode{
			{name: "A"}, {name: "B"}, {name: "C", cfg: func(c *redis.Config) { c.ReplicationDelay = sim.Fixed(8 * time.Second) }},
		}, "B"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newRedisWorld(t, 23, fastConfig(), tt.nodes, 3)
			c := &writer{node: "A", k: w.K}
			w.K.Add("c1", func() sim.Process { return c }, sim.ClockSpec{})
			// A replication delay of 8 s leaves the delayed replica 8 s of
			// writes behind when the failover happens (~6 s after the crash).
			w.At(15*time.Second, func() { w.K.Crash(w.ID("A"), sim.CrashProcess) })
			w.RunTo(sim.At(35 * time.Second))
			promoted := w.Events(redis.EventPromoted, "")
			require.Len(t, promoted, 1)
			assert.Equal(t, tt.want, promoted[0].Proc)
		})
	}
}
