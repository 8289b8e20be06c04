package checker

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/locksim/locksim/sim"
)

// Liveness is progress, judged only where it can be judged.
//
// The property is deadlock- and livelock-freedom as stated for mutual
// exclusion (Dijkstra 1965, "Solution of a problem in concurrent programming
// control": no one may be blocked while the critical section is free;
// Herlihy & Shavit, "The Art of Multiprocessor Programming", chapter 2,
// "deadlock-free: if some thread attempts to acquire the lock, then some
// thread will succeed in acquiring the lock"): the lock must not stay free
// while somebody wants it. A distributed lock cannot promise that while
// faults act (a partition can cut every client off), so, as Jepsen asks for
// progress only in a recovery window after the nemesis repaired everything
// (the jepsen.generator README, cljdoc.org/d/io.jepsen/generator: phases
// "Recovering", {:f :repair}, (gen/sleep 10), "Final read" until-ok), the
// property is asked only of the stretches of the run in which no fault acts.
//
// A violation is a stretch of time inside one fault-free window in which the
// lock is free (no client believes it holds it) while a client waits for it,
// longer than that client's bound. A lock held legitimately for a long time
// (a holder that keeps extending it) is not free, so the waiting of others
// behind it is no failure: somebody is making progress.

// Liveness is the name of the liveness property.
const Liveness = "liveness"

// KindLiveness is the kind of a liveness violation.
const KindLiveness = "liveness"

// livenessProperty is the property above, as a value.
type livenessProperty struct{}

func (livenessProperty) About() About {
	return About{
		Name: Liveness, Title: "liveness", Kind: KindLiveness, Short: "liveness",
		Explains: "once the faults settled, no client waited longer than its bound while the lock was free",
		Doc: "Progress, judged in fault-free windows: `violated` when the lock is free (no client believes it holds it) while a client waits for it, for longer than the client's bound (`expect.max_wait`; default: twice the lock's ttl plus its retry budget and think time; for a ZooKeeper lock the session timeout the server negotiated), inside a window in which no fault acts. This is deadlock- and livelock-freedom (Dijkstra 1965; Herlihy & Shavit, *The Art of Multiprocessor Programming*, ch. 2: \"deadlock-free: if some thread attempts to acquire the lock, then some thread will succeed\"), asked, as Jepsen asks for progress only after the nemesis repaired everything (the `jepsen.generator` README: \"Recovering\", `{:f :repair}`, sleep, \"Final read\" until ok), only where no fault acts. For a ZooKeeper lock the bound is the negotiated session timeout: the request clamped into `[min_session_timeout, max_session_timeout]`." +
			"\n\nA fault acts: a pause, a delay or a partition until it ends or a `heal`; a crash until its scheduled restart (a crash without restart is over at once: the system must work around a dead node); a clock jump, a drift change, a restart or a promotion for a settling time of one lease (the longest ttl, Redisson lease or negotiated ZooKeeper session timeout of the clients: a grant made before the change may run on the changed clock or state for that long); a drop is over at once (the algorithm's own timeouts and retries handle it, within its bound); `network.loss: 1` acts over the whole run (a lower loss is TCP's normal behaviour). A restart never heals a partition. A lock held for long (a holder that keeps extending it) is progress, not a failure." +
			"\n\n`holds` when no such wait exceeded its bound and some fault-free window was longer than the bound; `not-judged` otherwise, saying why (no fault-free window longer than the bound, or no bound; or no client takes a lock)." +
			"\n\nA story that claims progress despite what still acts names its own window instead: `expect: {liveness: holds, liveness_window: {after: \"faults[1]\", within: 20s}}` judges liveness from the instant `faults[1]` stopped acting (or from a true time, `after: 10s`) to the end of the run, with bound `within` for every client (the quotes are needed in a flow mapping, where brackets are YAML). `single-failover-wait` claims so: after its master's crash, Sentinel's failover lets a waiting client take the lock within 20s (\"liveness: judged over the window the scenario names (after faults[1] stopped acting, 0.056s to 60.000s), bound 20s\"); with `--set sentinel.down_after=50s` the same claim is violated.",
		Expect: []Verdict{Holds, Violated},
		Fuzz:   FuzzOnRequest,
	}
}

