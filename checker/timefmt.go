package checker

import (
	"fmt"
	"time"

	"github.com/locksim/locksim/sim"
)

// Explanations print times and durations with the precision needed to show
// what they claim: milliseconds as a rule (sim.Time's String), microseconds
// or nanoseconds when two instants that differ, or a duration and the bound
// it exceeds, would otherwise print the same. An overlap of 300µs must not
// read "to 10.000s ... from 10.000s".

// Digits after the decimal point of the three precisions.
const (
	milliDigits = 3
	microDigits = 6
	nanoDigits  = 9
)

// digitsFor returns the fewest digits (3, 6 or 9) at which the two instants
// of every pair that differ also print differently, truncated as
// sim.Time.String truncates.
func digitsFor(pairs ...[2]sim.Time) int {
	for _, d := range []int{milliDigits, microDigits} {
		unit := unitOf(d)
		ok := true
		for _, p := range pairs {
			if p[0] != p[1] && floorDiv(int64(p[0]), unit) == floorDiv(int64(p[1]), unit) {
				ok = false
				break
			}
		}
		if ok {
			return d
		}
	}
	return nanoDigits
}

// unitOf is the length in nanoseconds of the last digit of d digits.
func unitOf(digits int) int64 {
	switch digits {
	case milliDigits:
		return int64(time.Millisecond)
	case microDigits:
		return int64(time.Microsecond)
	}
	return 1
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// fmtAt renders t in seconds with the given digits, truncated: "10.000s",
// "10.000300s", "10.000000001s". With 3 digits it is sim.Time's String.
func fmtAt(t sim.Time, digits int) string {
	if digits <= milliDigits || t == sim.Never {
		return t.String()
	}
	sign := ""
	v := int64(t)
	if v < 0 {
		sign, v = "-", -v
	}
	unit := unitOf(digits)
	frac := (v % int64(time.Second)) / unit
	return fmt.Sprintf("%s%d.%0*ds", sign, v/int64(time.Second), digits, frac)
}

// fmtDurationVs renders d rounded to the millisecond, or to the microsecond
// or nanosecond if that is needed to tell it apart from bound.
func fmtDurationVs(d, bound time.Duration) string {
	for _, u := range []time.Duration{time.Millisecond, time.Microsecond} {
		if d == bound || d.Round(u) != bound {
			return d.Round(u).String()
		}
	}
	return d.String()
}
