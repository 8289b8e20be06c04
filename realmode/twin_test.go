package realmode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/realmode/lazyfs"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// twinParallel is how many twin scenarios run at once: real runs mostly
// sleep in real time, and each has its own servers on its own addresses,
// but starting thirty sets of servers at once starves the runs already
// under way of CPU for longer than a Redlock node timeout (50ms).
const twinParallel = 10

// twinReruns is how many times a scenario that disagreed (or could not run)
// runs again, beside only the others that did, before it fails. NB: that
// light load holds within this package only: under `go test ./...` the other packages' suites share the
// machine, and real mode lives in real time (a Redlock node timeout is
// 50 ms), so a second rerun covers a rerun that met another suite's peak.
// Every disagreement is logged, and a scenario that agrees in none of its
// 1+twinReruns runs fails: a story that is fragile in real time is fixed
// in the scenario or the model, never here.
const twinReruns = 2

// TestTwinSuite runs simrun twin's comparison on every catalogue scenario
// marked twin: true, twinParallel at a time, and fails on any scenario
// whose real verdicts differ from the simulator's. A scenario that
// disagrees is run again (with the others that disagreed, not with the
// whole suite), up to twinReruns times, before it fails (real timing is noisy under load; every disagreement is logged). A
// disagreement is fixed in the model or in the scenario's story, never
// here.
func TestTwinSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("the twin suite runs real servers for about five minutes; skipped with -short")
	}
	needServers(t)
	cat, err := scenarios.Catalogue()
	require.NoError(t, err)
	var marked []*scenarios.Scenario
	for _, s := range cat {
		if s.Twin && haveServers(t, s) {
			marked = append(marked, s)
		}
	}
	require.GreaterOrEqual(t, len(marked), 12, "issue 17 asks for at least 12 twin-checked scenarios")
	// Longest first: the suite's wall time is about the total of the
	// durations over twinParallel only when no long run starts last
	// (issue 23 asks for under 6 minutes in CI).
	sort.SliceStable(marked, func(i, j int) bool { return marked[i].Duration > marked[j].Duration })
	results := make([]*TwinResult, len(marked))
	errs := make([]error, len(marked))
	var wg sync.WaitGroup
	jobs := make(chan int, len(marked))
	for i := range marked {
		jobs <- i
	}
	close(jobs)
	for w := 0; w < twinParallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				results[i], errs[i] = Twin(context.Background(), marked[i], 1, t.TempDir(), nil)
			}
		}()
	}
	wg.Wait()
	// Each round runs the scenarios that disagreed (or could not run)
	// again, side by side: a handful at once, not the suite's load, and
	// the round lasts one run of the longest of them, not their sum (issue
	// 23 asks for the suite under 6 minutes in CI).
	for attempt := 1; attempt <= twinReruns; attempt++ {
		var again sync.WaitGroup
		for i, s := range marked {
			if errs[i] == nil && results[i].Agree {
				continue
			}
			if r := results[i]; errs[i] != nil {
				t.Logf("%s could not run (run %d: %v); running it again", s.Name, attempt, errs[i])
			} else {
				t.Logf("%s disagreed (run %d: real %v: %s); running it again",
					s.Name, attempt, r.Real[0].Verdicts, r.Real[0].Explanation)
			}
			again.Add(1)
			go func(i int, s *scenarios.Scenario) {
				defer again.Done()
				results[i], errs[i] = Twin(context.Background(), s, 1, t.TempDir(), nil)
			}(i, s)
		}
		again.Wait()
	}
	for i, s := range marked {
		t.Run(s.Name, func(t *testing.T) {
			require.NoError(t, errs[i], "real mode must be able to run every marked scenario")
			r := results[i]
			require.Len(t, r.Real, 1)
			assert.True(t, r.Agree, "%s: simulator %v, real %v\nsimulator: %s\nreal: %s\nreplay: simrun twin %s",
				s.Name, r.Simulator.Verdicts, r.Real[0].Verdicts,
				r.Simulator.Explanation, r.Real[0].Explanation, s.Name)
		})
	}
}