// Judge is CheckLiveness. A history of stock counters without any lock
// client has no lock to wait for: NotJudged, with the reason.
func (livenessProperty) Judge(h *sim.History, opts Options) Judgement {
	live := CheckLiveness(h, opts)
	if countersOnly(h) {
		live.Verdict, live.Violations = NotJudged, nil
		live.Note = countersOnlyNote
	}
	return live.judgement()
}

// countersOnlyNote is the liveness note of a history of stock counters
// without a lock client, whole or streamed.
const countersOnlyNote = "not judged: no client takes a lock (the stock counters are sold from without one)"

// judgement is the report as a judgement, its details going to the
// liveness fields of Result.
func (live LivenessReport) judgement() Judgement {
	return Judgement{Verdict: live.Verdict, Violations: live.Violations, details: func(r *Result) {
		r.LongestWait, r.LongestWaitClient = live.LongestWait, live.LongestWaitClient
		r.LivenessFrom, r.LivenessWindows, r.LivenessNote = live.From, live.Windows, live.Note
	}}
}

// Stream carries the longest wait so far and the clients that waited. A
// wait never spans a quiet point, and one that spans a cut under
// contention is measured in each piece from its true start (waits), its
// free stretches on either side of the cut, at which its lock was granted
// (sim/stream.go, contendedCut): the longest of the whole wait is the
// longer of the two, and a stretch over the bound lies in one piece. The
// fault-free windows come from the faults, which are kept whole.
func (livenessProperty) Stream(opts Options) PieceJudge {
	return &livenessPieces{opts: opts, waited: map[string]bool{}}
}

type livenessPieces struct {
	opts    Options
	waited  map[string]bool // clients that waited
	longest waitPick
	// counters, locks: some piece had counter records, lock records
	// (countersOnly over the pieces).
	counters, locks bool
}

func (l *livenessPieces) Piece(p *sim.History) (bool, string) {
	l.counters = l.counters || len(p.Counter) > 0
	l.locks = l.locks || len(p.Wants) > 0 || len(p.Attempts) > 0 || len(p.Beliefs) > 0
	opts := windowed(l.opts)
	spans := activeSpans(p, opts)
	ws := waits(p)
	longest, vs := judgeWaits(p, opts, spans, livenessWindows(p, opts, spans), ws)
	if len(vs) > 0 {
		return false, "liveness violated"
	}
	if l.longest.better(longest) {
		l.longest = longest
	}
	for _, c := range waitClients(ws) {
		l.waited[c] = true
	}
	return true, ""
}

func (l *livenessPieces) Final(h *sim.History) Judgement {
	opts := windowed(l.opts)
	spans := activeSpans(h, opts)
	waited := make([]string, 0, len(l.waited))
	for c := range l.waited {
		waited = append(waited, c)
	}
	sort.Strings(waited)
	live := livenessReport(h, opts, livenessWindows(h, opts, spans), waited, l.longest, nil)
	if l.counters && !l.locks {
		live.Verdict, live.Violations = NotJudged, nil
		live.Note = countersOnlyNote
	}
	return live.judgement()
}

// LivenessReport is what CheckLiveness finds.
type LivenessReport struct {
	// Verdict is Holds, Violated or NotJudged.
	Verdict Verdict
	// Violations are the waits during which the lock stayed free for longer
	// than the waiting client's bound inside a fault-free window, in the
	// order of their start (then lock and explanation).
	Violations []Violation
	// LongestWait is the longest stretch during which a client waited while
	// the lock was free inside a fault-free window (what the bound is
	// compared with), judged or not, and LongestWaitClient whose it was (the
	// first in (client, lock, start) order on a tie; empty if there was no
	// such stretch).
	LongestWait       time.Duration
	LongestWaitClient string
	// Windows are the fault-free windows of the run, in time order.
	Windows []Window
	// From is the start of the first fault-free window longer than the
	// bound (the first window that could be judged), or 0 if there is none.
	From sim.Time
	// Note says how liveness was judged, or why it was not.
	Note string
}

