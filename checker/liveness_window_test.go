package checker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// TestLivenessNamedWindow: a scenario that names the window over which
// liveness is judged (expect.liveness_window) is judged there, with its
// bound for every client, instead of in the fault-free windows; a window
// that never began or is no longer than the bound is not judged, with the
// reason; a history handed over in pieces is judged the same.
func TestLivenessNamedWindow(t *testing.T) {
	// M crashes for good at 1s (faults[1]); c1 waits from 0 and gets the
	// lock at 12s; a partition acts 0..1s (faults[0]) and another from 5s
	// on, never healed (faults[2]), so no fault-free window but 1s..5s.
	crash := fault(s(1), 0, "crash", "M crashed (power)", "M")
	crash.Spec = 2
	part := fault(0, s(1), "partition", "split", "M")
	part.Spec = 1
	forever := fault(s(5), sim.Never, "partition", "split again", "R")
	forever.Spec = 3
	base := func() *sim.History {
		return &sim.History{
			Wants:   []sim.Want{want("c1", 0, s(12), true, "")},
			Beliefs: []sim.Belief{bel("c1", s(11), s(12), s(14))},
			Faults:  []sim.FaultRecord{part, crash, forever},
			End:     s(60),
		}
	}
	tests := []struct {
		name    string
		window  *LivenessWindow
		verdict Verdict
		note    string
		windows []Window
	}{
		{name: "fault-free windows: none longer than the bound", verdict: NotJudged,
			note: "not judged: no fault-free window was longer than the bound of 20s"},
		{name: "after the crash, within 20s: 11s free", window: &LivenessWindow{Fault: 2, Within: 20 * time.Second}, verdict: Holds,
			note:    "judged over the window the scenario names (after faults[1] stopped acting, 1.000s to 60.000s), bound 20s",
			windows: []Window{{Start: s(1), End: s(60)}}},
		{name: "after the crash, within 10s: violated", window: &LivenessWindow{Fault: 2, Within: 10 * time.Second}, verdict: Violated,
			note: "judged over the window the scenario names (after faults[1] stopped acting, 1.000s to 60.000s), bound 10s"},
		{name: "after 3s, within 10s", window: &LivenessWindow{At: s(3), Within: 10 * time.Second}, verdict: Holds,
			note: "judged over the window the scenario names (after 3s, 3.000s to 60.000s), bound 10s"},
		{name: "after a partition that never heals: no window", window: &LivenessWindow{Fault: 3, Within: 10 * time.Second}, verdict: NotJudged,
			note: "not judged: the window the scenario names (after faults[2] stopped acting) begins at or after the end of the run (60.000s)"},
		{name: "after a fault that never acted", window: &LivenessWindow{Fault: 4, Within: 10 * time.Second}, verdict: NotJudged,
			note: "not judged: the window the scenario names (after faults[3] stopped acting) never began: faults[3] never acted"},
		{name: "a window no longer than its bound", window: &LivenessWindow{At: s(50), Within: 10 * time.Second}, verdict: NotJudged,
			note: "not judged: the window the scenario names (after 50s, 50.000s to 60.000s) is no longer than its bound of 10s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{DefaultMaxWait: 20 * time.Second, Settle: time.Second, Window: tt.window}
			r := CheckLiveness(base(), opts)
			assert.Equal(t, tt.verdict, r.Verdict)
			assert.Contains(t, r.Note, tt.note)
			if tt.windows != nil {
				assert.Equal(t, tt.windows, r.Windows)
			}
			if tt.verdict == Violated {
				require.Len(t, r.Violations, 1)
				assert.Contains(t, r.Violations[0].Explanation, "nobody held it in the window the scenario names (after faults[1]) from 1.000s to 12.000s: 11s")
			}

			// Streamed, the piece judged and forgotten at once (a
			// violation keeps it, to judge it whole): the same verdict
			// and note.
			st := NewStream(opts, 0)
			st.Piece(base())
			sr, _, err := st.Result()
			require.NoError(t, err)
			assert.Equal(t, tt.verdict, sr.Verdicts.Of(Liveness))
			assert.Equal(t, r.Note, sr.LivenessNote)
		})
	}
}
