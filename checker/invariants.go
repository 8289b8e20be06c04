package checker

import (
	"fmt"
	"sort"
	"strings"

	"github.com/locksim/locksim/sim"
)

// HistoryError is a history the checker cannot interpret: records that no
// verdict can account for. Check reports it instead of judging, so that
// nothing is dropped silently; it is an internal error of whatever recorded
// the history (exit 3 for simrun).
type HistoryError struct {
	// Problems name the offending records, one per line, in record order.
	Problems []string
}

func (e *HistoryError) Error() string {
	return fmt.Sprintf("checker: the history cannot be interpreted (%d problems):\n  %s",
		len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// ValidateHistory checks the invariants the verdicts rely on and returns a
// *HistoryError naming every record that breaks one, or nil:
//
//   - a belief ends no earlier than it starts;
//   - a belief of zero length does not lie strictly inside another belief of
//     the same client on the same lock (the client would have concluded it
//     holds a lock it already believed it held, and stopped at once);
//   - a want ends no earlier than it starts;
//   - a critical section whose write the storage node decided (accepted or
//     rejected) read the resource first, and its read was not refused: the
//     workload writes the value it read plus one, so a write without a read,
//     or after a refused read, has no value the resource model can check;
//   - the storage node decided a section's write no earlier than it served
//     its read, and the outcome is one of sim's WriteOutcome values;
//   - the counter operations are of a known kind and method, a sale wrote
//     and had its reply and saw a stock it could sell from, and every key
//     a client used had its stock declared (counterProblems).
func ValidateHistory(h *sim.History) error {
	h = orEmpty(h)
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	for _, b := range h.Beliefs {
		if !b.Open && b.End < b.Start {
			add("belief %d of %s on lock %q ends at %s, before it starts at %s", b.ID, b.Client, b.Lock, b.End, b.Start)
		}
	}
	for _, p := range nestedZeroBeliefs(h) {
		add("belief %d of %s on lock %q lasts zero time at %s, inside its belief %d (%s to %s)",
			p.inner.ID, p.inner.Client, p.inner.Lock, p.inner.Start, p.outer.ID, p.outer.Start, beliefEnd(p.outer, h.End))
	}
	for i, w := range h.Wants {
		if !w.Open && w.End < w.Start {
			add("want %d of %s on lock %q ends at %s, before it starts at %s", i, w.Client, w.Lock, w.End, w.Start)
		}
	}
	for _, x := range h.Sections {
		decided := x.Written && (x.Outcome == sim.WriteAccepted || x.Outcome == sim.WriteRejected)
		switch x.Outcome {
		case sim.WriteNone, sim.WriteAccepted, sim.WriteRejected, sim.WriteLost:
		default:
			add("section %d of %s on lock %q has an unknown write outcome %q", x.ID, x.Client, x.Lock, x.Outcome)
		}
		switch {
		case decided && !x.Read && !x.ReadRejected:
			add("section %d of %s on lock %q: its write of %d was %s at %s, but it never read the resource",
				x.ID, x.Client, x.Lock, x.WriteValue, x.Outcome, x.WriteAt)
		case x.Written && x.ReadRejected:
			add("section %d of %s on lock %q: it wrote %d (%s) after the storage node refused its read",
				x.ID, x.Client, x.Lock, x.WriteValue, outcomeWord(x.Outcome))
		case decided && x.WriteAt < x.ReadAt:
			add("section %d of %s on lock %q: its write was %s at %s, before its read was served at %s",
				x.ID, x.Client, x.Lock, x.Outcome, x.WriteAt, x.ReadAt)
		}
	}
	problems = append(problems, counterProblems(h)...)
	if len(problems) == 0 {
		return nil
	}
	return &HistoryError{Problems: problems}
}

func outcomeWord(o sim.WriteOutcome) string {
	if o == sim.WriteNone {
		return "no outcome"
	}
	return string(o)
}

type nested struct{ outer, inner sim.Belief }

// nestedZeroBeliefs finds the zero-length beliefs strictly inside another
// belief of the same client and lock.
func nestedZeroBeliefs(h *sim.History) []nested {
	type key struct{ client, lock string }
	by := map[key][]*sim.Belief{}
	var keys []key
	for _, b := range sortedBeliefs(h) {
		k := key{b.Client, b.Lock}
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], b)
	}
	sort.SliceStable(keys, func(i, j int) bool {
		if keys[i].lock != keys[j].lock {
			return keys[i].lock < keys[j].lock
		}
		return keys[i].client < keys[j].client
	})
	var out []nested
	for _, k := range keys {
		bs := by[k] // sorted by start
		// best is the belief that ends last among those that start strictly
		// before the current group of equal starts.
		var best sim.Belief
		var bestEnd sim.Time
		found := false
		for i := 0; i < len(bs); {
			j := i
			for j < len(bs) && bs[j].Start == bs[i].Start {
				j++
			}
			for _, in := range bs[i:j] {
				if found && !in.Open && in.End == in.Start && in.Start < bestEnd {
					out = append(out, nested{outer: best, inner: *in})
				}
			}
			for _, o := range bs[i:j] {
				if e := beliefEnd(*o, h.End); !found || e > bestEnd {
					best, bestEnd, found = *o, e, true
				}
			}
			i = j
		}
	}
	return out
}