// waitEnd says how a wait ended.
type waitEnd int

const (
	acquired  waitEnd = iota // the client got the lock
	crashed                  // the client crashed while waiting
	runEnded                 // the run ended first: the client never acquired
	continues                // it runs on into the next piece (sim.History.WaitsOut)
)

// wait is one span during which a client needed a lock and did not have it.
type wait struct {
	client, lock string
	start, end   sim.Time
	how          waitEnd
	gaveUp       int // how many wants ended with the client giving up
}

// CheckLiveness judges whether the locks of h made progress in the
// fault-free windows of the run.
//
// Fault-free windows are what remains of [0, h.End] once every span in
// which a fault acts is removed (see activeSpans): a pause, a delay, a
// partition until it heals, a crash until its scheduled restart, and an
// instantaneous fault during the settling time Options.Settle after it.
//
// Waits are measured per client and lock: a wait starts when the client
// starts wanting the lock and lasts until it next acquires it. Wants that end
// with the client giving up after exhausting its tries do not end the wait:
// the client still needs the lock, so the wait runs on into its next want and
// up to its next success, or to the end of the run. A crash ends the wait.
// Inside a wait, the stretches in which the lock was free and no fault acted
// are compared with the client's bound; a stretch longer than the bound is a
// violation (one exactly at the bound holds). A stretch cut short by the end
// of the run or of its window is a violation only if it already exceeds the
// bound.
//
// The verdict is NotJudged when no bound is given, and when no violation was
// found and no fault-free window was longer than the largest bound of the
// waiting clients (nothing could have been seen); it is Violated when some
// stretch exceeded its bound and Holds otherwise.
func CheckLiveness(h *sim.History, opts Options) LivenessReport {
	h = orEmpty(h)
	opts = windowed(opts)
	spans := activeSpans(h, opts)
	windows := livenessWindows(h, opts, spans)
	ws := waits(h)
	longest, vs := judgeWaits(h, opts, spans, windows, ws)
	return livenessReport(h, opts, windows, waitClients(ws), longest, vs)
}

// waitPick is the longest free stretch of a wait found so far, with the
// wait's (client, lock, start), the order in which CheckLiveness visits the
// waits: on a tie the first in that order is kept.
type waitPick struct {
	d      time.Duration
	client string
	lock   string
	start  sim.Time
	found  bool
}

// better reports whether b should replace a as the longest wait.
func (a waitPick) better(b waitPick) bool {
	switch {
	case !b.found:
		return false
	case !a.found || b.d > a.d:
		return true
	case b.d < a.d:
		return false
	}
	if a.client != b.client {
		return b.client < a.client
	}
	if a.lock != b.lock {
		return b.lock < a.lock
	}
	return b.start < a.start
}

// waitClients returns the sorted names of the clients of ws.
func waitClients(ws []wait) []string {
	names := make([]string, 0, len(ws))
	for _, w := range ws {
		names = append(names, w.client)
	}
	return uniqueSorted(names)
}

