package scenarios

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
)

const minimal = `name: t
duration: 10s
redis:
  - name: A
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 5s}
    workload: {start: 0s, cycles: 1, hold: 1s}
`

func TestParseMinimal(t *testing.T) {
	s, err := Parse("t.yaml", []byte(minimal))
	require.NoError(t, err)
	assert.Equal(t, "t", s.Name)
	assert.Equal(t, uint64(1), s.Seed)
	require.Len(t, s.Clients, 1)
	assert.Equal(t, "redis-single", s.Clients[0].Lock.Algorithm)
	assert.Equal(t, "storage", s.Resource.Name)
	assert.Equal(t, []string{"A", "storage", "c1"}, s.Processes())
}

func TestParseNamesAndTokenOrder(t *testing.T) {
	y := strings.Replace(minimal, "- name: c1", "- name: Client_1.b-2", 1) + "expect: {token_order: not-used}\n"
	s, err := Parse("t.yaml", []byte(y))
	require.NoError(t, err)
	assert.Equal(t, "Client_1.b-2", s.Clients[0].Name)
	assert.Equal(t, checker.NotUsed, s.Expect.Of(checker.TokenOrder))
}

// TestParseErrors checks that every user error names the file, the line and
// the field, and says what is allowed.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // substrings of the error
	}{
		{"unknown top-level field", minimal + "colour: blue\n", []string{"t.yaml:9: colour: unknown field \"colour\""}},
		{"missing duration", strings.Replace(minimal, "duration: 10s\n", "", 1), []string{"duration: required field is missing"}},
		{"bad name", strings.Replace(minimal, "name: t\n", "name: Bad_Name\n", 1), []string{"t.yaml:1: name:", "a-z, 0-9"}},
		{"negative duration", strings.Replace(minimal, "duration: 10s", "duration: -1s", 1), []string{"t.yaml:2: duration: must be positive"}},
		{"duration without unit", strings.Replace(minimal, "duration: 10s", "duration: 10", 1), []string{"t.yaml:2: duration:", "needs a unit"}},
		{"unknown algorithm", strings.Replace(minimal, "redis-single", "redis-magic", 1), []string{"t.yaml:7: clients[0].lock.algorithm: unknown algorithm \"redis-magic\"", "redlock"}},
		{"param of another algorithm", strings.Replace(minimal, "ttl: 5s}", "ttl: 5s, lease: 3s}", 1), []string{"t.yaml:7: clients[0].lock.lease: redis-single takes no parameter \"lease\""}},
		{"unknown node", strings.Replace(minimal, "node: A", "node: F", 1), []string{"clients[0].lock.node: unknown process \"F\" (known: A, c1, storage)"}},
		{"node of the wrong kind", strings.Replace(minimal, "node: A", "node: c1", 1), []string{"clients[0].lock.node: \"c1\" is a client; expected a Redis server (A)"}},
		{"negative ttl", strings.Replace(minimal, "ttl: 5s", "ttl: -5s", 1), []string{"clients[0].lock.ttl"}},
		{"duplicate names", minimal + "  - name: A\n    lock: {algorithm: redis-single, node: A}\n", []string{"t.yaml:9: clients[1].name: name \"A\" is already used by a Redis server"}},
		{"fault on unknown process", minimal + "faults:\n  - {at: 1s, kind: pause, node: Z, for: 1s}\n", []string{"t.yaml:10: faults[0].node: unknown process \"Z\""}},
		{"unknown fault kind", minimal + "faults:\n  - {at: 1s, kind: explode, node: A}\n", []string{"faults[0].kind: unknown fault kind \"explode\"", "clock-jump"}},
		{"empty fault kind", minimal + "faults:\n  - {at: 1s, kind: \"\", node: A}\n", []string{"faults[0].kind: unknown fault kind \"\"", "clock-jump"}},
		{"field of another fault kind", minimal + "faults:\n  - {at: 1s, kind: pause, node: A, for: 1s, by: 2s}\n", []string{"faults[0].by: unknown field \"by\""}},
		// Worlds that cannot mean anything (issue 25).
		{"empty clients", strings.Replace(minimal, minimal[strings.Index(minimal, "clients:"):], "clients: []\n", 1), []string{"t.yaml:5: clients: the list is empty"}},
		{"no clients", minimal[:strings.Index(minimal, "clients:")], []string{"clients: required field is missing: the world has no client"}},
		{"workload starts after the end", strings.Replace(minimal, "start: 0s", "start: 10s", 1), []string{"t.yaml:8: clients[0].workload.start: 10s is not before the end of the run (duration 10s): c1 would never start"}},
		{"fencing without tokens", minimal + "resource: {fencing: monotonic}\n", []string{"t.yaml:9: resource.fencing: monotonic rejects every write without a fencing token, and no client carries one"}},
		{"jump without a unit", minimal + "faults:\n  - {at: 1s, kind: clock-jump, node: A, by: 30}\n", []string{"t.yaml:10: faults[0].by: \"30\" needs a unit"}},
		{"fault after the end", minimal + "faults:\n  - {at: 20s, kind: pause, node: A, for: 1s}\n", []string{"faults[0].at: 20s is after the end of the run", "can never fire"}},
		{"trigger on unknown event", minimal + "faults:\n  - {on: {event: exploded, client: c1}, kind: pause, node: A, for: 1s}\n", []string{"faults[0].on.event: unknown event \"exploded\""}},
		{"client event on a node", minimal + "faults:\n  - {on: {event: acquired, node: A}, kind: pause, node: A, for: 1s}\n", []string{"faults[0].on.node: \"A\" is a Redis server; expected a client"}},
		{"no trigger", minimal + "faults:\n  - {kind: heal}\n", []string{"faults[0]: needs a trigger"}},
		// The same-instant order choice (issue 27).
		{"order over a range", minimal + "faults:\n  - {at: 1s..2s, kind: order, node: A, from: c1}\n", []string{"t.yaml:10: faults[0].at: fault kind order acts at one instant, not in a range (1s..2s)"}},
		{"order on a trigger", minimal + "faults:\n  - {on: {event: acquired, client: c1}, kind: order, node: A}\n", []string{"t.yaml:10: faults[0].on: fault kind order acts at one instant, given by at:"}},
		{"order of an unknown sender", minimal + "faults:\n  - {at: 1s, kind: order, node: A, from: Z}\n", []string{"t.yaml:10: faults[0].from: unknown process \"Z\""}},
		{"order of a timer's sender", minimal + "faults:\n  - {at: 1s, kind: order, node: A, event: timer, from: c1}\n", []string{"t.yaml:10: faults[0].from: names the sender of a delivery; a timer has none"}},
		{"order of an unknown event", minimal + "faults:\n  - {at: 1s, kind: order, node: A, event: soon}\n", []string{"t.yaml:10: faults[0].event: unknown event \"soon\" (allowed: any, timer)"}},
		{"both triggers", minimal + "faults:\n  - {at: 1s, on: {event: acquired, client: c1}, kind: heal}\n", []string{"faults[0]: give either at or on"}},
		{"promote a master", minimal + "faults:\n  - {at: 1s, kind: promote, node: A}\n", []string{"faults[0].node: \"A\" is not a replica"}},
		{"partition with one group", minimal + "faults:\n  - {at: 1s, kind: partition, groups: [[A, c1]]}\n", []string{"faults[0].groups: needs at least two groups"}},
		{"partition name twice", minimal + "faults:\n  - {at: 1s, kind: partition, groups: [[A, c1], [c1]]}\n", []string{"is in two groups"}},
		// Fields read through faults' kind table: required, typed, checked.
		{"missing required fault field", minimal + "faults:\n  - {at: 1s, kind: drop, from: A}\n", []string{"t.yaml:10: faults[0].to: required for kind drop", "faults[0].count: required for kind drop"}},
		{"unknown crash mode", minimal + "faults:\n  - {at: 1s, kind: crash, node: A, mode: gentle}\n", []string{"t.yaml:10: faults[0].mode: unknown crash mode \"gentle\" (allowed: process, power, clean)"}},
		{"drop count zero", minimal + "faults:\n  - {at: 1s, kind: drop, from: A, to: c1, count: 0}\n", []string{"faults[0].count: must be at least 1, got 0"}},
		{"drop on a loop", minimal + "faults:\n  - {at: 1s, kind: drop, from: A, to: A, count: 1}\n", []string{"faults[0].to: a link needs two different processes"}},
		{"delay on unknown process", minimal + "faults:\n  - {at: 1s, kind: delay, from: A, to: Z, by: 1s, for: 1s}\n", []string{"faults[0].to: unknown process \"Z\""}},
		{"twin and not_twin", minimal + "twin: true\nnot_twin: needs a filesystem that drops unsynced writes\n", []string{"not_twin: a scenario is twin: true or says why not"}},
		{"empty not_twin", minimal + "not_twin: \" \"\n", []string{"not_twin: must say why"}},
		{"drift out of range", minimal + "faults:\n  - {at: 1s, kind: clock-drift, node: A, rate: -1}\n", []string{"faults[0].rate: drift -1 out of range"}},
		{"pause of zero", minimal + "faults:\n  - {at: 1s, kind: pause, node: A, for: 0s}\n", []string{"faults[0].for: must be positive"}},
		{"clock jump of the wrong type", minimal + "faults:\n  - {at: 1s, kind: clock-jump, node: A, by: soon}\n", []string{"faults[0].by:"}},
		{"bad latency range", strings.Replace(minimal, "redis:", "network: {latency: 5ms..1ms}\nredis:", 1), []string{"network.latency: range \"5ms..1ms\" is empty"}},
		{"loss out of range", strings.Replace(minimal, "redis:", "network: {loss: 2}\nredis:", 1), []string{"network.loss: must be a probability"}},
		{"quorum impossible", minimal + "sentinel: {master: A, count: 3, quorum: 4}\n", []string{"sentinel.quorum: 4 can never be reached with 3 sentinels"}},
		{"too many sentinels", minimal + "sentinel: {master: A, count: 100000000}\n", []string{"sentinel.count: must be between 1 and 99"}},
		{"bad expect", minimal + "expect: {lock_safety: fine}\n", []string{"expect.lock_safety: unknown verdict \"fine\" (allowed: holds, violated, not-used)"}},
		{"scenario name starting with a digit", strings.Replace(minimal, "name: t\n", "name: 1t\n", 1), []string{"t.yaml:1: name:", "starting with a letter"}},
		{"process name with markup", strings.Replace(minimal, "- name: c1", "- name: \"<img src=x onerror=alert(1)>\"", 1), []string{"t.yaml:6: clients[0].name: \"<img src=x onerror=alert(1)>\" is not a valid name", "starting with a letter"}},
		{"process name with a space", strings.Replace(minimal, "- name: A\n", "- name: \"A B\"\n", 1), []string{"t.yaml:4: redis[0].name: \"A B\" is not a valid name"}},
		{"process name starting with a dot", strings.Replace(minimal, "- name: A\n", "- name: .A\n", 1), []string{"redis[0].name: \".A\" is not a valid name"}},
		{"bad token order expectation", minimal + "expect: {token_order: fine}\n", []string{"t.yaml:9: expect.token_order: unknown verdict \"fine\" (allowed: holds, violated, not-used)"}},
		{"misspelt property in expect", minimal + "expect:\n  lock_safety: holds\n  token_ordr: holds\n", []string{"t.yaml:11: expect.token_ordr: unknown property \"token_ordr\" (known: liveness, liveness_window, lock_safety, max_wait, min_grants, resource_safety, token_order); did you mean token_order?"}},
		// expect.liveness_window (issue 25): bad values at file:line.
		{"liveness window without liveness", minimal + "expect:\n  lock_safety: holds\n  liveness_window: {after: 1s, within: 2s}\n", []string{"t.yaml:11: expect.liveness_window: only applies with expect.liveness"}},
		{"liveness window after no such fault", minimal + "expect:\n  liveness: holds\n  liveness_window:\n    after: faults[3]\n    within: 2s\n", []string{"t.yaml:12: expect.liveness_window.after: faults[3]: the schedule has 0 fault(s)"}},
		{"liveness window after nonsense", minimal + "expect:\n  liveness: holds\n  liveness_window:\n    after: soon\n    within: 2s\n", []string{"t.yaml:12: expect.liveness_window.after: \"soon\" is neither a true time (10s) nor a fault of the schedule (faults[N])"}},
		{"liveness window after the end", minimal + "expect:\n  liveness: holds\n  liveness_window: {after: 10s, within: 2s}\n", []string{"t.yaml:11: expect.liveness_window.after: 10s is not before the end of the run (duration 10s)"}},
		{"liveness window without within", minimal + "expect:\n  liveness: holds\n  liveness_window: {after: 1s}\n", []string{"t.yaml:11: expect.liveness_window.within: required"}},
		{"liveness window without after", minimal + "expect:\n  liveness: holds\n  liveness_window: {within: 1s}\n", []string{"t.yaml:11: expect.liveness_window.after: required"}},
		{"liveness window within zero", minimal + "expect:\n  liveness: holds\n  liveness_window: {after: 1s, within: 0s}\n", []string{"t.yaml:11: expect.liveness_window.within: must be positive"}},
		{"liveness window and max_wait", minimal + "expect:\n  liveness: holds\n  max_wait: 3s\n  liveness_window: {after: 1s, within: 2s}\n", []string{"t.yaml:11: expect.max_wait: and expect.liveness_window.within both bound the waits"}},
		{"liveness window's unknown field", minimal + "expect:\n  liveness: holds\n  liveness_window: {after: 1s, within: 2s, until: 5s}\n", []string{"t.yaml:11: expect.liveness_window.until"}},
		{"property in expect far from any", minimal + "expect: {safety: holds}\n", []string{"t.yaml:9: expect.safety: unknown property \"safety\" (known: liveness, liveness_window, lock_safety, max_wait, min_grants, resource_safety, token_order)"}},
		{"bad fencing", minimal + "resource: {fencing: strong}\n", []string{"resource.fencing: unknown mode \"strong\""}},
		{"yaml syntax", "name: t\nduration: [\n", []string{"t.yaml:", "invalid YAML"}},
		{"not a mapping", "- a\n- b\n", []string{"must be a mapping"}},
		{"replicaof cycle", strings.Replace(minimal, "  - name: A\n", "  - name: A\n    replicaof: B\n  - name: B\n    replicaof: A\n", 1), []string{"t.yaml:5: redis[0].replicaof: replication cycle A -> B -> A", "none accepts writes"}},
		{"longer replicaof cycle", strings.Replace(minimal, "  - name: A\n", "  - name: A\n  - name: B\n    replicaof: D\n  - name: C\n    replicaof: B\n  - name: D\n    replicaof: C\n", 1), []string{"redis[1].replicaof: replication cycle B -> D -> C -> B"}},
		{"latency beyond the run", strings.Replace(minimal, "redis:", "network: {latency: 1000h}\nredis:", 1), []string{"t.yaml:3: network.latency: 1000h0m0s is at or beyond the run's duration (10s)"}},
		{"round trip beyond the run", strings.Replace(minimal, "redis:", "network: {latency: 6s}\nredis:", 1), []string{"network.latency: a round trip takes at least 12s", "no request can be answered"}},
		{"latency range reaching the end", strings.Replace(minimal, "redis:", "network: {latency: 1ms..1h}\nredis:", 1), []string{"network.latency: the range reaches 1h0m0s"}},
		{"link latency beyond the run", strings.Replace(minimal, "redis:", "network: {links: [{from: c1, to: A, extra: 10s}]}\nredis:", 1), []string{"network.links[0].extra: 10s plus the network latency", "nothing sent from c1 to A can arrive"}},
		{"alias without anchor meaning", "name: t\nduration: *nope\n", []string{"t.yaml:"}},
		{"merge of a scalar", minimal + "resource: {<<: *x}\nx: &x 1\n", []string{"t.yaml:"}},
		{"alias bomb", "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n", []string{"t.yaml:", "the YAML aliases expand to more than 100000 nodes beyond the 62 written in the file"}},
		// Issue 33: a file of many nodes and no alias blamed aliases.
		{"too many nodes written", minimal + "faults:\n" + strings.Repeat("  - {at: 1s, kind: heal}\n", 25000), []string{"t.yaml:1: the file holds 125034 YAML nodes, more than a scenario may (100000;"}},
		{"drift out of range", strings.Replace(minimal, "  - name: A\n", "  - name: A\n    clock: {drift: -2}\n", 1), []string{"redis[0].clock.drift", "drift -2 out of range"}},
		// ZooKeeper refuses to start with min above max, an unset bound
		// being 2 or 20 ticks (QuorumPeerConfig); was exit 3 at build.
		{"zk min above max", zkSection("  min_session_timeout: 30s\n  max_session_timeout: 10s\n"), []string{"t.yaml:4: zookeeper.min_session_timeout: 30s is above max_session_timeout 10s (both as written)"}},
		{"zk min above default max", zkSection("  tick_time: 2s\n  min_session_timeout: 50s\n"), []string{"t.yaml:5: zookeeper.min_session_timeout: 50s is above max_session_timeout 40s (max_session_timeout unset: 20 ticks of 2s)"}},
		{"zk default min above max", zkSection("  tick_time: 1s\n  max_session_timeout: 1s\n"), []string{"t.yaml:5: zookeeper.min_session_timeout: 2s is above max_session_timeout 1s (min_session_timeout unset: 2 ticks of 1s)"}},
		// Replica counts a replication group can never reach (every write
		// refused, every WAIT unacknowledged): were runs of failed attempts.
		{"wait_replicas without replicas", strings.Replace(minimal, "ttl: 5s}", "ttl: 5s, wait_replicas: 1}", 1), []string{"t.yaml:7: clients[0].lock.wait_replicas: WAIT 1 can never be acknowledged: A's replication group has no other server"}},
		{"wait_replicas above the group", strings.Replace(strings.Replace(minimal, "ttl: 5s}", "ttl: 5s, wait_replicas: 2}", 1), "  - name: A\n", "  - name: A\n  - {name: R, replicaof: A}\n", 1), []string{"clients[0].lock.wait_replicas: WAIT 2 can never be acknowledged: A's replication group has only 1 other server(s) (R)"}},
		{"min_replicas_to_write without replicas", strings.Replace(minimal, "  - name: A\n", "  - name: A\n    min_replicas_to_write: 1\n", 1), []string{"t.yaml:5: redis[0].min_replicas_to_write: A needs 1 good replica(s) to accept a write, but A's replication group has no other server"}},
		// Server durations the server cannot take, truncated before
		// (issue 32): each names the unit the server option takes.
		{"min_replicas_max_lag below a second", strings.Replace(minimal, "  - name: A\n", "  - name: A\n    min_replicas_max_lag: 1500ms\n", 1), []string{"t.yaml:5: redis[0].min_replicas_max_lag: min-replicas-max-lag takes whole seconds, got 1.5s"}},
		{"sentinel down_after in microseconds", strings.Replace(minimal, "  - name: A\n", "  - name: A\n  - {name: R, replicaof: A}\nsentinel: {master: A, count: 1, quorum: 1, down_after: 1500us}\n", 1), []string{"sentinel.down_after: down-after-milliseconds takes whole milliseconds, got 1.5ms"}},
		{"sentinel failover_timeout in microseconds", strings.Replace(minimal, "  - name: A\n", "  - name: A\n  - {name: R, replicaof: A}\nsentinel: {master: A, count: 1, quorum: 1, failover_timeout: 10001us}\n", 1), []string{"sentinel.failover_timeout: failover-timeout takes whole milliseconds, got 10.001ms"}},
		// Found by a new user (outsider3): silently accepted before.
		{"negative after", minimal + "faults:\n  - {on: {event: acquired, client: c1}, after: -5s, kind: pause, node: A, for: 1s}\n", []string{"t.yaml:10: faults[0].after: must not be negative"}},
		{"negative after range", minimal + "faults:\n  - {on: {event: acquired, client: c1}, after: -5s..1s, kind: pause, node: A, for: 1s}\n", []string{"t.yaml:10: faults[0].after: must not be negative"}},
		{"list for a single-valued parameter", strings.Replace(minimal, "ttl: 5s}", "ttl: [5s]}", 1), []string{"t.yaml:7: clients[0].lock.ttl: must be a single value, got a list"}},
		{"list for node", strings.Replace(minimal, "node: A,", "node: [A],", 1), []string{"t.yaml:7: clients[0].lock.node: must be a single value, got a list"}},
		{"server event on a client", minimal + "faults:\n  - {on: {event: key-set, client: c1}, kind: pause, node: A, for: 1s}\n", []string{"faults[0].on.event: c1 never emits event key-set: \"c1\" is a client (kind client, whose events are: acquire-start, acquired"}},
		{"zk tick below a millisecond", zkSection("  tick_time: 1ns\n"), []string{"t.yaml:4: zookeeper.tick_time: must be a whole number of milliseconds (zoo.cfg's value is an integer of ms), got 1ns"}},
		{"zk max session with a fraction", zkSection("  max_session_timeout: 10.5ms\n"), []string{"t.yaml:4: zookeeper.max_session_timeout: must be a whole number of milliseconds"}},
		{"zk negative tick", zkSection("  tick_time: -1s\n"), []string{"t.yaml:4: zookeeper.tick_time: must be positive (0 or omitted: 2s), got -1s"}},
		// A duration far beyond any lock story: refused, not run for hours.
		{"duration of 100,000 hours", strings.Replace(minimal, "duration: 10s", "duration: 100000h", 1), []string{"t.yaml:2: duration: 100000h is more than the 1000h of virtual time a scenario may run"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tt.yaml))
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// TestParseReportsEveryError: a file with a reading error and a
// validation error elsewhere reports both (the validation used to run
// only on a file read without errors), and a validation error that may
// follow from a misread entry is left out.
func TestParseReportsEveryError(t *testing.T) {
	t.Run("two errors in two entries", func(t *testing.T) {
		y := strings.Replace(minimal, "ttl: 5s", "ttl: -5s", 1) + "faults:\n  - {at: 1s, kind: pause, node: A, for: -1s}\n"
		_, err := Parse("t.yaml", []byte(y))
		require.Error(t, err)
		var errs Errors
		require.ErrorAs(t, err, &errs)
		assert.Contains(t, err.Error(), "t.yaml:10: faults[0].for: must be positive")
		assert.Contains(t, err.Error(), "t.yaml:7: clients[0].lock.ttl")
		assert.Len(t, errs, 2, err.Error())
	})
	t.Run("an entry misread reports its reading error only", func(t *testing.T) {
		// The fault's for is misread; the validation of the same fault
		// (its node) is not added, whatever it would say.
		y := minimal + "faults:\n  - {at: 1s, kind: pause, node: Z, for: -1s}\n"
		_, err := Parse("t.yaml", []byte(y))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "faults[0].for: must be positive")
		assert.NotContains(t, err.Error(), "unknown process \"Z\"")
	})
	t.Run("a top-level field misread reports the reading errors only", func(t *testing.T) {
		y := strings.Replace(minimal, "duration: 10s", "duration: 10", 1)
		y = strings.Replace(y, "ttl: 5s", "ttl: -5s", 1)
		_, err := Parse("t.yaml", []byte(y))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "duration:")
		assert.NotContains(t, err.Error(), "clients[0].lock.ttl", "the duration may be what the other checks stand on")
	})
}

