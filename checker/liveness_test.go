package checker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

func TestCheckLiveness(t *testing.T) {
	bound := Options{DefaultMaxWait: 10 * time.Second, Settle: 5 * time.Second}
	partition := func(at, until sim.Time) sim.FaultRecord {
		return fault(at, until, "partition", "the network split into [c1] [r1]", "c1", "r1")
	}
	tests := []struct {
		name        string
		wants       []sim.Want
		beliefs     []sim.Belief
		faults      []sim.FaultRecord
		opts        Options
		want        Verdict
		from        sim.Time
		longest     time.Duration
		longestBy   string
		explanation []string // of the violations, in order
		note        string
	}{
		{name: "nobody wanted the lock", opts: bound, want: Holds,
			note: "judged over the whole run (0.000s to 100.000s): no fault acted"},
		{name: "no bound given",
			wants: []sim.Want{openWant("c1", s(1))},
			want:  NotJudged, longest: 99 * time.Second, longestBy: "c1",
			note: "not judged: no wait bound was given"},
		{name: "all acquired within the bound", opts: bound,
			wants:   []sim.Want{want("c1", s(1), s(2), true, ""), want("c2", s(1), s(9), true, "")},
			beliefs: []sim.Belief{bel("c1", s(1), s(2), s(3)), bel("c2", s(1), s(9), s(10))},
			want:    Holds, longest: 6 * time.Second, longestBy: "c2"},
		{name: "a client that never acquires a free lock", opts: bound,
			wants: []sim.Want{openWant("c2", s(50))},
			want:  Violated, longest: 50 * time.Second, longestBy: "c2",
			explanation: []string{`c2 wanted the lock "L" from 50.000s and never acquired it before the run ended at 100.000s; nobody held it and no fault acted from 50.000s to 100.000s: 50s, longer than its bound of 10s.`}},
		{name: "a want open at run end within the bound: the run ended too soon to tell", opts: bound,
			wants: []sim.Want{openWant("c2", s(91))},
			want:  Holds, longest: 9 * time.Second, longestBy: "c2"},
		{name: "a wait exactly at the bound", opts: bound,
			wants: []sim.Want{want("c1", s(5), s(15), true, "")},
			want:  Holds, longest: 10 * time.Second, longestBy: "c1"},
		{name: "a wait one nanosecond over the bound", opts: bound,
			wants: []sim.Want{want("c1", s(5), s(15)+1, true, "")},
			want:  Violated, longest: 10*time.Second + 1, longestBy: "c1",
			explanation: []string{`c1 wanted the lock "L" from 5.000000000s until it acquired it at 15.000000001s; nobody held it and no fault acted from 5.000000000s to 15.000000001s: 10.000000001s, longer than its bound of 10s.`}},
		{name: "a long legitimate hold is progress, not a liveness failure", opts: bound,
			wants:   []sim.Want{want("c1", 0, s(1), true, ""), want("c2", s(2), s(91), true, "")},
			beliefs: []sim.Belief{bel("c1", 0, s(1), s(90)), bel("c2", s(2), s(91), s(92))},
			want:    Holds, longest: 1 * time.Second, longestBy: "c1"},
		{name: "the lock free for longer than the bound after a hold", opts: bound,
			wants:   []sim.Want{want("c1", 0, s(1), true, ""), want("c2", s(2), s(35), true, "")},
			beliefs: []sim.Belief{bel("c1", 0, s(1), s(20)), bel("c2", s(2), s(35), s(36))},
			want:    Violated, longest: 15 * time.Second, longestBy: "c2",
			explanation: []string{`c2 wanted the lock "L" from 2.000s until it acquired it at 35.000s; nobody held it and no fault acted from 20.000s to 35.000s: 15s, longer than its bound of 10s.`}},
		{name: "giving up does not end the wait", opts: bound,
			wants: []sim.Want{want("c1", s(10), s(14), false, "gave-up"), want("c1", s(16), s(18), false, "gave-up"), want("c1", s(20), s(22), true, "")},
			want:  Violated, longest: 12 * time.Second, longestBy: "c1",
			explanation: []string{`c1 wanted the lock "L" from 10.000s until it acquired it at 22.000s; nobody held it and no fault acted from 10.000s to 22.000s: 12s, longer than its bound of 10s. It gave up 2 times meanwhile.`}},
		{name: "a crash ends the wait", opts: bound,
			wants: []sim.Want{want("c1", s(10), s(14), false, "crashed"), want("c1", s(60), s(61), true, "")},
			want:  Holds, longest: 4 * time.Second, longestBy: "c1"},
		{name: "waits during a fault are not judged", opts: bound,
			faults: []sim.FaultRecord{partition(s(10), s(40))},
			wants:  []sim.Want{want("c1", s(10), s(35), true, ""), want("c1", s(38), s(45), true, "")},
			want:   Holds, from: s(40), longest: 5 * time.Second, longestBy: "c1"},
		{name: "a wait that began during a fault counts from its end", opts: bound,
			faults: []sim.FaultRecord{partition(s(10), s(40))},
			wants:  []sim.Want{want("c1", s(12), s(55), true, "")},
			want:   Violated, from: s(40), longest: 15 * time.Second, longestBy: "c1",
			explanation: []string{`c1 wanted the lock "L" from 12.000s until it acquired it at 55.000s; nobody held it and no fault acted from 40.000s to 55.000s: 15s, longer than its bound of 10s (the stretch began when the network split into [c1] [r1] at 10.000s ended).`}},
		{name: "a partition that never heals, then a restart: a restart heals nothing", opts: bound,
			faults: []sim.FaultRecord{
				partition(s(2), sim.Never),
				fault(s(3), s(4), "crash", "c2 crashed (process) and restarted 1s later", "c2"),
				fault(s(4), 0, "restart", "c1 restarted", "c1"),
			},
			wants: []sim.Want{openWant("c1", s(1))},
			want:  NotJudged, longest: time.Second, longestBy: "c1",
			note: "not judged: no fault-free window was longer than the bound of 10s (the longest lasted 2s, from 0.000s to 2.000s)"},
		{name: "a partition without an end, healed by a later heal record", opts: bound,
			faults: []sim.FaultRecord{partition(s(5), sim.Never), fault(s(50), 0, "heal", "every partition and link fault healed")},
			wants:  []sim.Want{want("c1", s(5), s(65), true, "")},
			want:   Violated, from: s(50), longest: 15 * time.Second, longestBy: "c1",
			explanation: []string{`c1 wanted the lock "L" from 5.000s until it acquired it at 65.000s; nobody held it and no fault acted from 50.000s to 65.000s: 15s, longer than its bound of 10s (the stretch began when the network split into [c1] [r1] at 5.000s ended).`}},
		{name: "a heal ends a partition before its heal_after", opts: bound,
			faults: []sim.FaultRecord{partition(s(5), s(90)), fault(s(30), 0, "heal", "every partition and link fault healed")},
			wants:  []sim.Want{want("c1", s(5), s(45), true, "")},
			want:   Violated, from: s(30), longest: 15 * time.Second, longestBy: "c1",
			explanation: []string{`c1 wanted the lock "L" from 5.000s until it acquired it at 45.000s; nobody held it and no fault acted from 30.000s to 45.000s: 15s, longer than its bound of 10s (the stretch began when the network split into [c1] [r1] at 5.000s ended).`}},
		{name: "a late harmless delay does not mask a deadlock", opts: bound,
			faults:  []sim.FaultRecord{fault(s(55), s(55)+sim.Time(time.Millisecond), "delay", "messages from c1 to r1 were delayed by 1ms for 1ms", "c1", "r1")},
			beliefs: []sim.Belief{{Client: "c1", Lock: "L", Start: s(1), End: s(1), Reason: sim.EndCrashed}},
			wants:   []sim.Want{want("c1", 0, s(1), true, ""), openWant("c2", s(1))},
			want:    Violated, longest: 54 * time.Second, longestBy: "c2",
			explanation: []string{`c2 wanted the lock "L" from 1.000s and never acquired it before the run ended at 100.000s; nobody held it and no fault acted from 1.000s to 55.000s: 54s, longer than its bound of 10s.`}},
		{name: "a late clock jump does not mask a livelock", opts: bound,
			faults: []sim.FaultRecord{fault(s(50), 0, "clock-jump", "A's wall clock jumped +0s", "A")},
			wants:  []sim.Want{openWant("c1", 0), openWant("c2", 0)},
			want:   Violated, longest: 50 * time.Second, longestBy: "c1",
			explanation: []string{
				`c1 wanted the lock "L" from 0.000s and never acquired it before the run ended at 100.000s; nobody held it and no fault acted from 0.000s to 50.000s: 50s, longer than its bound of 10s.`,
				`c2 wanted the lock "L" from 0.000s and never acquired it before the run ended at 100.000s; nobody held it and no fault acted from 0.000s to 50.000s: 50s, longer than its bound of 10s.`,
			}},
		{name: "a clock jump acts for the settling time", opts: bound,
			faults: []sim.FaultRecord{fault(s(10), 0, "clock-jump", "A's wall clock jumped +30s", "A")},
			wants:  []sim.Want{want("c1", s(9), s(27), true, "")},
			want:   Violated, from: s(15), longest: 12 * time.Second, longestBy: "c1",
			explanation: []string{`c1 wanted the lock "L" from 9.000s until it acquired it at 27.000s; nobody held it and no fault acted from 15.000s to 27.000s: 12s, longer than its bound of 10s (the stretch began when the settling time after A's wall clock jumped +30s at 10.000s ended).`}},
		{name: "the settling time defaults to the largest bound", opts: Options{DefaultMaxWait: 10 * time.Second},
			faults: []sim.FaultRecord{fault(s(10), 0, "clock-jump", "A's wall clock jumped +30s", "A")},
			wants:  []sim.Want{want("c1", s(9), s(29), true, "")},
			want:   Holds, from: s(20), longest: 9 * time.Second, longestBy: "c1"},
		{name: "a drop is over at once", opts: bound,
			faults: []sim.FaultRecord{fault(0, 0, "drop", "the next 1 messages from C to c1 were dropped", "C", "c1")},
			wants:  []sim.Want{want("c1", 0, s(60), true, "")},
			want:   Violated, longest: 60 * time.Second, longestBy: "c1",
			explanation: []string{`c1 wanted the lock "L" from 0.000s until it acquired it at 60.000s; nobody held it and no fault acted from 0.000s to 60.000s: 1m0s, longer than its bound of 10s.`}},
		{name: "a crash without restart is over at once: the degraded system is stuck", opts: bound,
			faults: []sim.FaultRecord{fault(s(10), 0, "crash", "r1 crashed (process)", "r1")},
			wants:  []sim.Want{openWant("c1", s(5))},
			want:   Violated, longest: 95 * time.Second, longestBy: "c1",
			explanation: []string{`c1 wanted the lock "L" from 5.000s and never acquired it before the run ended at 100.000s; nobody held it and no fault acted from 5.000s to 100.000s: 1m35s, longer than its bound of 10s.`}},
		{name: "a crash acts until its restart", opts: bound,
			faults: []sim.FaultRecord{fault(s(10), s(30), "crash", "r1 crashed (process) and restarted 20s later", "r1")},
			wants:  []sim.Want{want("c1", s(5), s(35), true, "")},
			want:   Holds, from: s(30), longest: 5 * time.Second, longestBy: "c1"},
		{name: "a crash acts until a later restart fault of its node", opts: bound,
			faults: []sim.FaultRecord{
				fault(s(10), 0, "crash", "r1 crashed (process)", "r1"),
				fault(s(20), 0, "restart", "r2 restarted", "r2"),
				fault(s(40), 0, "restart", "r1 restarted", "r1"),
			},
			wants: []sim.Want{want("c1", s(5), s(56), true, "")},
			want:  Violated, from: s(45), longest: 11 * time.Second, longestBy: "c1",
			explanation: []string{`c1 wanted the lock "L" from 5.000s until it acquired it at 56.000s; nobody held it and no fault acted from 45.000s to 56.000s: 11s, longer than its bound of 10s (the stretch began when the settling time after r1 restarted at 40.000s ended).`}},
		{name: "a pause that was not applied changes nothing", opts: bound,
			faults: []sim.FaultRecord{fault(s(10), 0, "pause", "r1 was not paused for 5s: it was crashed", "r1")},
			wants:  []sim.Want{want("c1", s(5), s(20), true, "")},
			want:   Violated, longest: 15 * time.Second, longestBy: "c1",
			explanation: []string{`c1 wanted the lock "L" from 5.000s until it acquired it at 20.000s; nobody held it and no fault acted from 5.000s to 20.000s: 15s, longer than its bound of 10s.`}},
		{name: "a window shorter than the bound is not a pass", opts: bound,
			faults: []sim.FaultRecord{fault(0, s(95), "pause", "c1 paused for 95s", "c1")},
			wants:  []sim.Want{want("c2", s(1), s(96), true, "")},
			want:   NotJudged, longest: time.Second, longestBy: "c2",
			note: "not judged: no fault-free window was longer than the bound of 10s (the longest lasted 5s, from 95.000s to 100.000s)"},
		{name: "a network that loses everything is a fault for the whole run",
			opts:  Options{DefaultMaxWait: 10 * time.Second, NetworkLoss: 1},
			wants: []sim.Want{openWant("c1", 0)},
			want:  NotJudged,
			note:  "not judged: a fault acted during the whole run (0.000s to 100.000s): there is no fault-free window"},
		{name: "a lossy network is judged", opts: Options{DefaultMaxWait: 10 * time.Second, NetworkLoss: 0.5},
			wants: []sim.Want{openWant("c1", 0)},
			want:  Violated, longest: 100 * time.Second, longestBy: "c1",
			explanation: []string{`c1 wanted the lock "L" from 0.000s and never acquired it before the run ended at 100.000s; nobody held it and no fault acted from 0.000s to 100.000s: 1m40s, longer than its bound of 10s.`}},
		{name: "per-client bounds", opts: Options{DefaultMaxWait: 10 * time.Second, MaxWait: map[string]time.Duration{"c1": 30 * time.Second, "c3": 0}},
			wants: []sim.Want{want("c1", s(0), s(25), true, ""), want("c2", s(0), s(11), true, ""), want("c3", s(0), s(50), true, "")},
			want:  Violated, longest: 50 * time.Second, longestBy: "c3",
			explanation: []string{`c2 wanted the lock "L" from 0.000s until it acquired it at 11.000s; nobody held it and no fault acted from 0.000s to 11.000s: 11s, longer than its bound of 10s.`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := history(s(100), tt.beliefs, nil)
			h.Wants, h.Faults = tt.wants, tt.faults
			r := CheckLiveness(h, tt.opts)
			assert.Equal(t, tt.want, r.Verdict, r.Note)
			assert.Equal(t, tt.from, r.From)
			assert.Equal(t, tt.longest, r.LongestWait)
			assert.Equal(t, tt.longestBy, r.LongestWaitClient)
			var texts []string
			for _, v := range r.Violations {
				assert.Equal(t, KindLiveness, v.Kind)
				texts = append(texts, v.Explanation)
			}
			assert.Equal(t, tt.explanation, texts)
			if tt.note != "" {
				assert.Equal(t, tt.note, r.Note)
			}
		})
	}
}

func TestFaultFreeWindows(t *testing.T) {
	opts := Options{DefaultMaxWait: 10 * time.Second, Settle: 5 * time.Second}
	h := &sim.History{End: s(100), Faults: []sim.FaultRecord{
		fault(s(10), s(20), "pause", "c1 paused for 10s", "c1"),
		fault(s(15), s(25), "delay", "messages from c1 to A were delayed by 1s for 10s", "c1", "A"),
		fault(s(40), 0, "clock-jump", "A's wall clock jumped +1s", "A"),
		fault(s(60), sim.Never, "partition", "the network split into [c1] [A]", "c1", "A"),
		fault(s(70), 0, "restart", "A restarted", "A"),
		fault(s(80), 0, "heal", "every partition and link fault healed"),
	}}
	r := CheckLiveness(h, opts)
	require.Equal(t, Holds, r.Verdict)
	assert.Equal(t, []Window{{0, s(10)}, {s(25), s(40)}, {s(45), s(60)}, {s(80), s(100)}}, r.Windows)
	assert.Equal(t, s(25), r.From)
	assert.Equal(t, "judged in 4 fault-free windows (3 longer than the bound of 10s; the longest from 80.000s to 100.000s)", r.Note)
}
