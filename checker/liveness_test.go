package checker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locksim/locksim/sim"
)

func TestCheckLiveness(t *testing.T) {
	bound := Options{DefaultMaxWait: 10 * time.Second}
	tests := []struct {
		name        string
		wants       []sim.Want
		faults      []sim.FaultRecord
		end         sim.Time
		opts        Options
		want        Verdict
		from        sim.Time
		longest     time.Duration
		longestBy   string
		explanation []string // of the violations, in order
	}{
		{name: "nobody wanted the lock", end: s(100), opts: bound, want: Holds},
		{name: "no bound given", end: s(100),
			wants: []sim.Want{openWant("c1", s(1))},
			want:  NotJudged, longest: 99 * time.Second, longestBy: "c1"},
		{name: "all acquired within the bound", end: s(100), opts: bound,
			wants: []sim.Want{want("c1", s(1), s(2), true, ""), want("c2", s(1), s(9), true, ""), want("c1", s(20), s(25), true, "")},
			want:  Holds, longest: 8 * time.Second, longestBy: "c2"},
		{name: "a client that stops wanting the lock", end: s(100), opts: bound,
			wants: []sim.Want{want("c1", s(1), s(3), true, ""), want("c2", s(1), s(4), true, "")},
			want:  Holds, longest: 3 * time.Second, longestBy: "c2"},
		{name: "a client that never acquires", end: s(100), opts: bound,
			wants: []sim.Want{want("c1", s(1), s(3), true, ""), openWant("c2", s(50))},
			want:  Violated, longest: 50 * time.Second, longestBy: "c2",
			explanation: []string{`c2 wanted the lock "L" from 50.000s and never acquired it before the run ended at 100.000s: 50s, longer than its bound of 10s.`}},
		{name: "a want open at run end within the bound: the run ended too soon", end: s(100), opts: bound,
			wants: []sim.Want{openWant("c2", s(91))},
			want:  Holds, longest: 9 * time.Second, longestBy: "c2"},
		{name: "a wait exactly at the bound", end: s(100), opts: bound,
			wants: []sim.Want{want("c1", s(5), s(15), true, "")},
			want:  Holds, longest: 10 * time.Second, longestBy: "c1"},
		{name: "a wait one nanosecond over the bound", end: s(100), opts: bound,
			wants: []sim.Want{want("c1", s(5), s(15)+1, true, "")},
			want:  Violated, longest: 10*time.Second + 1, longestBy: "c1",
			explanation: []string{`c1 waited 10s for the lock "L", from 5.000s until it acquired it at 15.000s, longer than its bound of 10s.`}},
		{name: "giving up does not end the wait", end: s(100), opts: bound,
			wants: []sim.Want{want("c1", s(10), s(14), false, "gave-up"), want("c1", s(16), s(18), false, "gave-up"), want("c1", s(20), s(22), true, "")},
			want:  Violated, longest: 12 * time.Second, longestBy: "c1",
			explanation: []string{`c1 waited 12s for the lock "L", from 10.000s until it acquired it at 22.000s, longer than its bound of 10s. It gave up 2 times meanwhile.`}},
		{name: "giving up for good is never acquiring", end: s(100), opts: bound,
			wants: []sim.Want{want("c1", s(10), s(14), false, "gave-up")},
			want:  Violated, longest: 90 * time.Second, longestBy: "c1",
			explanation: []string{`c1 wanted the lock "L" from 10.000s and never acquired it before the run ended at 100.000s: 1m30s, longer than its bound of 10s. It gave up once meanwhile.`}},
		{name: "a crash ends the wait", end: s(100), opts: bound,
			wants: []sim.Want{want("c1", s(10), s(14), false, "crashed"), want("c1", s(60), s(61), true, "")},
			want:  Holds, longest: 4 * time.Second, longestBy: "c1"},
		{name: "waits during faults are not judged", end: s(100), opts: bound,
			faults: []sim.FaultRecord{fault(s(10), s(40), "partition", "c1 was cut off from r1", "c1", "r1")},
			wants:  []sim.Want{want("c1", s(10), s(35), true, ""), want("c1", s(38), s(45), true, "")},
			want:   Holds, from: s(40), longest: 5 * time.Second, longestBy: "c1"},
		{name: "a wait that began during the faults counts from their end", end: s(100), opts: bound,
			faults: []sim.FaultRecord{fault(s(10), s(40), "partition", "c1 was cut off from r1", "c1", "r1"), fault(s(20), 0, "clock-jump", "r1's wall clock jumped +5s", "r1")},
			wants:  []sim.Want{want("c1", s(12), s(55), true, "")},
			want:   Violated, from: s(40), longest: 15 * time.Second, longestBy: "c1",
			explanation: []string{`c1 waited 15s for the lock "L", from 40.000s (when the last fault settled) until it acquired it at 55.000s, longer than its bound of 10s.`}},
		{name: "a crash without restart: the degraded system grants the lock", end: s(100), opts: bound,
			faults: []sim.FaultRecord{fault(s(10), 0, "crash", "r3 crashed (process)", "r3")},
			wants:  []sim.Want{want("c1", s(5), s(12), true, ""), want("c1", s(30), s(32), true, "")},
			want:   Holds, from: s(10), longest: 2 * time.Second, longestBy: "c1"},
		{name: "a crash without restart: the degraded system is stuck", end: s(100), opts: bound,
			faults: []sim.FaultRecord{fault(s(10), 0, "crash", "r1 crashed (process)", "r1")},
			wants:  []sim.Want{openWant("c1", s(5))},
			want:   Violated, from: s(10), longest: 90 * time.Second, longestBy: "c1",
			explanation: []string{`c1 wanted the lock "L" from 10.000s (when the last fault settled) and never acquired it before the run ended at 100.000s: 1m30s, longer than its bound of 10s.`}},
		{name: "a fault that never heals", end: s(100), opts: bound,
			faults: []sim.FaultRecord{fault(s(10), sim.Never, "partition", "the network split into [c1] [r1 c2]", "c1", "c2", "r1")},
			wants:  []sim.Want{openWant("c1", s(5)), want("c2", s(20), s(21), true, "")},
			want:   NotJudged, from: s(10), longest: 90 * time.Second, longestBy: "c1"},
		{name: "a partition without an end, healed by a later heal record", end: s(100), opts: bound,
			faults: []sim.FaultRecord{
				fault(s(10), sim.Never, "partition", "the network split into [c1] [r1 c2]", "c1", "c2", "r1"),
				fault(s(50), 0, "heal", "every partition and link fault healed"),
			},
			wants: []sim.Want{want("c1", s(5), s(65), true, "")},
			want:  Violated, from: s(50), longest: 15 * time.Second, longestBy: "c1",
			explanation: []string{`c1 waited 15s for the lock "L", from 50.000s (when the last fault settled) until it acquired it at 65.000s, longer than its bound of 10s.`}},
		{name: "a crash without an end, healed by a later restart record", end: s(100), opts: bound,
			faults: []sim.FaultRecord{
				fault(s(10), sim.Never, "crash", "r1 crashed", "r1"),
				fault(s(20), 0, "restart", "r2 restarted", "r2"),
				fault(s(50), 0, "restart", "r1 restarted", "r1"),
			},
			wants: []sim.Want{want("c1", s(5), s(55), true, "")},
			want:  Holds, from: s(50), longest: 5 * time.Second, longestBy: "c1"},
		{name: "a restart of another node heals nothing", end: s(100), opts: bound,
			faults: []sim.FaultRecord{
				fault(s(10), sim.Never, "crash", "r1 crashed", "r1"),
				fault(s(20), 0, "restart", "r2 restarted", "r2"),
			},
			wants: []sim.Want{want("c1", s(5), s(55), true, "")},
			want:  NotJudged, from: s(20), longest: 35 * time.Second, longestBy: "c1"},
		{name: "faults settle after the run ends", end: s(100), opts: bound,
			faults: []sim.FaultRecord{fault(s(10), s(200), "pause", "c1 was paused for 190s", "c1")},
			wants:  []sim.Want{openWant("c2", s(5))},
			want:   NotJudged, from: s(200)},
		{name: "per-client bounds", end: s(100),
			opts: Options{DefaultMaxWait: 10 * time.Second, MaxWait: map[string]time.Duration{"c1": 30 * time.Second, "c3": 0}},
			wants: []sim.Want{
				want("c1", s(0), s(25), true, ""), want("c2", s(0), s(11), true, ""), want("c3", s(0), s(50), true, ""),
			},
			want: Violated, longest: 50 * time.Second, longestBy: "c3",
			explanation: []string{`c2 waited 11s for the lock "L", from 0.000s until it acquired it at 11.000s, longer than its bound of 10s.`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &sim.History{Wants: tt.wants, Faults: tt.faults, End: tt.end}
			r := CheckLiveness(h, tt.opts)
			assert.Equal(t, tt.want, r.Verdict)
			assert.Equal(t, tt.from, r.From)
			assert.Equal(t, tt.longest, r.LongestWait)
			assert.Equal(t, tt.longestBy, r.LongestWaitClient)
			var texts []string
			for _, v := range r.Violations {
				assert.Equal(t, KindLiveness, v.Kind)
				texts = append(texts, v.Explanation)
			}
			assert.Equal(t, tt.explanation, texts)
		})
	}
}

