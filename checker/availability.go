package checker

import (
	"sort"
	"time"

	"github.com/locksim/locksim/sim"
)

// Availability says WHEN each lock stood free while some client waited
// for it (Stats.Unavailable says only how long in all): the run's time,
// from 0 to its end, is cut into equal bins, and each lock has the
// unavailable time that fell into each bin.
//
// It is bounded whatever the run's length: at most MaxAvailabilityBins
// bins per lock. The bin width is the smallest of MinAvailabilityBin
// times a power of two under which that many bins cover the run; as a
// run (or a history handed over in pieces) goes on past the bins, the
// width doubles and each pair of neighbouring bins is summed into one.
// Summing is exact and the final width depends only on the run's end, so
// a history judged whole and the same history judged in pieces give the
// same bins, nanosecond for nanosecond. A run has between 128 and 256
// bins (fewer only under 128ms): a day-long run 165 bins of 8m44.288s per
// lock, about 2 KB of result.json per lock.
type Availability struct {
	// Bin is the width of each bin; bin i covers [i*Bin, (i+1)*Bin).
	Bin time.Duration `json:"bin"`
	// End is the run's end: the last bin may reach past it.
	End sim.Time `json:"end"`
	// Locks are the locks someone waited for, by name.
	Locks []LockAvailability `json:"locks"`
}

// LockAvailability is one lock's strip: the unavailable time in each bin
// (as many bins as cover the run; a bin's time is at most Bin).
type LockAvailability struct {
	Lock        string          `json:"lock"`
	Unavailable []time.Duration `json:"unavailable"`
}

// MaxAvailabilityBins bounds the bins of an Availability strip.
const MaxAvailabilityBins = 256

// MinAvailabilityBin is the narrowest bin: a short run's strip is not cut
// finer than a millisecond.
const MinAvailabilityBin = time.Millisecond

// Total is the lock's unavailable time over the run.
func (l LockAvailability) Total() time.Duration {
	var t time.Duration
	for _, d := range l.Unavailable {
		t += d
	}
	return t
}

// availAcc accumulates an Availability from free windows handed over in
// time order or not, in pieces or whole.
type availAcc struct {
	bin   time.Duration
	end   sim.Time
	locks map[string][]time.Duration
}

// grow widens the bins until MaxAvailabilityBins of them cover [0, end).
func (a *availAcc) grow(end sim.Time) {
	if a.bin == 0 {
		a.bin = MinAvailabilityBin
	}
	a.end = max(a.end, end)
	for time.Duration(a.end) > a.bin*MaxAvailabilityBins {
		a.bin *= 2
		for l, bins := range a.locks {
			merged := make([]time.Duration, (len(bins)+1)/2)
			for i, d := range bins {
				merged[i/2] += d
			}
			a.locks[l] = merged
		}
	}
}

// add counts window w of lock as unavailable (w lies within [0, end) of
// the latest grow).
func (a *availAcc) add(lock string, w Window) {
	if w.End <= w.Start {
		return
	}
	if a.locks == nil {
		a.locks = map[string][]time.Duration{}
	}
	bins := a.locks[lock]
	for t := w.Start; t < w.End; {
		i := int(time.Duration(t) / a.bin)
		next := min(sim.Time(time.Duration(i+1)*a.bin), w.End)
		for len(bins) <= i {
			bins = append(bins, 0)
		}
		bins[i] += next.Sub(t)
		t = next
	}
	a.locks[lock] = bins
}

// availability returns the strip; nil when no lock was ever unavailable.
func (a *availAcc) availability() *Availability {
	if len(a.locks) == 0 {
		return nil
	}
	av := &Availability{Bin: a.bin, End: a.end}
	n := int((time.Duration(a.end) + a.bin - 1) / a.bin)
	names := make([]string, 0, len(a.locks))
	for l := range a.locks {
		names = append(names, l)
	}
	sort.Strings(names)
	for _, l := range names {
		bins := make([]time.Duration, max(n, len(a.locks[l])))
		copy(bins, a.locks[l])
		av.Locks = append(av.Locks, LockAvailability{Lock: l, Unavailable: bins})
	}
	return av
}
