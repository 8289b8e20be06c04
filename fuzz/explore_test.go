package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// baseRun runs the base of pl (its environment alone) and returns its
// trace.
func baseRun(t *testing.T, s *scenarios.Scenario, env []faults.Spec) []sim.Event {
	t.Helper()
	b, err := s.WithFaults(env)
	require.NoError(t, err)
	var evs []sim.Event
	_, err = scenarios.Run(b, b.Seed, scenarios.Options{Stream: true, TraceSink: func(e *sim.Event) { evs = append(evs, *e) }})
	require.NoError(t, err)
	return evs
}

// TestExploreRedlockClockJumpMargin explores every single clock jump of
// redlock-clock-jump (any node or client, before or after each of its
// actions, each size class) and checks each schedule's verdict against the
// margin the Redlock analysis gives (Kleppmann 2016; antirez, "Is Redlock
// safe?"): c1 holds A, B and C; c2 can reach only C, D and E. A jump of C's
// wall clock by J at time T after C stored c1's key (at set) makes the key
// expire at max(T, set + TTL - J) in true time. Lock safety is violated
// exactly when that is before c1 stops holding (its release reaches C, or
// its validity TTL - drift runs out) and c2 sends a SET to C in between:
// c2 then forms the majority C, D, E without c1. Every other jump holds: A
// and B are out of c2's reach, D and E never held c1's key, and a jump of
// a client or of the storage moves no key's expiry.
func TestExploreRedlockClockJumpMargin(t *testing.T) {
	s, err := scenarios.Builtin("redlock-clock-jump")
	require.NoError(t, err)
	cfg := ExploreConfig{Base: s, Kinds: []string{faults.KindClockJump}, Workers: 2}
	pl, err := PlanExplore(&cfg)
	require.NoError(t, err)
	require.Len(t, pl.Env, 2, "the two partitions stay")

	// What the analysis needs from the base run.
	evs := baseRun(t, s, pl.Env)
	var set, release sim.Time = -1, -1
	sends := map[string]bool{} // message numbers of c2's SETs to C
	var c2Sets []sim.Time
	var acquireStart sim.Time = -1
	for _, e := range evs {
		switch {
		case e.Kind == sim.KindAcquireStart && e.Proc == "c1" && acquireStart < 0:
			acquireStart = e.At
		case e.Kind == sim.KindSend && e.Proc == "c2" && e.Peer == "C" && strings.Contains(e.Text, " SET lock "):
			sends[strings.Fields(e.Text)[0]] = true
		case e.Kind == sim.KindDeliver && e.Proc == "C" && e.Peer == "c1":
			if set < 0 {
				set = e.At
			} else if release < 0 {
				release = e.At
			}
		case e.Kind == sim.KindDeliver && e.Proc == "C" && e.Peer == "c2" && sends[e.Text]:
			c2Sets = append(c2Sets, e.At)
		}
	}
	require.True(t, set > 0 && release > set && len(c2Sets) > 3, "base run: set %s release %s c2 SETs %v", set, release, c2Sets)
	lock := s.Clients[0].Lock
	drift := time.Duration(float64(lock.TTL)*lock.DriftFactor) + lock.DriftExtra
	validityEnd := acquireStart + sim.At(lock.TTL-drift)
	holdEnd := min(release, validityEnd)

	expect := func(sp faults.Spec) bool {
		T := sim.Time(sp.At.Lo)
		if sp.Node != "C" || sp.By <= 0 || T <= set {
			return false
		}
		expiry := max(T, set+sim.At(lock.TTL-sp.By))
		for _, a := range c2Sets {
			if a > expiry && a < holdEnd {
				return true
			}
		}
		return false
	}

	er, err := Explore(context.Background(), cfg, pl)
	require.NoError(t, err)
	require.Equal(t, pl.Total, er.Runs)
	require.Empty(t, er.Errors)
	violated, mismatches := 0, 0
	for i, v := range er.Violated {
		sp := pl.Candidates[pl.Schedule(i)[0]].Spec
		if v {
			violated++
		}
		if want := expect(sp); want != v && mismatches < 400 {
			mismatches++
			assert.Equal(t, want, v, "schedule %d: %s (set %s, release %s, validity end %s)", i, sp, set, release, validityEnd)
		}
	}
	t.Logf("%d schedules, %d violated", pl.Total, violated)
	assert.Greater(t, violated, 0)
	assert.Less(t, violated, pl.Total)
}

