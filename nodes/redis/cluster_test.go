package redis

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// clusterWorld builds a cluster of names laid out as redis-cli --cluster
// create does, with node timeout nt.
func clusterWorld(t *testing.T, nt time.Duration, replicas int, names ...string) (*world, ClusterConfig) {
	t.Helper()
	members, err := CreateCluster(names, replicas)
	require.NoError(t, err)
	cc := DefaultClusterConfig()
	cc.NodeTimeout = nt
	cc.Members = members
	var specs []nodeSpec
	for _, n := range names {
		cfg := DefaultConfig()
		c := cc
		cfg.Cluster = &c
		specs = append(specs, nodeSpec{name: n, cfg: cfg})
	}
	return newWorld(t, time.Millisecond, specs...), cc
}

func TestKeySlot(t *testing.T) {
	// Values from the cluster specification's examples and redis-cli
	// CLUSTER KEYSLOT on a real 7.0 server.
	for _, tc := range []struct {
		key  string
		slot int
	}{
		{"123456789", 12739}, // CRC16 XMODEM check value 0x31C3 mod 16384
		{"foo", 12182},
		{"bar", 5061},
		{"{user1000}.following", KeySlot("user1000")},
		{"foo{}{bar}", KeySlot("foo{}{bar}")}, // empty tag: whole key
		{"foo{{bar}}zap", KeySlot("{bar")},
		{"foo{bar}{zap}", KeySlot("bar")},
		{"lock", 8718},
	} {
		assert.Equal(t, tc.slot, KeySlot(tc.key), tc.key)
	}
	assert.Equal(t, uint16(0x31C3), crc16("123456789"))
	assert.NotEqual(t, KeySlot("foo{}{bar}"), KeySlot("bar"))
}

func TestCreateClusterLayout(t *testing.T) {
	m, err := CreateCluster([]string{"a", "b", "c", "d", "e", "f"}, 1)
	require.NoError(t, err)
	// redis-cli --cluster create with 6 nodes and 1 replica: 0-5460,
	// 5461-10922, 10923-16383; replicas rotated: a<-e, b<-f, c<-d.
	assert.Equal(t, []SlotRange{{0, 5460}}, m[0].Slots)
	assert.Equal(t, []SlotRange{{5461, 10922}}, m[1].Slots)
	assert.Equal(t, []SlotRange{{10923, 16383}}, m[2].Slots)
	assert.Equal(t, "c", m[3].ReplicaOf)
	assert.Equal(t, "a", m[4].ReplicaOf)
	assert.Equal(t, "b", m[5].ReplicaOf)
	for i := range m {
		assert.Equal(t, uint64(i+1), m[i].ConfigEpoch)
	}
	_, err = CreateCluster([]string{"a", "b", "c", "d"}, 1)
	require.ErrorContains(t, err, "at least 3 master")
}

func TestClusterMovedAndSlots(t *testing.T) {
	w, _ := clusterWorld(t, 15*time.Second, 1, "n1", "n2", "n3", "n4", "n5", "n6")
	w.Advance(time.Second)
	// "lock" hashes to 8718, served by b.
	v := w.do("n1", "SET", "lock", "x")
	assert.Equal(t, "MOVED 8718 n2:6379", v.Str)
	assert.True(t, w.do("n2", "SET", "lock", "x").IsOK())
	assert.Equal(t, "MOVED 8718 n2:6379", w.do("n6", "GET", "lock").Str, "a replica redirects reads without READONLY")
	assert.Equal(t, int64(8718), w.do("n3", "CLUSTER", "KEYSLOT", "lock").Int)
	assert.Contains(t, w.do("n1", "SET", "{x}1", "1").Str+w.do("n1", "DEL", "n1", "n2").Str, "CROSSSLOT")
	slots := w.do("n4", "CLUSTER", "SLOTS")
	require.Len(t, slots.Array, 3)
	assert.Equal(t, int64(5461), slots.Array[1].Array[0].Int)
	assert.Equal(t, "n2", slots.Array[1].Array[2].Array[0].Str)
	assert.Equal(t, "n6", slots.Array[1].Array[3].Array[0].Str)
	info := w.do("n5", "CLUSTER", "INFO").Str
	assert.Contains(t, info, "cluster_state:ok")
	assert.Contains(t, info, "cluster_size:3")
	assert.Contains(t, w.do("n1", "CLUSTER", "NODES").Str, "myself,master")
}