func TestLivenessNote(t *testing.T) {
	bound := Options{DefaultMaxWait: time.Second}
	tests := []struct {
		name   string
		opts   Options
		faults []sim.FaultRecord
		want   string
	}{
		{"no faults", bound, nil, "judged over the whole run: no faults were applied"},
		{"no bound", Options{}, nil, "not judged: no wait bound was given"},
		{"a healed partition", bound,
			[]sim.FaultRecord{fault(s(10), s(40), "partition", "c1 was cut off from r1")},
			"judged from 40.000s, when the last fault settled (c1 was cut off from r1 from 10.000s to 40.000s)"},
		{"an instantaneous fault last", bound,
			[]sim.FaultRecord{fault(s(10), 0, "crash", "r1 crashed (process)", "r1"), fault(ms(12500), 0, "clock-jump", "c2's wall clock jumped -2s", "c2")},
			"judged from 12.500s, when the last fault settled (c2's wall clock jumped -2s at 12.500s)"},
		{"faults that never heal", bound,
			[]sim.FaultRecord{
				fault(s(10), sim.Never, "partition", "the network split into [c1] [r1]", "c1", "r1"),
				fault(s(20), sim.Never, "partition", "the network split into [c2] [r1]", "c2", "r1"),
			},
			"not judged: the faults never settled (the network split into [c1] [r1] at 10.000s and the network split into [c2] [r1] at 20.000s never healed)"},
		{"settled after the run", bound,
			[]sim.FaultRecord{fault(s(10), s(200), "pause", "c1 was paused for 190s")},
			"not judged: the last fault settled at 200.000s, after the run ended at 100.000s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := CheckLiveness(&sim.History{Faults: tt.faults, End: s(100)}, tt.opts)
			assert.Equal(t, tt.want, r.Note)
		})
	}
}
