package checker

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// cutAt splits h into pieces at the given quiet points (true times): a
// record goes to the first piece whose end is at or after its start, IDs
// unchanged, each piece with every fault recorded by its end.
func cutAt(h *sim.History, cuts ...sim.Time) []*sim.History {
	ends := append(append([]sim.Time(nil), cuts...), h.End)
	ps := make([]*sim.History, len(ends))
	for i, e := range ends {
		ps[i] = &sim.History{End: e}
		for _, f := range h.Faults {
			if f.At <= e {
				ps[i].Faults = append(ps[i].Faults, f)
			}
		}
	}
	at := func(t sim.Time) int {
		for i, e := range ends {
			if t <= e {
				return i
			}
		}
		return len(ends) - 1
	}
	for _, w := range h.Wants {
		ps[at(w.Start)].Wants = append(ps[at(w.Start)].Wants, w)
	}
	for _, b := range h.Beliefs {
		ps[at(b.AttemptStart)].Beliefs = append(ps[at(b.AttemptStart)].Beliefs, b)
	}
	for _, x := range h.Sections {
		ps[at(x.ReadSent)].Sections = append(ps[at(x.ReadSent)].Sections, x)
	}
	return ps
}

// streamOf feeds the pieces to a Stream that forgets each piece at once
// (retain 0) or keeps them all.
func streamOf(opts Options, retain int, ps []*sim.History) (Result, *sim.History, error) {
	st := NewStream(opts, retain)
	for _, p := range ps {
		st.Piece(p)
	}
	return st.Result()
}

func TestStream(t *testing.T) {
	opts := Options{DefaultMaxWait: 5 * time.Second}
	tests := []struct {
		name string
		h    *sim.History
		cuts []sim.Time
		// whole: the Stream must give up and ask for the whole history.
		whole bool
	}{
		{"resource value carried",
			history(s(30), []sim.Belief{bel("c1", s(1), s(1), s(2)), bel("c2", s(11), s(11), s(12))},
				[]sim.Section{sect("c1", 1, ms(1100), ms(1200), 0, sim.WriteAccepted), sect("c2", 2, ms(11100), ms(11200), 1, sim.WriteAccepted)}),
			[]sim.Time{s(10)}, false},
		{"stale read after the cut",
			history(s(30), []sim.Belief{bel("c1", s(1), s(1), s(2)), bel("c2", s(11), s(11), s(12))},
				[]sim.Section{sect("c1", 1, ms(1100), ms(1200), 0, sim.WriteAccepted), sect("c2", 2, ms(11100), ms(11200), 0, sim.WriteAccepted)}),
			[]sim.Time{s(10)}, true},
		{"token higher after the cut",
			history(s(30), []sim.Belief{withToken(bel("c1", s(1), s(1), s(2)), 5), withToken(bel("c2", s(11), s(11), s(12)), 6)},
				[]sim.Section{sect("c1", 5, ms(1100), ms(1200), 0, sim.WriteAccepted), sect("c2", 6, ms(11100), ms(11200), 1, sim.WriteAccepted)}),
			[]sim.Time{s(10)}, false},
		{"token lower after the cut",
			history(s(30), []sim.Belief{withToken(bel("c1", s(1), s(1), s(2)), 5), withToken(bel("c2", s(11), s(11), s(12)), 3)},
				[]sim.Section{sect("c1", 5, ms(1100), ms(1200), 0, sim.WriteAccepted), sect("c2", 3, ms(11100), ms(11200), 1, sim.WriteAccepted)}),
			[]sim.Time{s(10)}, true},
		{"token repeated after the cut",
			history(s(30), []sim.Belief{withToken(bel("c1", s(1), s(1), s(2)), 5), withToken(bel("c2", s(11), s(11), s(12)), 5)},
				[]sim.Section{sect("c1", 5, ms(1100), ms(1200), 0, sim.WriteAccepted), sect("c2", 5, ms(11100), ms(11200), 1, sim.WriteAccepted)}),
			[]sim.Time{s(10)}, true},
		{"overlap after the cut",
			history(s(30), []sim.Belief{bel("c1", s(1), s(1), s(2)), bel("c1", s(11), s(11), s(14)), bel("c2", s(12), s(12), s(13))}, nil),
			[]sim.Time{s(10)}, true},
		{"longest wait in a later piece",
			func() *sim.History {
				h := history(s(30), []sim.Belief{bel("c1", s(1), s(1), s(2)), bel("c2", s(11), s(14), s(15))}, nil)
				h.Wants = []sim.Want{want("c1", s(1), s(1), true, ""), want("c2", s(11), s(14), true, "")}
				return h
			}(),
			[]sim.Time{s(10)}, false},
		{"liveness violated after the cut",
			func() *sim.History {
				h := history(s(30), []sim.Belief{bel("c1", s(1), s(1), s(2)), bel("c2", s(11), s(20), s(21))}, nil)
				h.Wants = []sim.Want{want("c1", s(1), s(1), true, ""), want("c2", s(11), s(20), true, "")}
				return h
			}(),
			[]sim.Time{s(10)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := cutAt(tt.h, tt.cuts...)
			want := Check(tt.h, opts)

			// Nothing forgotten: Check on the joined pieces.
			got, h, err := streamOf(opts, 1<<20, ps)
			require.NoError(t, err)
			require.NotNil(t, h)
			assert.Equal(t, want, got)

			// Every piece forgotten at once.
			got, h, err = streamOf(opts, 0, ps)
			if tt.whole {
				var nw *NeedWhole
				require.True(t, errors.As(err, &nw), "want a NeedWhole error, got %v", err)
				assert.NotEmpty(t, nw.Why)
				return
			}
			require.NoError(t, err)
			assert.Nil(t, h)
			assert.Equal(t, want, got)
		})
	}
}

