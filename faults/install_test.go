package faults_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/sim"
)

// lookAt is one snapshot a test takes: at true time At, What of the world.
type lookAt struct {
	at   time.Duration
	what func(w *world) string
}

// TestInstallTimed checks that each fault kind, fired at a true time, does
// what it says at that time and records itself in the history with the
// right kind, targets, text and end (sim.FaultRecord's Until conventions).
func TestInstallTimed(t *testing.T) {
	s := time.Second
	tests := []struct {
		name    string
		scripts map[string][]act
		// setup runs before Install (kernel faults applied directly).
		setup func(w *world)
		specs []faults.Spec
		looks []lookAt
		want  []string
		// got is the receive log wanted (nil: not checked).
		got      []string
		promoted []string
		records  []sim.FaultRecord
	}{
		{
			name:  "clock-jump forward moves the wall clock by exactly by",
			specs: []faults.Spec{{At: at(s), Kind: "clock-jump", Node: "a", By: 30 * s}},
			looks: []lookAt{{999 * ms, clocks("a")}, {1001 * ms, clocks("a")}, {10 * s, clocks("a")}, {10 * s, clocks("b")}},
			want:  []string{"999ms wall +0s mono +0s", "1.001s wall +30s mono +0s", "10s wall +30s mono +0s", "10s wall +0s mono +0s"},
			records: []sim.FaultRecord{
				rec(s, "clock-jump", []string{"a"}, "a's wall clock jumped +30s", 0),
			},
		},
		{
			name:  "clock-jump backward",
			specs: []faults.Spec{{At: at(2 * s), Kind: "clock-jump", Node: "b", By: -1500 * ms}},
			looks: []lookAt{{3 * s, clocks("b")}},
			want:  []string{"3s wall -1.5s mono +0s"},
			records: []sim.FaultRecord{
				rec(2*s, "clock-jump", []string{"b"}, "b's wall clock jumped -1.5s", 0),
			},
		},
		{
			name:  "clock-drift sets the rate of both clocks from then on",
			specs: []faults.Spec{{At: at(s), Kind: "clock-drift", Node: "a", Rate: 0.01}},
			looks: []lookAt{{s, clocks("a")}, {2 * s, clocks("a")}, {11 * s, clocks("a")}},
			want:  []string{"1s wall +0s mono +0s", "2s wall +10ms mono +10ms", "11s wall +100ms mono +100ms"},
			records: []sim.FaultRecord{
				rec(s, "clock-drift", []string{"a"}, "a's clocks began to run at rate 1+0.01", 0),
			},
		},
		{
			name:  "clock-drift slow",
			specs: []faults.Spec{{At: at(0), Kind: "clock-drift", Node: "a", Rate: -0.5}},
			looks: []lookAt{{4 * s, clocks("a")}},
			want:  []string{"4s wall -2s mono -2s"},
			records: []sim.FaultRecord{
				rec(0, "clock-drift", []string{"a"}, "a's clocks began to run at rate 1-0.5", 0),
			},
		},
		{
			name:  "pause stops the process for its duration",
			specs: []faults.Spec{{At: at(s), Kind: "pause", Node: "a", For: sim.Fixed(2 * s)}},
			looks: []lookAt{{999 * ms, state("a")}, {1001 * ms, state("a")}, {2999 * ms, state("a")}, {3001 * ms, state("a")}},
			want: []string{
				"999ms paused=false crashed=false file=1 synced=0",
				"1.001s paused=true crashed=false file=1 synced=0",
				"2.999s paused=true crashed=false file=1 synced=0",
				"3.001s paused=false crashed=false file=1 synced=0",
			},
			records: []sim.FaultRecord{
				rec(s, "pause", []string{"a"}, "a paused for 2s", sim.At(3*s)),
			},
		},
		{
			name:    "a paused process handles its messages when it resumes",
			scripts: map[string][]act{"b": {{at: 1500 * ms, to: "a"}}},
			specs:   []faults.Spec{{At: at(s), Kind: "pause", Node: "a", For: sim.Fixed(2 * s)}},
			got:     []string{"3s a got m0 from b"},
			records: []sim.FaultRecord{
				rec(s, "pause", []string{"a"}, "a paused for 2s", sim.At(3*s)),
			},
		},
		{
			name: "a shorter pause of a paused process changes nothing and says so",
			specs: []faults.Spec{
				{At: at(s), Kind: "pause", Node: "a", For: sim.Fixed(5 * s)},
				{At: at(2 * s), Kind: "pause", Node: "a", For: sim.Fixed(s)},
			},
			looks: []lookAt{{3001 * ms, state("a")}, {5999 * ms, state("a")}, {6001 * ms, state("a")}},
			want: []string{
				"3.001s paused=true crashed=false file=1 synced=0",
				"5.999s paused=true crashed=false file=1 synced=0",
				"6.001s paused=false crashed=false file=1 synced=0",
			},
			records: []sim.FaultRecord{
				rec(s, "pause", []string{"a"}, "a paused for 5s", sim.At(6*s)),
				ignored(2*s, "pause", []string{"a"}, "a was not paused for 1s: it was already paused until 6.000s", sim.At(6*s)),
			},
		},
		{
			name: "a longer pause of a paused process extends it",
			specs: []faults.Spec{
				{At: at(s), Kind: "pause", Node: "a", For: sim.Fixed(2 * s)},
				{At: at(2 * s), Kind: "pause", Node: "a", For: sim.Fixed(5 * s)},
			},
			looks: []lookAt{{3001 * ms, state("a")}, {6999 * ms, state("a")}, {7001 * ms, state("a")}},
			want: []string{
				"3.001s paused=true crashed=false file=1 synced=0",
				"6.999s paused=true crashed=false file=1 synced=0",
				"7.001s paused=false crashed=false file=1 synced=0",
			},
			records: []sim.FaultRecord{
				rec(s, "pause", []string{"a"}, "a paused for 2s", sim.At(3*s)),
				rec(2*s, "pause", []string{"a"}, "a paused for 5s (extending a pause that was to end at 3.000s)", sim.At(7*s)),
			},
		},
		{
			name: "a pause after an earlier pause ended is a new pause",
			specs: []faults.Spec{
				{At: at(s), Kind: "pause", Node: "a", For: sim.Fixed(s)},
				{At: at(3 * s), Kind: "pause", Node: "a", For: sim.Fixed(s)},
			},
			looks: []lookAt{{2500 * ms, state("a")}, {3500 * ms, state("a")}},
			want: []string{
				"2.5s paused=false crashed=false file=1 synced=0",
				"3.5s paused=true crashed=false file=1 synced=0",
			},
			records: []sim.FaultRecord{
				rec(s, "pause", []string{"a"}, "a paused for 1s", sim.At(2*s)),
				rec(3*s, "pause", []string{"a"}, "a paused for 1s", sim.At(4*s)),
			},
		},
		{
			name:  "a pause of a crashed process is not a pause",
			setup: func(w *world) { w.At(s, func() { w.K.Crash(w.ID("a"), sim.CrashProcess) }) },
			specs: []faults.Spec{{At: at(2 * s), Kind: "pause", Node: "a", For: sim.Fixed(5 * s)}},
			looks: []lookAt{{3 * s, state("a")}},
			want:  []string{"3s paused=false crashed=true file=1 synced=0"},
			records: []sim.FaultRecord{
				ignored(2*s, "pause", []string{"a"}, "a was not paused for 5s: it was crashed", 0),
			},
		},
		{
			name: "a pause of a paused process that crashed and restarted is a new pause",
			specs: []faults.Spec{
				{At: at(s), Kind: "pause", Node: "a", For: sim.Fixed(10 * s)},
				{At: at(2 * s), Kind: "crash", Node: "a", RestartAfter: rng(s, s)},
				{At: at(4 * s), Kind: "pause", Node: "a", For: sim.Fixed(s)},
			},
			looks: []lookAt{{3500 * ms, state("a")}, {4500 * ms, state("a")}, {5500 * ms, state("a")}},
			want: []string{
				"3.5s paused=false crashed=false file=1 synced=0",
				"4.5s paused=true crashed=false file=1 synced=0",
				"5.5s paused=false crashed=false file=1 synced=0",
			},
			records: []sim.FaultRecord{
				rec(s, "pause", []string{"a"}, "a paused for 10s", sim.At(11*s)),
				rec(2*s, "crash", []string{"a"}, "a crashed (process) and restarted 1s later", sim.At(3*s)),
				rec(4*s, "pause", []string{"a"}, "a paused for 1s", sim.At(5*s)),
			},
		},
		{
			name:  "crash in process mode keeps the page cache",
			specs: []faults.Spec{{At: at(s), Kind: "crash", Node: "a"}},
			looks: []lookAt{{999 * ms, state("a")}, {1001 * ms, state("a")}, {100 * s, state("a")}},
			want: []string{
				"999ms paused=false crashed=false file=1 synced=0",
				"1.001s paused=false crashed=true file=1 synced=0",
				"1m40s paused=false crashed=true file=1 synced=0",
			},
			records: []sim.FaultRecord{
				// Until 0: a crash without restart settles at once.
				rec(s, "crash", []string{"a"}, "a crashed (process)", 0),
			},
		},
		{
			name:  "crash in power mode loses what was not synced",
			specs: []faults.Spec{{At: at(s), Kind: "crash", Node: "a", Mode: "power"}},
			looks: []lookAt{{1001 * ms, state("a")}},
			want:  []string{"1.001s paused=false crashed=true file=0 synced=0"},
			records: []sim.FaultRecord{
				rec(s, "crash", []string{"a"}, "a crashed (power)", 0),
			},
		},
		{
			name:  "a clean crash syncs everything",
			specs: []faults.Spec{{At: at(s), Kind: "crash", Node: "a", Mode: "clean"}},
			looks: []lookAt{{1001 * ms, state("a")}},
			want:  []string{"1.001s paused=false crashed=true file=1 synced=1"},
			records: []sim.FaultRecord{
				rec(s, "crash", []string{"a"}, "a crashed (clean)", 0),
			},
		},
		{
			name:  "crash with restart_after restarts the node then",
			specs: []faults.Spec{{At: at(s), Kind: "crash", Node: "a", Mode: "process", RestartAfter: rng(2*s, 2*s)}},
			looks: []lookAt{{2999 * ms, state("a")}, {3001 * ms, state("a")}},
			want: []string{
				"2.999s paused=false crashed=true file=1 synced=0",
				"3.001s paused=false crashed=false file=1 synced=0",
			},
			records: []sim.FaultRecord{
				rec(s, "crash", []string{"a"}, "a crashed (process) and restarted 2s later", sim.At(3*s)),
			},
		},
		{
			name:  "crash of a paused process",
			specs: []faults.Spec{{At: at(s), Kind: "pause", Node: "a", For: sim.Fixed(5 * s)}, {At: at(2 * s), Kind: "crash", Node: "a"}},
			looks: []lookAt{{2001 * ms, state("a")}, {7 * s, state("a")}},
			want: []string{
				"2.001s paused=false crashed=true file=1 synced=0",
				"7s paused=false crashed=true file=1 synced=0",
			},
			records: []sim.FaultRecord{
				rec(s, "pause", []string{"a"}, "a paused for 5s", sim.At(6*s)),
				rec(2*s, "crash", []string{"a"}, "a crashed (process)", 0),
			},
		},
		{
			name:  "a crash of a crashed process is not a crash and does not restart it",
			setup: func(w *world) { w.At(s, func() { w.K.Crash(w.ID("a"), sim.CrashProcess) }) },
			specs: []faults.Spec{{At: at(2 * s), Kind: "crash", Node: "a", Mode: "power", RestartAfter: rng(s, s)}},
			looks: []lookAt{{5 * s, state("a")}},
			want:  []string{"5s paused=false crashed=true file=1 synced=0"},
			records: []sim.FaultRecord{
				ignored(2*s, "crash", []string{"a"}, "a did not crash (power): it was crashed", 0),
			},
		},
		{
			name:  "restart starts a crashed node again",
			setup: func(w *world) { w.At(s, func() { w.K.Crash(w.ID("a"), sim.CrashPower) }) },
			specs: []faults.Spec{{At: at(2 * s), Kind: "restart", Node: "a"}},
			looks: []lookAt{{1999 * ms, state("a")}, {2001 * ms, state("a")}},
			want: []string{
				"1.999s paused=false crashed=true file=0 synced=0",
				// The new instance wrote its record again: it ran Init.
				"2.001s paused=false crashed=false file=1 synced=0",
			},
			records: []sim.FaultRecord{
				rec(2*s, "restart", []string{"a"}, "a restarted", 0),
			},
		},
		{
			name:  "a restart of a running node is not a restart",
			specs: []faults.Spec{{At: at(2 * s), Kind: "restart", Node: "a"}},
			looks: []lookAt{{3 * s, state("a")}},
			want:  []string{"3s paused=false crashed=false file=1 synced=0"},
			records: []sim.FaultRecord{
				ignored(2*s, "restart", []string{"a"}, "a was not restarted: it was running", 0),
			},
		},
		{
			name:  "partition without heal keeps acting",
			specs: []faults.Spec{{At: at(s), Kind: "partition", Groups: [][]string{{"b"}, {"a"}}}},
			looks: []lookAt{{999 * ms, cut("a", "b")}, {1001 * ms, cut("a", "b")}, {100 * s, cut("a", "b")}},
			want:  []string{"999ms a->b false b->a false", "1.001s a->b true b->a true", "1m40s a->b true b->a true"},
			records: []sim.FaultRecord{
				rec(s, "partition", []string{"a", "b"}, "the network split into [b] [a]", sim.Never),
			},
		},
		{
			name:  "partition with heal_after heals then",
			specs: []faults.Spec{{At: at(s), Kind: "partition", Groups: [][]string{{"a"}, {"b"}}, HealAfter: rng(2*s, 2*s)}},
			looks: []lookAt{{2999 * ms, cut("a", "b")}, {3001 * ms, cut("a", "b")}},
			want:  []string{"2.999s a->b true b->a true", "3.001s a->b false b->a false"},
			records: []sim.FaultRecord{
				rec(s, "partition", []string{"a", "b"}, "the network split into [a] [b] for 2s", sim.At(3*s)),
			},
		},
		{
			name: "heal removes partitions and link faults",
			specs: []faults.Spec{
				{At: at(s), Kind: "partition", Groups: [][]string{{"a"}, {"b"}}},
				{At: at(s), Kind: "drop", From: "b", To: "a", Count: 5},
				{At: at(2 * s), Kind: "heal"},
			},
			scripts: map[string][]act{"b": {{at: 2500 * ms, to: "a"}}},
			looks:   []lookAt{{1999 * ms, cut("a", "b")}, {2001 * ms, cut("a", "b")}},
			want:    []string{"1.999s a->b true b->a true", "2.001s a->b false b->a false"},
			got:     []string{"2.501s a got m0 from b"},
			records: []sim.FaultRecord{
				rec(s, "partition", []string{"a", "b"}, "the network split into [a] [b]", sim.Never),
				rec(s, "drop", []string{"a", "b"}, "the next 5 messages from b to a were dropped, each resetting its connection", 0),
				rec(2*s, "heal", nil, "every partition and link fault healed", 0),
			},
		},
		{
			name: "drop loses exactly the next count messages of that one link",
			specs: []faults.Spec{
				{At: at(s), Kind: "drop", From: "a", To: "b", Count: 2},
			},
			scripts: map[string][]act{
				"a": {{at: 1100 * ms, to: "b"}, {at: 1200 * ms, to: "b"}, {at: 1300 * ms, to: "b"}, {at: 1400 * ms, to: "b"}},
				"b": {{at: 1150 * ms, to: "a"}},
			},
			got: []string{"1.151s a got m0 from b", "1.301s b got m2 from a", "1.401s b got m3 from a"},
			records: []sim.FaultRecord{
				rec(s, "drop", []string{"a", "b"}, "the next 2 messages from a to b were dropped, each resetting its connection", 0),
			},
		},
		{
			name: "delay adds by to one link for a while",
			specs: []faults.Spec{
				{At: at(s), Kind: "delay", From: "a", To: "b", By: 100 * ms, For: sim.Fixed(s)},
			},
			scripts: map[string][]act{
				"a": {{at: 500 * ms, to: "b"}, {at: 1500 * ms, to: "b"}, {at: 2500 * ms, to: "b"}},
				"b": {{at: 1500 * ms, to: "a"}},
			},
			got: []string{"501ms b got m0 from a", "1.501s a got m0 from b", "1.601s b got m1 from a", "2.501s b got m2 from a"},
			records: []sim.FaultRecord{
				rec(s, "delay", []string{"a", "b"}, "messages from a to b were delayed by 100ms for 1s", sim.At(2*s)),
			},
		},
		{
			name:     "promote calls the hook",
			specs:    []faults.Spec{{At: at(3 * s), Kind: "promote", Node: "b"}},
			promoted: []string{"3s b"},
			records: []sim.FaultRecord{
				rec(3*s, "promote", []string{"b"}, "b was promoted to master", 0),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, 1, []string{"a", "b"}, tt.scripts)
			if tt.setup != nil {
				tt.setup(w)
			}
			require.NoError(t, faults.Install(w.K, tt.specs, w.hooks()))
			for _, l := range tt.looks {
				w.look(l.at, l.what)
			}
			h := w.run(100 * time.Second)
			assert.Equal(t, tt.want, w.looks)
			if tt.got != nil {
				assert.Equal(t, tt.got, w.got)
			}
			assert.Equal(t, tt.promoted, w.promoted)
			assert.Equal(t, tt.records, withoutLiveness(h.Faults))
			// Each record is also a trace event.
			assert.Len(t, w.faultEvents(), len(tt.records))
		})
	}
}

