package sim

import (
	"fmt"
	"time"
)

// Time is true (virtual) time: nanoseconds since the start of the run. The
// checker and the trace use it; no process ever reads it directly, processes
// read their own wall and monotonic clocks through their Env.
type Time int64

// Never is a time later than any run.
const Never Time = 1<<63 - 1

// At converts a duration since the start of the run to a Time.
func At(d time.Duration) Time { return Time(d) }

// Seconds returns t in seconds.
func (t Time) Seconds() float64 { return float64(t) / 1e9 }

// String renders t as seconds with millisecond precision ("12.003s"), the
// form used in summaries and explanations.
func (t Time) String() string {
	if t == Never {
		return "never"
	}
	neg := t < 0
	if neg {
		t = -t
	}
	ms := int64(t) / int64(time.Millisecond)
	s := fmt.Sprintf("%d.%03ds", ms/1000, ms%1000)
	if neg {
		return "-" + s
	}
	return s
}

// Add returns t+d.
func (t Time) Add(d time.Duration) Time { return t + Time(d) }

// Sub returns t-u as a duration.
func (t Time) Sub(u Time) time.Duration { return time.Duration(t - u) }

// addSat returns t+d, or Never if the sum overflows (a pause or a delay
// "for ever").
func addSat(t Time, d time.Duration) Time {
	if u := t + Time(d); d <= 0 || u > t {
		return u
	}
	return Never
}