// TestStreamKeepsPiecesWhileACrashAwaitsItsRestart: a crash recorded
// without an end may still be ended by a restart the schedule applies
// later, which changes the fault-free windows before it: the Stream keeps
// the pieces until the run ends.
func TestStreamKeepsPiecesWhileACrashAwaitsItsRestart(t *testing.T) {
	h := history(s(30), []sim.Belief{bel("c1", s(1), s(1), s(2)), bel("c1", s(11), s(11), s(12))}, nil)
	h.Faults = []sim.FaultRecord{fault(s(3), 0, "crash", "A crashed", "A"), fault(s(20), 0, "restart", "A restarted", "A")}
	ps := cutAt(h, s(10), s(15))
	st := NewStream(Options{DefaultMaxWait: 5 * time.Second}, 0)
	st.Piece(ps[0])
	st.Piece(ps[1])
	assert.Equal(t, 2, st.Held(), "pieces were forgotten before the restart was known")
	st.Piece(ps[2])
	assert.Equal(t, 0, st.Held())
	got, _, err := st.Result()
	require.NoError(t, err)
	assert.Equal(t, Check(h, Options{DefaultMaxWait: 5 * time.Second}), got)
}

// TestCheckBoundsViolations: a history broken over and over lists the
// first MaxViolations violations in full and counts the rest.
func TestCheckBoundsViolations(t *testing.T) {
	for _, n := range []int{MaxViolations - 1, MaxViolations, MaxViolations + 50} {
		var bs []sim.Belief
		for i := int64(0); i < int64(n); i++ {
			bs = append(bs, bel("c1", s(10*i+1), s(10*i+1), s(10*i+3)), bel("c2", s(10*i+2), s(10*i+2), s(10*i+4)))
		}
		r := Check(history(s(10*int64(n)+10), bs, nil), Options{})
		require.Equal(t, Violated, r.Verdicts.Of(LockSafety))
		assert.Len(t, r.Violations, min(n, MaxViolations))
		assert.Equal(t, max(0, n-MaxViolations), r.ViolationsOmitted)
		assert.Equal(t, s(2), r.Violations[0].Windows[0].Start, "the first violations are kept")
	}
}