// TestRealRunLeavesNoServer runs a short scenario with a crash and a
// restart and checks that every server process it started is gone.
func TestRealRunLeavesNoServer(t *testing.T) {
	needServers(t)
	src := `
name: leftovers
duration: 2s
redis:
  - name: A
  - name: B
    replicaof: A
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 5s}
    workload: {start: 0s, cycles: 0, hold: 100ms, think: 100ms}
faults:
  - {at: 500ms, kind: crash, node: A, restart_after: 500ms}
  - {at: 1200ms, kind: pause, node: B, for: 10s}
`
	s, err := scenarios.Parse("leftovers.yaml", []byte(src))
	require.NoError(t, err)
	var pids []int
	o, err := run(context.Background(), s, 1, Options{Dir: t.TempDir()}, func(rt *runtime) {
		for _, srv := range rt.servers {
			pids = append(pids, srv.pid())
		}
	})
	require.NoError(t, err)
	assert.Equal(t, checker.Holds, o.Verdicts.Of(checker.LockSafety))
	require.Len(t, pids, 2)
	for _, pid := range pids {
		assert.False(t, alive(pid), fmt.Sprintf("server pid %d still runs after Run returned", pid))
	}
}

// TestRealRunInterrupted: a cancelled context ends the run with
// ErrInterrupted and stops the servers.
func TestRealRunInterrupted(t *testing.T) {
	needServers(t)
	s, err := scenarios.Builtin("get-del-release")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var pids []int
	_, err = run(ctx, s, 1, Options{Dir: t.TempDir()}, func(rt *runtime) {
		for _, srv := range rt.servers {
			pids = append(pids, srv.pid())
		}
		cancel()
	})
	require.ErrorIs(t, err, ErrInterrupted)
	require.NotEmpty(t, pids)
	for _, pid := range pids {
		assert.False(t, alive(pid), "server pid %d still runs after an interrupted run", pid)
	}
}

// TestRealRunInterruptedWhileStarting: a context ended before the clock
// starts (Ctrl-C while a replica syncs) also stops every server.
func TestRealRunInterruptedWhileStarting(t *testing.T) {
	needServers(t)
	s, err := scenarios.Builtin("failover-replica-clock-synced")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var pids []int
	opt := Options{Dir: t.TempDir()}
	opt.serverStarted = func(srv *server) {
		pids = append(pids, srv.pid())
		cancel() // after the first server, before the replica syncs
	}
	_, err = run(ctx, s, 1, opt, nil)
	require.ErrorIs(t, err, ErrInterrupted)
	require.NotEmpty(t, pids)
	for _, pid := range pids {
		assert.False(t, alive(pid), "server pid %d still runs after an interrupted start", pid)
	}
}

// TestRealMemcachedAndMySQL runs a short scenario on a real memcached and
// a real mariadbd with a crash and restart of each, and triggers on each
// server's event as its gateway sees it: the triggers fire after the
// event, the crash of memcached loses the lock item (a restarted
// memcached is empty), the row committed on MariaDB survives its crash, and
// every server process the run started is gone afterwards.
func TestRealMemcachedAndMySQL(t *testing.T) {
	needServers(t)
	src := `
name: kinds
duration: 4s
memcached:
  - name: M
mysql:
  - name: D
clients:
  - name: c1
    lock: {algorithm: memcached-add, node: M}
    workload: {start: 0s, cycles: 1, hold: 3500ms}
  - name: c2
    lock: {algorithm: memcached-add, node: M}
    workload: {start: 2s, cycles: 1, hold: 200ms}
  - name: c3
    lock: {algorithm: mysql-insert, node: D, table: locks}
    workload: {start: 0s, cycles: 1, hold: 100ms}
  - name: c4
    lock: {algorithm: mysql-insert, node: D, table: locks}
    workload: {start: 3s, cycles: 1, hold: 100ms}
faults:
  - on: {event: key-set, node: M}
    after: 1s
    kind: crash
    node: M
    restart_after: 200ms
  - on: {event: row-locked, node: D}
    after: 500ms
    kind: crash
    node: D
    restart_after: 100ms
  - on: {event: acquired, client: c3}
    after: 10ms
    kind: crash
    node: c3
`
	s, err := scenarios.Parse("kinds.yaml", []byte(src))
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
	require.Len(t, pids, 2)
	for _, pid := range pids {
		assert.False(t, alive(pid), "server PID %d still running after the run", pid)
	}
	stored := func(proc string, kind string) sim.Time {
		for _, e := range o.Trace {
			if e.Proc == proc && string(e.Kind) == kind {
				return e.At
			}
		}
		t.Fatalf("no %s event of %s", kind, proc)
		return 0
	}
	crashes := map[string]sim.Time{}
	for _, f := range o.History.Faults {
		if f.Kind == "crash" {
			crashes[f.Targets[0]] = f.At
		}
	}
	require.Contains(t, crashes, "M")
	require.Contains(t, crashes, "D")
	assert.Equal(t, stored("M", "item-stored")+sim.Time(time.Second), crashes["M"], "the trigger on M's key-set (item-stored)")
	assert.Equal(t, stored("D", "mysql-row-locked")+sim.Time(500*time.Millisecond), crashes["D"], "the trigger on D's row-locked")
	// memcached lost c1's item in its restart, so c2 locked while c1 held;
	// the row c3 committed survived D's crash, so c4 never locked.
	assert.Equal(t, checker.Violated, o.Verdicts.Of(checker.LockSafety), "%v", o.Violations)
	acquired := map[string]bool{}
	for _, e := range o.Trace {
		if e.Kind == sim.KindAcquired {
			acquired[e.Proc] = true
		}
	}
	assert.True(t, acquired["c2"], "c2 added the lock after memcached's restart")
	assert.False(t, acquired["c4"], "c3's committed row survived mariadbd's crash")
}

