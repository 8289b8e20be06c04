package sim

import (
	"fmt"
	"math"
	"math/bits"
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

// checkPPB panics on a rate error that would stop or reverse a clock or
// make it run more than twice as fast (the range RateFromDrift accepts).
func checkPPB(ppb int64) {
	if ppb <= -PPB || ppb > PPB {
		panic(fmt.Sprintf("sim: drift of %d ppb out of range: it must be in (-%d, %d] (use RateFromDrift)", ppb, PPB, PPB))
	}
}

// ClockState is a process's two clocks as affine functions of true time:
// reading(t) = base + scale(t - anchor), where scale applies the common rate
// error. Jumps move the wall base; rate changes re-anchor both clocks. The
// kernel keeps one per process; it is exported so that readers of a trace
// (reports) replay clock changes with the kernel's own exact arithmetic.
type ClockState struct {
	Anchor   Time
	WallBase int64
	MonoBase int64
	PPB      int64 // rate error: a reading advances (1e9+ppb)/1e9 ns per true ns
}

// NewClockState returns the clocks of a process added to a kernel
// (Kernel.Add): the wall clock at Epoch+offset, the monotonic clock at 0,
// both at rate error ppb.
func NewClockState(offset time.Duration, ppb int64) ClockState {
	return ClockState{WallBase: Epoch + int64(offset), PPB: ppb}
}

// Jump steps the wall clock by d (Kernel.JumpWall). NB: no re-anchoring:
// that could move the monotonic clock by a rounding nanosecond under drift,
// and a jump must leave it alone.
func (c *ClockState) Jump(d time.Duration) { c.WallBase += int64(d) }

// SetRate re-anchors both clocks at now and sets their rate error from
// then on (Kernel.SetDrift).
func (c *ClockState) SetRate(now Time, ppb int64) {
	c.reanchor(now)
	c.PPB = ppb
}

// scaled returns d >= 0 true nanoseconds as seen by a clock with rate error
// ppb, computed exactly in integers: d*(1e9+ppb)/1e9 rounded toward d (down
// for a fast clock, up for a slow one). |ppb| <= 1e9 keeps every product in
// range as long as the result itself fits in an int64.
func scaled(d, ppb int64) int64 {
	if ppb == 0 {
		return d
	}
	q, r := d/PPB, d%PPB
	return d + q*ppb + r*ppb/PPB
}

// unscaled returns the smallest true span d >= 0 with scaled(d, ppb) >= want
// (the time a timer waits), exactly, or math.MaxInt64 when there is none in
// range. With R = 1e9+ppb, scaled(d) is floor(d*R/1e9) for ppb >= 0 and
// ceil(d*R/1e9) for ppb < 0, so d is ceil(want*1e9/R) or
// floor((want-1)*1e9/R)+1; both are computed in 128 bits.
func unscaled(want, ppb int64) int64 {
	if want <= 0 {
		return 0
	}
	if ppb == 0 {
		return want
	}
	r := uint64(PPB + ppb)
	x, up := uint64(want), true
	if ppb < 0 {
		x, up = uint64(want-1), false
	}
	hi, lo := bits.Mul64(x, PPB)
	if hi >= r {
		return math.MaxInt64
	}
	d, rem := bits.Div64(hi, lo, r)
	if up {
		if rem != 0 {
			d++
		}
	} else {
		d++
	}
	if d > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(d)
}

// Read returns clock k's reading at true time now.
func (c ClockState) Read(k Clock, now Time) int64 {
	e := scaled(int64(now-c.Anchor), c.PPB)
	if k == Mono {
		return c.MonoBase + e
	}
	return c.WallBase + e
}

// reanchor moves the anchor to now without changing any reading.
func (c *ClockState) reanchor(now Time) {
	c.WallBase = c.Read(Wall, now)
	c.MonoBase = c.Read(Mono, now)
	c.Anchor = now
}

// When returns the first true time >= now at which clock k reads >= deadline
// (now itself if it already does), assuming no further clock changes, or
// Never when it is out of reach.
func (c ClockState) When(k Clock, deadline int64, now Time) Time {
	cur := c.Read(k, now)
	if cur >= deadline {
		return now
	}
	// Solve from the anchor so that the answer does not depend on now.
	base := c.WallBase
	if k == Mono {
		base = c.MonoBase
	}
	want := deadline - base
	if base < 0 && want < deadline {
		return Never // the span overflows: the deadline is out of reach
	}
	d := unscaled(want, c.PPB)
	if d >= int64(Never-c.Anchor) {
		return Never
	}
	return c.Anchor + Time(d)
}