// eventTimes returns the true times of trace events of kind on proc whose
// text contains sub.
func eventTimes(w *world, kind sim.Kind, proc, sub string) []time.Duration {
	var out []time.Duration
	for _, e := range w.Events(kind, proc) {
		if strings.Contains(e.Text, sub) {
			out = append(out, time.Duration(e.At))
		}
	}
	return out
}

func TestClusterFailoverAfterCrash(t *testing.T) {
	const nt = 5 * time.Second
	w, _ := clusterWorld(t, nt, 1, "n1", "n2", "n3", "n4", "n5", "n6")
	w.Advance(2 * time.Second)
	require.True(t, w.do("n2", "SET", "lock", "x").IsOK())
	w.Advance(2 * time.Second) // replicated to f
	crashAt := w.K.Now()
	w.K.Crash(w.ID("n2"), sim.CrashProcess)
	w.Advance(4 * nt)
	pf := eventTimes(w, EventClusterPFail, "n1", "n2 ")
	require.NotEmpty(t, pf)
	d := time.Duration(int64(pf[0]) - int64(crashAt))
	assert.True(t, d > nt && d <= nt+nt/2+200*time.Millisecond, "PFAIL %v after the crash (node timeout %v after the first unanswered ping, at most half a node timeout after the last pong)", d, nt)
	fail := eventTimes(w, EventClusterFail, "n6", "n2 marked FAIL")
	require.NotEmpty(t, fail, "f learns b failed")
	took := eventTimes(w, EventClusterFailover, "n6", "took the slots of n2")
	require.Len(t, took, 1)
	delay := took[0] - fail[0]
	assert.True(t, delay >= 500*time.Millisecond && delay < 1200*time.Millisecond, "election %v after FAIL (500ms + 0..500ms + rank 0)", delay)
	assert.Equal(t, "x", w.do("n6", "GET", "lock").Str)
	assert.Equal(t, "MOVED 8718 n6:6379", w.do("n1", "GET", "lock").Str)
	assert.Contains(t, w.do("n6", "CLUSTER", "INFO").Str, "cluster_current_epoch:7")
	// b comes back: it learns the newer configEpoch and becomes f's replica.
	w.K.Restart(w.ID("n2"))
	w.Advance(3 * nt)
	assert.Equal(t, "MOVED 8718 n6:6379", w.do("n2", "GET", "lock").Str)
	role := w.do("n2", "ROLE")
	assert.Equal(t, "slave", role.Array[0].Str)
	assert.Equal(t, "n6", role.Array[1].Str)
}

func TestClusterMinorityMasterLosesWrites(t *testing.T) {
	const nt = 5 * time.Second
	w, _ := clusterWorld(t, nt, 1, "n1", "n2", "n3", "n4", "n5", "n6")
	w.Advance(2 * time.Second)
	ids := func(names ...string) []sim.ProcID {
		var out []sim.ProcID
		for _, n := range names {
			out = append(out, w.ID(n))
		}
		return out
	}
	// n2 and the client on one side, everything else on the other.
	cut := w.K.Partition([][]sim.ProcID{ids("n2", "c"), ids("n1", "n3", "n4", "n5", "n6")})
	start := w.K.Now()
	assert.True(t, w.do("n2", "SET", "lock", "minority").IsOK(), "the minority master accepts writes at first")
	w.Advance(nt - time.Second)
	assert.True(t, w.do("n2", "SET", "lock", "still").IsOK(), "before node timeout it still accepts")
	w.Advance(3 * time.Second)
	assert.Equal(t, "CLUSTERDOWN The cluster is down", w.do("n2", "SET", "lock", "late").Str)
	down := eventTimes(w, EventClusterState, "n2", "fail")
	require.NotEmpty(t, down)
	window := time.Duration(int64(down[0]) - int64(start))
	assert.True(t, window > nt && window <= nt+nt/2+200*time.Millisecond, "minority master went down %v after the cut", window)
	w.Advance(3 * nt)
	require.NotEmpty(t, eventTimes(w, EventClusterFailover, "n6", "took the slots of n2"))
	w.K.Unpartition(cut)
	w.Advance(2 * nt)
	role := w.do("n2", "ROLE")
	assert.Equal(t, "slave", role.Array[0].Str)
	assert.Equal(t, "MOVED 8718 n6:6379", w.do("n2", "GET", "lock").Str)
	// The writes n2 acknowledged in the minority are gone.
	assert.True(t, w.do("n6", "GET", "lock").Kind == KindNil)
}

