package sim

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// epochMillisRE matches a wall-clock reading in Unix milliseconds after an
// '=' (deadline=1767225610010, now=...), as the Redis model prints them.
var epochMillisRE = regexp.MustCompile(`=(-?\d{12,14})\b`)

// RelativeWallTimes rewrites wall-clock readings in Unix milliseconds as
// seconds since the simulation's wall-clock origin (Epoch, the true
// start): deadline=1767225610010 reads deadline=+10.010s, for what a
// person reads of a trace (the summary, the HTML report's key events).
// Numbers more than a year from the origin are left alone (they are not
// readings).
func RelativeWallTimes(text string) string {
	const year = 366 * 24 * 3600 * 1000
	origin := Epoch / int64(time.Millisecond)
	return epochMillisRE.ReplaceAllStringFunc(text, func(m string) string {
		v, err := strconv.ParseInt(m[1:], 10, 64)
		if err != nil || v < origin-year || v > origin+year {
			return m
		}
		d := v - origin
		sign := "+"
		if d < 0 {
			sign, d = "-", -d
		}
		return fmt.Sprintf("=%s%d.%03ds", sign, d/1000, d%1000)
	})
}

// ReadableText is an event's text as a person reads it in a summary or a
// report: wall-clock readings relative to the run's start
// (RelativeWallTimes), and a release's "(released)" as "(release sent)":
// the belief ends when the release is sent (EndReleased), before anyone
// knows whether it removed the lock, and the trace's text (hashed) keeps
// the reason's name.
func ReadableText(e *Event) string {
	t := RelativeWallTimes(e.Text)
	if e.Kind == KindReleased && strings.HasSuffix(t, " ("+string(EndReleased)+")") {
		t = strings.TrimSuffix(t, " ("+string(EndReleased)+")") + " (release sent)"
	}
	return t
}