// TestTwinCoverage: every catalogue scenario whose processes real mode can
// all run (each kind has a launcher) is twin-checked (twin: true, and real
// mode accepts it) or says in one line why not (not_twin), never both
// (issue 23). A scenario of a system real mode does not run yet (a kind
// without a launcher, a Redis Cluster) is left out: Check refuses it as a
// whole.
func TestTwinCoverage(t *testing.T) {
	cat, err := scenarios.Catalogue()
	require.NoError(t, err)
	covered := 0
	for _, s := range cat {
		var ue *UnsupportedError
		if err := Check(s); errors.As(err, &ue) && ue.System {
			continue // a system real mode does not run (yet)
		}
		covered++
		switch {
		case s.Twin:
			assert.NoError(t, Check(s), "%s is twin: true, but real mode refuses it", s.Name)
		case s.NotTwin == "":
			assert.Fail(t, "not twin-checked", "%s: real mode runs its servers, but it is neither twin: true nor says why not (not_twin: <one line>)", s.Name)
		}
	}
	assert.Greater(t, covered, 40, "the catalogue's Redis, memcached and MySQL scenarios")
}

// TestRealPowerLossDropsUnsyncedAOF: a power loss of a real Redis whose AOF
// is never fsynced (appendfsync no) loses the lock key, as the model's
// does, because its data directory is on lazyfs (a kill keeps the key: the
// page cache survives a process); the run leaves no mount behind.
func TestRealPowerLossDropsUnsyncedAOF(t *testing.T) {
	needServers(t)
	if err := lazyfs.Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("a power loss with a lazy AOF needs FUSE under CI=true: %v", err)
		}
		t.Skipf("SKIPPED: %v", err)
	}
	src := `
name: lazy
duration: 2s
redis:
  - name: A
    appendonly: true
    appendfsync: "no"
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 30s}
    workload: {start: 0s, cycles: 1, hold: 1800ms}
  - name: c2
    lock: {algorithm: redis-single, node: A, ttl: 30s}
    workload: {start: 1s, cycles: 1, hold: 100ms}
faults:
  - on: {event: key-set, node: A}
    after: 100ms
    kind: crash
    node: A
    mode: power
    restart_after: 100ms
`
	s, err := scenarios.Parse("lazy.yaml", []byte(src))
	require.NoError(t, err)
	dir := t.TempDir()
	o, err := run(context.Background(), s, 1, Options{Dir: dir}, nil)
	require.NoError(t, err)
	acquired := map[string]bool{}
	for _, e := range o.Trace {
		if e.Kind == sim.KindAcquired {
			acquired[e.Proc] = true
		}
	}
	assert.True(t, acquired["c1"])
	assert.True(t, acquired["c2"], "A restarted without c1's key: its AOF write was never fsynced")
	// Only this run's mounts: other tests and processes on the machine
	// mount lazy file systems of their own meanwhile (a run of
	// cmd/simrun's tests beside this one failed it).
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	for _, line := range strings.Split(string(mounts), "\n") {
		assert.False(t, strings.Contains(line, "lazyfs") && strings.Contains(line, " "+dir+"/"), "the run left its lazy file system mounted: %s", line)
	}
}
