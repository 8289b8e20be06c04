package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/clients"
)

// withServers is minimal with a memcached server and two MySQL servers.
const withServers = `name: t
duration: 10s
redis:
  - name: A
memcached:
  - name: MC
    memory_mb: 2
    no_evictions: true
mysql:
  - name: DB
    tables: [locks, {name: leases, key_name: uk_name}]
    innodb_lock_wait_timeout: 5s
    wait_timeout: 10s
    innodb_flush_log_at_trx_commit: 2
  - name: DB2
    replica_of: DB
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 5s}
    workload: {start: 0s, cycles: 1, hold: 1s}
`

func TestKindsRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Kinds() {
		t.Run(k.Name, func(t *testing.T) {
			assert.False(t, seen[k.Section], "section %s declared twice", k.Section)
			seen[k.Section] = true
			assert.NotEmpty(t, k.What)
			assert.NotNil(t, k.read)
			assert.NotNil(t, k.procs)
			assert.NotNil(t, k.build)
			assert.Same(t, k, KindNamed(k.Name))
		})
	}
	// Every node kind a lock algorithm needs is a process kind.
	for _, alg := range clients.Algorithms {
		assert.NotNil(t, KindNamed(clients.Lookup(alg).NodeKind), alg)
	}
	// Storage is built last among the servers: a new kind goes before it.
	assert.Equal(t, "storage", kinds[len(kinds)-1].Name)
}

func TestMemcachedAndMySQLSections(t *testing.T) {
	s, err := Parse("t.yaml", []byte(withServers))
	require.NoError(t, err)
	require.Len(t, s.Memcached(), 1)
	mc := s.Memcached()[0].Config
	assert.Equal(t, int64(2<<20), mc.MaxBytes)
	assert.False(t, mc.EvictToFree, "no_evictions is memcached -M")
	assert.True(t, mc.UseCAS, "default")
	assert.Equal(t, int64(1<<20), mc.ItemSizeMax, "default")

	require.Len(t, s.MySQL(), 2)
	db := s.MySQL()[0].Config
	assert.Equal(t, "locksim", db.Database)
	require.Len(t, db.Tables, 2)
	assert.Equal(t, "locks", db.Tables[0].Name)
	assert.Equal(t, "PRIMARY", db.Tables[0].KeyName)
	assert.Equal(t, "uk_name", db.Tables[1].KeyName)
	assert.Equal(t, 5*time.Second, db.LockWaitTimeout)
	assert.Equal(t, 10*time.Second, db.WaitTimeout)
	assert.Equal(t, 2, db.FlushLogAtTrxCommit)
	db2 := s.MySQL()[1].Config
	assert.Equal(t, "DB", db2.ReplicaOf)
	assert.Equal(t, 50*time.Second, db2.LockWaitTimeout, "innodb_lock_wait_timeout default")
	assert.Equal(t, 28800*time.Second, db2.WaitTimeout, "wait_timeout default")

	assert.Equal(t, []string{"A", "MC", "DB", "DB2", "storage", "c1"}, s.Processes())
	var roles []Role
	for _, p := range s.Servers() {
		roles = append(roles, p.Role)
	}
	assert.Equal(t, []Role{RoleRedis, RoleMemcached, RoleMySQL, RoleMySQL, RoleStorage}, roles)

	w, err := Build(s, 1, false)
	require.NoError(t, err)
	for _, name := range s.Processes() {
		_, ok := w.Kernel.Lookup(name)
		assert.True(t, ok, "%s is built", name)
	}
	// Faults may name the new processes.
	y := withServers + "faults:\n  - {at: 1s, kind: crash, node: MC}\n  - {at: 2s, kind: pause, node: DB, for: 1s}\n"
	_, err = Parse("t.yaml", []byte(y))
	require.NoError(t, err)
}

// TestNewKindsKeepTraces: adding kinds before storage leaves the processes
// of a scenario without them where they were.
func TestNewKindsKeepTraces(t *testing.T) {
	s, err := Parse("t.yaml", []byte(minimal))
	require.NoError(t, err)
	assert.Equal(t, []string{"A", "storage", "c1"}, s.Processes())
}

func TestKindSectionErrors(t *testing.T) {
	tests := []struct {
		name string
		old  string
		new  string
		want string
	}{
		{"memory out of range", "memory_mb: 2", "memory_mb: 0", "t.yaml:7: memcached[0].memory_mb: must be from 1 to"},
		{"item size over the page", "memory_mb: 2", "item_size_max: 2000000", "t.yaml:7: memcached[0].item_size_max: must be from 524288 to 1048576 bytes"},
		{"item size under the chunk maximum", "memory_mb: 2", "item_size_max: 1024", "t.yaml:7: memcached[0].item_size_max: must be from 524288 to 1048576 bytes (memcached -I: at least its slab_chunk_max"},
		{"item size over half the memory", "memory_mb: 2", "memory_mb: 1", "t.yaml:7: memcached[0].memory_mb: item_size_max (1048576 bytes) must be at most half of memory_mb (1 MB): memcached refuses to start"},
		{"no_evictions not a boolean", "no_evictions: true", "no_evictions: maybe", "t.yaml:8: memcached[0].no_evictions"},
		{"unknown memcached field", "no_evictions: true", "exptime: 10", "t.yaml:8: memcached[0].exptime: unknown field"},
		{"no lock table", "tables: [locks, {name: leases, key_name: uk_name}]", "tables: []", "t.yaml:11: mysql[0].tables: a MySQL node needs at least one lock table"},
		{"bad table name", "tables: [locks, {name: leases, key_name: uk_name}]", "tables: [locks, {name: \"bad name\"}]", "mysql[0].tables[1].name: \"bad name\" is not a valid table name"},
		{"table without name", "tables: [locks, {name: leases, key_name: uk_name}]", "tables: [{key_name: uk}]", "t.yaml:11: mysql[0].tables[0].name: required field is missing"},
		{"fractional lock wait", "innodb_lock_wait_timeout: 5s", "innodb_lock_wait_timeout: 1500ms", "t.yaml:12: mysql[0].innodb_lock_wait_timeout: must be a whole number of seconds"},
		{"wait_timeout zero", "wait_timeout: 10s", "wait_timeout: 0s", "t.yaml:13: mysql[0].wait_timeout: 0s must be a whole number of seconds from 1s"},
		{"flush mode", "innodb_flush_log_at_trx_commit: 2", "innodb_flush_log_at_trx_commit: 3", "t.yaml:14: mysql[0].innodb_flush_log_at_trx_commit: 3 is not modelled (allowed: 0, 1, 2)"},
		{"replica of unknown", "replica_of: DB", "replica_of: X", "mysql[1].replica_of: unknown process \"X\""},
		{"replica of a Redis server", "replica_of: DB", "replica_of: A", "t.yaml:16: mysql[1].replica_of: \"A\" is a Redis server; expected a MySQL server (DB, DB2)"},
		{"replica of itself", "replica_of: DB", "replica_of: DB2", "mysql[1].replica_of: a server cannot replicate itself"},
		{"name clash across kinds", "  - name: MC", "  - name: A", "memcached[0].name: name \"A\" is already used by a Redis server"},
		{"lock on a memcached server", "node: A, ttl", "node: MC, ttl", "clients[0].lock.node: \"MC\" is a memcached server; expected a Redis server (A)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, withServers, tt.old)
			_, err := Parse("t.yaml", []byte(strings.Replace(withServers, tt.old, tt.new, 1)))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
