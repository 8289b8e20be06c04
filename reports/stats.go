package reports

import (
	"math"

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
