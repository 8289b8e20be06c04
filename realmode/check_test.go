package realmode

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/realmode/lazyfs"
	"github.com/locksim/locksim/scenarios"
)

const checkBase = `
name: check
duration: 10s
redis:
  - name: M
    appendonly: %s
    appendfsync: %s
  - name: R
    replicaof: M
  - name: X
sentinel: {master: M}
clients:
  - name: c1
    lock: {algorithm: redis-single, node: X, ttl: 5s}
`

// withoutFUSE is want where FUSE cannot be mounted, and "" (supported)
// where it can.
func withoutFUSE(want string) string {
	if lazyfs.Available() == nil {
		return ""
	}
	return want
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name   string
		yaml   string
		aof    string
		fsync  string
		wantIn string // "" means supported
	}{
		{name: "no faults", yaml: ``},
		{name: "server pause", yaml: "faults: [{at: 1s, kind: pause, node: M, for: 1s}]"},
		{name: "server clock jump", yaml: "faults: [{at: 1s, kind: clock-jump, node: X, by: +30s}]"},
		{name: "server clock jump that reverts", yaml: "faults: [{at: 1s, kind: clock-jump, node: X, by: +30s, revert_after: 2s}]"},
		{name: "server clock strobe", yaml: "faults: [{at: 1s, kind: clock-strobe, node: X, delta: +2s, period: 50ms, for: 1s}]"},
		{name: "majorities ring of clients and servers", yaml: "faults: [{at: 1s, kind: partition-ring, ring: [[c1, X], [M], [R], [s1]], heal_after: 2s}]"},
		{name: "selector", yaml: "faults: [{at: 1s, kind: pause, node: any redis, for: 1s}]", wantIn: "does not resolve the selector \"any redis\""},
		{name: "client partition from a server", yaml: "faults: [{at: 1s, kind: partition, groups: [[c1], [X]]}]"},
		{name: "power loss without AOF", yaml: "faults: [{at: 1s, kind: crash, node: M, mode: power}]"},
		{name: "power loss with always", aof: "yes", fsync: "always", yaml: "faults: [{at: 1s, kind: crash, node: M, mode: power}]"},
		// On lazyfs where FUSE works, refused elsewhere.
		{name: "power loss with everysec", aof: "yes", fsync: "everysec", yaml: "faults: [{at: 1s, kind: crash, node: M, mode: power}]", wantIn: withoutFUSE("needs FUSE")},
		{name: "power loss with no", aof: "yes", fsync: "no", yaml: "faults: [{at: 1s, kind: crash, node: M, mode: power}]", wantIn: withoutFUSE("appendfsync no")},
		{name: "partition between master and replica", yaml: "faults: [{at: 1s, kind: partition, groups: [[M], [R]]}]"},
		{name: "partition between sentinel and master", yaml: "faults: [{at: 1s, kind: partition, groups: [[s1, c1], [M]]}]"},
		{name: "delay on replication", yaml: "faults: [{at: 1s, kind: delay, from: M, to: R, by: 1s, for: 1s}]"},
		{name: "drop on replication", yaml: "faults: [{at: 1s, kind: drop, from: M, to: R, count: 2}]", wantIn: "no TCP counterpart"},
		{name: "drop between client and server", yaml: "faults: [{at: 1s, kind: drop, from: c1, to: X, count: 2}]"},
		{name: "same-instant order", yaml: "faults: [{at: 1s, kind: order, node: X, from: c1}]", wantIn: "check.yaml:15: faults[0].kind: order chooses which of the events due at one instant"},
		// Sentinel promotes a never-synced replica like a synced one: a
		// cut at 0s is the same story in both worlds (single-failover).
		{name: "replication cut at 0s", yaml: "faults: [{at: 0s, kind: partition, groups: [[M], [R]], heal_after: 1s}]"},
		{name: "trigger on promoted", yaml: "faults: [{on: {event: promoted, node: R}, kind: pause, node: c1, for: 1s}]", wantIn: "promoted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			aof, fsync := tt.aof, tt.fsync
			if aof == "" {
				aof, fsync = "no", "everysec"
			}
			src := sprintf(checkBase, aof, fsync) + tt.yaml + "\n"
			s, err := scenarios.Parse("check.yaml", []byte(src))
			require.NoError(t, err)
			err = Check(s)
			if tt.wantIn == "" {
				assert.NoError(t, err)
				return
			}
			var ue *UnsupportedError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, err.Error(), "faults[0]")
			assert.Contains(t, err.Error(), tt.wantIn)
		})
	}
}

