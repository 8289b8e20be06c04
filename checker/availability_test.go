package checker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// TestAvailabilityStrip: the stats say when each lock stood free while a
// client waited, in bins over the run whose sums are the unavailable
// time; a long run keeps at most MaxAvailabilityBins bins; a history
// judged in pieces gives the same strip as judged whole.
func TestAvailabilityStrip(t *testing.T) {
	// c1 holds L 0..2s; c2 wants it from 1s, gets it at 3.5s (free
	// 2s..3.5s while c2 waited); c3 wants M from 10s and gets it at
	// 10.25s.
	wants := []sim.Want{
		want("c1", 0, 0, true, ""),
		want("c2", s(1), ms(3500), true, ""),
		{Client: "c3", Lock: "M", Start: s(10), End: ms(10250), Got: true},
	}
	beliefs := []sim.Belief{bel("c1", 0, 0, s(2)), bel("c2", s(1), ms(3500), s(4)), onLock("M", bel("c3", s(10), ms(10250), s(11)))}
	// 2s..3.5s in 128ms bins: 48ms of bin 15 (1.920s..2.048s), bins 16
	// to 26 whole, 44ms of bin 27 (3.456s..3.584s).
	lStrip := map[int]time.Duration{15: 48 * time.Millisecond, 27: 44 * time.Millisecond}
	for i := 16; i <= 26; i++ {
		lStrip[i] = 128 * time.Millisecond
	}
	tests := []struct {
		name    string
		end     sim.Time
		bin     time.Duration
		bins    int
		l, m    map[int]time.Duration // non-zero bins of L and M
		pieceAt sim.Time              // where the pieces are cut (0: whole only)
	}{
		{name: "20s run: 1ms bins would be 20000, so 128ms bins", end: s(20), bin: 128 * time.Millisecond, bins: 157,
			l: lStrip, m: map[int]time.Duration{78: 112 * time.Millisecond, 79: 128 * time.Millisecond, 80: 10 * time.Millisecond}},
		{name: "a day: 256 bins at most", end: sim.At(24 * time.Hour), bin: 524288 * time.Millisecond, bins: 165,
			l: map[int]time.Duration{0: 1500 * time.Millisecond}, m: map[int]time.Duration{0: 250 * time.Millisecond}},
		{name: "cut in two pieces at 5s", end: s(20), pieceAt: s(5), bin: 128 * time.Millisecond, bins: 157,
			l: lStrip, m: map[int]time.Duration{78: 112 * time.Millisecond, 79: 128 * time.Millisecond, 80: 10 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &sim.History{Wants: wants, Beliefs: beliefs, End: tt.end}
			st := StatsOf(h)
			av := st.Availability
			require.NotNil(t, av)
			assert.Equal(t, tt.bin, av.Bin)
			assert.Equal(t, tt.end, av.End)
			require.Len(t, av.Locks, 2)
			assert.Equal(t, "L", av.Locks[0].Lock)
			assert.Equal(t, "M", av.Locks[1].Lock)
			for i, want := range []map[int]time.Duration{tt.l, tt.m} {
				got := map[int]time.Duration{}
				for b, d := range av.Locks[i].Unavailable {
					if d != 0 {
						got[b] = d
					}
				}
				assert.Equal(t, want, got, av.Locks[i].Lock)
				assert.Len(t, av.Locks[i].Unavailable, tt.bins)
			}
			assert.Equal(t, st.Unavailable, av.Locks[0].Total()+av.Locks[1].Total())

			// The same history handed to a Stream: in one piece, or cut
			// at pieceAt, every piece forgotten at once.
			stream := NewStream(Options{}, 0)
			if tt.pieceAt > 0 {
				// The first piece's bins are 32ms wide; the second's
				// end makes them 128ms, summed four by four.
				first := &sim.History{Wants: wants[:2], Beliefs: beliefs[:2], End: tt.pieceAt}
				rest := &sim.History{Wants: wants[2:], Beliefs: beliefs[2:], End: tt.end}
				stream.Piece(first)
				stream.Piece(rest)
			} else {
				stream.Piece(h)
			}
			r, _, err := stream.Result()
			require.NoError(t, err)
			assert.Equal(t, av, r.Stats.Availability, "streamed and whole strips differ")
		})
	}
}

// TestAvailabilityNone: nobody waited for a free lock, no strip.
func TestAvailabilityNone(t *testing.T) {
	h := &sim.History{Wants: []sim.Want{want("c1", 0, 0, true, "")}, Beliefs: []sim.Belief{bel("c1", 0, 0, s(2))}, End: s(5)}
	assert.Nil(t, StatsOf(h).Availability)
}