// zkSection is a zookeeper scenario whose zookeeper: block has fields.
func zkSection(fields string) string {
	return "name: t\nduration: 10s\nzookeeper:\n" + fields + "clients:\n  - name: c1\n    lock: {algorithm: zookeeper}\n"
}

// TestParseAnchorsAndAliases: YAML anchors, aliases and merge keys read as
// the values they stand for (issue 18: they failed with "required field is
// missing"), and an error inside one names the field that uses it.
func TestParseAnchorsAndAliases(t *testing.T) {
	const withAliases = `name: t
duration: 10s
redis:
  - name: A
clients:
  - name: c1
    lock: &lock {algorithm: redis-single, node: A, ttl: 5s}
    workload: &work {start: 0s, cycles: 1, hold: 1s}
  - name: c2
    lock: *lock
    workload:
      <<: *work
      hold: 2s
`
	s, err := Parse("t.yaml", []byte(withAliases))
	require.NoError(t, err)
	require.Len(t, s.Clients, 2)
	assert.Equal(t, s.Clients[0].Lock, s.Clients[1].Lock)
	assert.Equal(t, s.Clients[0].Workload.Cycles, s.Clients[1].Workload.Cycles)
	assert.NotEqual(t, s.Clients[0].Workload.Hold, s.Clients[1].Workload.Hold, "an explicit field wins over the merged one")
	plain, err := Parse("t.yaml", []byte(strings.Replace(strings.Replace(withAliases, "lock: *lock", "lock: {algorithm: redis-single, node: A, ttl: 5s}", 1), "workload:\n      <<: *work\n      hold: 2s", "workload: {start: 0s, cycles: 1, hold: 2s}", 1)))
	require.NoError(t, err)
	assert.Equal(t, plain.Clients, s.Clients)

	_, err = Parse("t.yaml", []byte(strings.Replace(withAliases, "ttl: 5s", "ttl: soon", 1)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "clients[0].lock.ttl")
	assert.Contains(t, err.Error(), "clients[1].lock.ttl", "the alias is read as its own field")
	assert.NotContains(t, err.Error(), "required field is missing")
}

// FuzzParse checks that no input makes the loader panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add([]byte(minimal + "faults:\n  - {on: {event: acquired, client: c1}, after: 1s..2s, kind: clock-jump, node: A, by: +30s}\n"))
	f.Add([]byte("name: x\nduration: 1s\nclients: [{name: c, lock: {algorithm: redlock, nodes: [A]}}]\n"))
	names, _ := catalogueFS.ReadDir("catalogue")
	for _, n := range names {
		data, _ := catalogueFS.ReadFile("catalogue/" + n.Name())
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if err == nil && s == nil {
			t.Fatal("Parse returned neither a scenario nor an error")
		}
	})
}

