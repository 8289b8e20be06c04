package clients

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRegistry checks that every declared algorithm is complete and that its
// name, parameters and defaults are consistent: each parameter is declared
// once per algorithm, and the defaults validate once the nodes are named.
func TestRegistry(t *testing.T) {
	require.Len(t, Algorithms, len(registry))
	for _, a := range registry {
		t.Run(a.Name, func(t *testing.T) {
			require.Same(t, a, Lookup(a.Name))
			assert.NotNil(t, a.defaults)
			assert.NotNil(t, a.lifetime)
			assert.NotNil(t, a.tryBound)
			assert.NotNil(t, a.build)
			assert.Contains(t, []string{NodeRedis, NodeZooKeeper, NodeMemcached, NodeMySQL}, a.NodeKind)
			assert.Contains(t, a.Fencing, FencingNone)
			seen := map[string]bool{}
			for _, p := range a.Params {
				assert.False(t, seen[p.Name], "parameter %s declared twice", p.Name)
				seen[p.Name] = true
				assert.NotNil(t, p.set, p.Name)
			}
			assert.Equal(t, !a.MultiNode, seen["node"])
			assert.Equal(t, a.MultiNode, seen["nodes"])
			c, err := DefaultLockConfig(a.Name)
			require.NoError(t, err)
			if a.MultiNode {
				c.Nodes = []string{"A", "B", "C"}
			} else {
				c.Node = "A"
			}
			require.NoError(t, Config{Name: "c1", Lock: c}.Validate())
			if a.NodeKind == NodeMySQL {
				// A MySQL lock never expires (lifetime 0): the row stays
				// until DELETE, the row lock until the transaction ends.
				assert.Zero(t, c.Lifetime())
			} else {
				assert.Positive(t, c.Lifetime())
			}
			assert.Positive(t, c.WaitBound())
		})
	}
	assert.Nil(t, Lookup("chubby"))
}

func TestLifetimeAndWaitBound(t *testing.T) {
	cfg := func(alg string, f func(*LockConfig)) LockConfig {
		c, err := DefaultLockConfig(alg)
		require.NoError(t, err)
		if f != nil {
			f(&c)
		}
		return c
	}
	tests := []struct {
		name         string
		c            LockConfig
		life, server time.Duration
		wait         time.Duration
	}{
		// 3 tries × (200 ms retry + 5 s command timeout).
		{"redis-single", cfg(RedisSingle, nil), 30 * time.Second, 30 * time.Second, 3 * (200*time.Millisecond + 5*time.Second)},
		// sequential: one attempt waits on 5 nodes × 50 ms.
		{"redlock sequential", cfg(Redlock, func(c *LockConfig) { c.Nodes = []string{"A", "B", "C", "D", "E"} }), 10 * time.Second, 10 * time.Second, 3 * (200*time.Millisecond + 250*time.Millisecond)},
		{"redlock parallel", cfg(Redlock, func(c *LockConfig) { c.Nodes = []string{"A", "B", "C"}; c.Fanout = FanoutParallel }), 10 * time.Second, 10 * time.Second, 3 * (200*time.Millisecond + 50*time.Millisecond)},
		// 32 × (249 ms + 8 s × 0.05).
		{"redsync", cfg(Redsync, nil), 8 * time.Second, 8 * time.Second, 32 * (249*time.Millisecond + 400*time.Millisecond)},
		// tries 0 counts as one try.
		{"redisson", cfg(Redisson, nil), 30 * time.Second, 30 * time.Second, 50*time.Millisecond + 3*time.Second},
		// 60 s requested, 40 s granted by a default server.
		{"zookeeper", cfg(ZooKeeper, nil), 60 * time.Second, 40 * time.Second, time.Second},
		{"zookeeper short", cfg(ZooKeeper, func(c *LockConfig) { c.SessionTimeout = 10 * time.Second }), 10 * time.Second, 10 * time.Second, time.Second},
		// Issue 13: exptime 30 s, 3 × (200 ms + 5 s).
		{"memcached-add", cfg(MemcachedAdd, nil), 30 * time.Second, 30 * time.Second, 3 * (200*time.Millisecond + 5*time.Second)},
		{"memcached-add never", cfg(MemcachedAdd, func(c *LockConfig) { c.Exptime = 0 }), 0, 0, 3 * (200*time.Millisecond + 5*time.Second)},
		// No expiry; 3 × (200 ms + 2 statements × 60 s).
		{"mysql-insert", cfg(MySQLInsert, nil), 0, 0, 3 * (200*time.Millisecond + 120*time.Second)},
		{"mysql-for-update", cfg(MySQLForUpdate, nil), 0, 0, 3 * (200*time.Millisecond + 420*time.Second)},
		// SETNX, GET, GETSET: 3 × (200 ms + 15 s).
		{"redis-getset", cfg(RedisGetSet, func(c *LockConfig) { c.LockTimeout = 10 * time.Second }), 10 * time.Second, 10 * time.Second, 3 * (200*time.Millisecond + 15*time.Second)},
		{"redis-reentrant-hash", cfg(RedisReentrantHash, nil), 30 * time.Second, 30 * time.Second, 3 * (200*time.Millisecond + 10*time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.life, tt.c.Lifetime())
			assert.Equal(t, tt.server, tt.c.ServerLifetime())
			assert.Equal(t, tt.wait, tt.c.WaitBound())
		})
	}
	assert.Zero(t, LockConfig{Algorithm: "x"}.Lifetime())
	assert.Zero(t, LockConfig{Algorithm: "x"}.WaitBound())
}
