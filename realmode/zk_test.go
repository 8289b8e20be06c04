package realmode

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// TestRealZooKeeperFaults runs the ZooKeeper lock on a real standalone
// ZooKeeper through the gateway, with each fault real mode applies to it:
//
//   - a 500ms SIGSTOP of the server, shorter than the clients' read
//     timeout (2/3 of 2s): nobody disconnects;
//   - a 3s partition of c1 from the server, longer than its 2s session
//     (plus a 500ms tick): the real server expires the session, and c1
//     learns it when it reconnects after the heal;
//   - a kill and restart of the server 1s later: ZooKeeper recovers its
//     sessions from its transaction log (touched at the restart), so c1
//     reconnects to the session it had and nothing expires. The run goes
//     on 12s past the restart: a JVM took 3 s to 5.2 s to restart on the
//     loaded 2-core machine (2.6 s to 5 s to start), where the 4 s this
//     test used to leave were not always enough.
//
// Every server process the run started is gone afterwards.
func TestRealZooKeeperFaults(t *testing.T) {
	src := `
name: zk-faults
duration: 20s
zookeeper: {tick_time: 500ms, lock_delay: 0s}
clients:
  - name: c1
    lock: {algorithm: zookeeper, session_timeout: 2s}
    workload: {start: 0s, cycles: 0, hold: 200ms, think: 300ms}
  - name: c2
    lock: {algorithm: zookeeper, session_timeout: 2s}
    workload: {start: 0s, cycles: 0, hold: 200ms, think: 300ms}
faults:
  - {at: 1s, kind: pause, node: zk, for: 500ms}
  - {at: 2500ms, kind: partition, groups: [[c1], [zk]], heal_after: 3s}
  - {at: 7s, kind: crash, node: zk, restart_after: 1s}
`
	s, err := scenarios.Parse("zk-faults.yaml", []byte(src))
	require.NoError(t, err)
	if !haveServers(t, s) {
		return
	}
	var pids []int
	o, err := run(context.Background(), s, 1, Options{Dir: t.TempDir()}, func(rt *runtime) {
		for _, srv := range rt.servers {
			pids = append(pids, srv.pid())
		}
	})
	require.NoError(t, err)
	defer func() {
		if !t.Failed() {
			return
		}
		for _, e := range o.Trace {
			if e.Kind == sim.KindAcquired || e.Kind == sim.KindFault || strings.HasPrefix(e.Text, "zookeeper:") {
				t.Logf("%v %s %s %s", e.At, e.Proc, e.Kind, e.Text)
			}
		}
	}()
	require.Len(t, pids, 1)
	for _, pid := range pids {
		assert.False(t, alive(pid), "ZooKeeper PID %d still running after the run", pid)
	}
	notes := func(proc, what string, from, to time.Duration) []sim.Time {
		var at []sim.Time
		for _, e := range o.Trace {
			if e.Proc == proc && e.At >= sim.At(from) && e.At < sim.At(to) && strings.Contains(e.Text, what) {
				at = append(at, e.At)
			}
		}
		return at
	}
	acquired := func(proc string, from, to time.Duration) int {
		n := 0
		for _, e := range o.Trace {
			if e.Proc == proc && e.Kind == sim.KindAcquired && e.At >= sim.At(from) && e.At < sim.At(to) {
				n++
			}
		}
		return n
	}
	assert.Empty(t, notes("c1", "zookeeper: disconnected", 0, 2500*time.Millisecond), "a 500ms pause of the server is within the read timeout")
	assert.Empty(t, notes("c2", "zookeeper: disconnected", 0, 2500*time.Millisecond))
	assert.NotEmpty(t, notes("c1", "zookeeper: disconnected", 2500*time.Millisecond, 5500*time.Millisecond), "c1's read timeout fires during the partition")
	assert.NotEmpty(t, notes("c1", "zookeeper: session expired", 5500*time.Millisecond, 7*time.Second), "the real server expired c1's session during the 3s partition; c1 learns it after the heal")
	assert.Empty(t, notes("c2", "zookeeper: session expired", 0, 20*time.Second), "c2 was never cut off for a session timeout")
	assert.Empty(t, notes("c1", "zookeeper: session expired", 7*time.Second, 20*time.Second), "ZooKeeper keeps its sessions across a kill and restart")
	assert.Empty(t, notes("c2", "zookeeper: session expired", 7*time.Second, 20*time.Second))
	assert.NotEmpty(t, notes("c1", "zookeeper: reconnected", 8*time.Second, 20*time.Second), "c1 reconnects to its session after the restart")
	assert.Positive(t, acquired("c1", 0, 2500*time.Millisecond)+acquired("c2", 0, 2500*time.Millisecond), "the lock works on the real server")
	assert.Positive(t, acquired("c1", 8*time.Second, 20*time.Second)+acquired("c2", 8*time.Second, 20*time.Second), "and again after the restart")
	assert.Equal(t, checker.Holds, o.Verdicts.Of(checker.LockSafety), "%v", o.Violations)
}