func TestClusterManualFailover(t *testing.T) {
	const nt = 5 * time.Second
	for _, tc := range []struct {
		mode     []string
		crash    bool
		maxDelay time.Duration // from the command to the slots taken
	}{
		{mode: nil, maxDelay: time.Second},
		{mode: []string{"FORCE"}, crash: true, maxDelay: time.Second},
		{mode: []string{"TAKEOVER"}, crash: true, maxDelay: 10 * time.Millisecond},
	} {
		name := "default"
		if tc.mode != nil {
			name = tc.mode[0]
		}
		t.Run(name, func(t *testing.T) {
			w, _ := clusterWorld(t, nt, 1, "n1", "n2", "n3", "n4", "n5", "n6")
			w.Advance(2 * time.Second)
			require.True(t, w.do("n2", "SET", "lock", "x").IsOK())
			w.Advance(2 * time.Second)
			if tc.crash {
				w.K.Crash(w.ID("n2"), sim.CrashProcess)
				w.Advance(100 * time.Millisecond)
			}
			at := w.K.Now()
			require.True(t, w.do("n6", append([]string{"CLUSTER", "FAILOVER"}, tc.mode...)...).IsOK())
			w.Advance(3 * time.Second)
			took := eventTimes(w, EventClusterFailover, "n6", "took the slots of n2")
			require.Len(t, took, 1)
			assert.Less(t, time.Duration(int64(took[0])-int64(at)), tc.maxDelay)
			assert.Equal(t, "x", w.do("n6", "GET", "lock").Str)
			assert.Equal(t, "MOVED 8718 n6:6379", w.do("n1", "GET", "lock").Str)
			if !tc.crash {
				w.Advance(nt)
				assert.Equal(t, "slave", w.do("n2", "ROLE").Array[0].Str, "the old master follows")
			}
		})
	}
}

func TestClusterFailoverCommandErrors(t *testing.T) {
	w, _ := clusterWorld(t, 5*time.Second, 1, "n1", "n2", "n3", "n4", "n5", "n6")
	w.Advance(time.Second)
	assert.Equal(t, "ERR You should send CLUSTER FAILOVER to a replica", w.do("n1", "CLUSTER", "FAILOVER").Str)
	assert.Contains(t, w.do("n6", "CLUSTER", "FAILOVER", "SOON").Str, "syntax error")
	assert.Equal(t, "ERR REPLICAOF not allowed in cluster mode.", w.do("n6", "REPLICAOF", "NO", "ONE").Str)
}

// A master that the majority flags FAIL and whose replica cannot be
// elected (it is cut off with its master) gets its FAIL flag cleared after
// node timeout x CLUSTER_FAIL_UNDO_TIME_MULT once reachable.
func TestClusterFailUndo(t *testing.T) {
	const nt = 5 * time.Second
	w, _ := clusterWorld(t, nt, 1, "n1", "n2", "n3", "n4", "n5", "n6")
	w.Advance(2 * time.Second)
	cut := w.K.Partition([][]sim.ProcID{{w.ID("n2"), w.ID("n6")}, {w.ID("n1"), w.ID("n3"), w.ID("n4"), w.ID("n5"), w.ID("c")}})
	var fail []time.Duration
	for i := 0; i < 100 && len(fail) == 0; i++ {
		w.Advance(100 * time.Millisecond)
		fail = eventTimes(w, EventClusterFail, "n1", "n2 marked FAIL")
	}
	require.NotEmpty(t, fail)
	w.Advance(100 * time.Millisecond)
	assert.Contains(t, w.do("n1", "CLUSTER", "INFO").Str, "cluster_state:fail", "a slot served by a FAIL master")
	assert.Empty(t, eventTimes(w, EventClusterFailover, "n6", "took"), "n6 cannot reach the voters")
	w.K.Unpartition(cut)
	w.Advance(3 * nt)
	undo := eventTimes(w, EventClusterFail, "n1", "clear FAIL of n2")
	require.NotEmpty(t, undo)
	assert.Greater(t, int64(undo[0])-int64(fail[0]), int64(2*nt))
	assert.Contains(t, w.do("n1", "CLUSTER", "INFO").Str, "cluster_state:ok")
	assert.True(t, w.do("n2", "SET", "lock", "y").IsOK(), "n2 serves its slots again")
}

