package locksim

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/sim"
)

// TestKeyEventsKeepsWhatTheSummaryPrints feeds traces of every length to
// the bounded collector and compares it with the whole list of key events:
// the first events, the last ones, and the omitted middle with its span.
func TestKeyEventsKeepsWhatTheSummaryPrints(t *testing.T) {
	for _, max := range []int{-1, 1, 4, 5, 40} {
		for n := 0; n <= 60; n++ {
			t.Run(fmt.Sprintf("max=%d/n=%d", max, n), func(t *testing.T) {
				k := newKeyEvents(max)
				var all []sim.Event
				for i := 0; i < n; i++ {
					// Every other event is not a key event.
					noise := sim.Event{Seq: uint64(2 * i), At: sim.Time(10 * i), Kind: sim.KindSend}
					e := sim.Event{Seq: uint64(2*i + 1), At: sim.Time(10*i + 1), Kind: sim.KindAcquired}
					k.add(&noise)
					k.add(&e)
					all = append(all, e)
				}
				shown := append(append([]sim.Event(nil), k.first...), k.lastEvents()...)
				if max <= 0 || n <= max {
					assert.Equal(t, append([]sim.Event{}, all...), append([]sim.Event{}, shown...), "everything is shown")
					assert.Zero(t, k.omitted)
					return
				}
				tail := max / 4
				head := max - tail
				assert.Equal(t, all[:head], k.first)
				assert.Equal(t, all[n-tail:], append([]sim.Event{}, k.lastEvents()...))
				assert.Equal(t, n-max, k.omitted)
				assert.Equal(t, all[head].At, k.omittedFrom)
				assert.Equal(t, all[n-tail-1].At, k.omittedTo)
			})
		}
	}
	t.Run("the initial load is not a key event", func(t *testing.T) {
		k := newKeyEvents(-1)
		k.add(&sim.Event{Kind: "loaded", At: 0})
		k.add(&sim.Event{Kind: "loaded", At: 5})
		assert.Len(t, k.first, 1)
	})
}

func TestRelativeWallTimes(t *testing.T) {
	tests := []struct{ in, want string }{
		{`"lock" deadline=1767225610010 now=1767225630300`, `"lock" deadline=+10.010s now=+30.300s`},
		{"deadline=1767225599000", "deadline=-1.000s"},
		{"value=1767225610010123", "value=1767225610010123"},
		{"count=1234567890123", "count=1234567890123"},
		{"no numbers", "no numbers"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, sim.RelativeWallTimes(tt.in))
		})
	}
}

// TestKeyEventsCopiesLentEvents: the kernel lends the summary its events
// (sim.Config.TraceBorrow) and reuses their memory for the next one, so
// what the collector keeps must not change when the lent event, its text
// and its fields are overwritten afterwards.
func TestKeyEventsCopiesLentEvents(t *testing.T) {
	for _, max := range []int{-1, 4, 40} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			owned, lent := newKeyEvents(max), newKeyEvents(max)
			var e sim.Event
			text := make([]byte, 0, 64)
			fields := make(sim.Attrs, 1)
			for i := 0; i < 30; i++ {
				text = fmt.Appendf(text[:0], "lock %02d", i)
				fields[0] = sim.Str("key", fmt.Sprint("k", i))
				e = sim.Event{Seq: uint64(i), At: sim.Time(i), Kind: sim.KindAcquired, Proc: "c1",
					Text: unsafe.String(&text[0], len(text)), Fields: fields}
				owned.add(&sim.Event{Seq: e.Seq, At: e.At, Kind: e.Kind, Proc: e.Proc, Text: string(text), Fields: fields.Clone()})
				lent.add(&e)
			}
			copy(text, "XXXXXXX")
			fields[0] = sim.Str("key", "overwritten")
			e = sim.Event{}
			assert.Equal(t, owned.first, lent.first)
			assert.Equal(t, owned.lastEvents(), lent.lastEvents())
			assert.Equal(t, owned.omitted, lent.omitted)
		})
	}
}

// TestEveryVerdictSaysWhy: the summary gives every verdict a reason, and a
// verdict that holds because an algorithm refused a grant names the event
// that refused it (antirez's step 3 in redlock-pause-in-flight: five OKs,
// a negative validity), beside the scenario's own why.
func TestEveryVerdictSaysWhy(t *testing.T) {
	s, err := Builtin("redlock-pause-in-flight")
	require.NoError(t, err)
	r, err := Run(s, Options{})
	require.NoError(t, err)
	var b strings.Builder
	r.WriteSummary(&b, "trace.jsonl")
	out := b.String()
	assert.Contains(t, out, "why (the scenario's story):\n  c1 sends SET NX to all five nodes at once")
	lines := strings.Split(out, "\n")
	verdicts := 0
	for i, l := range lines {
		for _, p := range checker.Properties() {
			if strings.HasPrefix(l, "  "+p.About().Title+" ") {
				verdicts++
				require.Less(t, i+1, len(lines))
				assert.True(t, strings.HasPrefix(lines[i+1], "      why: "), "%q has no why: %q", l, lines[i+1])
			}
		}
	}
	assert.Equal(t, len(checker.Properties()), verdicts, out)
	assert.Regexp(t, `      why: no two clients believed .*; c1 refused the grant at 15\.000s by its validity check: 5/5 nodes, validity -5\.1\d*s: failed`, out)
	assert.Contains(t, out, "c1     client           5/5 nodes, validity -5.1", "the refusal is a key event")
}

// TestReleaseLineSaysWhatHappened: the summary does not call a release
// that removed nothing "(released)": the release line says the release
// was sent (the belief ends there), and the client's finding that the key
// no longer held its value follows it as a key event (single-gc-pause:
// c1 releases after c2 took the lock).
func TestReleaseLineSaysWhatHappened(t *testing.T) {
	s, err := Builtin("single-gc-pause")
	require.NoError(t, err)
	r, err := Run(s, Options{})
	require.NoError(t, err)
	var b strings.Builder
	r.WriteSummary(&b, "trace.jsonl")
	out := b.String()
	assert.NotContains(t, out, "(released)")
	assert.Regexp(t, `c1     released         lock \(release sent\)\n\s+\S+  c1     client           release: lock no longer held our value\n`, out)
}