// TestParseLivenessWindow: expect.liveness_window reads a true time or a
// fault of the schedule (quoted in a flow mapping), goes to the checker's
// options and the record's expected map, and a new fault schedule drops a
// window that named a fault of the old one.
func TestParseLivenessWindow(t *testing.T) {
	y := minimal + "faults:\n  - {at: 1s, kind: pause, node: A, for: 1s}\nexpect:\n  liveness: holds\n  liveness_window: {after: \"faults[0]\", within: 5s}\n"
	s, err := Parse("t.yaml", []byte(y))
	require.NoError(t, err)
	require.NotNil(t, s.Expect.LivenessWindow)
	assert.Equal(t, checker.LivenessWindow{Fault: 1, Within: 5 * time.Second}, *s.Expect.LivenessWindow)
	assert.Equal(t, "liveness holds (after faults[0], within 5s)", s.Expect.Text())
	o, err := Run(s, 1, Options{})
	require.NoError(t, err)
	assert.Equal(t, "after faults[0] within 5s", o.Expected[ExpectLivenessWindow])
	assert.Contains(t, o.LivenessNote, "judged over the window the scenario names (after faults[0] stopped acting, 2.000s to 10.000s), bound 5s")

	other, err := s.WithFaults([]faults.Spec{{At: &sim.Range{Lo: 2 * time.Second, Hi: 2 * time.Second}, Kind: "pause", Node: "c1", For: sim.Range{Lo: time.Second, Hi: time.Second}}})
	require.NoError(t, err)
	assert.Nil(t, other.Expect.LivenessWindow, "the window named a fault of the replaced schedule")
	again, err := FromNode(other.File, other.Tree())
	require.NoError(t, err)
	assert.Nil(t, again.Expect.LivenessWindow, "and so does its YAML")

	s, err = Parse("t.yaml", []byte(minimal+"expect:\n  liveness: holds\n  liveness_window:\n    after: 2s\n    within: 3s\n"))
	require.NoError(t, err)
	assert.Equal(t, checker.LivenessWindow{At: sim.At(2 * time.Second), Within: 3 * time.Second}, *s.Expect.LivenessWindow)
	timed, err := s.WithFaults(nil)
	require.NoError(t, err)
	assert.Equal(t, s.Expect.LivenessWindow, timed.Expect.LivenessWindow, "a window at a true time stays")
}

