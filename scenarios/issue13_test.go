package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
)

// withIssue13 has one of each of issue 13's additions: a Redis server with
// maxmemory, a memcached server, a MySQL server, a cache filler and a client
// of each new algorithm.
const withIssue13 = `name: t
duration: 10s
redis:
  - name: A
    maxmemory: 1450
    maxmemory_policy: volatile-lru
memcached:
  - name: MC
mysql:
  - name: DB
    tables: [locks, leases]
fillers:
  - {name: F, node: A, every: 10ms, count: 9, value_size: 100}
clients:
  - name: c1
    lock: {algorithm: memcached-add, node: MC, exptime: 30s}
  - name: c2
    lock: {algorithm: mysql-for-update, node: DB, table: leases}
  - name: c3
    lock: {algorithm: redis-reentrant, node: A}
    workload: {cycles: 1, hold: 1s, reentry: 2, inner_at: 100ms, inner_hold: 100ms}
  - name: c4
    lock: {algorithm: redis-getset, node: A, timeout: 10s}
`

func TestIssue13Sections(t *testing.T) {
	s, err := Parse("t.yaml", []byte(withIssue13))
	require.NoError(t, err)
	assert.Equal(t, []string{"A", "MC", "DB", "F", "storage", "c1", "c2", "c3", "c4"}, s.Processes())
	assert.Equal(t, int64(1450), s.Redis()[0].MaxMemory)
	assert.Equal(t, "volatile-lru", s.Redis()[0].MaxMemoryPolicy)
	assert.Equal(t, 5, s.Redis()[0].MaxMemorySamples)
	require.Len(t, s.Fillers(), 1)
	assert.Equal(t, 100, s.Fillers()[0].ValueSize)
	assert.Equal(t, "leases", s.Clients[1].Lock.Table)
	assert.Equal(t, 2, s.Clients[2].Workload.Reentry)
	o, err := Run(s, 1, Options{})
	require.NoError(t, err)
	assert.NotNil(t, o)
}

// Bad input names its file:line and field (simrun exits 2 on any parse
// error).
func TestIssue13Errors(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     string
	}{
		{"exptime over 30 days", "exptime: 30s", "exptime: 744h", "t.yaml:16: clients[0].lock.exptime: 744h0m0s must be whole seconds from 0s (never) to 720h0m0s"},
		{"exptime fraction", "exptime: 30s", "exptime: 1500ms", "clients[0].lock.exptime: 1.5s must be whole seconds"},
		{"mysql lock without a table", "table: leases", "table: \"\"", "t.yaml:18: clients[1].lock.table: a MySQL lock needs a lock table"},
		{"mysql table not on its node", "table: leases", "table: nosuch", "t.yaml:18: clients[1].lock.table: \"nosuch\" is not a table of MySQL server DB (its tables: locks, leases)"},
		{"unknown eviction policy", "maxmemory_policy: volatile-lru", "maxmemory_policy: volatile-lfu", "t.yaml:6: redis[0].maxmemory_policy: unknown eviction policy \"volatile-lfu\" (allowed: noeviction"},
		{"negative maxmemory", "maxmemory: 1450", "maxmemory: -1", "t.yaml:5: redis[0].maxmemory: must be 0 (no limit) or a number of bytes"},
		{"filler on MySQL", "node: A, every", "node: DB, every", "fillers[0].node: \"DB\" is a MySQL server; expected a Redis server"},
		{"filler without value size", ", value_size: 100", "", "t.yaml:13: fillers[0].value_size: required field is missing"},
		{"filler value too large", "value_size: 100", "value_size: 2000000", "t.yaml:13: fillers[0].value_size: must be from 1 to 1048576 bytes"},
		{"filler every zero", "every: 10ms", "every: 0s", "fillers[0].every: must be positive"},
		{"reentry on a non-reentrant lock", "algorithm: redis-reentrant, node: A", "algorithm: redis-single, node: A", "clients[2].workload.reentry: redis-single does not lock re-entrantly"},
		{"negative reentry", "reentry: 2", "reentry: -1", "clients[2].workload.reentry: must not be negative"},
		{"getset timeout", "timeout: 10s", "timeout: 0s", "clients[3].lock.timeout: must be a whole number of milliseconds"},
		{"memcached release", "exptime: 30s", "release: unlink", "clients[0].lock.release"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, withIssue13, tt.old)
			_, err := Parse("t.yaml", []byte(strings.Replace(withIssue13, tt.old, tt.new, 1)))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// withCounter is a stock counter on a master with a replica.
const withCounter = `name: t
duration: 5s
redis:
  - name: A
  - name: R
    replicaof: A
memcached:
  - name: MC
counters:
  - name: stock
    node: A
    stock: 18
    clients:
      - {name: b1, method: watch, purchases: 2, retries: 5}
      - {name: b2, method: decr}
`

func TestCounterSection(t *testing.T) {
	s, err := Parse("t.yaml", []byte(withCounter))
	require.NoError(t, err)
	assert.Equal(t, []string{"A", "R", "MC", "stock", "b1", "b2", "storage"}, s.Processes())
	require.Len(t, s.Counters(), 1)
	c := s.Counters()[0]
	assert.Equal(t, "stock", c.Key, "the key defaults to the counter's name")
	assert.Equal(t, int64(18), c.Stock)
	assert.Equal(t, 5, c.Clients[0].Retries)
	o, err := Run(s, 1, Options{})
	require.NoError(t, err)
	assert.Equal(t, "holds", string(o.Verdicts.Of(checker.ResourceSafety)))
	assert.Equal(t, "not-used", string(o.Verdicts.Of(checker.LockSafety)))
	var loads, purchases, reads int
	for _, op := range o.History.Counter {
		switch op.Kind.String() {
		case "load":
			loads++
			assert.Equal(t, int64(18), op.Observed, "the declared stock reaches the checker through the history")
		case "purchase":
			purchases++
		case "read":
			reads++
		}
	}
	assert.Equal(t, []int{1, 3, 2}, []int{loads, purchases, reads})
}

// Bad counter input names its file:line and field (exit 2 in simrun).
func TestCounterErrors(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     string
	}{
		{"unknown method", "method: decr", "method: cas", `t.yaml:15: counters[0].clients[1].method: unknown counter method "cas" (known: get-set, decr, watch, script)`},
		{"negative stock", "stock: 18", "stock: -1", "t.yaml:12: counters[0].stock: must be 0 or more items, got -1"},
		{"no stock", "    stock: 18\n", "", "t.yaml:10: counters[0].stock: required field is missing"},
		{"counter on memcached", "node: A", "node: MC", `t.yaml:11: counters[0].node: "MC" is a memcached server; expected a Redis server`},
		{"counter on a replica", "node: A", "node: R", `counters[0].node: "R" is a replica of A`},
		{"unknown node", "node: A", "node: X", `counters[0].node: unknown process "X"`},
		{"retries on decr", "{name: b2, method: decr}", "{name: b2, method: decr, retries: 3}", "counters[0].clients[1].retries: only the watch method retries"},
		{"zero purchases", "purchases: 2", "purchases: 0", "counters[0].clients[0].purchases: must be at least 1"},
		{"no clients", "    clients:\n      - {name: b1, method: watch, purchases: 2, retries: 5}\n      - {name: b2, method: decr}\n", "", "counters[0].clients: a counter needs at least one client"},
		{"duplicate name", "name: b2", "name: b1", `counters[0].clients[1].name: name "b1" is already used`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, withCounter, tt.old)
			_, err := Parse("t.yaml", []byte(strings.Replace(withCounter, tt.old, tt.new, 1)))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