// TestExploreVerdictSets explores the single-pause space of a handful of
// scenarios, safe and unsafe, and asserts which schedules violate what: a
// model change that opens or closes a window changes a count here.
// Write-only fencing has a real window (testdata/fenced-write-only-pause.yaml):
// a pause of c1 before its read lets c1 and c2 read the same value
// (fencing-write-only-lost-update's lost update); single-gc-pause-fenced,
// whose resource marks itself on reads too, is clean
// (TestExploreFencedSingleRedisClean). A pause past the end of the run
// finds zk-session-expiry-pause's overlap that the classes around its
// session timeout miss (c2 acquires up to a tick after the timeout, once
// the pause outlasts ZooKeeper's expiry bucket).
func TestExploreVerdictSets(t *testing.T) {
	tests := []struct {
		base  string
		kinds []string
		total int
		want  map[string]int // "property signature" -> violating schedules
	}{
		{base: "single-gc-pause", kinds: []string{faults.KindPause}, total: 450, want: map[string]int{"lock-safety pause c1": 27}},
		{base: "single-gc-pause-fenced", kinds: []string{faults.KindPause}, total: 530, want: map[string]int{}},
		{base: "testdata/fenced-write-only-pause.yaml", kinds: []string{faults.KindPause}, total: 530, want: map[string]int{"resource-safety pause c1": 21}},
		// The bounded model of redlock.tla: one pause finds Kleppmann's
		// counterexample (the holder paused past the TTL, or its write held
		// up at the storage); fenced with a marking resource, none breaks
		// the resource.
		{base: "redlock-tla-bounded", kinds: []string{faults.KindPause}, total: 2015, want: map[string]int{"lock-safety pause c1": 36, "lock-safety pause storage": 15}},
		{base: "redlock-tla-bounded-fenced", kinds: []string{faults.KindPause}, total: 2119, want: map[string]int{}},
		{base: "zk-session-expiry-pause", kinds: []string{faults.KindPause}, total: 1064, want: map[string]int{"lock-safety pause c1": 6}},
		{base: "zk-session-expiry-pause-fenced", kinds: []string{faults.KindPause}, total: 1064, want: map[string]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.base, func(t *testing.T) {
			var s *scenarios.Scenario
			var err error
			if strings.HasSuffix(tt.base, ".yaml") {
				s, err = scenarios.Load(tt.base)
			} else {
				s, err = scenarios.Builtin(tt.base)
			}
			require.NoError(t, err)
			cfg := ExploreConfig{Base: s, Kinds: tt.kinds, Workers: 2}
			pl, err := PlanExplore(&cfg)
			require.NoError(t, err)
			er, err := Explore(context.Background(), cfg, pl)
			require.NoError(t, err)
			require.Empty(t, er.Errors)
			require.Empty(t, er.Inconclusive)
			assert.Equal(t, tt.total, er.Runs)
			got := map[string]int{}
			for _, g := range er.Groups {
				got[g.Kind+" "+g.Signature] = len(g.Schedules)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestExploreBadBounds: an unknown or unenumerable kind, K = 0, a space
// larger than MaxSchedules (saying how large) are refused.
func TestExploreBadBounds(t *testing.T) {
	s, err := scenarios.Builtin("single-gc-pause")
	require.NoError(t, err)
	tests := []struct {
		name string
		cfg  ExploreConfig
		err  string
	}{
		{"unknown kind", ExploreConfig{Kinds: []string{"meteor"}}, `cannot enumerate fault kind "meteor"`},
		{"order as a kind", ExploreConfig{Kinds: []string{"order"}}, "with --orders, not as a fault kind"},
		{"no kind", ExploreConfig{Kinds: []string{}}, "no fault kind given (allowed: clock-jump, pause, crash; or --orders alone)"},
		{"K = 0", ExploreConfig{MaxFaults: -1}, "--max-faults must be at least 1"},
		{"too large", ExploreConfig{Kinds: []string{faults.KindPause}, MaxFaults: 2, MaxSchedules: 1000}, "the space has 101475 schedules (450 single faults, at most 2 per schedule), more than --max-schedules 1000"},
		{"unknown target", ExploreConfig{Targets: []string{"zz"}}, `"zz" is not a process a fault can hit`},
		// Found by outsider3: "more than --max-schedules -1".
		{"negative max schedules", ExploreConfig{Kinds: []string{faults.KindPause}, MaxSchedules: -1}, "--max-schedules must be at least 1 (0: the default 20000), got -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Base = s
			_, err := PlanExplore(&tt.cfg)
			var bb *BadBounds
			require.ErrorAs(t, err, &bb)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}

func TestSpaceAndUnrank(t *testing.T) {
	assert.Equal(t, 5+10+10, spaceSize(5, 3))
	assert.Equal(t, -1, spaceSize(1<<40, 3))
	pl := &Plan{Candidates: make([]Candidate, 5), K: 2}
	pl.Total = spaceSize(5, 2)
	seen := map[string]bool{}
	for i := 0; i < pl.Total; i++ {
		c := pl.Schedule(i)
		require.NotEmpty(t, c)
		if len(c) == 2 {
			require.Less(t, c[0], c[1])
		}
		seen[strings.Trim(strings.Join(strings.Fields(strings.Trim(fmtInts(c), "[]")), ","), ",")] = true
	}
	assert.Len(t, seen, pl.Total, "every schedule is distinct")
}

func fmtInts(c []int) string {
	var b strings.Builder
	for _, x := range c {
		b.WriteString(" ")
		b.WriteString(string(rune('0' + x)))
	}
	return b.String()
}

// BenchmarkExplore measures schedules per second on the single-pause space
// of single-gc-pause (450 schedules), with pruning by world state (its
// groups run with a trace sink) and without.
func BenchmarkExplore(b *testing.B) {
	s, err := scenarios.Builtin("single-gc-pause")
	require.NoError(b, err)
	for _, noPrune := range []bool{false, true} {
		name := "state-pruning"
		if noPrune {
			name = "no-state-pruning"
		}
		b.Run(name, func(b *testing.B) {
			cfg := ExploreConfig{Base: s, Kinds: []string{faults.KindPause}, Workers: 1, NoStatePrune: noPrune}
			pl, err := PlanExplore(&cfg)
			require.NoError(b, err)
			b.ResetTimer()
			n := 0
			for i := 0; i < b.N; i++ {
				er, err := Explore(context.Background(), cfg, pl)
				require.NoError(b, err)
				n += er.Runs
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "schedules/s")
		})
	}
}

// TestEnvelopeRedlockClockJump: the smallest forward jump of any node of
// redlock-clock-jump at any placement that breaks lock safety is the one
// the Redlock margin gives, within one step: C's key, stored at set, must
// expire (set + TTL - J) before c2's last SET that reaches C while c1 still
// holds (before its release reaches C, or its validity TTL - elapsed -
// drift ends, drift = TTL x 0.01 + 2 ms): J = set + TTL - that SET's
// arrival, rounded up to the step.
func TestEnvelopeRedlockClockJump(t *testing.T) {
	s, err := scenarios.Builtin("redlock-clock-jump")
	require.NoError(t, err)
	r, err := Envelope(EnvelopeConfig{Base: s, Param: "clock-jump.by", Lo: time.Millisecond, Hi: 30 * time.Second, Step: time.Millisecond})
	require.NoError(t, err)
	require.True(t, r.Found)

	env := []faults.Spec{s.Faults[0], s.Faults[2]}
	evs := baseRun(t, s, env)
	var set, release, start sim.Time = -1, -1, -1
	sends := map[string]bool{}
	var c2Sets []sim.Time
	for _, e := range evs {
		switch {
		case e.Kind == sim.KindAcquireStart && e.Proc == "c1" && start < 0:
			start = e.At
		case e.Kind == sim.KindSend && e.Proc == "c2" && e.Peer == "C" && strings.Contains(e.Text, " SET lock "):
			sends[strings.Fields(e.Text)[0]] = true
		case e.Kind == sim.KindDeliver && e.Proc == "C" && e.Peer == "c1":
			if set < 0 {
				set = e.At
			} else if release < 0 {
				release = e.At
			}
		case e.Kind == sim.KindDeliver && e.Proc == "C" && e.Peer == "c2" && sends[e.Text]:
			c2Sets = append(c2Sets, e.At)
		}
	}
	lock := s.Clients[0].Lock
	drift := time.Duration(float64(lock.TTL)*0.01) + 2*time.Millisecond
	require.Equal(t, drift, time.Duration(float64(lock.TTL)*lock.DriftFactor)+lock.DriftExtra, "the scenario uses Redlock's default drift")
	holdEnd := min(release, start+sim.At(lock.TTL-drift))
	var last sim.Time = -1
	for _, a := range c2Sets {
		if a < holdEnd {
			last = a
		}
	}
	require.Positive(t, last)
	want := time.Duration(set + sim.At(lock.TTL) - last)
	assert.Equal(t, "C", r.Violates.Node)
	assert.InDelta(t, float64(want), float64(r.Value), float64(r.Step), "envelope %s, margin %s", r.Value, want)
	assert.Equal(t, r.Value-r.Step, r.Holds.By)
	t.Logf("envelope %s (margin %s) in %d runs over %d placements", r.Value, want, r.Runs, r.Placements)
}

// TestExploreFencedSingleRedisClean is issue 27's "a fenced single-Redis
// scenario with one pause of any length at any point explores clean":
// single-gc-pause-fenced (INCR tokens, a resource that marks itself on
// reads and writes) under one pause of every length class (1 ms shorter
// than, equal to and 1 ms longer than each margin, and past the end of the
// run) placed just before and just after every action of every process:
// no schedule breaks the resource. The coverage is checked against the
// base run, independently of the plan: every action instant of every
// target has both placements (but none before 0 or after its last
// action), each with every class.
func TestExploreFencedSingleRedisClean(t *testing.T) {
	s, err := scenarios.Builtin("single-gc-pause-fenced")
	require.NoError(t, err)
	require.Equal(t, "mark", s.Resource.Fencing, "reads and writes fenced")
	cfg := ExploreConfig{Base: s, Kinds: []string{faults.KindPause}, Workers: 2}
	pl, err := PlanExplore(&cfg)
	require.NoError(t, err)
	er, err := Explore(context.Background(), cfg, pl)
	require.NoError(t, err)
	require.Equal(t, pl.Total, er.Runs)
	require.Empty(t, er.Errors)
	require.Empty(t, er.Inconclusive)
	assert.Empty(t, er.Groups, "a pause broke the resource")

	var want []string
	for _, l := range lengths(pl.Margins) {
		want = append(want, l.label)
	}
	want = append(want, "past the end of the run")
	require.Len(t, want, 3*3+1, "wait_timeout, node_timeout and ttl: three classes each")
	got := map[string][]string{} // "target placement" -> classes
	for _, c := range pl.Candidates {
		got[c.Target+" "+c.Placement] = append(got[c.Target+" "+c.Placement], c.Class)
	}
	// Each process's action instants in the base run.
	acts := map[string][]sim.Time{}
	first := map[string]map[sim.Time]sim.Kind{}
	for _, e := range baseRun(t, s, nil) {
		if e.Proc == "" || !active(e.Kind) {
			continue
		}
		if first[e.Proc] == nil {
			first[e.Proc] = map[sim.Time]sim.Kind{}
		}
		if _, ok := first[e.Proc][e.At]; !ok {
			first[e.Proc][e.At] = e.Kind
			acts[e.Proc] = append(acts[e.Proc], e.At)
		}
	}
	placements := 0
	for _, target := range []string{"A", "storage", "c1", "c2"} {
		require.NotEmpty(t, acts[target], target)
		for i, at := range acts[target] {
			for _, p := range []string{"before", "after"} {
				// Nothing before 0; nothing after the last action
				// (pruned: idle until the end).
				if p == "before" && at < sim.Time(PlaceEpsilon) || p == "after" && i == len(acts[target])-1 {
					continue
				}
				key := fmt.Sprintf("%s %s %s@%s", target, p, first[target][at], at)
				assert.Equal(t, want, got[key], key)
				placements++
			}
		}
	}
	assert.Equal(t, placements, len(got), "no other placement")
	assert.Equal(t, placements*len(want), pl.Total)
}

// TestExploreCrashRestart: a crash is explored for good and with a restart
// at once and 1 ms before, at and after each margin, in process mode and
// (on servers, not on clients) power mode. testdata/fenced-crash.yaml is
// single-gc-pause-fenced with c2 starting at 9 s (a smaller space): its
// fencing counter lives on A without persistence, and c1's own pause stays
// as the environment. A crash of A after it counted c1's token 1 and
// before it counts c2's, with a restart, hands c2 token 1 again, and the
// paused c1's write with the same token lands after c2's: a lost update.
func TestExploreCrashRestart(t *testing.T) {
	s, err := scenarios.Load("testdata/fenced-crash.yaml")
	require.NoError(t, err)
	cfg := ExploreConfig{Base: s, Kinds: []string{faults.KindCrash}, Targets: []string{"A"}, Workers: 2}
	pl, err := PlanExplore(&cfg)
	require.NoError(t, err)
	classes := map[string]map[string]bool{}
	for _, c := range pl.Candidates {
		if classes[c.Target] == nil {
			classes[c.Target] = map[string]bool{}
		}
		classes[c.Target][c.Class] = true
	}
	// 3 margins x 3 lengths + at once + no restart, per mode.
	assert.Len(t, classes["A"], 2*11)
	assert.True(t, classes["A"]["crash (power), restart ttl 10s: longer"])
	assert.Len(t, classesOf(faults.KindCrash, pl.Margins, s.Duration, true), 11, "a client has no power mode")

	// When A counts each client's token in the base run.
	incr := map[string]string{} // message -> client
	counted := map[string]sim.Time{}
	var c2First sim.Time = -1
	for _, e := range baseRun(t, s, pl.Env) {
		switch {
		case e.Kind == sim.KindSend && e.Proc == "c2" && c2First < 0:
			c2First = e.At
		case e.Kind == sim.KindSend && e.Peer == "A" && strings.Contains(e.Text, " INCR lock:token"):
			incr[strings.Fields(e.Text)[0]] = e.Proc
		case e.Kind == sim.KindDeliver && e.Proc == "A" && incr[e.Text] != "":
			counted[incr[e.Text]] = e.At
		}
	}
	require.Len(t, counted, 2)
	er, err := Explore(context.Background(), cfg, pl)
	require.NoError(t, err)
	require.Empty(t, er.Errors)
	// A violation needs a crash of A with a restart between the two
	// counts; it is certain when A is back before c2's first request (c2
	// then counts from 0 on its first try). Between, it depends on whether
	// A is back when one of c2's tries reaches it before its tries run out.
	inWindow := func(sp faults.Spec) bool {
		at := sim.Time(sp.At.Lo)
		return sp.Node == "A" && sp.RestartAfter != nil && at > counted["c1"] && at < counted["c2"]
	}
	certain := func(sp faults.Spec) bool {
		return inWindow(sp) && sim.Time(sp.At.Lo)+sim.At(sp.RestartAfter.Lo) < c2First
	}
	violated, sure := 0, 0
	for i, v := range er.Violated {
		sp := pl.Candidates[pl.Schedule(i)[0]].Spec
		if v {
			violated++
			require.True(t, inWindow(sp), "schedule %d: %s violates outside the window (A counts c1 at %s, c2 at %s)", i, sp, counted["c1"], counted["c2"])
		}
		if certain(sp) {
			sure++
			require.True(t, v, "schedule %d: %s: A is back before c2's first request at %s", i, sp, c2First)
		}
	}
	assert.Positive(t, sure)
	t.Logf("%d schedules, %d violated, %d of them certain", pl.Total, violated, sure)
}

// classesOf returns the labels of a kind's classes on a target.
func classesOf(kind string, ms []Margin, run time.Duration, client bool) []string {
	var out []string
	for _, c := range classes(kind, ms, run, client) {
		var s faults.Spec
		out = append(out, c.set(&s))
	}
	return out
}

// TestExploreStatePruningKeepsVerdicts: pruning by world state
// (explore_state.go) changes no schedule's verdicts. Each scenario's
// single-pause space is explored with and without it; every schedule has
// the same checked verdicts either way, and some were pruned.
func TestExploreStatePruningKeepsVerdicts(t *testing.T) {
	for _, base := range []string{"single-gc-pause", "redlock-tla-bounded", "zk-session-expiry-pause", "single-gc-pause-fenced"} {
		t.Run(base, func(t *testing.T) {
			s, err := scenarios.Builtin(base)
			require.NoError(t, err)
			verdicts := func(noPrune bool) (map[int]string, int) {
				cfg := ExploreConfig{Base: s, Kinds: []string{faults.KindPause}, Workers: 2, NoStatePrune: noPrune}
				pl, err := PlanExplore(&cfg)
				require.NoError(t, err)
				er, err := Explore(context.Background(), cfg, pl)
				require.NoError(t, err)
				require.Empty(t, er.Errors)
				require.Equal(t, pl.Total, er.Runs)
				out := map[int]string{}
				for _, f := range er.Findings {
					out[f.Run] = strings.Join(f.Kinds, ",") + " " + fmt.Sprint(f.Verdicts)
				}
				for _, r := range er.Inconclusive {
					out[r.Run] = "inconclusive"
				}
				return out, er.StatePruned
			}
			all, none := verdicts(true)
			pruned, n := verdicts(false)
			assert.Zero(t, none)
			assert.Positive(t, n, "some schedules pruned")
			assert.Equal(t, all, pruned)
			t.Logf("%d pruned, %d violating", n, len(all))
		})
	}
}

// TestExploreShardsMergeWithStatePruning: shards cut groups of pauses that
// world-state pruning runs together (each shard runs what it needs of its
// groups' shorter pauses); the merge of the shards' records (through their
// JSON) is the whole exploration: the same findings, explanations and
// pruned count.
func TestExploreShardsMergeWithStatePruning(t *testing.T) {
	s, err := scenarios.Builtin("zk-session-expiry-pause")
	require.NoError(t, err)
	cfg := ExploreConfig{Base: s, Kinds: []string{faults.KindPause}, Workers: 2}
	pl, err := PlanExplore(&cfg)
	require.NoError(t, err)
	whole, err := Explore(context.Background(), cfg, pl)
	require.NoError(t, err)
	require.Positive(t, whole.StatePruned)
	// A shard count with a shard that starts at a pruned schedule: it must
	// run the shorter pauses of its group before it.
	pruned := map[int]bool{}
	for _, n := range whole.StatePrunedRuns {
		pruned[n] = true
	}
	require.Len(t, pruned, whole.StatePruned)
	shards, cut := 0, 0
	for n := 5; n < 200 && cut == 0; n++ {
		shards = n
		for k := 1; k < n; k++ {
			if b, _ := (Shard{K: k, N: n}).Range(pl.Total); pruned[b] {
				cut++
			}
		}
	}
	require.Positive(t, cut, "a shard that starts at a pruned schedule")
	var recs []ExploreRecord
	for k := shards - 1; k >= 0; k-- {
		c := cfg
		c.Shard = Shard{K: k, N: shards}
		er, err := Explore(context.Background(), c, pl)
		require.NoError(t, err)
		data, err := json.Marshal(RecordExplore(c, er))
		require.NoError(t, err)
		var rec ExploreRecord
		require.NoError(t, json.Unmarshal(data, &rec))
		recs = append(recs, rec)
	}
	merged, err := MergeExplore(cfg, pl, recs)
	require.NoError(t, err)
	assert.Equal(t, whole.StatePruned, merged.StatePruned)
	assert.Equal(t, whole.Violated, merged.Violated)
	var wf, mf bytes.Buffer
	require.NoError(t, WriteExploreJSON(&wf, whole))
	require.NoError(t, WriteExploreJSON(&mf, merged))
	assert.Equal(t, wf.String(), mf.String())
}

// TestExploreCountsSameInstantTies: the plan counts the base run's instants
// at which two or more deliveries or timers of different processes (or from
// different peers) are due, and the order choices --orders adds (each
// other event of a tie first); without --orders the summary says the order
// was kept and how many schedules --orders would add.
func TestExploreCountsSameInstantTies(t *testing.T) {
	s, err := scenarios.Builtin("redlock-clock-jump")
	require.NoError(t, err)
	cfg := ExploreConfig{Base: s, Kinds: []string{faults.KindClockJump}, Workers: 1}
	pl, err := PlanExplore(&cfg)
	require.NoError(t, err)
	keys := map[sim.Time]map[string]bool{}
	for _, e := range baseRun(t, s, pl.Env) {
		if (e.Kind == sim.KindDeliver || e.Kind == sim.KindTimer) && e.At > 0 {
			if keys[e.At] == nil {
				keys[e.At] = map[string]bool{}
			}
			keys[e.At][e.Proc+">"+e.Peer] = true
		}
	}
	want, choices := 0, 0
	for _, k := range keys {
		if len(k) > 1 {
			want++
			choices += len(k) - 1
		}
	}
	require.Positive(t, want, "redlock-clock-jump's base run has same-instant ties (fixed-step latencies)")
	assert.Equal(t, want, pl.Ties)
	assert.Equal(t, choices, pl.OrderChoices, "each other event of each tie first")
	var b strings.Builder
	WriteExploreSummary(&b, &ExploreResult{Result: &Result{Base: s.Name}, Plan: pl})
	assert.Contains(t, b.String(), fmt.Sprintf("same instant: at %d instants of the base run two or more messages or timers are due at once; explore kept the kernel's order of them (--orders runs each other event of a tie first: %d more single faults)", want, choices))

	on := cfg
	on.Orders = true
	plo, err := PlanExplore(&on)
	require.NoError(t, err)
	assert.Equal(t, pl.Total+choices, plo.Total)
	assert.Contains(t, plo.Bounds, fmt.Sprintf("same-instant order: each other event first at each of %d ties", want))
	for _, c := range plo.Candidates[len(pl.Candidates):] {
		require.Equal(t, faults.KindOrder, c.Spec.Kind)
		require.NoError(t, faults.CheckFields(c.Spec), c.Spec.String())
		require.True(t, keys[sim.Time(c.Spec.At.Lo)][c.Spec.Node+">"+c.Spec.From], "%s names an event of its tie", c.Spec)
	}
}

// TestExploreOrdersFindTieViolation: in order-tie-pause, c1's and c2's
// SET NX reach A at the same instant and c1's runs first; c2's pause from
// 1s (the environment) breaks the lock only when c2 won that race. Every
// crash of c2 explores clean; with --orders explore finds the violation,
// in exactly one schedule (A's delivery from c2 first at 1ms), and its
// finding replays from its file to the same trace and verdict.
func TestExploreOrdersFindTieViolation(t *testing.T) {
	s, err := scenarios.Load("testdata/order-tie-pause.yaml")
	require.NoError(t, err)
	explore := func(orders bool) *ExploreResult {
		cfg := ExploreConfig{Base: s, Kinds: []string{faults.KindCrash}, Targets: []string{"c2"}, Workers: 2, Orders: orders}
		pl, err := PlanExplore(&cfg)
		require.NoError(t, err)
		er, err := Explore(context.Background(), cfg, pl)
		require.NoError(t, err)
		require.Empty(t, er.Errors)
		require.Empty(t, er.Inconclusive)
		return er
	}
	off := explore(false)
	assert.Empty(t, off.Findings, "in the kernel's order no crash of c2 breaks the lock")
	assert.Zero(t, off.OrderRuns)

	on := explore(true)
	assert.Equal(t, off.Runs+on.Plan.OrderChoices, on.Runs)
	assert.Equal(t, on.Plan.OrderChoices, on.OrderRuns)
	require.Len(t, on.Findings, 1)
	require.Len(t, on.Groups, 1)
	assert.Equal(t, "lock-safety order A", on.Groups[0].Kind+" "+on.Groups[0].Signature)
	assert.Equal(t, 1, on.OrderViolating)
	f := on.Findings[0]
	got := f.Faults[len(on.Plan.Env):]
	require.Len(t, got, 1)
	assert.Equal(t, "order A's delivery from c2 at 1ms", got[0].String())
	var b strings.Builder
	WriteExploreSummary(&b, on)
	assert.Contains(t, b.String(), fmt.Sprintf("%d order choices (each other event of a tie first, 0 pruned): %d schedules with one ran, covering %d ties, 1 violating", on.Plan.OrderChoices, on.Plan.OrderChoices, on.Plan.Ties))
	var junit bytes.Buffer
	require.NoError(t, WriteJUnit(&junit, on.Result))
	assert.Contains(t, junit.String(), fmt.Sprintf(`<property name="order_schedules" value="%d"></property>`, on.Plan.OrderChoices))
	var js bytes.Buffer
	require.NoError(t, WriteExploreJSON(&js, on))
	var j ExploreJSON
	require.NoError(t, json.Unmarshal(js.Bytes(), &j))
	assert.Equal(t, ExploreJSON{Orders: true, OrderChoices: on.Plan.OrderChoices, OrderSchedules: on.Plan.OrderChoices, OrderTies: on.Plan.Ties, OrderViolating: 1},
		ExploreJSON{Orders: j.Orders, OrderChoices: j.OrderChoices, OrderSchedules: j.OrderSchedules, OrderTies: j.OrderTies, OrderViolating: j.OrderViolating})

	// The finding as a file: it replays to the trace of the schedule.
	sc, err := s.WithFaults(f.Faults)
	require.NoError(t, err)
	data, err := sc.Marshal()
	require.NoError(t, err)
	file, err := scenarios.Parse("finding.yaml", data)
	require.NoError(t, err)
	o1, err := scenarios.Run(sc, f.Seed, scenarios.Options{})
	require.NoError(t, err)
	o2, err := scenarios.Run(file, f.Seed, scenarios.Options{})
	require.NoError(t, err)
	assert.Equal(t, o1.TraceHash, o2.TraceHash)
	v, _ := Violated(o2, []string{"lock-safety"})
	assert.Equal(t, []string{"lock-safety"}, v)
}

// TestEnvelopeBadRange: a range with a negative end is refused saying so
// (outsider3: --range -10s..-1s said "--range: 1ms..-1s is empty", the
// negative start having been replaced by the step).
func TestEnvelopeBadRange(t *testing.T) {
	s, err := scenarios.Builtin("redlock-clock-jump")
	require.NoError(t, err)
	for _, tt := range []struct {
		name   string
		lo, hi time.Duration
		err    string
	}{
		{"backward jumps", -10 * time.Second, -time.Second, "--range: -10s..-1s has a negative end: envelope searches clock-jump.by from a positive value up"},
		{"negative start", -time.Second, 2 * time.Second, "--range: -1s..2s has a negative end"},
		{"empty", 3 * time.Second, 2 * time.Second, "--range: 3s..2s is empty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Envelope(EnvelopeConfig{Base: s, Param: "clock-jump.by", Lo: tt.lo, Hi: tt.hi})
			var bb *BadBounds
			require.ErrorAs(t, err, &bb)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}

// TestExploreGridBounded: a fine --grid is refused as soon as its single
// faults pass --max-schedules, without building every placement first
// (issue 33 item 4: --grid 10us built millions of placements and died of
// the runtime's out-of-memory before the bound was checked).
func TestExploreGridBounded(t *testing.T) {
	s, err := scenarios.Builtin("single-gc-pause")
	require.NoError(t, err)
	cfg := ExploreConfig{Base: s, Kinds: []string{faults.KindPause}, Grid: 100 * time.Microsecond, MaxSchedules: 100}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = PlanExplore(&cfg)
	runtime.ReadMemStats(&after)
	var bb *BadBounds
	require.ErrorAs(t, err, &bb)
	assert.Contains(t, err.Error(), "single faults, at most 1 per schedule), more than --max-schedules 100: widen --grid")
	// 600,000 grid placements a target when built whole: tens of MB.
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20), "bytes allocated to plan")
}

// TestExploreBeyondAnyCountRefusedWithForce: a space past 2^62 schedules is
// refused even with --force, and the refusal does not tell the user to
// pass the --force they passed.
func TestExploreBeyondAnyCountRefusedWithForce(t *testing.T) {
	s, err := scenarios.Builtin("single-gc-pause")
	require.NoError(t, err)
	cfg := ExploreConfig{Base: s, MaxFaults: 1000, MaxSchedules: 100, Force: true}
	_, err = PlanExplore(&cfg)
	var bb *BadBounds
	require.ErrorAs(t, err, &bb)
	assert.Contains(t, err.Error(), "more than 2^62 schedules")
	assert.Contains(t, err.Error(), "--force or not")
	assert.NotContains(t, err.Error(), "pass --force")
}