// TestCheckZooKeeper: real ZooKeeper runs the zookeeper section, and
// refuses what it cannot be given, naming the field.
func TestCheckZooKeeper(t *testing.T) {
	const base = `
name: zk
duration: 5s
clients:
  - name: c1
    lock: {algorithm: zookeeper, session_timeout: 4s}
    workload: {start: 0s, cycles: 1, hold: 1s}
`
	tests := []struct {
		name, yaml, where string
	}{
		{"runs", "zookeeper: {tick_time: 500ms, min_session_timeout: 1s, max_session_timeout: 8s, lock_delay: 0s}\n" +
			"faults:\n  - {at: 1s, kind: crash, node: zk, mode: power, restart_after: 1s}\n  - {at: 3s, kind: pause, node: zk, for: 1s}\n", ""},
		{"lock-delay", "zookeeper: {lock_delay: 10s}\n", "zookeeper.lock_delay"},
		{"clock", "zookeeper: {lock_delay: 0s, clock: {offset: 5s}}\n", "zookeeper.clock"},
		{"clock jump", "zookeeper: {lock_delay: 0s}\nfaults:\n  - {at: 1s, kind: clock-jump, node: zk, by: 5s}\n", "faults[0]"},
		{"clock strobe", "zookeeper: {lock_delay: 0s}\nfaults:\n  - {at: 1s, kind: clock-strobe, node: zk, delta: 5s, period: 10ms, for: 1s}\n", "faults[0] (clock-strobe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenarios.Parse("zk.yaml", []byte(base+tt.yaml))
			require.NoError(t, err)
			err = Check(s)
			if tt.where == "" {
				assert.NoError(t, err)
				return
			}
			var ue *UnsupportedError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, ue.Where, tt.where)
		})
	}
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func TestBracketed(t *testing.T) {
	tests := []struct {
		in   string
		want [][]string
	}{
		{"#3 [c1 A B] [D E]", [][]string{{"c1", "A", "B"}, {"D", "E"}}},
		{"#4 one-way [A] -> [B C]", [][]string{{"A"}, {"B", "C"}}},
		{"#5 []", [][]string{{}}},
		{"all", nil},
		{"#6 [A", nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := bracketed(tt.in)
			if tt.want == nil {
				assert.Nil(t, got)
				return
			}
			require.Len(t, got, len(tt.want))
			for i := range got {
				assert.ElementsMatch(t, tt.want[i], got[i])
			}
		})
	}
}

// TestCheckRefusesKindsWithoutLauncher: a process kind that real mode has no
// launcher for (kinds.go) is refused by its section, not run as a model
// while the rest is real.
func TestCheckRefusesKindsWithoutLauncher(t *testing.T) {
	// Every kind has a launcher now: take ZooKeeper's away for the test.
	zk := launchers[scenarios.KindZooKeeper]
	delete(launchers, scenarios.KindZooKeeper)
	t.Cleanup(func() { launchers[scenarios.KindZooKeeper] = zk })
	tests := []struct{ section, yaml, what string }{
		{"zookeeper", "zookeeper:\n  lock_delay: 0s\n", "the ZooKeeper service"},
	}
	for _, tt := range tests {
		t.Run(tt.section, func(t *testing.T) {
			s, err := scenarios.Parse("t.yaml", []byte(sprintf(checkBase, "no", "everysec")+tt.yaml))
			require.NoError(t, err)
			err = Check(s)
			var ue *UnsupportedError
			require.ErrorAs(t, err, &ue)
			assert.Equal(t, tt.section, ue.Where)
			assert.Contains(t, ue.Why, tt.what+" is not supported yet")
			assert.Contains(t, ue.Why, "real mode runs mariadbd, memcached, redis-sentinel, redis-server only")
		})
	}
	s, err := scenarios.Parse("t.yaml", []byte(sprintf(checkBase, "no", "everysec")))
	require.NoError(t, err)
	require.NoError(t, Check(s), "redis, sentinel and storage have launchers")
	for name := range launchers {
		assert.NotNil(t, scenarios.KindNamed(name), "launcher for an unknown kind %q", name)
	}
}

