package checker

import (
	"fmt"
	"sort"
	"time"

	"github.com/locksim/locksim/sim"
)

// LivenessReport is what CheckLiveness finds.
type LivenessReport struct {
	// Verdict is Holds, Violated or NotJudged.
	Verdict Verdict
	// Violations are the waits longer than their bound, in the order of
	// their start (then lock and explanation).
	Violations []Violation
	// LongestWait is the longest wait measured from From, judged or not, and
	// LongestWaitClient whose it was (the first in (client, lock, start)
	// order on a tie; empty if nobody waited).
	LongestWait       time.Duration
	LongestWaitClient string
	// From is when the last fault settled; only waiting after it counts.
	From sim.Time
	// Note says from when liveness was judged and why, or why it was not.
	Note string
}

// waitEnd says how a wait ended.
type waitEnd int

const (
	acquired waitEnd = iota // the client got the lock
	crashed                 // the client crashed while waiting
	runEnded                // the run ended first: the client never acquired
)

// wait is one span during which a client needed a lock and did not have it.
type wait struct {
	client, lock string
	start, end   sim.Time
	how          waitEnd
	gaveUp       int  // how many wants ended with the client giving up
	clamped      bool // start is From: the client was already waiting then
}

func (w wait) duration() time.Duration { return w.end.Sub(w.start) }

// CheckLiveness judges whether every client that wanted a lock got it within
// its bound once the faults had settled.
//
// The faults settle at the latest moment at which a fault record begins or
// ends: Until for a fault that ends by itself, At for an instantaneous fault
// (Until == 0). An instantaneous fault can leave the system degraded for
// good: a crash without restart is recorded that way, and liveness is then
// judged on the degraded system (a Redlock that lost one node of five should
// still grant the lock; a single Redis that crashed for good should not, and
// the verdict says so). A fault recorded with Until == sim.Never is still
// acting when the run ends (a partition without heal_after) unless a later
// record ends it: a "heal" record (which removes every partition and link
// fault) or a "restart" of one of its targets. If such a fault is never
// ended, the faults never settled, there is no "after the last fault" to
// judge, and the verdict is NotJudged: a client cut off for good is not
// reported as a liveness violation, nor is the lock reported live.
//
// Waits are measured per client and lock: a wait starts when the client
// starts wanting the lock (or at From, if it already wanted it then) and
// lasts until it next acquires it. Wants that end because the client gave up
// after exhausting its tries do not end the wait: the client still needs the
// lock, so the wait runs on into its next want and up to its next success,
// or to the end of the run (it "never acquired"). A crash ends the wait where
// it happened. A wait is a violation iff it is longer than the client's bound
// (a wait exactly at the bound holds). A wait cut short by the end of the run
// is a violation only if it already exceeds the bound: if it does not, the
// run simply ended too soon to tell. A client that stops wanting the lock
// after getting it waits no more.
//
// Clients without a positive bound (see Options) are measured but not judged.
// When no bound is given at all, when a fault never healed, or when the
// faults settled after the run ended, the verdict is NotJudged, which is
// neither a pass nor a violation; otherwise it is Violated if some wait
// exceeded its bound and Holds if none did (including when nobody wanted a
// lock after the faults settled). Waits are measured, and LongestWait
// reported, in every case.
func CheckLiveness(h *sim.History, opts Options) LivenessReport {
	h = orEmpty(h)
	from, last := settled(h.Faults)
	r := LivenessReport{From: from, Verdict: Holds, Note: settleNote(h.Faults, from, last)}

	for _, w := range waits(h, from) {
		if d := w.duration(); d > r.LongestWait || r.LongestWaitClient == "" {
			r.LongestWait, r.LongestWaitClient = d, w.client
		}
		if bound := boundOf(opts, w.client); bound > 0 && w.duration() > bound {
			r.Violations = append(r.Violations, livenessViolation(w, bound))
		}
	}

	switch unhealed := unhealed(h.Faults); {
	case !anyBound(opts):
		r.Verdict, r.Violations = NotJudged, nil
		r.Note = "not judged: no wait bound was given"
	case len(unhealed) > 0:
		r.Verdict, r.Violations = NotJudged, nil
		r.Note = fmt.Sprintf("not judged: the faults never settled (%s never healed)", joinAnd(unhealed))
	case from > h.End:
		r.Verdict, r.Violations = NotJudged, nil
		r.Note = fmt.Sprintf("not judged: the last fault settled at %s, after the run ended at %s", from, h.End)
	case len(r.Violations) > 0:
		r.Verdict = Violated
		sortViolations(r.Violations)
	}
	return r
}

// boundOf returns the liveness bound of client.
func boundOf(opts Options, client string) time.Duration {
	if b, ok := opts.MaxWait[client]; ok {
		return b
	}
	return opts.DefaultMaxWait
}

// anyBound reports whether opts give any client a positive bound.
func anyBound(opts Options) bool {
	if opts.DefaultMaxWait > 0 {
		return true
	}
	for _, b := range opts.MaxWait {
		if b > 0 {
			return true
		}
	}
	return false
}

// effectEnd is when fault f stops acting: Until if it has one (possibly
// sim.Never), else At (an instantaneous fault).
func effectEnd(f sim.FaultRecord) sim.Time {
	if f.Until > 0 {
		return f.Until
	}
	return f.At
}