// judgeWaits measures the waits ws of h against the fault-free windows:
// the longest free stretch of any wait, and a violation per wait whose
// free stretch exceeded its bound (unsorted).
func judgeWaits(h *sim.History, opts Options, spans, windows []Window, ws []wait) (waitPick, []Violation) {
	held := heldByLock(h)
	var best waitPick
	var vs []Violation
	// Per lock, the stretches in which it was free and no fault acted,
	// computed once: each wait then asks for the longest of those inside
	// it and the first longer than its bound, in O(log n) (n log n in the
	// history, whatever the number of waits and clients).
	freeOf := map[string]*freeStretches{}
	for _, w := range ws {
		if _, ok := freeOf[w.lock]; !ok {
			// From h.Since: before it, a piece holds no belief.
			freeOf[w.lock] = newFreeStretches(intersect(windows, complement(held[w.lock], h.Since, h.End)))
		}
	}
	var spanSet map[Window]bool // the fault spans, built for the first violation
	for _, w := range ws {
		free := freeOf[w.lock]
		if d, ok := free.longest(w.start, w.end); ok {
			if p := (waitPick{d: d, client: w.client, lock: w.lock, start: w.start, found: true}); best.better(p) {
				best = p
			}
		}
		if b := boundOf(opts, w.client); b > 0 {
			if worst, ok := free.firstOver(w.start, w.end, b); ok {
				if spanSet == nil {
					spanSet = make(map[Window]bool, len(spans))
					for _, s := range spans {
						spanSet[s] = true
					}
				}
				vs = append(vs, livenessViolation(h, spanSet, w, worst, b, opts.Window))
			}
		}
	}
	return best, vs
}

// livenessReport makes the report from the fault-free windows of the run,
// the names of the clients that waited, the longest wait and the
// violations.
func livenessReport(h *sim.History, opts Options, windows []Window, waited []string, longest waitPick, vs []Violation) LivenessReport {
	r := LivenessReport{Windows: windows, Violations: vs}
	if longest.found {
		r.LongestWait, r.LongestWaitClient = longest.d, longest.client
	}
	bound := largestBound(opts, waited)
	for _, w := range r.Windows {
		if bound > 0 && w.End.Sub(w.Start) > bound {
			r.From = w.Start
			break
		}
	}
	switch {
	case !anyBound(opts):
		r.Verdict, r.Violations = NotJudged, nil
		r.Note = "not judged: " + noBoundWhy(opts)
	case len(waited) == 0 && len(r.Violations) == 0:
		// A bound with nobody to hold to it: a holds here would be
		// vacuous (issue 25).
		r.Verdict = NotJudged
		r.Note = "not judged: no client waited for a lock"
	case len(r.Violations) > 0:
		r.Verdict = Violated
		sortViolations(r.Violations)
		r.Note = windowsNote(r.Windows, bound)
	case !longerThan(r.Windows, bound):
		r.Verdict = NotJudged
		r.Note = "not judged: " + notJudgedWhy(h, r.Windows, bound)
	default:
		r.Verdict = Holds
		r.Note = windowsNote(r.Windows, bound)
	}
	if opts.Window != nil && (len(waited) > 0 || len(r.Violations) > 0) {
		// The window the scenario names, not the fault-free ones.
		r.Note = namedWindowNote(h, opts, r.Windows, r.Verdict != NotJudged)
	}
	return r
}