// TestRolesAndClocksFromLaunchers: the replication groups and the shifted
// clocks come from the launchers' per-kind facts (kinds.go).
func TestRolesAndClocksFromLaunchers(t *testing.T) {
	s, err := scenarios.Parse("groups.yaml", []byte(`
name: groups
duration: 10s
redis:
  - name: M
  - name: R
    replicaof: M
  - name: X
    clock: {offset: 2s}
sentinel: {master: M, count: 2, clock: {drift: 0.01}}
clients:
  - name: c1
    lock: {algorithm: redis-single, node: X, ttl: 5s}
faults:
  - {at: 1s, kind: clock-jump, node: M, by: +1s}
  - {at: 1s, kind: clock-jump, node: c1, by: +1s}
  - {at: 1s, kind: clock-strobe, node: R, delta: +1s, period: 10ms, for: 1s}
`))
	require.NoError(t, err)
	r := rolesOf(s)
	assert.Equal(t, map[string]string{"M": "M", "R": "M", "X": "X", "s1": "M", "s2": "M"}, r.group)
	assert.True(t, r.talk("M", "R"))
	assert.True(t, r.talk("s1", "M"))
	assert.False(t, r.talk("X", "M"))
	assert.False(t, r.real("c1"))
	assert.Equal(t, map[string]scenarios.ClockSpec{
		"M":  {},
		"R":  {},
		"X":  {Offset: 2 * time.Second},
		"s1": {Drift: 0.01},
		"s2": {Drift: 0.01},
	}, clocksOf(s))
}

// TestCheckMySQL: what of a MySQL section or fault real mode cannot
// reproduce is refused, naming the field or fault and why (exit 2).
func TestCheckMySQL(t *testing.T) {
	const base = `name: t
duration: 10s
mysql:
  - name: D
    innodb_flush_log_at_trx_commit: 1
  - name: E
clients:
  - name: c1
    lock: {algorithm: mysql-insert, node: D, table: locks}
`
	tests := []struct {
		name, old, new, where, why string
	}{
		{"replica", "  - name: E\n", "  - name: E\n    replica_of: D\n", "mysql[1] (E).replica_of", "starts no MariaDB replicas"},
		{"read_only", "  - name: E\n", "  - name: E\n    read_only: true\n", "mysql[1] (E).read_only", "--skip-grant-tables"},
		{"clock", "  - name: E\n", "  - name: E\n    clock: {offset: 1s}\n", "mysql[1] (E).clock", "does not shift mariadbd's clock"},
		{"clock jump", "", "faults:\n  - {at: 1s, kind: clock-jump, node: D, by: 5s}\n", "faults[0] (clock-jump", "does not shift mariadbd's clock"},
		{"clock strobe", "", "faults:\n  - {at: 1s, kind: clock-strobe, node: D, delta: 5s, period: 10ms, for: 1s}\n", "faults[0] (clock-strobe", "does not shift mariadbd's clock"},
		{"power loss without flush at commit", "innodb_flush_log_at_trx_commit: 1", "innodb_flush_log_at_trx_commit: 2", "faults[0] (crash", "innodb_flush_log_at_trx_commit 2 loses commits"},
		{"a trigger no reply shows", "", "faults:\n  - {on: {event: conn-closed, node: D}, kind: pause, node: c1, for: 1s}\n", "faults[0] (pause", "cannot observe event conn-closed of D (a MySQL server): its gateway sees only what replies show (row-locked, committed)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := base
			if tt.name == "power loss without flush at commit" {
				src += "faults:\n  - {at: 1s, kind: crash, node: D, mode: power}\n"
			}
			if tt.old == "" {
				src += tt.new
			} else {
				require.Contains(t, src, tt.old)
				src = strings.Replace(src, tt.old, tt.new, 1)
			}
			s, err := scenarios.Parse("t.yaml", []byte(src))
			require.NoError(t, err)
			var ue *UnsupportedError
			require.ErrorAs(t, Check(s), &ue)
			assert.Contains(t, ue.Where, tt.where)
			assert.Contains(t, ue.Why, tt.why)
		})
	}
	s, err := scenarios.Parse("t.yaml", []byte(base+"faults:\n  - {at: 1s, kind: crash, node: D, mode: power}\n  - {at: 2s, kind: pause, node: E, for: 1s}\n  - {on: {event: row-locked, node: D}, kind: pause, node: c1, for: 1s}\n"))
	require.NoError(t, err)
	assert.NoError(t, Check(s), "a power loss with innodb_flush_log_at_trx_commit 1 equals a kill; a pause is SIGSTOP; the gateway sees row-locked")
}

