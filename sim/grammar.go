package sim

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The one duration and range grammar of locksim: scenario files, lock
// parameters, fault fields and command-line flags all read durations and
// ranges through ParseDuration and ParseRange, so "10s" and "50ms..249ms"
// mean the same thing everywhere.

// ParseDuration parses a Go duration (time.ParseDuration: 150ms, 10s, 2m,
// -5s) with an optional leading '+'. A bare 0 is accepted; any other number
// needs a unit, so that "10" is not silently read as 10 ns.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" || s == "+0" || s == "-0" {
		return 0, nil
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return 0, fmt.Errorf("%q needs a unit (for example %sms or %ss)", s, s, s)
	}
	d, err := time.ParseDuration(strings.TrimPrefix(s, "+"))
	if err != nil {
		// time.ParseDuration says "invalid duration" for a well-formed
		// duration that overflows int64 nanoseconds too: tell them apart.
		if strings.Contains(err.Error(), "invalid duration") && durationShapeRE.MatchString(s) {
			return 0, fmt.Errorf("%q is out of range (the longest duration is %s, about 292 years)", s, time.Duration(math.MaxInt64))
		}
		return 0, fmt.Errorf("%q is not a duration (use Go syntax: 150ms, 10s, 2m, -5s)", s)
	}
	return d, nil
}

// durationShapeRE matches what time.ParseDuration reads: numbers with units.
var durationShapeRE = regexp.MustCompile(`^[-+]?(\d+(\.\d*)?(ns|us|µs|μs|ms|s|m|h))+$`)

// ParseRange parses "lo..hi" (a uniform draw, Range) or a single duration
// (Fixed). Both ends follow ParseDuration; an empty range (hi < lo) is an
// error.
func ParseRange(s string) (Range, error) {
	if lo, hi, ok := strings.Cut(s, ".."); ok {
		a, err := ParseDuration(lo)
		if err != nil {
			return Range{}, err
		}
		b, err := ParseDuration(hi)
		if err != nil {
			return Range{}, err
		}
		if b < a {
			return Range{}, fmt.Errorf("range %q is empty: the upper end is below the lower end", s)
		}
		return Range{Lo: a, Hi: b}, nil
	}
	d, err := ParseDuration(s)
	return Fixed(d), err
}
