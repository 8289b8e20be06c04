package checker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

func TestLockExplanations(t *testing.T) {
	tests := []struct {
		name    string
		beliefs []sim.Belief
		faults  []sim.FaultRecord
		want    []Violation
	}{
		{
			name:    "the holder's own pause is named first, a later server fault after it",
			beliefs: []sim.Belief{bel("c1", s(9), s(10), s(40)), bel("c2", s(20), s(31), s(35))},
			faults: []sim.FaultRecord{
				fault(s(12), s(38), "pause", "c1 was paused for 26s", "c1"),
				fault(s(14), 0, "clock-jump", "r1's wall clock jumped +10s", "r1"),
			},
			want: []Violation{{
				Kind: KindLockSafety, Lock: "L", Clients: []string{"c1", "c2"},
				Windows:     []Window{{Start: s(31), End: s(35)}},
				Explanation: `c1 believed it held the lock "L" from 10.000s to 40.000s and c2 from 31.000s to 35.000s; the overlap began 19s after c1 was paused for 26s at 12.000s; other faults before it: r1's wall clock jumped +10s at 14.000s.`,
			}},
		},
		{
			// The shape of the finding of "simrun fuzz redlock-clock-jump
			// --seed 42", run 2 (issue 14): c1's own long pause was folded
			// into "5 earlier faults" behind c2's crash, a pause that was
			// not applied and B's pause.
			name:    "the fuzz finding: c1's pause among many server faults",
			beliefs: []sim.Belief{bel("c1", s(1), s(2), ms(20700)), bel("c2", s(15), s(18), s(22))},
			faults: []sim.FaultRecord{
				fault(s(1), 0, "clock-jump", "C's wall clock jumped +30s", "C"),
				fault(ms(1500), 0, "clock-drift", "D's clocks began to run at rate 1+0.01", "D"),
				fault(s(2), s(4), "pause", "E paused for 2s", "E"),
				fault(ms(4100), ms(20700), "pause", "c1 paused for 16.6s", "c1"),
				fault(s(5), 0, "crash", "A crashed (process)", "A"),
				fault(s(9), 0, "crash", "c2 crashed (process)", "c2"),
				fault(s(10), 0, "pause", "storage was not paused for 1s: it was crashed", "storage"),
				fault(s(12), s(14), "pause", "B paused for 2s", "B"),
			},
			want: []Violation{{
				Kind: KindLockSafety, Lock: "L", Clients: []string{"c1", "c2"},
				Windows:     []Window{{Start: s(18), End: ms(20700)}},
				Explanation: `c1 believed it held the lock "L" from 2.000s to 20.700s and c2 from 18.000s to 22.000s; the overlap began 13.9s after c1 paused for 16.6s at 4.100s; faults on c2 before it: c2 crashed (process) at 9.000s; other faults before it: B paused for 2s at 12.000s; A crashed (process) at 5.000s; 1 earlier fault.`,
			}},
		},
		{
			name: "an open belief, faults at one instant, and an old drift change",
			beliefs: []sim.Belief{
				open(bel("c1", s(0), s(1), 0)), bel("c2", s(0), s(60), s(70)),
				onLock("M", bel("c3", s(0), s(10), s(30))), onLock("M", bel("c4", s(0), s(20), s(40))),
			},
			faults: []sim.FaultRecord{
				fault(0, 0, "drift", "c4's clock runs 10% fast", "c4"),
				fault(s(50), s(55), "partition", "r1 was cut off", "r1"),
				fault(s(50), 0, "clock-jump", "r2's wall clock jumped +20s", "r2"),
			},
			want: []Violation{
				{
					Kind: KindLockSafety, Lock: "M", Clients: []string{"c3", "c4"},
					Windows:     []Window{{Start: s(20), End: s(30)}},
					Explanation: `c3 believed it held the lock "M" from 10.000s to 30.000s and c4 from 20.000s to 40.000s; the overlap began 20s after c4's clock runs 10% fast at 0.000s.`,
				},
				{
					Kind: KindLockSafety, Lock: "L", Clients: []string{"c1", "c2"},
					Windows:     []Window{{Start: s(60), End: s(70)}},
					Explanation: `c1 believed it held the lock "L" from 1.000s until the run ended at 100.000s and c2 from 60.000s to 70.000s; the overlap began 10s after r1 was cut off and r2's wall clock jumped +20s at 50.000s.`,
				},
			},
		},
		{
			name: "a stuck holder overlapped by many",
			beliefs: []sim.Belief{
				open(bel("c1", s(0), s(1), 0)),
				bel("c2", s(2), s(10), s(20)), bel("c3", s(3), s(30), s(40)), bel("c2", s(21), s(50), s(60)),
				bel("c3", s(41), s(70), s(80)), bel("c2", s(61), s(90), s(95)),
			},
			faults: []sim.FaultRecord{fault(s(1), s(31), "pause", "c1 paused for 30s", "c1")},
			want: []Violation{{
				Kind: KindLockSafety, Lock: "L", Clients: []string{"c1", "c2", "c3"},
				Windows: []Window{
					{Start: s(10), End: s(20)}, {Start: s(30), End: s(40)}, {Start: s(50), End: s(60)},
					{Start: s(70), End: s(80)}, {Start: s(90), End: s(95)},
				},
				Explanation: `c1 believed it held the lock "L" from 1.000s until the run ended at 100.000s, c2 from 10.000s to 20.000s, c3 from 30.000s to 40.000s, c2 from 50.000s to 60.000s and 2 more overlapping beliefs; the first overlap began 9s after c1 paused for 30s at 1.000s.`,
			}},
		},
		{
			name:    "the overlap begins with the fault, and one client twice",
			beliefs: []sim.Belief{bel("c1", s(0), s(10), s(30)), bel("c1", s(15), s(20), s(25))},
			faults:  []sim.FaultRecord{fault(s(20), 0, "drop", "the next 2 messages to c1 were dropped", "c1")},
			want: []Violation{{
				Kind: KindLockSafety, Lock: "L", Clients: []string{"c1"},
				Windows:     []Window{{Start: s(20), End: s(25)}},
				Explanation: `c1 believed it held the lock "L" twice at once, from 10.000s to 30.000s and from 20.000s to 25.000s; the overlap began at 20.000s, when the next 2 messages to c1 were dropped.`,
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := history(s(100), tt.beliefs, nil)
			h.Faults = tt.faults
			require.Equal(t, Violated, CheckLock(h, 0))
			assert.Equal(t, tt.want, explainLock(h))
		})
	}
}

func TestResourceExplanations(t *testing.T) {
	tests := []struct {
		name     string
		sections []sim.Section
		want     []Violation
	}{
		{
			name:     "write-only fencing counterexample",
			sections: counterexample(),
			want: []Violation{{
				Kind: KindResourceSafety, Lock: "L", Clients: []string{"c1", "c0"},
				Windows:     []Window{{Start: s(44), End: s(80)}},
				Explanation: "c1 and c0 both read 1 (at 27.000s and 44.000s) and both writes were accepted: c1's write of 2 (token 2) at 61.000s was lost when c0 wrote 2 (token 3) at 80.000s.",
			}},
		},
		{
			name: "a lost update within a millisecond shows in microseconds",
			sections: []sim.Section{
				sect("c1", 0, s(1), s(1)+400000, 0, sim.WriteAccepted),
				sect("c2", 0, s(1)+200000, s(1)+600000, 0, sim.WriteAccepted),
			},
			want: []Violation{{
				Kind: KindResourceSafety, Lock: "L", Clients: []string{"c1", "c2"},
				Windows:     []Window{{Start: s(1) + 200000, End: s(1) + 600000}},
				Explanation: "c1 and c2 both read 0 (at 1.000000s and 1.000200s) and both writes were accepted: c1's write of 1 (token 0) at 1.000400s was lost when c2 wrote 1 (token 0) at 1.000600s.",
			}},
		},
		{
			name: "several writes lost",
			sections: []sim.Section{
				sect("c0", 1, s(10), s(50), 0, sim.WriteAccepted),
				sect("c1", 2, s(12), s(20), 0, sim.WriteAccepted),
				sect("c2", 3, s(25), s(30), 1, sim.WriteAccepted),
			},
			want: []Violation{{
				Kind: KindResourceSafety, Lock: "L", Clients: []string{"c0", "c1", "c2"},
				Windows:     []Window{{Start: s(10), End: s(50)}},
				Explanation: "c0 read 0 at 10.000s and wrote 1 (token 1) at 50.000s, but c1's write of 1 (token 2) at 20.000s and c2's write of 2 (token 3) at 30.000s were accepted in between: those updates were lost.",
			}},
		},
		{
			name: "a read of a value never held",
			sections: []sim.Section{
				sect("c0", 1, s(10), s(20), 0, sim.WriteAccepted),
				sect("c1", 2, s(30), s(40), 5, sim.WriteAccepted),
			},
			want: []Violation{{
				Kind: KindResourceSafety, Lock: "L", Clients: []string{"c1"},
				Windows:     []Window{{Start: s(30), End: s(40)}},
				Explanation: "c1 read 5 at 30.000s and its write of 6 (token 2) was accepted at 40.000s, but the resource had never held 5 until then.",
			}},
		},
		{
			name: "a fenced read of a value never held has no direct explanation",
			sections: []sim.Section{
				sect("c0", 1, s(10), s(20), 0, sim.WriteAccepted),
				sect("c1", 0, s(30), s(40), 7, sim.WriteRejected),
			},
			want: []Violation{{
				Kind:        KindResourceSafety,
				Explanation: "porcupine found no order of the critical sections that explains every value read, although no accepted write overwrote another; see the resource visualization.",
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := history(s(100), nil, tt.sections)
			require.Equal(t, Violated, CheckResource(h, 0))
			assert.Equal(t, tt.want, explainResource(h))
		})
	}
}

func TestFencingStory(t *testing.T) {
	readFenced := sect("c1", 33, s(26), 0, 0, sim.WriteNone)
	readFenced.Read, readFenced.ReadRejected = false, true
	tests := []struct {
		name     string
		sections []sim.Section
		want     string
	}{
		{"a rejected write", []sim.Section{
			sect("c1", 33, s(15), s(30), 0, sim.WriteRejected),
			sect("c2", 34, s(21), s(25), 0, sim.WriteAccepted),
		}, "c1's write with token 33 was rejected at 30.000s after c2 wrote with token 34 at 25.000s"},
		{"a rejected read in mark mode", []sim.Section{
			sect("c2", 34, s(21), s(28), 0, sim.WriteAccepted),
			readFenced,
		}, "c1's read with token 33 was rejected at 26.000s after c2 read with token 34 at 21.000s"},
		{"no conflict", []sim.Section{
			sect("c1", 33, s(12), s(13), 0, sim.WriteAccepted),
			sect("c2", 34, s(45), s(46), 1, sim.WriteAccepted),
		}, "no read or write was rejected: the critical sections of the overlapping holders did not conflict at the resource"},
		{"many rejections", []sim.Section{
			sect("c2", 34, s(21), s(22), 0, sim.WriteAccepted),
			sect("c1", 33, s(23), s(24), 1, sim.WriteRejected),
			sect("c1", 33, s(25), s(26), 1, sim.WriteRejected),
			sect("c1", 33, s(27), s(28), 1, sim.WriteRejected),
			sect("c1", 33, s(29), s(30), 1, sim.WriteRejected),
			sect("c1", 33, s(31), s(32), 1, sim.WriteRejected),
		}, "c1's write with token 33 was rejected at 24.000s after c2 wrote with token 34 at 22.000s; " +
			"c1's write with token 33 was rejected at 26.000s after c2 wrote with token 34 at 22.000s; " +
			"c1's write with token 33 was rejected at 28.000s after c2 wrote with token 34 at 22.000s; 2 more rejections"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := history(s(100), []sim.Belief{
				withToken(bel("c1", s(9), s(10), s(40)), 33), withToken(bel("c2", s(11), s(20), s(50)), 34),
			}, tt.sections)
			r := Check(h, Options{})
			require.Equal(t, Violated, r.Verdicts.Of(LockSafety))
			require.Equal(t, Holds, r.Verdicts.Of(ResourceSafety))
			assert.Equal(t, tt.want, r.Fencing)
		})
	}
}

func TestJoinAnd(t *testing.T) {
	assert.Equal(t, "", joinAnd(nil))
	assert.Equal(t, "a", joinAnd([]string{"a"}))
	assert.Equal(t, "a and b", joinAnd([]string{"a", "b"}))
	assert.Equal(t, "a, b and c", joinAnd([]string{"a", "b", "c"}))
}

func TestFmtDuration(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"}, {1200 * time.Millisecond, "1.2s"}, {1200*time.Millisecond + 300, "1.2s"},
		{300 * time.Microsecond, "300µs"}, {300*time.Microsecond + 4, "300µs"}, {1, "1ns"}, {-2, "-2ns"},
	} {
		assert.Equal(t, tt.want, fmtDuration(tt.d), "%d", tt.d)
	}
}