// TestInstallTriggers checks that a triggered fault fires on the Count-th
// event of the named kind emitted by the named process only, once, after its
// delay.
func TestInstallTriggers(t *testing.T) {
	s := time.Second
	// x emits three acquired events and one key-set; y emits acquired
	// first, so a trigger that does not check the process fires too early.
	scripts := map[string][]act{
		"x": {{at: s, kind: sim.KindAcquired}, {at: 2 * s, kind: sim.KindAcquired}, {at: 3 * s, kind: sim.KindAcquired}, {at: 4 * s, kind: "key-set"}},
		"y": {{at: 500 * ms, kind: sim.KindAcquired}, {at: 5 * s, kind: "promoted"}, {at: 6 * s, kind: sim.KindLockLost}},
	}
	jump := func(on faults.Trigger, after sim.Range) faults.Spec {
		return faults.Spec{On: &on, After: after, Kind: "clock-jump", Node: "x", By: s}
	}
	crash := func(w *world, d time.Duration) { w.At(d, func() { w.K.Crash(w.ID("y"), sim.CrashProcess) }) }
	restart := func(w *world, d time.Duration) { w.At(d, func() { w.K.Restart(w.ID("y")) }) }
	tests := []struct {
		name  string
		setup func(w *world)
		spec  faults.Spec
		// more are other faults of the schedule.
		more []faults.Spec
		// want are the true times of the fault records.
		want []time.Duration
	}{
		{name: "first event of the process", spec: jump(faults.Trigger{Event: "acquired", Proc: "x", Count: 1}, sim.Range{}), want: []time.Duration{s}},
		{name: "count 0 means the first", spec: jump(faults.Trigger{Event: "acquired", Proc: "x"}, sim.Range{}), want: []time.Duration{s}},
		{name: "the other process's event", spec: jump(faults.Trigger{Event: "acquired", Proc: "y"}, sim.Range{}), want: []time.Duration{500 * ms}},
		{name: "the Nth event, once", spec: jump(faults.Trigger{Event: "acquired", Proc: "x", Count: 2}, sim.Range{}), want: []time.Duration{2 * s}},
		{name: "after delays it", spec: jump(faults.Trigger{Event: "acquired", Proc: "x", Count: 2}, sim.Fixed(300*ms)), want: []time.Duration{2300 * ms}},
		{name: "a count never reached", spec: jump(faults.Trigger{Event: "acquired", Proc: "x", Count: 4}, sim.Range{}), want: nil},
		{name: "an event the process never emits", spec: jump(faults.Trigger{Event: "released", Proc: "x"}, sim.Range{}), want: nil},
		{name: "key-set", spec: jump(faults.Trigger{Event: "key-set", Proc: "x"}, sim.Range{}), want: []time.Duration{4 * s}},
		{name: "promoted", spec: jump(faults.Trigger{Event: "promoted", Proc: "y"}, sim.Range{}), want: []time.Duration{5 * s}},
		{name: "a node event under its kind's own trace kind", spec: jump(faults.Trigger{Event: "lock-granted", Proc: "y"}, sim.Range{}), want: []time.Duration{5 * s}},
		{name: "lock-lost", spec: jump(faults.Trigger{Event: "lock-lost", Proc: "y"}, sim.Range{}), want: []time.Duration{6 * s}},
		{
			name:  "crashed",
			setup: func(w *world) { crash(w, 7*s) },
			spec:  jump(faults.Trigger{Event: "crashed", Proc: "y"}, sim.Range{}),
			want:  []time.Duration{7 * s},
		},
		{
			name:  "an ignored crash does not count",
			setup: func(w *world) { crash(w, 7*s); crash(w, 8*s); restart(w, 9*s); crash(w, 10*s) },
			spec:  jump(faults.Trigger{Event: "crashed", Proc: "y", Count: 2}, sim.Range{}),
			want:  []time.Duration{10 * s},
		},
		{
			name:  "an ignored restart does not count",
			setup: func(w *world) { restart(w, 7*s); crash(w, 8*s); restart(w, 9*s) },
			spec:  jump(faults.Trigger{Event: "restarted", Proc: "y"}, sim.Range{}),
			want:  []time.Duration{9 * s},
		},
		{
			name:  "a restart by a fault counts",
			setup: func(w *world) { crash(w, 7*s) },
			spec:  jump(faults.Trigger{Event: "restarted", Proc: "y", Count: 1}, sim.Fixed(ms)),
			more:  []faults.Spec{{At: at(7500 * ms), Kind: "restart", Node: "y"}},
			want:  []time.Duration{7*s + 500*ms + ms},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, 1, []string{"x", "y"}, scripts)
			if tt.setup != nil {
				tt.setup(w)
			}
			require.NoError(t, faults.Install(w.K, append([]faults.Spec{tt.spec}, tt.more...), w.hooks()))
			h := w.run(20 * time.Second)
			var got []time.Duration
			for _, f := range h.Faults {
				if f.Kind == "clock-jump" {
					got = append(got, f.At.Duration())
					assert.Equal(t, []string{"x"}, f.Targets)
					assert.Equal(t, "x's wall clock jumped +1s", f.Text)
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestInstallTriggeredFaultActs checks that a triggered fault acts like a
// timed one: a triggered pause pauses its node from the trigger's time.
func TestInstallTriggeredFaultActs(t *testing.T) {
	w := newWorld(t, 1, []string{"x", "y"}, map[string][]act{"x": {{at: time.Second, kind: sim.KindAcquired}}})
	spec := faults.Spec{On: &faults.Trigger{Event: "acquired", Proc: "x"}, After: sim.Fixed(100 * ms), Kind: "pause", Node: "x", For: sim.Fixed(time.Second)}
	require.NoError(t, faults.Install(w.K, []faults.Spec{spec}, w.hooks()))
	w.look(1099*ms, state("x"))
	w.look(1101*ms, state("x"))
	w.look(2101*ms, state("x"))
	h := w.run(5 * time.Second)
	assert.Equal(t, []string{
		"1.099s paused=false crashed=false file=1 synced=0",
		"1.101s paused=true crashed=false file=1 synced=0",
		"2.101s paused=false crashed=false file=1 synced=0",
	}, w.looks)
	assert.Equal(t, []sim.FaultRecord{rec(1100*ms, "pause", []string{"x"}, "x paused for 1s", sim.At(2100*ms))}, withoutLiveness(h.Faults))
}

// rangedSpecs is a schedule in which every size is a range: the timed
// fault's time, the pause's length, the crash's restart, the partition's
// heal, the delay's length, a trigger's after.
func rangedSpecs() []faults.Spec {
	s := time.Second
	return []faults.Spec{
		{At: rng(s, 2*s), Kind: "pause", Node: "a", For: sim.Range{Lo: s, Hi: 5 * s}},
		{At: at(10 * s), Kind: "crash", Node: "b", RestartAfter: rng(s, 3*s)},
		{At: at(20 * s), Kind: "partition", Groups: [][]string{{"a"}, {"b"}}, HealAfter: rng(s, 9*s)},
		{At: at(40 * s), Kind: "delay", From: "a", To: "b", By: ms, For: sim.Range{Lo: s, Hi: 2 * s}},
		{On: &faults.Trigger{Event: "acquired", Proc: "a"}, After: sim.Range{Lo: 0, Hi: s}, Kind: "clock-jump", Node: "a", By: s},
	}
}

func runRanged(t testing.TB, seed uint64) []sim.FaultRecord {
	w := newWorld(t, seed, []string{"a", "b"}, map[string][]act{"a": {{at: 50 * time.Second, kind: sim.KindAcquired}}})
	if err := faults.Install(w.K, rangedSpecs(), faults.Hooks{}); err != nil {
		panic(err)
	}
	return w.run(100 * time.Second).Faults
}

// TestInstallDraws checks that ranges are drawn from the seeded "faults"
// stream: timed faults' times when installed (in schedule order), sizes
// when the fault applies.
func TestInstallDraws(t *testing.T) {
	s := time.Second
	for _, seed := range []uint64{1, 2, 3} {
		r := sim.NewRand(seed, "faults")
		pauseAt := sim.At(r.Between(s, 2*s)) // drawn at Install
		pauseFor := r.Between(s, 5*s)        // then, in time order, as faults apply
		restart := r.Between(s, 3*s)
		heal := r.Between(s, 9*s)
		delay := r.Between(s, 2*s)
		after := r.Between(0, s)
		got := runRanged(t, seed)
		require.Len(t, got, 5, "seed %d", seed)
		assert.Equal(t, pauseAt, got[0].At, "seed %d: pause at", seed)
		assert.Equal(t, pauseAt.Add(pauseFor), got[0].Until, "seed %d: pause until", seed)
		assert.Equal(t, sim.At(10*s+restart), got[1].Until, "seed %d: restart", seed)
		assert.Equal(t, sim.At(20*s+heal), got[2].Until, "seed %d: heal", seed)
		assert.Equal(t, sim.At(40*s+delay), got[3].Until, "seed %d: delay", seed)
		assert.Equal(t, sim.At(50*s+after), got[4].At, "seed %d: after", seed)
	}
}

// TestInstallSeeds checks that the same seed gives the same schedule and
// that the seed matters.
func TestInstallSeeds(t *testing.T) {
	first := runRanged(t, 1)
	assert.Equal(t, first, runRanged(t, 1), "same seed, same faults")
	differs := false
	for seed := uint64(2); seed <= 5; seed++ {
		differs = differs || !assert.ObjectsAreEqual(first, runRanged(t, seed))
	}
	assert.True(t, differs, "seeds 2..5 all drew what seed 1 drew")
}

// TestInstallErrors checks that Install rejects what it cannot apply with
// an error naming the fault and the field, never a panic, and then
// schedules nothing.
func TestInstallErrors(t *testing.T) {
	s := time.Second
	ok := faults.Spec{At: at(s), Kind: "clock-jump", Node: "a", By: s}
	tests := []struct {
		name  string
		spec  faults.Spec
		hooks faults.Hooks
		want  string
	}{
		{name: "unknown node", spec: faults.Spec{At: at(s), Kind: "pause", Node: "zz", For: sim.Fixed(s)}, want: `faults[1]: unknown process "zz" (known: a, b)`},
		{name: "unknown from", spec: faults.Spec{At: at(s), Kind: "drop", From: "zz", To: "a", Count: 1}, want: `unknown process "zz"`},
		{name: "unknown to", spec: faults.Spec{At: at(s), Kind: "delay", From: "a", To: "zz", By: s, For: sim.Fixed(s)}, want: `unknown process "zz"`},
		{name: "unknown group member", spec: faults.Spec{At: at(s), Kind: "partition", Groups: [][]string{{"a"}, {"b", "zz"}}}, want: `unknown process "zz"`},
		{name: "unknown trigger process", spec: faults.Spec{On: &faults.Trigger{Event: "acquired", Proc: "zz"}, Kind: "heal"}, want: `unknown process "zz"`},
		{name: "unknown trigger event", spec: faults.Spec{On: &faults.Trigger{Event: "exploded", Proc: "a"}, Kind: "heal"}, want: `on.event: a never emits event "exploded"`},
		{name: "unknown kind", spec: faults.Spec{At: at(s), Kind: "meteor", Node: "a"}, want: `kind: unknown fault kind "meteor"`},
		{name: "unknown crash mode", spec: faults.Spec{At: at(s), Kind: "crash", Node: "a", Mode: "gentle"}, want: `mode: unknown crash mode "gentle"`},
		{name: "drift that stops the clock", spec: faults.Spec{At: at(s), Kind: "clock-drift", Node: "a", Rate: -1}, want: "rate: drift -1 out of range"},
		{name: "drift too fast", spec: faults.Spec{At: at(s), Kind: "clock-drift", Node: "a", Rate: 1.5}, want: "rate: drift 1.5 out of range"},
		{name: "drift NaN", spec: faults.Spec{At: at(s), Kind: "clock-drift", Node: "a", Rate: math.NaN()}, want: "rate: drift NaN out of range"},
		{name: "promote without a hook", spec: faults.Spec{At: at(s), Kind: "promote", Node: "a"}, want: "promote: the world has no way to promote a node"},
		{name: "neither at nor on", spec: faults.Spec{Kind: "heal"}, want: "faults[1]: needs at or on"},
		{name: "both at and on", spec: faults.Spec{At: at(s), On: &faults.Trigger{Event: "acquired", Proc: "a"}, Kind: "heal"}, want: "needs at or on, not both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, 1, []string{"a", "b"}, nil)
			var err error
			require.NotPanics(t, func() { err = faults.Install(w.K, []faults.Spec{ok, tt.spec}, tt.hooks) })
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			h := w.run(10 * time.Second)
			assert.Empty(t, h.Faults, "a schedule with an error must install nothing")
		})
	}
}

// TestInstallEmpty checks that an empty schedule installs nothing.
func TestInstallEmpty(t *testing.T) {
	w := newWorld(t, 1, []string{"a"}, nil)
	require.NoError(t, faults.Install(w.K, nil, faults.Hooks{}))
	assert.Empty(t, w.run(time.Second).Faults)
}

// ---- harness ----

// ms is the fixed one-way latency of test worlds.
const ms = time.Millisecond

// world is a small test harness on the shared one (internal/simtest): a
// kernel whose processes are scripted probes. They log model events and
// send messages at true times, and log what they receive to one shared
// list, stamped with true time.
type world struct {
	*simtest.World
	got []string
	// promoted lists the promotions the Promote hook was asked for.
	promoted []string
	// looks are the snapshots taken by look, in time order.
	looks []string
}

// act is a scripted action of a probe at a true time: log a model event of
// kind Kind, or send a message to To.
type act struct {
	at   time.Duration
	kind sim.Kind
	to   string
}

// probe is a trivial test process. In its first incarnation it arms one
// monotonic timer per scripted act (its clocks start at true time and never
// drift in these tests unless a test says so) and appends one unsynced
// record to its file "f", so that crash modes can be told apart.
type probe struct {
	w      *world
	script []act
}

func (p *probe) Init(env *sim.Env) {
	if env.Disk().File("f").Len() > 0 {
		return // a restarted incarnation: the script ran in the first one
	}
	env.Disk().File("f").Append("r")
	for i, a := range p.script {
		env.SetTimer(sim.Mono, int64(a.at), i)
	}
}

func (p *probe) Receive(env *sim.Env, from sim.ProcID, m sim.Message) {
	p.w.got = append(p.w.got, fmt.Sprintf("%v %s got %v from %s", p.w.K.Now().Duration(), env.Name(), m, env.NameOf(from)))
}

func (p *probe) Fire(env *sim.Env, tag any) {
	a := p.script[tag.(int)]
	if a.to != "" {
		to, _ := env.Lookup(a.to)
		env.Send(to, fmt.Sprintf("m%d", tag))
		return
	}
	env.Log(a.kind, "")
}

// newWorld returns a world of the named probes (each with its script, if
// any) on a kernel with the given seed and a fixed 1ms latency.
func newWorld(t testing.TB, seed uint64, names []string, scripts map[string][]act) *world {
	w := &world{World: simtest.NewWorld(t, ms, simtest.Options{Seed: seed})}
	for _, n := range names {
		script := scripts[n]
		w.Add(n, func() sim.Process { return &probe{w: w, script: script} }, sim.ClockSpec{})
	}
	return w
}

// hooks returns Hooks whose Promote logs the promotion and whose Events
// declare x and y servers that emit key-set and promoted, and y also
// "lock-granted" under a trace kind of another name (its "promoted"), as a
// kind maps its own names to its node's trace kinds.
func (w *world) hooks() faults.Hooks {
	redisLike := []faults.NodeEvent{{Name: "key-set", Trace: "key-set"}, {Name: "promoted", Trace: "promoted"}}
	return faults.Hooks{Promote: func(node sim.ProcID) {
		w.promoted = append(w.promoted, fmt.Sprintf("%v %s", w.K.Now().Duration(), w.K.Name(node)))
	}, Events: func(p sim.ProcID) []faults.NodeEvent {
		switch w.K.Name(p) {
		case "x":
			return redisLike
		case "y":
			return append(redisLike[:2:2], faults.NodeEvent{Name: "lock-granted", Trace: "promoted"})
		}
		return nil
	}, Reshard: func(from, to sim.ProcID, key string, hold time.Duration) string {
		w.promoted = append(w.promoted, fmt.Sprintf("%v reshard %s %s->%s hold %v", w.K.Now().Duration(), key, w.K.Name(from), w.K.Name(to), hold))
		return fmt.Sprintf("slot of %q moves from %s to %s", key, w.K.Name(from), w.K.Name(to))
	}, ClusterFailover: func(node sim.ProcID, mode string) string {
		w.promoted = append(w.promoted, fmt.Sprintf("%v manual-failover %s %s", w.K.Now().Duration(), w.K.Name(node), mode))
		return fmt.Sprintf("CLUSTER FAILOVER %s sent to %s", mode, w.K.Name(node))
	}}
}

// look schedules a snapshot: at true time d, "d what()" is appended to looks.
func (w *world) look(d time.Duration, what func(w *world) string) {
	w.At(d, func() { w.looks = append(w.looks, fmt.Sprintf("%v %s", d, what(w))) })
}

// run runs the world until d and returns its history.
func (w *world) run(d time.Duration) *sim.History {
	w.RunTo(sim.At(d))
	return w.K.Finish()
}

// faultEvents returns the trace events of the fault schedule, "TIME TEXT".
func (w *world) faultEvents() []string {
	var out []string
	for _, e := range w.K.Trace() {
		if e.Kind == sim.KindFault {
			out = append(out, fmt.Sprintf("%v %s", e.At.Duration(), e.Text))
		}
	}
	return out
}

// rec abbreviates a fault record.
func rec(at time.Duration, kind string, targets []string, text string, until sim.Time) sim.FaultRecord {
	return sim.FaultRecord{At: sim.At(at), Kind: kind, Targets: targets, Text: text, Until: until}
}

// at returns a pointer to a fixed range, for Spec.At.
func at(d time.Duration) *sim.Range {
	r := sim.Fixed(d)
	return &r
}

// rng returns a pointer to a range, for Spec.At, RestartAfter, HealAfter.
func rng(lo, hi time.Duration) *sim.Range { return &sim.Range{Lo: lo, Hi: hi} }

// clocks snapshots a process's clock offsets from true time.
func clocks(name string) func(w *world) string {
	return func(w *world) string {
		id := w.ID(name)
		return fmt.Sprintf("wall %s mono %s", signed(w.K.ClockOffset(id, sim.Wall)), signed(w.K.ClockOffset(id, sim.Mono)))
	}
}

// state snapshots whether a process is paused or crashed, and its file.
func state(name string) func(w *world) string {
	return func(w *world) string {
		id := w.ID(name)
		f := w.K.Disk(id).File("f")
		return fmt.Sprintf("paused=%v crashed=%v file=%d synced=%d", w.K.Paused(id), w.K.Crashed(id), f.Len(), f.Synced())
	}
}

// cut snapshots whether the links between two processes are blocked.
func cut(a, b string) func(w *world) string {
	return func(w *world) string {
		return fmt.Sprintf("%s->%s %v %s->%s %v", a, b, w.K.Partitioned(w.ID(a), w.ID(b)), b, a, w.K.Partitioned(w.ID(b), w.ID(a)))
	}
}

// signed renders a duration with an explicit sign.
func signed(d time.Duration) string {
	if d >= 0 {
		return "+" + d.String()
	}
	return d.String()
}

// ignored is rec for a fault the kernel ignored (FaultRecord.Ignored).
func ignored(at time.Duration, kind string, targets []string, text string, until sim.Time) sim.FaultRecord {
	r := rec(at, kind, targets, text, until)
	r.Ignored = true
	return r
}

// withoutLiveness clears the records' Liveness, which TestKindLiveness
// checks on its own, and Spec (TestInstallNamesTheSpec).
func withoutLiveness(recs []sim.FaultRecord) []sim.FaultRecord {
	out := append([]sim.FaultRecord(nil), recs...)
	for i := range out {
		out[i].Liveness, out[i].Spec = 0, 0
	}
	return out
}

// TestInstallNamesTheSpec: each record says which fault of the schedule
// made it (1 + its index), whatever order they act in.
func TestInstallNamesTheSpec(t *testing.T) {
	w := newWorld(t, 1, []string{"a", "b"}, nil)
	specs := []faults.Spec{
		{At: at(2 * time.Second), Kind: "pause", Node: "b", For: sim.Range{Lo: time.Second, Hi: time.Second}},
		{At: at(time.Second), Kind: "clock-jump", Node: "a", By: 3 * time.Second},
	}
	require.NoError(t, faults.Install(w.K, specs, w.hooks()))
	h := w.run(10 * time.Second)
	var got []string
	for _, f := range h.Faults {
		got = append(got, fmt.Sprintf("%s %d", f.Kind, f.Spec))
	}
	assert.Equal(t, []string{"clock-jump 2", "pause 1"}, got)
}