// longerThan reports whether some window is longer than bound.
func longerThan(ws []Window, bound time.Duration) bool {
	for _, w := range ws {
		if w.End.Sub(w.Start) > bound {
			return true
		}
	}
	return false
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

// noBoundWhy says why no bound applies: no bound was given, or the bounds
// given are zero (waits measured, never judged).
func noBoundWhy(opts Options) string {
	var zero []string
	for c := range opts.MaxWait {
		zero = append(zero, c)
	}
	if len(zero) == 0 {
		return "no wait bound was given"
	}
	sort.Strings(zero)
	if len(zero) == 1 {
		return "the wait bound of " + zero[0] + " is 0: its waits are measured, never judged"
	}
	return "the wait bounds of " + strings.Join(zero, ", ") + " are 0: their waits are measured, never judged"
}

// largestBound is the largest positive bound of the clients that waited, or
// of all clients if nobody waited: a window must be longer than it to show
// that every waiting client would have been served.
func largestBound(opts Options, clients []string) time.Duration {
	var out time.Duration
	for _, c := range clients {
		if b := boundOf(opts, c); b > out {
			out = b
		}
	}
	if out > 0 {
		return out
	}
	out = opts.DefaultMaxWait
	for _, b := range opts.MaxWait {
		if b > out {
			out = b
		}
	}
	return out
}

// settleOf is the settling time of instantaneous faults: Options.Settle, or
// when it is not set the largest bound (a conservative choice: the bound
// already allows for two leases and a retry budget).
func settleOf(opts Options) time.Duration {
	if opts.Settle > 0 {
		return opts.Settle
	}
	return largestBound(opts, nil)
}

// effectEnd is when fault f stops acting: Until if it has one (possibly
// sim.Never), else At (an instantaneous fault).
func effectEnd(f sim.FaultRecord) sim.Time {
	if f.Until > 0 {
		return f.Until
	}
	return f.At
}

// activeSpans returns the spans of true time in which some fault of h acts,
// sorted by start (they may overlap). Each record says how it acts through
// its Liveness, which its kind declares (faults' kind table); the kinds
// named below are today's:
//
//   - a fault with an end (a pause, a delay, a partition with heal_after, a
//     crash with restart_after) acts from its onset to its end, or to the
//     first later heal if that comes first and the fault is a partition or
//     a link fault (a heal removes those and nothing else);
//   - a fault without an end (sim.Never: a partition without heal_after)
//     acts until the first later heal, or to the end of the run. A restart
//     never heals a partition: it only brings a crashed node back;
//   - a crash recorded without an end acts until a later restart record of
//     its node (a restart fault of the schedule), and without one it is
//     over at once (sim.FaultRecord): the node is gone for good and the rest
//     of the system must work around it;
//   - a pause, delay or partition recorded without an end changed nothing
//     (the kernel ignored it) and does not act;
//   - a heal is the end of other faults, not a fault;
//   - a drop of the next messages is over at once: what follows (a reply
//     that never comes, a reset connection) is for the algorithm's own
//     timeouts and retries, which the bound already allows for (its retry
//     budget). A lock that stays blocked after a drop, as Redlock releasing
//     only where it believes it acquired (the Redis distlock page: "unlock
//     all the instances"), is the algorithm's failure, not the fault's;
//   - every other instantaneous fault (a clock jump, a drift change, a
//     restart, a promotion) acts for the settling time after it
//     (settleOf): a grant made before the change may run on the changed
//     clock, the emptied node or the new master for up to one lease, so the
//     algorithm needs that long before it can be judged fairly. NB: a
//     backward clock jump of a server larger than the lease keeps that
//     server's key alive beyond the settling time; the lock then shows as
//     free while still blocked, which the verdict reports as a violation
//     whose window begins when the settling time ends;
//   - a network that loses every segment (Options.NetworkLoss >= 1) is a
//     fault acting over the whole run. A lower loss rate is the network's
//     normal behaviour (TCP retransmits) and liveness is judged under it.
func activeSpans(h *sim.History, opts Options) []Window {
	settle := sim.Time(settleOf(opts))
	var out []Window
	if opts.NetworkLoss >= 1 {
		out = append(out, Window{Start: 0, End: h.End})
	}
	later := newLaterFaults(h.Faults)
	for i, f := range h.Faults {
		var end sim.Time
		switch {
		case f.Liveness == sim.LiveHeal, f.Liveness == sim.LiveNone:
			continue
		case f.Until == 0 && f.Liveness == sim.LiveCrash:
			// Awaiting a restart the schedule applies later, or gone for
			// good (over at once).
			rs, ok := later.restart(i, f)
			if !ok {
				continue
			}
			end = rs
		case f.Until == 0:
			switch f.Liveness {
			case sim.LiveSpan, sim.LiveLink:
				continue
			}
			end = f.At + settle
			if end < f.At { // overflow
				end = sim.Never
			}
		default:
			end = f.Until
			if f.Liveness == sim.LiveLink {
				if hl, ok := later.heal(i, f.At); ok && hl < end {
					end = hl
				}
			}
		}
		if end > h.End {
			end = h.End
		}
		if end < f.At {
			end = f.At
		}
		out = append(out, Window{Start: f.At, End: end})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// laterFaults finds the heal or restart records that end a fault, looking
// only at candidates (the heals, the restarts of each process), each list
// in record order: linear in the faults when their records are in time
// order, as the kernel writes them, instead of a scan of every later record
// for every fault.
type laterFaults struct {
	faults   []sim.FaultRecord
	heals    []int
	restarts map[string][]int // by target; looked up only
}

func newLaterFaults(faults []sim.FaultRecord) *laterFaults {
	l := &laterFaults{faults: faults, restarts: map[string][]int{}}
	for i, f := range faults {
		switch f.Liveness {
		case sim.LiveHeal:
			l.heals = append(l.heals, i)
		case sim.LiveRestart:
			for _, p := range f.Targets {
				l.restarts[p] = append(l.restarts[p], i)
			}
		}
	}
	return l
}

// heal returns the time of the first heal record after record i at or
// after at.
func (l *laterFaults) heal(i int, at sim.Time) (sim.Time, bool) {
	for k := sort.SearchInts(l.heals, i+1); k < len(l.heals); k++ {
		if g := l.faults[l.heals[k]]; g.At >= at {
			return g.At, true
		}
	}
	return 0, false
}

// restart returns the time of the first restart record after record i, of
// a target of the crash f, at or after it.
func (l *laterFaults) restart(i int, f sim.FaultRecord) (sim.Time, bool) {
	first := -1
	for _, p := range f.Targets {
		rs := l.restarts[p]
		for k := sort.SearchInts(rs, i+1); k < len(rs) && (first < 0 || rs[k] < first); k++ {
			if l.faults[rs[k]].At >= f.At {
				first = rs[k]
				break
			}
		}
	}
	if first < 0 {
		return 0, false
	}
	return l.faults[first].At, true
}

// complement returns the parts of [from, to] covered by none of spans, in
// order. Spans are closed: a fault that ends at t and a window that begins
// at t touch; a window of zero length is dropped.
func complement(spans []Window, from, to sim.Time) []Window {
	sorted := append([]Window(nil), spans...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Start < sorted[j].Start })
	var out []Window
	cur := from
	for _, s := range sorted {
		if s.Start > cur {
			out = append(out, Window{Start: cur, End: minTime(s.Start, to)})
		}
		if s.End > cur {
			cur = s.End
		}
		if cur >= to {
			break
		}
	}
	if cur < to {
		out = append(out, Window{Start: cur, End: to})
	}
	kept := out[:0]
	for _, w := range out {
		if w.End > w.Start {
			kept = append(kept, w)
		}
	}
	return kept
}

// intersect returns the intersection of two sorted lists of disjoint
// windows, dropping empty pieces.
func intersect(a, b []Window) []Window {
	var out []Window
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		s, e := maxTime(a[i].Start, b[j].Start), minTime(a[i].End, b[j].End)
		if e > s {
			out = append(out, Window{Start: s, End: e})
		}
		if a[i].End < b[j].End {
			i++
		} else {
			j++
		}
	}
	return out
}

// heldByLock returns, per lock, the spans in which some client believed it
// held it (possibly overlapping), sorted by start.
func heldByLock(h *sim.History) map[string][]Window {
	out := map[string][]Window{}
	for _, b := range sortedBeliefs(h) {
		out[b.Lock] = append(out[b.Lock], Window{Start: b.Start, End: beliefEnd(*b, h.End)})
	}
	return out
}

// waits measures the waits of h, in (client, lock, start) order. On a
// piece of a streamed history (sim/stream.go), a wait that ran across the
// cut the piece begins at (h.WaitsIn) starts at its true start, before the
// piece, and one that runs across the piece's end (h.WaitsOut) ends there,
// continuing: each piece measures the part of it inside the piece (the
// free stretches from h.Since on, judgeWaits), and only the piece in which
// it ends counts its latency.
func waits(h *sim.History) []wait {
	type key struct{ client, lock string }
	byKey := map[key][]*sim.Want{} // pointers into h: a word per want
	var keys []key
	addKey := func(k key) {
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
			byKey[k] = nil
		}
	}
	for i := range h.Wants {
		w := &h.Wants[i]
		k := key{w.Client, w.Lock}
		addKey(k)
		byKey[k] = append(byKey[k], w)
	}
	var in, out map[key]sim.Time
	if len(h.WaitsIn)+len(h.WaitsOut) > 0 {
		in, out = map[key]sim.Time{}, map[key]sim.Time{}
		for _, w := range h.WaitsIn {
			in[key{w.Client, w.Lock}] = w.Start
			addKey(key{w.Client, w.Lock})
		}
		for _, w := range h.WaitsOut {
			out[key{w.Client, w.Lock}] = w.Start
			addKey(key{w.Client, w.Lock})
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].client != keys[j].client {
			return keys[i].client < keys[j].client
		}
		return keys[i].lock < keys[j].lock
	})

	var res []wait
	for _, k := range keys {
		wants := byKey[k]
		sort.SliceStable(wants, func(i, j int) bool {
			if wants[i].Start != wants[j].Start {
				return wants[i].Start < wants[j].Start
			}
			return wants[i].End < wants[j].End
		})
		var cur wait // a value, not a pointer: one allocation less per want
		waiting := false
		if start, ok := in[k]; ok {
			cur, waiting = wait{client: k.client, lock: k.lock, start: start}, true
		}
		for _, w := range wants {
			end := w.End
			if w.Open {
				end = h.End
			}
			if !waiting {
				cur, waiting = wait{client: k.client, lock: k.lock, start: w.Start}, true
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
			res = append(res, cur)
			waiting = false
		}
		start, goesOn := out[k]
		switch {
		case goesOn && !waiting:
			// Its wants are all in later pieces.
			res = append(res, wait{client: k.client, lock: k.lock, start: start, end: maxTime(h.End, start), how: continues})
		case goesOn:
			cur.end, cur.how = maxTime(h.End, cur.start), continues
			res = append(res, cur)
		case waiting:
			cur.end, cur.how = maxTime(h.End, cur.start), runEnded
			res = append(res, cur)
		}
	}
	return res
}

