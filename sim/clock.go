package sim

import (
	"fmt"
	"math"
	"time"
)

// Clock names one of a process's two clocks.
type Clock uint8

const (
	// Wall is the wall clock (gettimeofday, CLOCK_REALTIME): it drifts and it
	// can be stepped forward or backward. Redis expiry reads it.
	Wall Clock = iota
	// Mono is the monotonic clock (CLOCK_MONOTONIC): it drifts at the same rate
	// as the wall clock but never jumps. Go's time.Since and redsync read it.
	Mono
)

func (c Clock) String() string {
	if c == Mono {
		return "mono"
	}
	return "wall"
}

// Epoch is the wall-clock reading, in nanoseconds since the Unix epoch, of a
// process with zero offset at true time 0: 2026-01-01T00:00:00Z. Redis keeps
// expiry deadlines as Unix milliseconds, so wall readings are realistic Unix
// times.
const Epoch int64 = 1767225600 * int64(time.Second)

// PPB is one part per billion: rates are kept as integers so that clock
// arithmetic is exact and identical on every machine (no floating point in
// the hot path).
const PPB = 1_000_000_000

// RateFromDrift converts a drift such as 0.01 (1% fast) to parts per billion.
// It rejects drifts that would stop or reverse a clock and drifts beyond
// 100%.
func RateFromDrift(drift float64) (int64, error) {
	if math.IsNaN(drift) || drift <= -1 || drift > 1 {
		return 0, fmt.Errorf("drift %v out of range: a clock must advance, so drift must be in (-1, 1]", drift)
	}
	return int64(math.Round(drift * PPB)), nil
}

// clockState holds a process's two clocks as affine functions of true time:
// reading(t) = base + scale(t - anchor), where scale applies the common rate
// error. Jumps move the wall base; rate changes re-anchor both clocks.
type clockState struct {
	anchor   Time
	wallBase int64
	monoBase int64
	ppb      int64 // rate error: a reading advances (1e9+ppb)/1e9 ns per true ns
}

// scaled returns d true nanoseconds as seen by a clock with rate error ppb,
// computed exactly in integers (|ppb| <= 1e9 keeps every product in range).
func scaled(d, ppb int64) int64 {
	if ppb == 0 {
		return d
	}
	q, r := d/PPB, d%PPB
	return d + q*ppb + r*ppb/PPB
}

// unscaled returns the smallest true span d >= 0 with scaled(d, ppb) >= want.
func unscaled(want, ppb int64) int64 {
	if want <= 0 {
		return 0
	}
	if ppb == 0 {
		return want
	}
	// A floating-point estimate, corrected to the exact integer answer (the
	// correction makes the result independent of float rounding).
	d := int64(float64(want) / (1 + float64(ppb)/PPB))
	if d < 0 {
		d = 0
	}
	for scaled(d, ppb) < want {
		d++
	}
	for d > 0 && scaled(d-1, ppb) >= want {
		d--
	}
	return d
}

func (c *clockState) read(k Clock, now Time) int64 {
	e := scaled(int64(now-c.anchor), c.ppb)
	if k == Mono {
		return c.monoBase + e
	}
	return c.wallBase + e
}

// reanchor moves the anchor to now without changing any reading.
func (c *clockState) reanchor(now Time) {
	c.wallBase = c.read(Wall, now)
	c.monoBase = c.read(Mono, now)
	c.anchor = now
}

// when returns the first true time >= now at which clock k reads >= deadline
// (now itself if it already does), assuming no further clock changes.
func (c *clockState) when(k Clock, deadline int64, now Time) Time {
	cur := c.read(k, now)
	if cur >= deadline {
		return now
	}
	// Solve from the anchor so that the answer does not depend on now.
	base := c.wallBase
	if k == Mono {
		base = c.monoBase
	}
	return c.anchor + Time(unscaled(deadline-base, c.ppb))
}