// settlePoint is when f stops changing the system: the end of its effect, or
// its onset if it ends only by a later record (or never).
func settlePoint(f sim.FaultRecord) sim.Time {
	end := effectEnd(f)
	if end == sim.Never || end < f.At {
		return f.At
	}
	return end
}

// settled returns when the last fault settled and the index of that fault
// record (the last one in record order on a tie), or 0 and -1 without faults.
func settled(faults []sim.FaultRecord) (sim.Time, int) {
	var at sim.Time
	last := -1
	for i, f := range faults {
		if p := settlePoint(f); last < 0 || p >= at {
			at, last = p, i
		}
	}
	return at, last
}

// Fault kinds that end faults recorded without an end (SCENARIO_FORMAT.md,
// "Fault kinds (core)").
const (
	kindHeal    = "heal"    // removes every partition and link fault
	kindRestart = "restart" // starts a crashed node again
)

// unhealed describes the faults recorded without an end (Until ==
// sim.Never) that no later record ended: neither a heal nor a restart of one
// of their targets.
func unhealed(faults []sim.FaultRecord) []string {
	var out []string
	for i, f := range faults {
		if f.Until != sim.Never {
			continue
		}
		healed := false
		for _, g := range faults[i+1:] {
			if g.Kind == kindHeal || (g.Kind == kindRestart && targets(g, f.Targets)) {
				healed = true
				break
			}
		}
		if !healed {
			out = append(out, fmt.Sprintf("%s at %s", f.Text, f.At))
		}
	}
	return out
}

// settleNote says from when liveness is judged.
func settleNote(faults []sim.FaultRecord, from sim.Time, last int) string {
	if last < 0 {
		return "judged over the whole run: no faults were applied"
	}
	f := faults[last]
	what := fmt.Sprintf("%s at %s", f.Text, f.At)
	if end := effectEnd(f); end != f.At && end != sim.Never {
		what = fmt.Sprintf("%s from %s to %s", f.Text, f.At, end)
	}
	return fmt.Sprintf("judged from %s, when the last fault settled (%s)", from, what)
}

// waits measures the waits of h after from, in (client, lock, start) order.
func waits(h *sim.History, from sim.Time) []wait {
	type key struct{ client, lock string }
	byKey := map[key][]sim.Want{}
	var keys []key
	for _, w := range h.Wants {
		k := key{w.Client, w.Lock}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], w)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].client != keys[j].client {
			return keys[i].client < keys[j].client
		}
		return keys[i].lock < keys[j].lock
	})

	var out []wait
	for _, k := range keys {
		wants := byKey[k]
		sort.SliceStable(wants, func(i, j int) bool {
			if wants[i].Start != wants[j].Start {
				return wants[i].Start < wants[j].Start
			}
			return wants[i].End < wants[j].End
		})
		var cur *wait
		for _, w := range wants {
			end := w.End
			if w.Open {
				end = h.End
			}
			if end < from {
				continue // over before the faults settled
			}
			if cur == nil {
				start, clamped := w.Start, false
				if start < from {
					start, clamped = from, true
				}
				cur = &wait{client: k.client, lock: k.lock, start: start, clamped: clamped}
			}
			switch {
			case w.Got:
				cur.end, cur.how = maxTime(end, cur.start), acquired
			case w.Reason == "crashed" && !w.Open:
				cur.end, cur.how = maxTime(end, cur.start), crashed
			default:
				if w.Reason == "gave-up" {
					cur.gaveUp++
				}
				continue // still waiting
			}
			out = append(out, *cur)
			cur = nil
		}
		if cur != nil {
			cur.end, cur.how = maxTime(h.End, cur.start), runEnded
			out = append(out, *cur)
		}
	}
	return out
}

// livenessViolation explains a wait longer than bound.
func livenessViolation(w wait, bound time.Duration) Violation {
	since := w.start.String()
	if w.clamped {
		since += " (when the last fault settled)"
	}
	var text string
	switch w.how {
	case acquired:
		text = fmt.Sprintf("%s waited %s for the lock %q, from %s until it acquired it at %s, longer than its bound of %s.",
			w.client, fmtDuration(w.duration()), w.lock, since, w.end, bound)
	case crashed:
		text = fmt.Sprintf("%s waited %s for the lock %q, from %s until it crashed at %s without acquiring it, longer than its bound of %s.",
			w.client, fmtDuration(w.duration()), w.lock, since, w.end, bound)
	default:
		text = fmt.Sprintf("%s wanted the lock %q from %s and never acquired it before the run ended at %s: %s, longer than its bound of %s.",
			w.client, w.lock, since, w.end, fmtDuration(w.duration()), bound)
	}
	switch {
	case w.gaveUp == 1:
		text += " It gave up once meanwhile."
	case w.gaveUp > 1:
		text += fmt.Sprintf(" It gave up %d times meanwhile.", w.gaveUp)
	}
	return Violation{
		Kind:        KindLiveness,
		Lock:        w.lock,
		Clients:     []string{w.client},
		Windows:     []Window{{Start: w.start, End: w.end}},
		Explanation: text,
	}
}

func maxTime(a, b sim.Time) sim.Time {
	if a > b {
		return a
	}
	return b
}
