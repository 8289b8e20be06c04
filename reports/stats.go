package reports

import (
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/locksim/locksim/checker"
)

// z95 is the 97.5% quantile of the standard normal distribution: the z of a
// two-sided 95% interval.
const z95 = 1.959963984540054

// Wilson returns the estimate k/n of a probability and its 95% Wilson score
// interval (Wilson 1927; Brown, Cai and DasGupta 2001 recommend it over the
// normal approximation for small n and for p near 0 or 1). With n = 0 there
// is nothing to estimate: p is NaN and the interval [0, 1].
func Wilson(k, n int) (p, lo, hi float64) {
	if n <= 0 {
		return math.NaN(), 0, 1
	}
	nf := float64(n)
	p = float64(k) / nf
	z2 := z95 * z95
	den := 1 + z2/nf
	centre := (p + z2/(2*nf)) / den
	half := z95 * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	lo, hi = math.Max(0, centre-half), math.Min(1, centre+half)
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return p, lo, hi
}

// Counts are the verdicts of a batch of runs (a sweep point, a matrix cell).
type Counts struct {
	Runs int `json:"runs"`
	// LockViolated and LockUnknown count lock-safety verdicts (Unknown: the
	// checker timed out; such runs are left out of the probability).
	LockViolated int `json:"lock_violated"`
	LockUnknown  int `json:"lock_unknown"`
	// ResourceViolated and ResourceUnknown count resource-safety verdicts.
	ResourceViolated int `json:"resource_violated"`
	ResourceUnknown  int `json:"resource_unknown"`
	// LivenessViolated counts liveness violations among the LivenessJudged
	// runs (holds or violated; not-judged and unknown runs are left out).
	LivenessViolated int `json:"liveness_violated"`
	LivenessJudged   int `json:"liveness_judged"`
	// Numbers aggregates the runs' numbers (issue 25).
	Numbers Numbers `json:"-"`
}

// Numbers aggregates the numbers of a batch of runs (checker.Stats, as
// fuzz.RunNumbers keeps them): the grants in all, the median over the
// runs of each run's median acquisition latency, the mean unavailable
// time. Runs whose numbers were not recorded are left out.
type Numbers struct {
	// Runs are the runs whose numbers are counted.
	Runs   int
	Grants int
	// Unavailable is the unavailable time summed over the runs.
	Unavailable time.Duration
	// p50s are the runs' median latencies, of the runs where a wait
	// ended with the lock, in the order added.
	p50s []time.Duration
}

// Add counts one run's numbers; hasP50 is false when no wait of the run
// ended with the lock.
func (n *Numbers) Add(grants int, p50 time.Duration, hasP50 bool, unavailable time.Duration) {
	n.Runs++
	n.Grants += grants
	n.Unavailable += unavailable
	if hasP50 {
		n.p50s = append(n.p50s, p50)
	}
}

// LatencyP50 is the median (nearest rank, the lower of two middles) of
// the runs' median acquisition latencies; false when no run acquired.
func (n Numbers) LatencyP50() (time.Duration, bool) {
	if len(n.p50s) == 0 {
		return 0, false
	}
	s := append([]time.Duration(nil), n.p50s...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)/2], true
}

// MeanUnavailable is the mean unavailable time per run; false when no
// run's numbers are counted.
func (n Numbers) MeanUnavailable() (time.Duration, bool) {
	if n.Runs == 0 {
		return 0, false
	}
	return n.Unavailable / time.Duration(n.Runs), true
}

// numberHead are the CSV columns of Numbers.cols, after a sweep's or a
// matrix's older columns so that readers of those keep working.
var numberHead = []string{"grants", "latency_p50_median_s", "unavailable_mean_s"}

// cols renders the numbers as CSV fields (seconds; empty when unknown).
func (n Numbers) cols() []string {
	if n.Runs == 0 {
		return []string{"", "", ""}
	}
	sec := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 6, 64) }
	out := []string{strconv.Itoa(n.Grants), "", ""}
	if p, ok := n.LatencyP50(); ok {
		out[1] = sec(p)
	}
	if u, ok := n.MeanUnavailable(); ok {
		out[2] = sec(u)
	}
	return out
}

// Add counts one run's verdicts.
func (c *Counts) Add(lock, resource, liveness checker.Verdict) {
	c.Runs++
	switch lock {
	case checker.Violated:
		c.LockViolated++
	case checker.Unknown:
		c.LockUnknown++
	}
	switch resource {
	case checker.Violated:
		c.ResourceViolated++
	case checker.Unknown:
		c.ResourceUnknown++
	}
	switch liveness {
	case checker.Violated:
		c.LivenessViolated++
		c.LivenessJudged++
	case checker.Holds:
		c.LivenessJudged++
	}
}

// Verdict names one of the three properties.
type Verdict int

// The properties a sweep plots.
const (
	LockSafety Verdict = iota
	ResourceSafety
	Liveness
)

func (v Verdict) String() string {
	return [...]string{"lock safety violated", "resource safety violated", "liveness violated"}[v]
}

// Of returns the number of violations and of decided runs for a property.
func (c Counts) Of(v Verdict) (k, n int) {
	switch v {
	case LockSafety:
		return c.LockViolated, c.Runs - c.LockUnknown
	case ResourceSafety:
		return c.ResourceViolated, c.Runs - c.ResourceUnknown
	}
	return c.LivenessViolated, c.LivenessJudged
}

// Rate returns the violation probability of a property with its 95% Wilson
// interval.
func (c Counts) Rate(v Verdict) (p, lo, hi float64) {
	k, n := c.Of(v)
	return Wilson(k, n)
}

// GrantsPerRun is the mean number of grants per run; false when no
// run's numbers are counted.
func (n Numbers) GrantsPerRun() (float64, bool) {
	if n.Runs == 0 {
		return 0, false
	}
	return float64(n.Grants) / float64(n.Runs), true
}

// Lines says the numbers in short lines for a cell or a table: the
// grants per run, the median over the runs of each run's
// median acquisition latency, and the mean time per run the lock stood
// free while someone waited. None when no run's numbers are counted.
func (n Numbers) Lines() []string {
	per, ok := n.GrantsPerRun()
	if !ok {
		return nil
	}
	out := []string{strconv.FormatFloat(per, 'f', 1, 64) + " grants/run"}
	if p, ok := n.LatencyP50(); ok {
		out = append(out, "p50 "+shortDur(p))
	} else {
		out = append(out, "p50 -")
	}
	if u, ok := n.MeanUnavailable(); ok {
		out = append(out, "free "+shortDur(u))
	}
	return out
}

// shortDur writes d with three significant digits at most (1.23s,
// 45.6ms, 789µs), for crowded cells.
func shortDur(d time.Duration) string {
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{time.Second, "s"}, {time.Millisecond, "ms"}, {time.Microsecond, "µs"}} {
		if d >= u.unit {
			v := float64(d) / float64(u.unit)
			prec := 2
			switch {
			case v >= 100:
				prec = 0
			case v >= 10:
				prec = 1
			}
			return strconv.FormatFloat(v, 'f', prec, 64) + u.name
		}
	}
	return d.String()
}