// livenessViolation explains the stretch free of wait w, longer than bound.
func livenessViolation(h *sim.History, spans map[Window]bool, w wait, free Window, bound time.Duration, named *LivenessWindow) Violation {
	d := free.End.Sub(free.Start)
	// Enough digits to tell the stretch's ends apart from a bound apart.
	digits := digitsFor([2]sim.Time{free.End, free.Start + sim.Time(bound)}, [2]sim.Time{free.Start, free.End})
	at := func(t sim.Time) string { return fmtAt(t, digits) }
	var how string
	switch w.how {
	case acquired:
		how = fmt.Sprintf("until it acquired it at %s", at(w.end))
	case crashed:
		how = fmt.Sprintf("until it crashed at %s without acquiring it", at(w.end))
	default:
		how = fmt.Sprintf("and never acquired it before the run ended at %s", at(w.end))
	}
	if named != nil {
		// The window the scenario names: faults may act in it.
		how += "; nobody held it in the window the scenario names (after " + named.Name() + ")"
	} else {
		how += "; nobody held it and no fault acted"
	}
	text := fmt.Sprintf("%s wanted the lock %q from %s %s from %s to %s: %s, longer than its bound of %s",
		w.client, w.lock, at(w.start), how, at(free.Start), at(free.End), fmtDurationVs(d, bound), bound)
	if cause := windowCause(h, spans, free.Start); cause != "" && named == nil {
		text += " (" + cause + ")"
	}
	if b := crashedHolder(h, w.lock, free.Start); b != nil {
		who := "the last holder, " + b.Client + ","
		if b.Client == w.client {
			who = b.Client + " itself, the last holder,"
		}
		text += fmt.Sprintf("; %s crashed at %s while holding the lock and never released it", who, at(b.End))
	} else if b := lastBelief(h, w.lock, free.Start); b != nil && b.Reason == sim.EndReleased && b.End == free.Start && w.how != acquired {
		// The stretch began at a release, yet the waiter never got the
		// lock: the release did not free it on the server (it failed or
		// never arrived: a MySQL DELETE on a connection a restart reset,
		// a script refused for OOM), or the server refused the waiter
		// (OOM, NOREPLICAS). The history does not say which.
		who := "the last holder, " + b.Client + ","
		if b.Client == w.client {
			who = b.Client + " itself, the last holder,"
		}
		text += fmt.Sprintf("; %s released it at %s and %s failed from then on: the release did not free the lock on the server, or the server refused %s (the trace says which)", who, at(b.End), w.client, w.client)
	}
	text += "."
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
		Windows:     []Window{free},
		Explanation: text,
	}
}

