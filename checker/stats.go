package checker

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/locksim/locksim/sim"
)

// Stats are the numbers a review asks for beside the verdicts (issue 25),
// counted from the history: how often the lock was granted and used, how
// long clients waited for it, how long it stood free while someone
// waited, what the resource accepted and rejected, what the stock
// counters sold. They also show a vacuous verdict at a glance: a lock
// safety that "holds" over no grant at all.
//
// They are computed in this file only (StatsOf; a Stream adds its pieces
// up, statsAcc), carried in Result.Stats and in the run record.
type Stats struct {
	// Grants are the belief periods: the times a client concluded it held
	// a lock.
	Grants int `json:"grants"`
	// Sections are the critical sections whose write the resource
	// accepted: completed units of protected work.
	Sections int `json:"sections"`
	// Attempts are the acquire attempts (one try of an algorithm each);
	// Failures those that ended without the lock (an attempt the run or a
	// crash cut short is neither a success nor a failure).
	Attempts int `json:"acquire_attempts"`
	Failures int `json:"acquire_failures"`
	// Latency is the time from wanting a lock to holding it, over the
	// waits that ended with the lock (retries after a failed attempt
	// belong to the same wait).
	Latency Latency `json:"acquire_latency"`
	// Unavailable is the time, summed over the locks, during which some
	// client waited for a lock that nobody believed it held.
	Unavailable time.Duration `json:"unavailable"`
	// Availability says when: per lock, the unavailable time in each of
	// a bounded number of bins over the run (availability.go); nil when
	// no lock was ever unavailable.
	Availability *Availability `json:"availability,omitempty"`
	// WritesAccepted, WritesRejected and WritesLost count the critical
	// sections' writes by what the resource did with them (rejected: by
	// fencing; lost: never reached it).
	WritesAccepted int `json:"writes_accepted"`
	WritesRejected int `json:"writes_rejected"`
	WritesLost     int `json:"writes_lost,omitempty"`
	// Sales counts the stock counters' purchases acknowledged as sales,
	// and LostUpdates the sales the final stock does not account for
	// (loaded stock minus the last read, fewer than the sales), both 0
	// without counters.
	Sales       int `json:"sales,omitempty"`
	LostUpdates int `json:"lost_updates,omitempty"`
	// Clients are the per-client counts, by client name.
	Clients []ClientStats `json:"clients,omitempty"`
}

// ClientStats are one client's counts.
type ClientStats struct {
	Client   string `json:"client"`
	Grants   int    `json:"grants"`
	Sections int    `json:"sections"`
	Attempts int    `json:"acquire_attempts"`
	Failures int    `json:"acquire_failures"`
}

// Latency summarises acquisition latencies: how many, the median, the
// 99th percentile (nearest rank, read from the histogram: within 0.4% of
// the exact value, latency.go) and the largest (exact).
type Latency struct {
	Count int           `json:"count"`
	P50   time.Duration `json:"p50"`
	P99   time.Duration `json:"p99"`
	Max   time.Duration `json:"max"`
	// Histogram is the distribution, its non-empty buckets shortest
	// first (latency.go): what the report's histogram draws, so that
	// simrun report redraws it from result.json without re-running.
	Histogram []LatencyBucket `json:"histogram,omitempty"`
}

// StatsOf counts the statistics of a whole history.
func StatsOf(h *sim.History) Stats {
	var a statsAcc
	a.add(orEmpty(h))
	return a.stats()
}

// statsAcc adds up the statistics of a history handed over in pieces:
// every record lies in one piece (a wait or a belief never spans a quiet
// point, split.go), so the counts and the unavailable time add up.
type statsAcc struct {
	s       Stats
	clients map[string]*ClientStats
	lat     latencyHist
	// Stock counters are judged whole from the last piece; the load and
	// the last read are taken from wherever they are.
	loaded, lastRead     int64
	hasLoad, hasLastRead bool
	lastReadAt           sim.Time
	// avail bins the unavailable windows (availability.go).
	avail availAcc
}

func (a *statsAcc) client(name string) *ClientStats {
	if a.clients == nil {
		a.clients = map[string]*ClientStats{}
	}
	c, ok := a.clients[name]
	if !ok {
		c = &ClientStats{Client: name}
		a.clients[name] = c
	}
	return c
}