// TestStreamJudgesCountersWithTheLastPiece: the kernel keeps the stock
// counters' records whole until the end of the run, so they arrive with the
// last piece; a run whose lock pieces were forgotten must still judge them
// (a lost sale sends the run back to be judged whole, as any violation).
func TestStreamJudgesCountersWithTheLastPiece(t *testing.T) {
	opts := Options{DefaultMaxWait: 5 * time.Second}
	for _, tt := range []struct {
		name  string
		ops   []sim.CounterOp
		whole bool
	}{
		{"sales in turn", []sim.CounterOp{load(3), buy("c3", "get-set", ms(10), ms(12), 3), buy("c4", "get-set", ms(13), ms(15), 2)}, false},
		{"a lost sale", []sim.CounterOp{load(7), buy("c3", "get-set", ms(10), ms(20), 7), buy("c4", "get-set", ms(11), ms(21), 7)}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := history(s(30), []sim.Belief{bel("c1", s(1), s(1), s(2)), bel("c2", s(11), s(11), s(12))},
				[]sim.Section{sect("c1", 1, ms(1100), ms(1200), 0, sim.WriteAccepted), sect("c2", 2, ms(11100), ms(11200), 1, sim.WriteAccepted)})
			for i, op := range tt.ops {
				op.ID = i
				h.Counter = append(h.Counter, op)
			}
			ps := cutAt(h, s(10))
			ps[len(ps)-1].Counter = h.Counter
			want := Check(h, opts)
			got, _, err := streamOf(opts, 0, ps)
			if tt.whole {
				require.Equal(t, Violated, want.Verdicts.Of(ResourceSafety))
				var nw *NeedWhole
				require.True(t, errors.As(err, &nw), "want a NeedWhole error, got %v", err)
				assert.Contains(t, nw.Why, "stock counters")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, want.Verdicts.Of(ResourceSafety), got.Verdicts.Of(ResourceSafety))
			assert.Equal(t, want.Verdicts.Of(LockSafety), got.Verdicts.Of(LockSafety))
		})
	}
}

// TestStreamWaitAcrossACut: under contention the kernel cuts at a grant
// while another client waits (sim/stream.go, contendedCut): the open want
// goes to the next piece, and the wait is named on both sides with its
// true start (WaitsOut, WaitsIn). Judged piece by piece, the longest wait,
// the latency and the unavailable time are those of the whole history;
// without the carried wait they are not; a stretch over the bound after
// the cut asks for the whole history.
func TestStreamWaitAcrossACut(t *testing.T) {
	opts := Options{DefaultMaxWait: 5 * time.Second}
	// c1 holds 1s..4.5s, c3 5s..8s (wanted from 3s), c2 wants from 2s
	// (giving up once at 3s) until it gets the lock at hold (its belief
	// hold..hold+1s). The cut falls at 5s, c3's grant, c2 waiting.
	whole := func(hold sim.Time) *sim.History {
		h := history(s(30), []sim.Belief{bel("c1", s(1), s(1), ms(4500)), bel("c3", s(3), s(5), s(8)), bel("c2", ms(8500), hold, hold+s(1))}, nil)
		h.Wants = []sim.Want{want("c1", s(1), s(1), true, ""), want("c2", s(2), s(3), false, "gave-up"), want("c3", s(3), s(5), true, ""), want("c2", ms(3500), hold, true, "")}
		return h
	}
	pieces := func(h *sim.History, carry bool) []*sim.History {
		p := &sim.History{Wants: h.Wants[:3], Beliefs: h.Beliefs[:1], End: s(5)}
		q := &sim.History{Wants: h.Wants[3:], Beliefs: h.Beliefs[1:], End: h.End, Since: s(5)}
		if carry {
			p.WaitsOut = []sim.OpenWait{{Client: "c2", Lock: "L", Start: s(2)}}
			q.WaitsIn = p.WaitsOut
		}
		return []*sim.History{p, q}
	}
	h := whole(s(9))
	want := Check(h, opts)
	require.Equal(t, Holds, want.Verdicts.Of(Liveness))
	require.Equal(t, 7*time.Second, want.Stats.Latency.Max, "c2 waited 2s..9s")
	for _, retain := range []int{0, 1 << 20} {
		got, _, err := streamOf(opts, retain, pieces(h, true))
		require.NoError(t, err)
		assert.Equal(t, want.Verdicts, got.Verdicts)
		assert.Equal(t, want.LongestWait, got.LongestWait)
		assert.Equal(t, want.LongestWaitClient, got.LongestWaitClient)
		assert.Equal(t, want.Stats, got.Stats, "retain %d", retain)
	}
	// Without the carried wait, the piece after the cut sees c2 wait from
	// 3.5s with no belief before 5s: a free stretch that never was.
	got, _, err := streamOf(opts, 0, pieces(h, false))
	require.NoError(t, err)
	assert.NotEqual(t, want.Stats, got.Stats)

	// c2 gets the lock at 14.5s: free 8s..14.5s while it waited, over
	// its bound of 5s, after the cut: the whole history decides.
	h = whole(ms(14500))
	require.Equal(t, Violated, Check(h, opts).Verdicts.Of(Liveness))
	_, _, err = streamOf(opts, 0, pieces(h, true))
	var nw *NeedWhole
	require.True(t, errors.As(err, &nw), "want a NeedWhole error, got %v", err)
}
