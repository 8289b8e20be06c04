package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/nodes/memcached"
	"github.com/locksim/locksim/nodes/mysql"
	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// withKindTriggers has a Redis, a memcached and a MySQL server, a client on
// each, and one triggered pause per server on an event the server's kind
// declares (ProcKind.TriggerEvents).
const withKindTriggers = `name: t
duration: 10s
redis:
  - name: R
memcached:
  - name: M
mysql:
  - name: D
clients:
  - name: c1
    lock: {algorithm: memcached-add, node: M}
    workload: {start: 100ms, cycles: 2, hold: 500ms, think: 1s}
  - name: c2
    lock: {algorithm: mysql-for-update, node: D}
    workload: {start: 200ms, cycles: 2, hold: 500ms, think: 1s}
  - name: c3
    lock: {algorithm: redis-single, node: R}
    workload: {start: 300ms, cycles: 1, hold: 500ms}
faults:
  - on: {event: key-set, node: M, count: 2}
    kind: pause
    node: c1
    for: 1ms
  - on: {event: row-locked, node: D}
    after: 5ms
    kind: pause
    node: c2
    for: 1ms
  - on: {event: key-set, node: R}
    kind: pause
    node: c3
    for: 1ms
`

// TestKindTriggersFire checks that a trigger on a memcached or MySQL
// server's event fires when the node logs the event's trace kind (the
// count-th one, after the delay), as Redis's key-set does.
func TestKindTriggersFire(t *testing.T) {
	s, err := Parse("t.yaml", []byte(withKindTriggers))
	require.NoError(t, err)
	o, err := Run(s, 1, Options{KeepTrace: true})
	require.NoError(t, err)
	nth := func(kind sim.Kind, proc string, n int) sim.Time {
		for _, e := range o.Trace {
			if e.Kind == kind && e.Proc == proc {
				if n--; n == 0 {
					return e.At
				}
			}
		}
		t.Fatalf("no %s event #%d of %s in the trace", kind, n, proc)
		return 0
	}
	got := map[string]sim.Time{}
	for _, f := range o.History.Faults {
		got[f.Targets[0]] = f.At
	}
	require.Len(t, got, 3, "each triggered pause fires once: %v", o.History.Faults)
	assert.Equal(t, nth(memcached.KindItemStored, "M", 2), got["c1"], "memcached key-set #2 = the second item-stored")
	assert.Equal(t, nth(mysql.KindRowLocked, "D", 1)+sim.Time(5e6), got["c2"], "MySQL row-locked, after 5ms")
	assert.Equal(t, nth(redis.EventKeySet, "R", 1), got["c3"], "Redis key-set")
}

// TestKindTriggerErrors checks that a trigger naming an event the named
// process's kind never emits is refused with its file:line, the field and
// the kind (simrun exits 2 on any parse error).
func TestKindTriggerErrors(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     string
	}{
		{"a MySQL event on memcached", "event: key-set, node: M", "event: row-locked, node: M",
			`t.yaml:20: faults[0].on.event: M never emits event row-locked: "M" is a memcached server (kind memcached, whose events are: key-set, key-evicted, crashed, restarted); row-locked is emitted by a MySQL server`},
		{"a memcached event on Redis", "event: key-set, node: R", "event: key-evicted, node: R",
			`t.yaml:29: faults[2].on.event: R never emits event key-evicted: "R" is a Redis server (kind redis, whose events are: key-set, promoted, crashed, restarted); key-evicted is emitted by a memcached server`},
		{"Redis's promoted on MySQL", "event: row-locked, node: D", "event: promoted, node: D",
			`faults[1].on.event: D never emits event promoted: "D" is a MySQL server (kind mysql, whose events are: row-locked, committed, conn-closed, crashed, restarted); promoted is emitted by a Redis server`},
		{"a server event on a client", "event: key-set, node: M", "event: key-set, node: c1",
			`faults[0].on.event: c1 never emits event key-set: "c1" is a client (kind client, whose events are: acquire-start, acquired, released, lock-lost, resource-read, resource-write, crashed, restarted); key-set is emitted by a Redis server, a memcached server`},
		{"an unknown event", "event: key-set, node: M", "event: exploded, node: M",
			`faults[0].on.event: unknown event "exploded" (known: acquire-start, acquired, released, lock-lost, resource-read, resource-write, key-set, promoted, key-evicted, row-locked, committed, conn-closed, crashed, restarted)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, withKindTriggers, tt.old)
			_, err := Parse("t.yaml", []byte(strings.Replace(withKindTriggers, tt.old, tt.new, 1)))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