// crashedHolder returns the last belief in lock that ended by t when its
// client crashed holding it (whatever it left on the servers, a key, a row
// or a session, outlived it), or nil when that belief ended otherwise.
func crashedHolder(h *sim.History, lock string, t sim.Time) *sim.Belief {
	last := lastBelief(h, lock, t)
	if last == nil || last.Reason != sim.EndCrashed {
		return nil
	}
	return last
}

// lastBelief is the belief in lock that ended last at or before t.
func lastBelief(h *sim.History, lock string, t sim.Time) *sim.Belief {
	var last *sim.Belief
	for i := range h.Beliefs {
		b := &h.Beliefs[i]
		if b.Lock == lock && !b.Open && b.End <= t && (last == nil || b.End >= last.End) {
			last = b
		}
	}
	return last
}

// windowCause names the fault whose effect ended at t, if a fault-free
// stretch begins there because of one. spans is the set of fault spans:
// a lookup per fault, not a scan of the spans.
func windowCause(h *sim.History, spans map[Window]bool, t sim.Time) string {
	if t == 0 {
		return ""
	}
	for _, f := range h.Faults {
		if f.At <= t && spans[Window{Start: f.At, End: t}] {
			if f.Until == 0 {
				return fmt.Sprintf("the stretch began when the settling time after %s at %s ended", f.Text, f.At)
			}
			return fmt.Sprintf("the stretch began when %s at %s ended", f.Text, f.At)
		}
	}
	return ""
}