// TestSentinelCountErrorAlone: a refused sentinel.count is the one error
// about the sentinels, not followed by a quorum error against no sentinels
// ("allowed: 1..0", issue 33 item 12).
func TestSentinelCountErrorAlone(t *testing.T) {
	const base = "name: t\nduration: 10s\nredis:\n  - name: A\nsentinel: {master: A, %s}\nclients:\n  - name: c1\n    lock: {algorithm: redis-single, node: A, ttl: 5s}\n"
	for field, want := range map[string]string{
		"count: 100000000, quorum: 2": "t.yaml:5: sentinel.count: must be between 1 and 99, got 100000000",
		"count: 0":                    "t.yaml:5: sentinel.count: must be between 1 and 99, got 0",
		"names: [], quorum: 2":        "t.yaml:5: sentinel.names: lists no sentinel (allowed: 1 to 99 names)",
		"count: 3, quorum: 0":         "t.yaml:5: sentinel.quorum: must be at least 1, got 0",
		"count: 3, quorum: 4":         "t.yaml:5: sentinel.quorum: 4 can never be reached with 3 sentinels (allowed: 1..3)",
	} {
		_, err := Parse("t.yaml", []byte(fmt.Sprintf(base, field)))
		require.Error(t, err, field)
		assert.Equal(t, want, err.Error(), field)
	}
}