// add counts the records of piece h.
func (a *statsAcc) add(h *sim.History) {
	for _, b := range h.Beliefs {
		a.s.Grants++
		a.client(b.Client).Grants++
	}
	for _, at := range h.Attempts {
		a.s.Attempts++
		c := a.client(at.Client)
		c.Attempts++
		if !at.OK && !at.Open {
			a.s.Failures++
			c.Failures++
		}
	}
	for _, sec := range h.Sections {
		switch sec.Outcome {
		case sim.WriteAccepted:
			a.s.WritesAccepted++
			a.s.Sections++
			a.client(sec.Client).Sections++
		case sim.WriteRejected:
			a.s.WritesRejected++
		case sim.WriteLost:
			a.s.WritesLost++
		}
	}
	ws := waits(h)
	waitsByLock := map[string][]Window{}
	var locks []string
	for _, w := range ws {
		if w.how == acquired {
			a.lat.add(w.end.Sub(w.start))
		}
		if _, ok := waitsByLock[w.lock]; !ok {
			locks = append(locks, w.lock)
		}
		waitsByLock[w.lock] = append(waitsByLock[w.lock], Window{Start: w.start, End: w.end})
	}
	held := heldByLock(h)
	a.avail.grow(h.End)
	for _, l := range locks {
		// From h.Since: before it, a piece holds no belief (a wait across
		// the cut counts there in the piece before).
		waiting := complement(complement(waitsByLock[l], h.Since, h.End), h.Since, h.End)
		for _, f := range intersect(waiting, complement(held[l], h.Since, h.End)) {
			a.s.Unavailable += f.End.Sub(f.Start)
			a.avail.add(l, f)
		}
	}
	for _, op := range h.Counter {
		switch op.Kind {
		case sim.CounterLoad:
			if op.HasObserved && !a.hasLoad {
				a.loaded, a.hasLoad = op.Observed, true
			}
		case sim.CounterPurchase:
			if op.Sold {
				a.s.Sales++
			}
		case sim.CounterRead:
			if op.HasObserved && !op.Open && (!a.hasLastRead || op.Return >= a.lastReadAt) {
				a.lastRead, a.lastReadAt, a.hasLastRead = op.Observed, op.Return, true
			}
		}
	}
}

// stats returns the sums.
func (a *statsAcc) stats() Stats {
	s := a.s
	if a.hasLoad && a.hasLastRead {
		if lost := int64(s.Sales) - (a.loaded - a.lastRead); lost > 0 {
			s.LostUpdates = int(lost)
		}
	}
	s.Latency = a.lat.latency()
	s.Availability = a.avail.availability()
	names := make([]string, 0, len(a.clients))
	for n := range a.clients {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s.Clients = append(s.Clients, *a.clients[n])
	}
	return s
}

// Lines says the statistics in a few lines of text, for summaries.
func (s Stats) Lines() []string {
	out := []string{fmt.Sprintf("grants %d, critical sections completed %d, acquire attempts %d (%d failed)",
		s.Grants, s.Sections, s.Attempts, s.Failures)}
	if s.Latency.Count > 0 {
		out = append(out, fmt.Sprintf("acquire latency p50 %s, p99 %s, max %s (%d acquisitions); lock free while someone waited %s",
			fmtDur(s.Latency.P50), fmtDur(s.Latency.P99), fmtDur(s.Latency.Max), s.Latency.Count, fmtDur(s.Unavailable)))
	} else if s.Unavailable > 0 {
		out = append(out, fmt.Sprintf("no acquisition; lock free while someone waited %s", fmtDur(s.Unavailable)))
	}
	if s.WritesAccepted+s.WritesRejected+s.WritesLost > 0 {
		w := fmt.Sprintf("resource writes accepted %d, rejected %d", s.WritesAccepted, s.WritesRejected)
		if s.WritesLost > 0 {
			w += fmt.Sprintf(", lost %d", s.WritesLost)
		}
		out = append(out, w)
	}
	if s.Sales > 0 || s.LostUpdates > 0 {
		out = append(out, fmt.Sprintf("stock counter sales %d, lost updates %d", s.Sales, s.LostUpdates))
	}
	if len(s.Clients) > 1 {
		var parts []string
		for _, c := range s.Clients {
			parts = append(parts, fmt.Sprintf("%s %d/%d/%d/%d", c.Client, c.Grants, c.Sections, c.Attempts, c.Failures))
		}
		out = append(out, "per client (grants/sections/attempts/failed): "+strings.Join(parts, ", "))
	}
	return out
}

// fmtDur writes a duration rounded to the microsecond.
func fmtDur(d time.Duration) string { return d.Round(time.Microsecond).String() }

// Vacuity says where the verdicts vs had little or nothing to judge, given
// the run's numbers s: a lock or resource safety not used (no grant, no
// section: a safety verdict there would be vacuous), a lock safety that
// holds over a single grant (no second holder could overlap it). Each
// sentence names the property by its title.
func Vacuity(vs Verdicts, s Stats) []string {
	var out []string
	title := func(name string) string {
		if p, ok := Lookup(name); ok {
			return p.About().Title
		}
		return name
	}
	switch vs.Of(LockSafety) {
	case NotUsed:
		// Without any attempt there was no lock in the story (stock
		// counters sold from without one): nothing vacuous to point at.
		if s.Attempts > 0 {
			out = append(out, fmt.Sprintf("%s not used: no client was granted the lock (%d acquire attempts, %d failed)", title(LockSafety), s.Attempts, s.Failures))
		}
	case Holds:
		if s.Grants == 1 {
			out = append(out, fmt.Sprintf("%s holds over a single grant: no second holder could overlap it", title(LockSafety)))
		}
	}
	switch vs.Of(ResourceSafety) {
	case NotUsed:
		out = append(out, fmt.Sprintf("%s not used: no critical section touched the resource", title(ResourceSafety)))
	case Holds:
		// Critical sections touched the resource, but it took no write
		// (a fencing mode that refused every read or write: a client
		// without the token the resource asks for): no update could be
		// lost.
		if s.Grants > 0 && s.WritesAccepted == 0 && s.Sales == 0 && s.LostUpdates == 0 {
			why := "no write reached it"
			if s.WritesRejected > 0 {
				why = fmt.Sprintf("%d rejected", s.WritesRejected)
			}
			out = append(out, fmt.Sprintf("%s holds, but the resource accepted no write (%s): no update could be lost", title(ResourceSafety), why))
		}
	}
	return out
}
