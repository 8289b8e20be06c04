package locksim

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locksim/locksim/sim"
)

// TestEventTextsShowTheDifference: two events that EventText renders
// alike (times within a millisecond, or only their fields apart) are shown
// with the time in nanoseconds and the fields (outsider3: a replay with
// another seed printed "recorded: #10 0.001s deliver zk c2 #2" twice).
func TestEventTextsShowTheDifference(t *testing.T) {
	ev := func(at sim.Time, text string, f sim.Attrs) []sim.Event {
		return []sim.Event{{Seq: 10, At: at, Kind: "deliver", Proc: "zk", Peer: "c2", Text: text, Fields: f}}
	}
	tests := []struct {
		name  string
		a, b  []sim.Event
		wantA string
		wantB string
	}{
		{"times apart below the millisecond", ev(1323421, "#2", nil), ev(1832057, "#2", nil), "#10 t=1323421ns deliver zk c2 #2", "#10 t=1832057ns deliver zk c2 #2"},
		{"texts apart", ev(1323421, "#2", nil), ev(1323421, "#3", nil), "#10 0.001s deliver zk c2 #2", "#10 0.001s deliver zk c2 #3"},
		{"fields apart", ev(5, "x", sim.Attrs{sim.Int64("n", 1)}), ev(5, "x", sim.Attrs{sim.Int64("n", 2)}), `#10 t=5ns deliver zk c2 x fields={"n":1}`, `#10 t=5ns deliver zk c2 x fields={"n":2}`},
		{"one trace ended", ev(5, "x", nil), nil, "#10 0.000s deliver zk c2 x", "(no event: the trace ended)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, y := EventTexts(tt.a, tt.b, 0)
			assert.Equal(t, tt.wantA, x)
			assert.Equal(t, tt.wantB, y)
			assert.NotEqual(t, x, y)
		})
	}
	assert.Equal(t, "first diverging event #1:\n  recorded: #10 t=1ns deliver zk c2 #2\n  now:      #10 t=2ns deliver zk c2 #2\n",
		DivergenceText(ev(1, "#2", nil), ev(2, "#2", nil), 0, "recorded", "now"))
}