// TestCheckRefusesFaultsBeforeInitialSync: a fault that cuts a cluster
// replica (or a min_replicas_to_write master's replica) from its master
// before the model's replica can have synced is refused: real mode starts
// with every replica synced, and the twins disagreed (outsider3).
func TestCheckRefusesFaultsBeforeInitialSync(t *testing.T) {
	cluster := "name: t\nduration: 20s\ncluster: {masters: 3, replicas: 1, node_timeout: 2s}\nclients:\n  - name: c1\n    lock: {algorithm: redis-single, node: C2, ttl: 30s}\nfaults: [{at: AT, kind: partition, groups: [[C2], [C6]]}]\n"
	minRepl := "name: t\nduration: 20s\nredis: [{name: M, min_replicas_to_write: 1}, {name: R, replicaof: M}]\nclients:\n  - name: c1\n    lock: {algorithm: redis-single, node: M, ttl: 30s}\nfaults: [{at: AT, kind: pause, node: R, for: 1s}]\n"
	for _, tt := range []struct {
		name, yaml, at, wantIn string
	}{
		{"cluster cut at 0s", cluster, "0s", "faults[0] (partition [C2] [C6] at 0s): the partition at 0s acts on C6's link to its master C2 before the model's initial sync can have completed"},
		{"cluster cut after the sync", cluster, "10ms", ""},
		{"min replicas pause at 0s", minRepl, "0s", "M's min_replicas_to_write does not count a replica that never synced"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenarios.Parse("t.yaml", []byte(strings.ReplaceAll(tt.yaml, "AT", tt.at)))
			require.NoError(t, err)
			err = Check(s)
			if tt.wantIn == "" {
				assert.NoError(t, err)
				return
			}
			var ue *UnsupportedError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, err.Error(), tt.wantIn)
		})
	}
}

// TestCheckRefusesWhatItCannotEmulate: issue 32's audit. Where real mode's
// emulation of a fault or setting differs from the model in a way that can
// change a verdict and cannot be fixed, Check refuses it, naming the
// scenario file's line and why (docs/real-mode-faults.md).
func TestCheckRefusesWhatItCannotEmulate(t *testing.T) {
	tests := []struct {
		name, yaml, where, why string
	}{
		{"network loss", `
name: lossy
duration: 5s
network:
  latency: 1ms..3ms
  loss: 0.1
redis:
  - name: A
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 5s}
`, "lossy.yaml:6: network.loss", "loses nothing"},
		{"memcached clock drift", `
name: mcdrift
duration: 5s
memcached:
  - name: M
    clock: {drift: 0.01}
clients:
  - name: c1
    lock: {algorithm: memcached-add, node: M, exptime: 5s}
`, "mcdrift.yaml:6: memcached[0].clock.drift", "monotonic clock"},
		{"memcached clock-drift fault", `
name: mcdriftfault
duration: 5s
memcached:
  - name: M
clients:
  - name: c1
    lock: {algorithm: memcached-add, node: M, exptime: 5s}
faults:
  - {at: 1s, kind: clock-drift, node: M, rate: 0.5}
`, "mcdriftfault.yaml:10: faults[0] (", "monotonic clock"},
		{"fault lines named", `
name: dropline
duration: 5s
redis:
  - name: A
  - name: B
    replicaof: A
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 5s}
faults:
  - {at: 1s, kind: pause, node: B, for: 1s}
  - {at: 2s, kind: drop, from: A, to: B, count: 1}
`, "dropline.yaml:13: faults[1] (", "no TCP counterpart"},
		{"stall past tcp_retries2", `
name: longcut
duration: 20m
redis:
  - name: A
  - name: B
    replicaof: A
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 5s}
faults:
  - {at: 1s, kind: partition, groups: [[A], [B]]}
`, "longcut.yaml:12: faults[0] (", "tcp_retries2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenarios.Parse(strings.Fields(tt.yaml)[1]+".yaml", []byte(tt.yaml))
			require.NoError(t, err)
			err = Check(s)
			var ue *UnsupportedError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, ue.Where, tt.where)
			assert.Contains(t, ue.Why, tt.why)
		})
	}
	// What stays accepted: a memcached clock offset and clock jump (the
	// wall clock is read once, at start-up, by the model and the server).
	s, err := scenarios.Parse("mcjump.yaml", []byte(`
name: mcjump
duration: 5s
memcached:
  - name: M
    clock: {offset: 5s}
clients:
  - name: c1
    lock: {algorithm: memcached-add, node: M, exptime: 5s}
faults:
  - {at: 1s, kind: clock-jump, node: M, by: +30s}
`))
	require.NoError(t, err)
	assert.NoError(t, Check(s))
}