// A replica whose link with its master has been down for longer than
// (node timeout x validity factor) + repl-ping-replica-period + node
// timeout does not fail over: the master's slots stay down.
func TestClusterReplicaValidity(t *testing.T) {
	const nt = 2 * time.Second
	names := []string{"n1", "n2", "n3", "n4", "n5", "n6"}
	members, err := CreateCluster(names, 1)
	require.NoError(t, err)
	for _, factor := range []int{0, 1} {
		t.Run(fmt.Sprint("factor ", factor), func(t *testing.T) {
			cc := DefaultClusterConfig()
			cc.NodeTimeout, cc.ReplicaValidityFactor, cc.Members = nt, factor, members
			var specs []nodeSpec
			for _, n := range names {
				cfg := DefaultConfig()
				c := cc
				cfg.Cluster = &c
				specs = append(specs, nodeSpec{name: n, cfg: cfg})
			}
			w := newWorld(t, time.Millisecond, specs...)
			w.Advance(2 * time.Second)
			// Only the link between n2 and n6 is cut, for 30s: n6's data
			// ages (10s + 2s x 1 allowed) while both stay in the cluster.
			cut := w.K.Partition([][]sim.ProcID{{w.ID("n2")}, {w.ID("n6")}})
			w.Advance(30 * time.Second)
			w.K.Crash(w.ID("n2"), sim.CrashPower)
			w.K.Unpartition(cut)
			w.Advance(10 * nt)
			took := eventTimes(w, EventClusterFailover, "n6", "took the slots of n2")
			if factor == 0 {
				assert.Len(t, took, 1, "factor 0: always fail over")
			} else {
				assert.Empty(t, took, "data too old")
			}
		})
	}
}

