package sim

import (
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refScaled is scaled computed with big integers from its definition:
// d*(1e9+ppb)/1e9, rounded toward d (down for a fast clock, up for a slow
// one).
func refScaled(d, ppb int64) *big.Int {
	num := new(big.Int).Mul(big.NewInt(d), big.NewInt(PPB+ppb))
	q, m := new(big.Int).DivMod(num, big.NewInt(PPB), new(big.Int)) // floor
	if ppb < 0 && m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

func TestScaledExact(t *testing.T) {
	tests := []struct {
		name   string
		d, ppb int64
		want   int64
	}{
		{"no drift", 123_456_789_012, 0, 123_456_789_012},
		{"zero span", 0, 999_999_999, 0},
		{"1ppb over one second", 1_000_000_000, 1, 1_000_000_001},
		{"1ppb just under one second rounds down", 999_999_999, 1, 999_999_999},
		{"1ppb over 100 days", 8_640_000_000_000_000, 1, 8_640_000_008_640_000},
		{"almost twice as fast, 1ns", 1, 999_999_999, 1},
		{"twice as fast", 4_000_000_000_000_000_000, PPB, 8_000_000_000_000_000_000},
		{"almost stopped, 1ns rounds up", 1, -999_999_999, 1},
		{"almost stopped, 1e18ns", 1_000_000_000_000_000_000, -999_999_999, 1_000_000_000},
		{"a third slow", 3_000_000_000, -333_333_333, 2_000_000_001},
		{"1% slow over 1e18ns", 1_000_000_000_000_000_000, -10_000_000, 990_000_000_000_000_000},
		{"1% slow over 1e18+1ns rounds up", 1_000_000_000_000_000_001, -10_000_000, 990_000_000_000_000_001},
		{"1% fast over 1e18+1ns rounds down", 1_000_000_000_000_000_001, 10_000_000, 1_010_000_000_000_000_001},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, scaled(tt.d, tt.ppb))
			assert.Equal(t, tt.want, refScaled(tt.d, tt.ppb).Int64())
		})
	}
}

// TestScaledMatchesReference compares scaled with the big-integer reference
// over random spans up to 4e18 ns (127 years) and random rates of both signs.
func TestScaledMatchesReference(t *testing.T) {
	r := NewRand(7, "scaled")
	for i := 0; i < 20000; i++ {
		d := r.Int63n(4_000_000_000_000_000_000)
		if i%2 == 0 {
			d = r.Int63n(10_000_000_000) // spans around the 1e9 boundary
		}
		ppb := r.Int63n(2*PPB) - PPB + 1 // (-1e9, 1e9]
		require.Equal(t, refScaled(d, ppb).Int64(), scaled(d, ppb), "scaled(%d, %d)", d, ppb)
	}
}

func TestUnscaledExact(t *testing.T) {
	tests := []struct {
		name      string
		want, ppb int64
		d         int64
	}{
		{"nothing to wait", 0, 10_000_000, 0},
		{"negative", -5, 10_000_000, 0},
		{"no drift", 7_000_000_000, 0, 7_000_000_000},
		{"25% fast", 10_000_000_000, 250_000_000, 8_000_000_000},
		{"half speed reaches 10s half a ns early", 10_000_000_000, -500_000_000, 19_999_999_999},
		{"twice as fast, odd target", 3, PPB, 2},
		{"twice as fast, even target", 2, PPB, 1},
		{"almost twice as fast, 1ns", 1, 999_999_999, 1},
		{"almost stopped", 1_000_000_000, -999_999_999, 999_999_999_000_000_001},
		{"out of reach", math.MaxInt64, -500_000_000, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.d, unscaled(tt.want, tt.ppb))
		})
	}
}

