package sim

import (
	"math"
	"math/bits"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRandGolden pins the generator: the draws for a seed are fixed by
// rand.go alone (values checked against an independent implementation of
// SplitMix64 seeding and xoshiro256**).
func TestRandGolden(t *testing.T) {
	r := NewRand(1, "proc/a")
	assert.Equal(t, uint64(0x4b5f44f5f3277ebf), r.Uint64())
	assert.Equal(t, uint64(0x559027425be05437), r.Uint64())
	assert.Equal(t, uint64(0x89127dcbe12d3a26), r.Uint64())
	assert.Equal(t, uint64(0x21382ef092ed7068), NewRand(0, "").Uint64())
}

func draws(r *Rand, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = r.Uint64()
	}
	return out
}

func TestRandStreams(t *testing.T) {
	tests := []struct {
		name       string
		seedA      uint64
		nameA      string
		seedB      uint64
		nameB      string
		wantEqual  bool
		wantEqualF float64 // expected fraction of equal bits when different
	}{
		{"same seed and name", 5, "proc/a", 5, "proc/a", true, 0},
		{"different names", 5, "proc/a", 5, "proc/b", false, 0.5},
		{"similar names", 5, "net/a", 5, "net/a ", false, 0.5},
		{"different seeds", 5, "proc/a", 6, "proc/a", false, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := draws(NewRand(tt.seedA, tt.nameA), 2000), draws(NewRand(tt.seedB, tt.nameB), 2000)
			if tt.wantEqual {
				assert.Equal(t, a, b)
				return
			}
			same := 0
			for i := range a {
				same += 64 - bits.OnesCount64(a[i]^b[i])
			}
			frac := float64(same) / float64(64*len(a))
			assert.InDelta(t, tt.wantEqualF, frac, 0.01, "fraction of equal bits")
		})
	}
}

// TestRandIndependentOfOtherComponents: adding a process (which draws from
// its own streams) does not change another process's draws.
func TestRandIndependentOfOtherComponents(t *testing.T) {
	run := func(extra bool) []int64 {
		var got []int64
		w := newWorld(Config{Seed: 11, Network: NetConfig{Latency: Range{Lo: ms, Hi: 9 * ms}}})
		if extra {
			w.add("x", hooks{init: func(env *Env) {
				env.Rand().Uint64()
				send(env, "a", "hello") // draws from x's network stream
			}})
		}
		w.add("a", hooks{
			init: func(env *Env) { env.After(Mono, ms, nil) },
			fire: func(env *Env, _ any) {
				for i := 0; i < 5; i++ {
					got = append(got, env.Rand().Int63n(1000))
				}
			},
		})
		w.run(time.Second)
		return got
	}
	assert.Equal(t, run(false), run(true))
}

// TestRandSurvivesRestart: a process's stream is the machine's, it keeps
// drawing across a restart.
func TestRandSurvivesRestart(t *testing.T) {
	var got []uint64
	w := newWorld(Config{Seed: 3})
	p := w.add("p", hooks{init: func(env *Env) { got = append(got, env.Rand().Uint64()) }})
	w.at(ms, func() { w.k.Crash(p, CrashProcess) })
	w.at(2*ms, func() { w.k.Restart(p) })
	w.run(time.Second)
	assert.Equal(t, draws(NewRand(3, "proc/p"), 2), got)
	assert.Equal(t, draws(NewRand(3, "faults"), 3), draws(w.k.Rand("faults"), 3))
}

func TestUint64nRange(t *testing.T) {
	tests := []struct {
		name string
		n    uint64
	}{
		{"one", 1},
		{"two", 2},
		{"three", 3},
		{"thousand", 1000},
		{"2^32+1", 1<<32 + 1},
		{"2^63", 1 << 63},
		{"2^63+1", 1<<63 + 1},
		{"max", math.MaxUint64},
	}
	r := NewRand(1, "range")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := 0; i < 10000; i++ {
				v := r.Uint64n(tt.n)
				require.Less(t, v, tt.n)
			}
		})
	}
	assert.Panics(t, func() { r.Uint64n(0) })
}

// TestUint64nUnbiased checks uniformity where a naive modulo would be
// visibly biased: for n = 1.5*2^63, x mod n puts half of all draws below
// n/3 instead of a third.
func TestUint64nUnbiased(t *testing.T) {
	r := NewRand(2, "bias")
	const draws = 60000
	n := uint64(1<<63 + 1<<62)
	low := 0
	for i := 0; i < draws; i++ {
		if r.Uint64n(n) < n/3 {
			low++
		}
	}
	assert.InDelta(t, 1.0/3, float64(low)/draws, 0.01)

	// A small n: every bucket within five standard deviations.
	const k = 7
	var counts [k]int
	for i := 0; i < draws; i++ {
		counts[r.Intn(k)]++
	}
	sd := math.Sqrt(draws * (1.0 / k) * (1 - 1.0/k))
	for i, c := range counts {
		assert.InDelta(t, draws/k, c, 5*sd, "bucket %d", i)
	}
}

func TestRandHelpers(t *testing.T) {
	r := NewRand(4, "helpers")
	seen := map[time.Duration]bool{}
	chance := 0
	for i := 0; i < 10000; i++ {
		f := r.Float64()
		require.True(t, f >= 0 && f < 1, "Float64 %v", f)
		v := r.Int63n(10)
		require.True(t, v >= 0 && v < 10)
		d := r.Between(time.Second, time.Second+2)
		require.True(t, d >= time.Second && d <= time.Second+2, "Between %v", d)
		seen[d] = true
		if r.Chance(0.25) {
			chance++
		}
		require.False(t, r.Chance(0))
		require.False(t, r.Chance(-1))
		require.True(t, r.Chance(1))
	}
	assert.Len(t, seen, 3, "Between is inclusive at both ends")
	assert.InDelta(t, 2500, chance, 5*math.Sqrt(10000*0.25*0.75))
	assert.Equal(t, time.Second, r.Between(time.Second, time.Millisecond), "hi <= lo gives lo")

	assert.Equal(t, 5*time.Millisecond, Fixed(5*time.Millisecond).Draw(r))
	assert.Equal(t, "5ms", Fixed(5*time.Millisecond).String())
	assert.Equal(t, "1ms..3ms", Range{Lo: time.Millisecond, Hi: 3 * time.Millisecond}.String())

	a := NewRand(9, "x")
	a.Uint64()
	a.Reset(9, "x")
	assert.Equal(t, draws(NewRand(9, "x"), 3), draws(a, 3))
}