func TestClusterConfigValidate(t *testing.T) {
	base := func() ClusterConfig {
		cc := DefaultClusterConfig()
		cc.Members = []ClusterMember{{Name: "a", Slots: []SlotRange{{0, 8000}}}, {Name: "b", Slots: []SlotRange{{8001, 16383}}}, {Name: "r", ReplicaOf: "a"}}
		return cc
	}
	for _, tc := range []struct {
		name string
		edit func(*ClusterConfig)
		want string
	}{
		{"ok", func(*ClusterConfig) {}, ""},
		{"gap", func(c *ClusterConfig) { c.Members[1].Slots[0].From = 8002 }, "slot 8001 is not assigned"},
		{"tail", func(c *ClusterConfig) { c.Members[1].Slots[0].To = 16000 }, "slot 16001 is not assigned"},
		{"overlap", func(c *ClusterConfig) { c.Members[1].Slots[0].From = 7000 }, "slot 7000 assigned to both a and b"},
		{"missing master", func(c *ClusterConfig) { c.Members[2].ReplicaOf = "z" }, "not a member"},
		{"replica of replica", func(c *ClusterConfig) { c.Members = append(c.Members, ClusterMember{Name: "s", ReplicaOf: "r"}) }, "a replica itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc := base()
			cc.Members = append([]ClusterMember(nil), cc.Members...)
			for i := range cc.Members {
				cc.Members[i].Slots = append([]SlotRange(nil), cc.Members[i].Slots...)
			}
			tc.edit(&cc)
			err := cc.Validate()
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// A master back from the minority waits clamp(node timeout, 500ms, 5s)
// before its state turns ok (CLUSTER_MIN/MAX_REJOIN_DELAY); a restarted
// master waits CLUSTER_WRITABLE_DELAY (2s) from its first state update.
func TestClusterRejoinAndWritableDelays(t *testing.T) {
	const nt = 2 * time.Second
	names := []string{"n1", "n2", "n3", "n4", "n5", "n6"}
	t.Run("rejoin", func(t *testing.T) {
		// Three masters without replicas: nothing fails n1 over, so it
		// stays master and only its state goes down and up.
		w, _ := clusterWorld(t, nt, 0, "n1", "n2", "n3")
		w.Advance(time.Second)
		cut := w.K.Partition([][]sim.ProcID{{w.ID("n1")}, {w.ID("n2"), w.ID("n3"), w.ID("c")}})
		var down []time.Duration
		for i := 0; i < 100 && len(down) == 0; i++ {
			w.Advance(50 * time.Millisecond)
			down = eventTimes(w, EventClusterState, "n1", "fail")
		}
		require.NotEmpty(t, down)
		w.K.Unpartition(cut)
		healed := w.K.Now()
		var ok []time.Duration
		for i := 0; i < 200 && len(ok) == 0; i++ {
			w.Advance(50 * time.Millisecond)
			ok = eventTimes(w, EventClusterState, "n1", "ok")
		}
		require.NotEmpty(t, ok, "n1 comes back")
		assert.Equal(t, "master", w.do("n1", "ROLE").Array[0].Str)

		// The rejoin delay counts from the last update that found n1 in
		// the minority, at most a cron tick before the heal's first pongs.
		assert.GreaterOrEqual(t, time.Duration(int64(ok[0])-int64(healed)), nt-100*time.Millisecond, "rejoin delay: clamp(node timeout %v, 500ms, 5s)", nt)
	})
	t.Run("restart", func(t *testing.T) {
		w, _ := clusterWorld(t, nt, 1, names...)
		w.Advance(time.Second)
		w.K.Crash(w.ID("n3"), sim.CrashProcess)
		w.Advance(100 * time.Millisecond)
		w.K.Restart(w.ID("n3"))
		restarted := w.K.Now()
		assert.Contains(t, w.do("n3", "SET", "{x}", "1").Str, "CLUSTERDOWN", "a restarted master starts in state fail")
		var ok []time.Duration
		for i := 0; i < 100 && len(ok) == 0; i++ {
			w.Advance(50 * time.Millisecond)
			ok = eventTimes(w, EventClusterState, "n3", "ok")
		}
		require.NotEmpty(t, ok)
		assert.GreaterOrEqual(t, time.Duration(int64(ok[0])-int64(restarted)), 2*time.Second, "CLUSTER_WRITABLE_DELAY")
		assert.Less(t, time.Duration(int64(ok[0])-int64(restarted)), 2*time.Second+300*time.Millisecond)
	})
}

// A restart keeps what nodes.conf says (clusterLoadConfig, C 7.0.15
// cluster.c:278-282, :316-319): a node saved as fail comes back FAIL
// (n1 votes at once for n2's replica, without detecting the failure
// again), and a replica's own configEpoch is read as 0.
func TestClusterRestartLoadsFlagsAndEpochs(t *testing.T) {
	const nt = 2 * time.Second
	w, _ := clusterWorld(t, nt, 1, "n1", "n2", "n3", "n4", "n5", "n6")
	w.Advance(time.Second)
	w.K.Crash(w.ID("n2"), sim.CrashProcess)
	w.Advance(4 * nt)
	require.Contains(t, w.do("n1", "CLUSTER", "NODES").Str, "n2:6379@16379, master,fail ", "n1 saw n2 FAIL")
	me5 := w.node("n5").cl.me
	require.Equal(t, uint64(5), w.node("n5").cl.nodes[me5].configEpoch, "a replica keeps the configEpoch redis-cli gave it")
	require.Contains(t, w.do("n5", "CLUSTER", "INFO").Str, "cluster_my_epoch:1", "and shows its master's (cluster.c:5587-5588)")
	for _, name := range []string{"n1", "n5"} {
		w.K.Crash(w.ID(name), sim.CrashProcess)
		w.K.Restart(w.ID(name))
	}
	w.Advance(time.Millisecond)
	assert.Contains(t, w.do("n1", "CLUSTER", "NODES").Str, "n2:6379@16379, master,fail ", "restarted, n1 still knows n2 FAIL")
	assert.Zero(t, w.node("n5").cl.nodes[me5].configEpoch, "a restarted replica's own configEpoch is 0")
	assert.Contains(t, w.do("n5", "CLUSTER", "INFO").Str, "cluster_my_epoch:1")
}

// CLUSTER FAILOVER without FORCE is refused when the master is FAIL or
// has no bus link (cluster.c:5803-5816: nodeFailed is the FAIL flag): a
// master only PFAIL to its replica, cut off from it alone, is asked to
// pause, never answers, and the manual failover times out after 5 s.
func TestClusterFailoverPFailMaster(t *testing.T) {
	const nt = 2 * time.Second
	w, _ := clusterWorld(t, nt, 1, "n1", "n2", "n3", "n4", "n5", "n6")
	w.Advance(time.Second)
	w.K.Partition([][]sim.ProcID{{w.ID("n2")}, {w.ID("n6")}})
	w.Advance(nt + time.Second)
	require.Contains(t, w.do("n6", "CLUSTER", "NODES").Str, "n2:6379@16379, master,fail? ", "n6 sees n2 PFAIL, nobody else does")
	assert.True(t, w.do("n6", "CLUSTER", "FAILOVER").IsOK(), "accepted: n2 is not FAIL")
	w.Advance(6 * time.Second)
	assert.True(t, w.TraceHas(EventClusterFailover, "n6", "manual failover timed out"), "%q", w.Texts(EventClusterFailover, "n6"))
	assert.Equal(t, "slave", w.do("n6", "ROLE").Array[0].Str)
}