// TestUnscaledIsSmallestSpan checks the defining property of unscaled over
// random targets (up to 3e18 ns) and rates of both signs: d reaches want,
// d-1 does not.
func TestUnscaledIsSmallestSpan(t *testing.T) {
	r := NewRand(8, "unscaled")
	for i := 0; i < 20000; i++ {
		want := r.Int63n(3_000_000_000_000_000_000) + 1
		if i%2 == 0 {
			want = r.Int63n(5_000_000_000) + 1
		}
		ppb := r.Int63n(2*PPB) - PPB + 1
		d := unscaled(want, ppb)
		if d == math.MaxInt64 { // out of reach: a very slow clock needs d > 2*want
			require.Negative(t, refScaled(math.MaxInt64-1, ppb).Cmp(big.NewInt(want)), "unscaled(%d, %d) out of reach", want, ppb)
			continue
		}
		require.GreaterOrEqual(t, d, int64(1), "unscaled(%d, %d)", want, ppb)
		require.GreaterOrEqual(t, refScaled(d, ppb).Cmp(big.NewInt(want)), 0, "scaled(unscaled(%d, %d)=%d) < want", want, ppb, d)
		require.Negative(t, refScaled(d-1, ppb).Cmp(big.NewInt(want)), "unscaled(%d, %d)=%d is not the smallest", want, ppb, d)
	}
}

func TestRateFromDrift(t *testing.T) {
	tests := []struct {
		name    string
		drift   float64
		ppb     int64
		wantErr bool
	}{
		{"none", 0, 0, false},
		{"1% fast", 0.01, 10_000_000, false},
		{"1% slow", -0.01, -10_000_000, false},
		{"twice as fast", 1, PPB, false},
		{"stopped", -1, 0, true},
		{"reversed", -1.5, 0, true},
		{"too fast", 1.01, 0, true},
		{"NaN", math.NaN(), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ppb, err := RateFromDrift(tt.drift)
			if tt.wantErr {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "drift")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.ppb, ppb)
		})
	}
}

