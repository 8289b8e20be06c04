package clients

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

func TestDefaultLockConfig(t *testing.T) {
	tests := []struct {
		alg   string
		check func(t *testing.T, c LockConfig)
	}{
		{Redlock, func(t *testing.T, c LockConfig) {
			assert.Equal(t, 3, c.Tries)
			assert.Equal(t, sim.Range{Lo: 0, Hi: 200 * time.Millisecond}, c.RetryDelay)
			assert.Equal(t, 0.01, c.DriftFactor)
			assert.Equal(t, 2*time.Millisecond, c.DriftExtra)
			assert.Equal(t, 50*time.Millisecond, c.NodeTimeout)
			assert.Equal(t, FanoutSequential, c.Fanout)
			assert.Equal(t, ClockWall, c.ElapsedClock)
			assert.Equal(t, ReleaseAll, c.Release)
			assert.True(t, c.ValidityCheck)
		}},
		{Redsync, func(t *testing.T, c LockConfig) {
			assert.Equal(t, 8*time.Second, c.TTL)
			assert.Equal(t, 32, c.Tries)
			assert.Equal(t, sim.Range{Lo: 50 * time.Millisecond, Hi: 249 * time.Millisecond}, c.RetryDelay)
			assert.Equal(t, 0.01, c.DriftFactor)
			assert.Equal(t, 0.05, c.TimeoutFactor)
			assert.Equal(t, FanoutParallel, c.Fanout)
			assert.Equal(t, ClockMonotonic, c.ElapsedClock)
		}},
		{Redisson, func(t *testing.T, c LockConfig) {
			assert.Equal(t, 30*time.Second, c.Lease)
			assert.Equal(t, 10*time.Second, c.renewEvery())
			assert.True(t, c.WaitReplicasOn)
			assert.True(t, c.Watchdog)
			assert.Equal(t, time.Second, c.WaitTimeout)
		}},
		{ZooKeeper, func(t *testing.T, c LockConfig) {
			assert.Equal(t, 60*time.Second, c.SessionTimeout)
			assert.Zero(t, c.Heartbeat)
			assert.Zero(t, c.Tries)
		}},
		{RedisSingle, func(t *testing.T, c LockConfig) {
			assert.Equal(t, 30*time.Second, c.TTL)
			assert.Zero(t, c.WaitReplicas)
			assert.Equal(t, FencingNone, c.FencingToken)
			assert.Equal(t, "lock", c.Key)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.alg, func(t *testing.T) {
			c, err := DefaultLockConfig(tt.alg)
			require.NoError(t, err)
			assert.Equal(t, tt.alg, c.Algorithm)
			tt.check(t, c)
		})
	}
	_, err := DefaultLockConfig("chubby")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `lock.algorithm: unknown algorithm "chubby"`)
	assert.Contains(t, err.Error(), "redis-single, redis-setnx-expire")
}

func TestParams(t *testing.T) {
	tests := []struct {
		alg     string
		accepts []string
		rejects []string
	}{
		{RedisSingle, []string{"node", "ttl", "tries", "retry_delay", "wait_replicas", "extend_every", "fencing_token"}, []string{"nodes", "drift_factor", "lease", "session_timeout"}},
		{RedisGetDel, []string{"node", "ttl", "wait_replicas"}, []string{"extend_every", "nodes"}},
		{Redlock, []string{"nodes", "ttl", "drift_factor", "drift_extra", "node_timeout", "fanout", "elapsed_clock", "release", "validity_check", "extend_every"}, []string{"node", "timeout_factor", "lease"}},
		{Redsync, []string{"nodes", "ttl", "timeout_factor", "set_nx_on_extend", "extend_every"}, []string{"fanout", "elapsed_clock", "release", "drift_extra"}},
		{Redisson, []string{"node", "lease", "renew_every", "wait_replicas", "watchdog"}, []string{"ttl", "nodes", "extend_every"}},
		{ZooKeeper, []string{"node", "session_timeout", "heartbeat", "fencing_token"}, []string{"ttl", "wait_replicas"}},
	}
	for _, tt := range tests {
		t.Run(tt.alg, func(t *testing.T) {
			c, err := DefaultLockConfig(tt.alg)
			require.NoError(t, err)
			for _, p := range tt.accepts {
				assert.True(t, c.Accepts(p), p)
			}
			for _, p := range tt.rejects {
				assert.False(t, c.Accepts(p), p)
			}
		})
	}
	assert.Nil(t, LockConfig{Algorithm: "x"}.Params())
}