// windowsNote describes the fault-free windows that were judged.
func windowsNote(ws []Window, bound time.Duration) string {
	n := 0
	var longest Window
	for _, w := range ws {
		if w.End.Sub(w.Start) > bound {
			n++
		}
		if w.End.Sub(w.Start) > longest.End.Sub(longest.Start) {
			longest = w
		}
	}
	if len(ws) == 1 && ws[0].Start == 0 {
		return fmt.Sprintf("judged over the whole run (%s to %s): no fault acted", ws[0].Start, ws[0].End)
	}
	what := "windows"
	if len(ws) == 1 {
		what = "window"
	}
	return fmt.Sprintf("judged in %d fault-free %s (%d longer than the bound of %s; the longest from %s to %s)",
		len(ws), what, n, bound, longest.Start, longest.End)
}

// notJudgedWhy says why no window could be judged.
func notJudgedWhy(h *sim.History, ws []Window, bound time.Duration) string {
	if len(ws) == 0 {
		return fmt.Sprintf("a fault acted during the whole run (0.000s to %s): there is no fault-free window", h.End)
	}
	var longest Window
	for _, w := range ws {
		if w.End.Sub(w.Start) > longest.End.Sub(longest.Start) {
			longest = w
		}
	}
	return fmt.Sprintf("no fault-free window was longer than the bound of %s (the longest lasted %s, from %s to %s)",
		bound, fmtDuration(longest.End.Sub(longest.Start)), longest.Start, longest.End)
}

func maxTime(a, b sim.Time) sim.Time {
	if a > b {
		return a
	}
	return b
}
