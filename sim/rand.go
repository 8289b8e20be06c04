package sim

import (
	"math/bits"
	"time"
)

// Rand is a deterministic pseudo-random stream (xoshiro256**, Blackman and
// Vigna, https://prng.di.unimi.it/). locksim implements its own generator
// rather than using math/rand so that the draws for a seed are fixed by this
// file alone, not by a Go release.
type Rand struct {
	s [4]uint64
}

// splitmix64 advances *x and returns the next output of SplitMix64, the
// seeding generator recommended for xoshiro.
func splitmix64(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// fnv64 hashes a stream name (FNV-1a, 64 bit).
func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// NewRand returns the stream for a seed and a stable component name. Streams
// with different names are independent, so adding a component never changes
// the draws of another.
func NewRand(seed uint64, name string) *Rand {
	r := &Rand{}
	r.Reset(seed, name)
	return r
}

// Reset re-seeds r in place (no allocation).
func (r *Rand) Reset(seed uint64, name string) {
	x := seed ^ fnv64(name)
	for i := range r.s {
		r.s[i] = splitmix64(&x)
	}
}

// Uint64 returns the next 64 random bits.
func (r *Rand) Uint64() uint64 {
	s := &r.s
	result := bits.RotateLeft64(s[1]*5, 7) * 9
	t := s[1] << 17
	s[2] ^= s[0]
	s[3] ^= s[1]
	s[1] ^= s[2]
	s[0] ^= s[3]
	s[2] ^= t
	s[3] = bits.RotateLeft64(s[3], 45)
	return result
}

// Uint64n returns a uniform draw in [0, n); n must be > 0. It uses Lemire's
// multiply-and-reject method, so it is unbiased.
func (r *Rand) Uint64n(n uint64) uint64 {
	if n == 0 {
		panic("sim: Rand.Uint64n(0)")
	}
	hi, lo := bits.Mul64(r.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.Uint64(), n)
		}
	}
	return hi
}

// Int63n returns a uniform draw in [0, n); n must be > 0.
func (r *Rand) Int63n(n int64) int64 { return int64(r.Uint64n(uint64(n))) }

// Intn returns a uniform draw in [0, n); n must be > 0.
func (r *Rand) Intn(n int) int { return int(r.Uint64n(uint64(n))) }

// Float64 returns a uniform draw in [0, 1).
func (r *Rand) Float64() float64 { return float64(r.Uint64()>>11) / (1 << 53) }

// Chance returns true with probability p (false for p <= 0, true for p >= 1).
func (r *Rand) Chance(p float64) bool {
	if p <= 0 {
		return false
	}
	if p >= 1 {
		return true
	}
	return r.Float64() < p
}

// Between returns a uniform duration in [lo, hi] (inclusive, nanosecond
// resolution); lo when hi <= lo.
func (r *Rand) Between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(r.Uint64n(uint64(hi-lo)+1))
}

// Range is a duration that is either fixed (Lo == Hi) or drawn uniformly from
// [Lo, Hi] (the scenario format's "a..b").
type Range struct {
	Lo, Hi time.Duration
}

// Fixed returns the range holding only d.
func Fixed(d time.Duration) Range { return Range{Lo: d, Hi: d} }

// Draw returns a value of the range drawn from r.
func (g Range) Draw(r *Rand) time.Duration { return r.Between(g.Lo, g.Hi) }

// String renders the range as the scenario format writes it.
func (g Range) String() string {
	if g.Lo == g.Hi {
		return g.Lo.String()
	}
	return g.Lo.String() + ".." + g.Hi.String()
}