func TestSet(t *testing.T) {
	tests := []struct {
		alg, param, value string
		check             func(t *testing.T, c LockConfig)
		err               string
	}{
		{alg: Redlock, param: "nodes", value: "A, B,C", check: func(t *testing.T, c LockConfig) { assert.Equal(t, []string{"A", "B", "C"}, c.Nodes) }},
		{alg: Redlock, param: "retry_delay", value: "10ms..20ms", check: func(t *testing.T, c LockConfig) {
			assert.Equal(t, sim.Range{Lo: 10 * time.Millisecond, Hi: 20 * time.Millisecond}, c.RetryDelay)
		}},
		{alg: Redlock, param: "validity_check", value: "false", check: func(t *testing.T, c LockConfig) { assert.False(t, c.ValidityCheck) }},
		{alg: Redisson, param: "wait_replicas", value: "false", check: func(t *testing.T, c LockConfig) { assert.False(t, c.WaitReplicasOn) }},
		{alg: RedisSingle, param: "wait_replicas", value: "2", check: func(t *testing.T, c LockConfig) { assert.Equal(t, 2, c.WaitReplicas) }},
		{alg: RedisSingle, param: "ttl", value: "abc", err: `lock.ttl: "abc" is not a duration`},
		{alg: RedisSingle, param: "ttl", value: "30", err: `lock.ttl: "30" needs a unit`},
		{alg: Redlock, param: "retry_delay", value: "20ms..10ms", err: `is empty`},
		{alg: RedisSingle, param: "drift_factor", value: "0.1", err: `lock.drift_factor: redis-single takes no parameter "drift_factor" (allowed: key, node, ttl`},
		{alg: Redlock, param: "tries", value: "x", err: `lock.tries: cannot parse "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.alg+"/"+tt.param, func(t *testing.T) {
			c, err := DefaultLockConfig(tt.alg)
			require.NoError(t, err)
			err = c.Set(tt.param, tt.value)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			tt.check(t, c)
		})
	}
}

func TestValidate(t *testing.T) {
	valid := func(alg string) Config {
		c, err := DefaultLockConfig(alg)
		if err != nil {
			panic(err)
		}
		switch alg {
		case Redlock, Redsync:
			c.Nodes = []string{"A", "B", "C"}
		default:
			c.Node = "A"
		}
		return Config{Name: "c1", Lock: c, Resource: "S", Workload: Workload{Cycles: 1}}
	}
	tests := []struct {
		name string
		alg  string
		mut  func(c *Config)
		err  string // "" = valid
	}{
		{"redlock ok", Redlock, nil, ""},
		{"every default ok: redis-single", RedisSingle, nil, ""},
		{"every default ok: redsync", Redsync, nil, ""},
		{"every default ok: redisson", Redisson, nil, ""},
		{"every default ok: zookeeper", ZooKeeper, nil, ""},
		{"no name", Redlock, func(c *Config) { c.Name = "" }, "name: must not be empty"},
		{"unknown algorithm", Redlock, func(c *Config) { c.Lock.Algorithm = "x" }, `lock.algorithm: unknown algorithm "x"`},
		{"ttl zero", Redlock, func(c *Config) { c.Lock.TTL = 0 }, "lock.ttl: must be > 0"},
		{"ttl sub-ms", RedisSingle, func(c *Config) { c.Lock.TTL = 1500 * time.Microsecond }, "lock.ttl: must be a whole number of milliseconds"},
		{"fanout", Redlock, func(c *Config) { c.Lock.Fanout = "x" }, `lock.fanout: unknown value "x" (allowed: sequential, parallel)`},
		{"elapsed clock", Redlock, func(c *Config) { c.Lock.ElapsedClock = "tsc" }, `lock.elapsed_clock: unknown value "tsc" (allowed: wall, monotonic)`},
		{"release", Redlock, func(c *Config) { c.Lock.Release = "some" }, `lock.release: unknown value "some" (allowed: all, acquired)`},
		{"no nodes", Redlock, func(c *Config) { c.Lock.Nodes = nil }, "lock.nodes: redlock needs at least 1 node"},
		{"node for redlock", Redlock, func(c *Config) { c.Lock.Node = "A" }, "lock.node: redlock takes nodes, not node"},
		{"duplicate node", Redsync, func(c *Config) { c.Lock.Nodes = []string{"A", "A"} }, `lock.nodes[1]: "A" is listed twice`},
		{"nodes for single", RedisSingle, func(c *Config) { c.Lock.Nodes = []string{"A"} }, "lock.nodes: redis-single takes one node, not nodes"},
		{"no node", RedisGetDel, func(c *Config) { c.Lock.Node = "" }, "lock.node: redis-get-del needs a node"},
		{"tries zero", RedisSingle, func(c *Config) { c.Lock.Tries = 0 }, "lock.tries: must be >= 1"},
		{"tries zero ok for redisson", Redisson, func(c *Config) { c.Lock.Tries = 0 }, ""},
		{"tries negative", ZooKeeper, func(c *Config) { c.Lock.Tries = -1 }, "lock.tries: must be >= 0 (0 = forever)"},
		{"retry range", Redlock, func(c *Config) { c.Lock.RetryDelay = sim.Range{Lo: 2, Hi: 1} }, "lock.retry_delay: must be a range"},
		{"drift factor", Redlock, func(c *Config) { c.Lock.DriftFactor = 1.5 }, "lock.drift_factor: must be in [0, 1)"},
		{"drift extra", Redlock, func(c *Config) { c.Lock.DriftExtra = -1 }, "lock.drift_extra: must be >= 0"},
		{"node timeout", Redlock, func(c *Config) { c.Lock.NodeTimeout = 0 }, "lock.node_timeout: must be > 0"},
		{"timeout factor", Redsync, func(c *Config) { c.Lock.TimeoutFactor = 0 }, "lock.timeout_factor: must be > 0"},
		{"wait replicas", RedisSingle, func(c *Config) { c.Lock.WaitReplicas = -1 }, "lock.wait_replicas: must be >= 0"},
		{"extend every", RedisSingle, func(c *Config) { c.Lock.ExtendEvery = -time.Second }, "lock.extend_every: must be >= 0"},
		{"lease", Redisson, func(c *Config) { c.Lock.Lease = 0 }, "lock.lease: must be > 0"},
		{"renew every", Redisson, func(c *Config) { c.Lock.RenewEvery = time.Minute }, "lock.renew_every: must be in [0, lease)"},
		{"session timeout", ZooKeeper, func(c *Config) { c.Lock.SessionTimeout = 0 }, "lock.session_timeout: must be > 0"},
		{"heartbeat", ZooKeeper, func(c *Config) { c.Lock.Heartbeat = time.Hour }, "lock.heartbeat: must be in [0, session_timeout)"},
		{"zxid on redis", Redlock, func(c *Config) { c.Lock.FencingToken = FencingZxid }, "lock.fencing_token: zxid is a ZooKeeper transaction id"},
		{"incr on zookeeper", ZooKeeper, func(c *Config) { c.Lock.FencingToken = FencingIncr }, `lock.fencing_token: unknown value "incr" (allowed: none, zxid)`},
		{"fencing value", RedisSingle, func(c *Config) { c.Lock.FencingToken = "x" }, `lock.fencing_token: unknown value "x" (allowed: none, incr)`},
		{"empty key", RedisSingle, func(c *Config) { c.Lock.Key = "" }, "lock.key: must not be empty"},
		{"zk key with slash", ZooKeeper, func(c *Config) { c.Lock.Key = "a/b" }, "lock.key: the zookeeper lock's parent znode"},
		{"cycles", RedisSingle, func(c *Config) { c.Workload.Cycles = -1 }, "workload.cycles: must be >= 0"},
		{"hold", RedisSingle, func(c *Config) { c.Workload.Hold = -1 }, "workload.hold: must be >= 0"},
		{"start", RedisSingle, func(c *Config) { c.Workload.Start = -1 }, "workload.start: must be >= 0"},
		{"resource fencing", RedisSingle, func(c *Config) { c.ResourceFencing = "x" }, `resource.fencing: unknown mode "x"`},
		{"discovery master", RedisSingle, func(c *Config) { c.Discovery = &Discovery{Sentinels: []string{"s1"}} }, "discovery.master: must not be empty"},
		{"discovery sentinels", RedisSingle, func(c *Config) { c.Discovery = &Discovery{Master: "A"} }, "discovery.sentinels: need at least 1 sentinel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid(tt.alg)
			if tt.mut != nil {
				tt.mut(&c)
			}
			err := c.Validate()
			if tt.err == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}

func TestNewPanicsOnInvalidConfig(t *testing.T) {
	assert.Panics(t, func() { New(Config{}) })
}