// TestReadClock checks both clocks of a process under offsets, drift, jumps
// and drift changes, read through Kernel.ReadClock at true time 10s.
func TestReadClock(t *testing.T) {
	const s = time.Second
	tests := []struct {
		name      string
		spec      ClockSpec
		faults    func(k *Kernel, id ProcID)
		at        time.Duration
		wall      time.Duration // reading minus Epoch
		mono      time.Duration
		wallDrift time.Duration // ClockOffset(Wall)
	}{
		{name: "true time", at: 10 * s, wall: 10 * s, mono: 10 * s},
		{name: "offset moves the wall clock only", spec: ClockSpec{Offset: 5 * s}, at: 10 * s, wall: 15 * s, mono: 10 * s, wallDrift: 5 * s},
		{name: "negative offset", spec: ClockSpec{Offset: -3 * s}, at: 10 * s, wall: 7 * s, mono: 10 * s, wallDrift: -3 * s},
		{name: "1% fast", spec: ClockSpec{DriftPPB: 10_000_000}, at: 10 * s, wall: 10100 * ms, mono: 10100 * ms, wallDrift: 100 * ms},
		{name: "1% slow", spec: ClockSpec{DriftPPB: -10_000_000}, at: 10 * s, wall: 9900 * ms, mono: 9900 * ms, wallDrift: -100 * ms},
		{
			name:   "forward jump",
			faults: func(k *Kernel, id ProcID) { k.At(At(2*s), func() { k.JumpWall(id, 30*s) }) },
			at:     10 * s, wall: 40 * s, mono: 10 * s, wallDrift: 30 * s,
		},
		{
			name:   "backward jump",
			faults: func(k *Kernel, id ProcID) { k.At(At(2*s), func() { k.JumpWall(id, -5*s) }) },
			at:     10 * s, wall: 5 * s, mono: 10 * s, wallDrift: -5 * s,
		},
		{
			name:   "drift change",
			faults: func(k *Kernel, id ProcID) { k.At(At(4*s), func() { k.SetDrift(id, 500_000_000) }) },
			at:     10 * s, wall: 13 * s, mono: 13 * s, wallDrift: 3 * s,
		},
		{
			name: "slow drift then a jump, with an offset",
			spec: ClockSpec{Offset: 2 * s},
			faults: func(k *Kernel, id ProcID) {
				k.At(At(4*s), func() { k.SetDrift(id, -500_000_000) })
				k.At(At(6*s), func() { k.JumpWall(id, 1*s) })
			},
			at: 10 * s, wall: 10 * s, mono: 7 * s, wallDrift: 0,
		},
		{
			name: "drift back to zero keeps the accumulated error",
			spec: ClockSpec{DriftPPB: 100_000_000},
			faults: func(k *Kernel, id ProcID) {
				k.At(At(5*s), func() { k.SetDrift(id, 0) })
			},
			at: 10 * s, wall: 10500 * ms, mono: 10500 * ms, wallDrift: 500 * ms,
		},
		{
			name: "a third slow, exact to the nanosecond",
			spec: ClockSpec{DriftPPB: -333_333_333},
			at:   3 * s, wall: 2_000_000_001, mono: 2_000_000_001, wallDrift: -999_999_999,
		},
		{
			name:   "a jump under drift leaves the monotonic clock exact",
			spec:   ClockSpec{DriftPPB: -333_333_333},
			faults: func(k *Kernel, id ProcID) { k.At(At(s+1), func() { k.JumpWall(id, s) }) },
			at:     3 * s, wall: 3_000_000_001, mono: 2_000_000_001, wallDrift: 1,
		},
		{
			name: "1ppb over 100 days",
			spec: ClockSpec{DriftPPB: 1},
			at:   100 * 24 * time.Hour, wall: 100*24*time.Hour + 8640*time.Microsecond, mono: 100*24*time.Hour + 8640*time.Microsecond,
			wallDrift: 8640 * time.Microsecond,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(Config{Seed: 1})
			id := w.addClock("p", hooks{}, tt.spec)
			if tt.faults != nil {
				tt.faults(w.k, id)
			}
			w.run(tt.at)
			require.Equal(t, At(tt.at), w.k.Now())
			assert.Equal(t, Epoch+int64(tt.wall), w.k.ReadClock(id, Wall), "wall")
			assert.Equal(t, int64(tt.mono), w.k.ReadClock(id, Mono), "mono")
			assert.Equal(t, tt.wallDrift, w.k.ClockOffset(id, Wall), "wall offset")
			assert.Equal(t, tt.mono-tt.at, w.k.ClockOffset(id, Mono), "mono offset")
		})
	}
}

// TestEnvClockReadings checks what a process reads through its Env,
// including WallMs (Redis' mstime) before the Unix epoch.
func TestEnvClockReadings(t *testing.T) {
	var wall, wallMs, mono, read int64
	w := newWorld(Config{Seed: 1})
	w.addClock("p", hooks{init: func(env *Env) {
		env.After(Mono, 1500*ms, "read")
	}, fire: func(env *Env, _ any) {
		wall, wallMs, mono, read = env.Wall(), env.WallMs(), env.Mono(), env.Read(Wall)
	}}, ClockSpec{Offset: -time.Duration(Epoch) - 2*time.Second})
	w.run(2 * time.Second)
	assert.Equal(t, int64(-500*ms), wall)
	assert.Equal(t, wall, read)
	assert.Equal(t, int64(-500), wallMs)
	assert.Equal(t, int64(1500*ms), mono)
}

func TestDriftOutOfRangePanics(t *testing.T) {
	k := New(Config{Seed: 1})
	assert.Panics(t, func() { k.Add("p", func() Process { return &probe{} }, ClockSpec{DriftPPB: -PPB}) })
	id := k.Add("q", func() Process { return &probe{w: &world{k: k}} }, ClockSpec{})
	assert.Panics(t, func() { k.SetDrift(id, PPB+1) })
	assert.NotPanics(t, func() { k.SetDrift(id, PPB) })
}
