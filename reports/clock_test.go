package reports

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// idle is a process that does nothing.
type idle struct{}

func (idle) Init(*sim.Env)                             {}
func (idle) Receive(*sim.Env, sim.ProcID, sim.Message) {}
func (idle) Fire(*sim.Env, any)                        {}

// TestClocksMatchKernel replays clock jumps and drift changes from a trace
// and compares every reconstructed offset with what the kernel reported at
// that moment (sim.Kernel.ClockOffset), to the nanosecond.
func TestClocksMatchKernel(t *testing.T) {
	k := sim.New(sim.Config{Seed: 1, KeepTrace: true, Network: sim.NetConfig{Latency: sim.Fixed(time.Millisecond)}})
	a := k.Add("A", func() sim.Process { return idle{} }, sim.ClockSpec{Offset: 1500 * time.Millisecond, DriftPPB: 3_333_333})
	b := k.Add("B", func() sim.Process { return idle{} }, sim.ClockSpec{DriftPPB: -70_000_001})
	k.At(sim.At(2*time.Second), func() { k.JumpWall(a, 30*time.Second) })
	k.At(sim.At(3*time.Second+7), func() { k.SetDrift(a, -123_456_789) })
	k.At(sim.At(3*time.Second+7), func() { k.JumpWall(a, -4*time.Second-3) })
	k.At(sim.At(5*time.Second), func() { k.SetDrift(b, 999_999_999) })
	k.At(sim.At(6*time.Second+1), func() { k.JumpWall(b, -time.Nanosecond) })
	type sample struct {
		at         sim.Time
		wall, mono [2]time.Duration
	}
	var samples []sample
	for i := 0; i <= 40; i++ {
		at := sim.Time(i) * sim.Time(201*time.Millisecond+13)
		k.At(at, func() {
			samples = append(samples, sample{at: at,
				wall: [2]time.Duration{k.ClockOffset(a, sim.Wall), k.ClockOffset(b, sim.Wall)},
				mono: [2]time.Duration{k.ClockOffset(a, sim.Mono), k.ClockOffset(b, sim.Mono)}})
		})
	}
	require.NoError(t, k.Run(sim.At(9*time.Second)))
	setup := Setup{Servers: []Server{{Name: "A"}, {Name: "B"}}, Clocks: []Clock{
		{Proc: "A", Offset: 1500 * time.Millisecond, DriftPPB: 3_333_333},
		{Proc: "B", DriftPPB: -70_000_001},
	}}
	hs, err := Clocks(setup, k.Trace())
	require.NoError(t, err)
	require.Len(t, hs, 2)
	require.Len(t, samples, 41)
	for _, s := range samples {
		for i, h := range hs {
			assert.Equal(t, s.wall[i], h.WallOffset(s.at), "%s wall at %s", h.Proc, s.at)
			assert.Equal(t, s.mono[i], h.MonoOffset(s.at), "%s mono at %s", h.Proc, s.at)
		}
	}
}

// TestWallReaches checks the first true time at which a wall clock reads a
// deadline, across a forward and a backward jump and a rate change.
func TestWallReaches(t *testing.T) {
	h := newClockHistory("C", Clock{DriftPPB: 100_000_000}) // 10% fast
	h.jump(sim.At(time.Second), 5*time.Second)
	h.jump(sim.At(2*time.Second), -8*time.Second)
	h.drift(sim.At(3*time.Second), -500_000_000)
	tests := []struct {
		name     string
		deadline time.Duration // after the epoch
		from, to sim.Time
		want     sim.Time
		ok       bool
	}{
		{"before any change", 550 * time.Millisecond, 0, sim.At(10 * time.Second), sim.At(500 * time.Millisecond), true},
		{"reached by the forward jump", 3 * time.Second, 0, sim.At(10 * time.Second), sim.At(time.Second), true},
		{"already reached at from", 100 * time.Millisecond, sim.At(200 * time.Millisecond), sim.At(10 * time.Second), sim.At(200 * time.Millisecond), true},
		// At 2s the wall reads 7.2s, then steps back to -0.8s: it reads 2s
		// again only later, at half speed after 3s (reading 0.3s there).
		{"not reached before the backward jump", 7300 * time.Millisecond, 0, sim.At(10 * time.Second), 0, false},
		// NB: a slow clock's readings round up (sim's scaled rounds toward
		// the true span), so it reads 2s one nanosecond before 6.4s.
		{"reached again after the jump, at half speed", 2 * time.Second, sim.At(2 * time.Second), sim.At(10 * time.Second), sim.At(6400*time.Millisecond) - 1, true},
		{"not within the span", 2 * time.Second, sim.At(2 * time.Second), sim.At(5 * time.Second), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := sim.Epoch + int64(tt.deadline)
			got, ok := h.WallReaches(d, tt.from, tt.to)
			require.Equal(t, tt.ok, ok)
			if !ok {
				return
			}
			assert.Equal(t, tt.want, got)
			assert.GreaterOrEqual(t, h.Wall(got), d)
			if got > tt.from {
				assert.Less(t, h.Wall(got-1), d, "not the first such time")
			}
		})
	}
}

// TestClocksReadFields checks that clock changes are read from the events'
// typed fields, which survive a JSON Lines round trip, and that a trace
// without them is an error that says so, never a silent wrong clock.
func TestClocksReadFields(t *testing.T) {
	k := sim.New(sim.Config{Seed: 1, KeepTrace: true})
	a := k.Add("A", func() sim.Process { return idle{} }, sim.ClockSpec{})
	k.At(sim.At(time.Second), func() { k.JumpWall(a, -5*time.Second) })
	k.At(sim.At(2*time.Second), func() { k.SetDrift(a, -10_000_000) })
	require.NoError(t, k.Run(sim.At(3*time.Second)))
	var buf bytes.Buffer
	require.NoError(t, sim.WriteJSONL(&buf, k.Trace()))
	assert.Contains(t, buf.String(), `"fields":{"step":-5000000000}`)
	assert.Contains(t, buf.String(), `"fields":{"ppb":-10000000}`)
	tr, err := sim.ReadJSONL(&buf)
	require.NoError(t, err)
	setup := Setup{Servers: []Server{{Name: "A"}}}
	hs, err := Clocks(setup, tr)
	require.NoError(t, err)
	require.Len(t, hs, 1)
	assert.Equal(t, k.ClockOffset(a, sim.Wall), hs[0].WallOffset(sim.At(3*time.Second)))
	assert.Equal(t, k.ClockOffset(a, sim.Mono), hs[0].MonoOffset(sim.At(3*time.Second)))

	for i := range tr {
		tr[i].Fields = nil
	}
	_, err = Clocks(setup, tr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "clock-jump of A): no step field")

	assert.Equal(t, "+1%", driftText(10_000_000))
	assert.Equal(t, "-0.05%", driftText(-500_000))
}
