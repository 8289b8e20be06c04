package checker

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/sim"
)

// The explanations are computed directly from the history, never from
// porcupine's output, and depend only on the history: every list is sorted
// and no map order reaches the text.

// overlap is two belief periods of one lock that overlap in true time; a
// starts no later than b.
type overlap struct {
	a, b       sim.Belief
	aEnd, bEnd sim.Time
	start, end sim.Time
}

// overlaps returns every pair of overlapping belief periods of h, by lock and
// then by the start of the later belief. Two periods overlap iff each starts
// strictly before the other ends; periods that touch at one instant do not,
// exactly as in LockModel.
func overlaps(h *sim.History) []overlap {
	type active struct {
		b   sim.Belief
		end sim.Time
	}
	var out []overlap
	var open []active
	lock := ""
	for i, bp := range sortedBeliefs(h) {
		b := *bp
		if i == 0 || b.Lock != lock {
			lock, open = b.Lock, open[:0]
		}
		end := beliefEnd(b, h.End)
		kept := open[:0]
		for _, a := range open {
			if a.end > b.Start { // a.end <= b.Start cannot overlap b or any later belief
				kept = append(kept, a)
			}
		}
		open = kept
		for _, a := range open {
			if a.b.Start < end && b.Start < a.end {
				out = append(out, overlap{a: a.b, b: b, aEnd: a.end, bEnd: end, start: b.Start, end: minTime(a.end, end)})
			}
		}
		open = append(open, active{b, end})
	}
	return out
}

// explainLock returns one lock-safety violation per belief that later
// beliefs overlapped (a holder stuck for a long time overlaps many
// successors: they make one violation, with one window per overlap), in time
// order. If porcupine found the history illegal but no pair overlaps (which
// LockModel's exactness rules out), it returns a generic violation rather
// than none.
func explainLock(h *sim.History) []Violation {
	type key struct {
		lock string
		id   int
	}
	var groups [][]overlap
	index := map[key]int{} // looked up only: group order is first appearance
	for _, o := range overlaps(h) {
		k := key{o.a.Lock, o.a.ID}
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], o)
	}
	var vs []Violation
	for _, g := range groups {
		vs = append(vs, explainOverlaps(h, g))
	}
	if len(vs) == 0 {
		return []Violation{{
			Kind:        KindLockSafety,
			Explanation: "porcupine found no order of acquires and releases that keeps every lock exclusive, although no two belief periods overlap; see the lock visualization.",
		}}
	}
	sortViolations(vs)
	return vs
}

// explainOverlaps explains the overlaps g of one belief with later ones.
func explainOverlaps(h *sim.History, g []overlap) Violation {
	a := g[0].a
	v := Violation{Kind: KindLockSafety, Lock: a.Lock, Clients: []string{a.Client}}
	// Print the times with enough digits that every overlap shows: the
	// later belief starts strictly before the earlier one ends.
	var pairs [][2]sim.Time
	for _, o := range g {
		pairs = append(pairs, [2]sim.Time{o.b.Start, minTime(o.aEnd, o.bEnd)}, [2]sim.Time{o.a.Start, o.b.Start})
	}
	digits := digitsFor(pairs...)
	span := func(b sim.Belief, end, runEnd sim.Time) string { return spanAt(b, end, runEnd, digits) }
	var text string
	if len(g) == 1 && g[0].b.Client == a.Client {
		text = fmt.Sprintf("%s believed it held the lock %q twice at once, from %s and from %s",
			a.Client, a.Lock, span(a, g[0].aEnd, h.End), span(g[0].b, g[0].bEnd, h.End))
	} else {
		items := []string{span(a, g[0].aEnd, h.End)}
		for i, o := range g {
			if i == maxListed {
				items = append(items, fmt.Sprintf("%d more overlapping beliefs", len(g)-maxListed))
				break
			}
			who := o.b.Client
			if who == a.Client {
				who += " again"
			}
			items = append(items, fmt.Sprintf("%s from %s", who, span(o.b, o.bEnd, h.End)))
		}
		text = fmt.Sprintf("%s believed it held the lock %q from %s", a.Client, a.Lock, joinAnd(items))
	}
	first := g[0].start
	for _, o := range g {
		v.Clients = append(v.Clients, o.b.Client)
		v.Windows = append(v.Windows, Window{Start: o.start, End: o.end})
		first = minTime(first, o.start)
	}
	v.Clients = uniqueInOrder(v.Clients)
	what := "the overlap"
	if len(g) > 1 {
		what = "the first overlap"
	}
	faults := faultClause(h.Faults, v.Clients, a.Start, first, what)
	// The server's own loss of the key comes first: it is what let the
	// second holder in; a fault before it may be why the first holder
	// still believed (a pause longer than the TTL); clocks that were apart
	// from the start come last (a client whose clock runs ahead takes over
	// a live GETSET lock with no fault at all). Without a fault, they
	// stand alone. A holder that outlived the validity it computed comes
	// with the server's loss: it is why the first holder still believed.
	v.Explanation = text + "; " + causes(what, joinCauses(lossClause(h, a, g[0].b), actsClause(h, g, digits), promotionClause(h, a.Lock, "lock key", false, g[0].b.Start), validityClause(g, digits)), faults, clockClause(h, v.Clients)) + "."
	return v
}

// causes joins the clauses of an explanation's causes: the server's loss
// of a key, the fault clause, the initial clocks; a fault clause that
// found no fault is left out when another cause is named.
func causes(what string, loss, faults, clocks string) string {
	var parts []string
	if loss != "" {
		parts = append(parts, loss)
	}
	if faults != "no fault preceded "+what || (loss == "" && clocks == "") {
		parts = append(parts, faults)
	}
	if clocks != "" {
		parts = append(parts, clocks)
	}
	return strings.Join(parts, "; ")
}

// clockClause names the initial clock settings (sim.History.Clocks, the
// scenario's clock offsets and rate errors) that can have caused a
// violation among clients: those of the clients involved, in their
// order, then those of the processes that are no client of the history
// (the servers: a replica whose clock runs ahead expires a key early). A
// client not involved is left out. It returns "" when there is none:
// `from the start of the run, c2's wall clock was 40s ahead of true time`.
func clockClause(h *sim.History, clients []string) string {
	if len(h.Clocks) == 0 {
		return ""
	}
	isClient := map[string]bool{}
	for _, b := range h.Beliefs {
		isClient[b.Client] = true
	}
	for _, w := range h.Wants {
		isClient[w.Client] = true
	}
	for _, a := range h.Attempts {
		isClient[a.Client] = true
	}
	for _, x := range h.Sections {
		isClient[x.Client] = true
	}
	var items []string
	for _, c := range clients {
		for _, r := range h.Clocks {
			if r.Proc == c {
				items = append(items, clockText(r))
			}
		}
	}
	for _, r := range h.Clocks {
		if !isClient[r.Proc] {
			items = append(items, clockText(r))
		}
	}
	if len(items) == 0 {
		return ""
	}
	if len(items) > maxListed {
		items = append(items[:maxListed], fmt.Sprintf("%d more clocks set apart", len(items)-maxListed))
	}
	return "from the start of the run, " + joinAnd(items)
}

// clockText renders one initial clock setting: "c2's wall clock was 40s
// ahead of true time", "C's clocks ran 10% fast", or both: "B's wall clock
// was 2s behind true time, with its clocks running 10% fast".
func clockText(r sim.ClockRecord) string {
	var parts []string
	switch {
	case r.Offset > 0:
		parts = append(parts, fmt.Sprintf("%s's wall clock was %s ahead of true time", r.Proc, fmtDuration(r.Offset)))
	case r.Offset < 0:
		parts = append(parts, fmt.Sprintf("%s's wall clock was %s behind true time", r.Proc, fmtDuration(-r.Offset)))
	}
	if r.DriftPPB != 0 {
		speed, ppb := "fast", r.DriftPPB
		if ppb < 0 {
			speed, ppb = "slow", -ppb
		}
		pct := strconv.FormatFloat(float64(ppb)/1e7, 'g', -1, 64) + "%"
		if len(parts) > 0 {
			parts = append(parts, fmt.Sprintf("its clocks running %s %s", pct, speed))
		} else {
			parts = append(parts, fmt.Sprintf("%s's clocks ran %s %s", r.Proc, pct, speed))
		}
	}
	return strings.Join(parts, ", with ")
}

// spanAt renders a belief period with the given digits: "12.003s to
// 15.001s", or "14.200s until the run ended at 60.000s" for a belief still
// held at the end.
func spanAt(b sim.Belief, end, runEnd sim.Time, digits int) string {
	if b.Open || (b.Reason == sim.EndRunEnd && end == runEnd) {
		return fmt.Sprintf("%s until the run ended at %s", fmtAt(b.Start, digits), fmtAt(end, digits))
	}
	return fmt.Sprintf("%s to %s", fmtAt(b.Start, digits), fmtAt(end, digits))
}

// faultClause names the faults that preceded what (a violation starting at
// at, among the processes clients, whose first belief started at first).
//
// The candidates are the faults that began no later than at and were still
// acting at first (or began after it): those that can have led the first
// believer astray. Without such a fault, every fault that began no later
// than at is a candidate (a drift change at the start of the run acts
// forever). A fault the kernel ignored (FaultRecord.Ignored: a pause of a
// process already paused for longer, a crash of a crashed one), like a
// pause recorded without an end, changed nothing and is no candidate.
//
// The faults on the clients involved (those that target only them) come
// first: the first believer's own
// pause or clock fault is usually the cause (Kleppmann's GC pause, a
// client's clock jump), and it must not be folded into a count behind server
// faults; then those of the other clients involved; then the other
// candidates (the servers, and clients not involved). Each group is named
// most recent first, up to maxEarlier instants after the first:
// the checker does not know which servers a lock uses, and a crash of C
// before a partition is as much part of the story as the partition.
func faultClause(faults []sim.FaultRecord, clients []string, first, at sim.Time, what string) string {
	var acting, before []sim.FaultRecord
	for _, f := range faults {
		if f.At > at || f.Ignored || (f.Liveness == sim.LiveSpan && f.Until == 0) {
			continue
		}
		before = append(before, f)
		if effectEnd(f) >= first {
			acting = append(acting, f)
		}
	}
	cands := acting
	if len(cands) == 0 {
		cands = before
	}
	if len(cands) == 0 {
		return "no fault preceded " + what
	}
	// The groups: the first believer's faults, the other clients', the rest.
	var holder, mine, others []sim.FaultRecord
	for _, f := range cands {
		switch {
		case len(clients) > 0 && onlyTargets(f, clients[:1]):
			holder = append(holder, f)
		case onlyTargets(f, clients):
			mine = append(mine, f)
		default:
			others = append(others, f)
		}
	}
	var head, also, rest []sim.FaultRecord
	switch {
	case len(holder) > 0:
		head, also, rest = holder, mine, others
	case len(mine) > 0:
		head, rest = mine, others
	default:
		head = others
	}
	instants := instantsOf(head)
	// At one instant, the faults that touch the clients come first.
	texts := func(fs []sim.FaultRecord, t sim.Time) string {
		var near, far []string
		for _, f := range fs {
			switch {
			case f.At != t:
			case targets(f, clients):
				near = append(near, f.Text)
			default:
				far = append(far, f.Text)
			}
		}
		return joinAnd(append(near, far...))
	}
	latest := instants[0]
	var clause string
	if latest == at {
		clause = fmt.Sprintf("%s began at %s, when %s", what, at, texts(head, latest))
	} else {
		clause = fmt.Sprintf("%s began %s after %s at %s", what, fmtDuration(at.Sub(latest)), texts(head, latest), latest)
	}
	if earlier := listInstants(head, instants[1:], texts); earlier != "" {
		clause += " (and before that, " + earlier + ")"
	}
	if len(also) > 0 {
		clause += fmt.Sprintf("; faults on %s before it: %s", joinAnd(clients[1:]), listInstants(also, instantsOf(also), texts))
	}
	if len(rest) > 0 {
		clause += "; other faults before it: " + listInstants(rest, instantsOf(rest), texts)
	}
	return clause
}

// instantsOf returns the distinct onsets of fs, most recent first.
func instantsOf(fs []sim.FaultRecord) []sim.Time {
	var out []sim.Time
	seen := map[sim.Time]bool{}
	for _, f := range fs {
		if !seen[f.At] {
			seen[f.At] = true
			out = append(out, f.At)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] > out[j] })
	return out
}

// listInstants lists the faults of fs at the given instants, up to
// maxEarlier instants and a count of the rest.
func listInstants(fs []sim.FaultRecord, instants []sim.Time, texts func([]sim.FaultRecord, sim.Time) string) string {
	var items []string
	for i, t := range instants {
		if i == maxEarlier {
			if n := len(instants) - maxEarlier; n == 1 {
				items = append(items, "1 earlier fault")
			} else {
				items = append(items, fmt.Sprintf("%d earlier faults", n))
			}
			break
		}
		items = append(items, fmt.Sprintf("%s at %s", texts(fs, t), t))
	}
	return strings.Join(items, "; ")
}

// onlyTargets reports whether f targets some processes, all of them among
// processes: a fault on those processes themselves (a pause, a clock jump, a
// crash), not one that also touches others (a partition of the servers).
func onlyTargets(f sim.FaultRecord, processes []string) bool {
	if len(f.Targets) == 0 {
		return false
	}
	for _, t := range f.Targets {
		if !targets(sim.FaultRecord{Targets: []string{t}}, processes) {
			return false
		}
	}
	return true
}

// maxEarlier is how many earlier instants of faults an explanation names
// after the most recent one.
const maxEarlier = 2

// targets reports whether f targets one of the processes.
func targets(f sim.FaultRecord, processes []string) bool {
	for _, t := range f.Targets {
		for _, p := range processes {
			if t == p {
				return true
			}
		}
	}
	return false
}

// maxListed is how many writes or rejections an explanation lists before
// summarising the rest as a count.
const maxListed = 3

// explainResource replays the accepted writes of each resource in the order
// the storage node applied them and returns one resource-safety violation per
// write whose read was stale: a lost update. If porcupine found the history
// illegal but the replay finds no stale read (for instance a fenced section
// that read a value the resource never held, which the strict model also
// rejects), it returns a generic violation rather than none.
func explainResource(h *sim.History) []Violation {
	byLock := map[string][]sim.Section{}
	var locks []string
	for _, sp := range checkedSections(h) {
		s := *sp
		if s.Outcome != sim.WriteAccepted {
			continue
		}
		if _, ok := byLock[s.Lock]; !ok {
			locks = append(locks, s.Lock)
		}
		byLock[s.Lock] = append(byLock[s.Lock], s)
	}
	sort.Strings(locks)

	var vs []Violation
	for _, lock := range locks {
		writes := byLock[lock]
		sort.SliceStable(writes, func(i, j int) bool {
			a, b := writes[i], writes[j]
			if a.WriteAt != b.WriteAt {
				return a.WriteAt < b.WriteAt
			}
			if a.ReadValue != b.ReadValue {
				return a.ReadValue < b.ReadValue
			}
			return a.ID < b.ID
		})
		// values[k] is the resource's value after the first k writes, and
		// last[v] the largest k with values[k] == v (found in O(1), not by
		// a scan back through the history for every stale read).
		values := []int64{0}
		last := map[int64]int{0: 0}
		for k, w := range writes {
			if cur := values[k]; w.ReadValue != cur {
				held, ok := last[w.ReadValue]
				if !ok {
					held = -1
				}
				vs = append(vs, staleRead(w, writes[:k], held))
			}
			values = append(values, w.ReadValue+1)
			last[w.ReadValue+1] = k + 1
		}
	}
	if len(vs) == 0 {
		return []Violation{{
			Kind:        KindResourceSafety,
			Explanation: "porcupine found no order of the critical sections that explains every value read, although no accepted write overwrote another; see the resource visualization.",
		}}
	}
	sortViolations(vs)
	return vs
}

// staleRead explains w, an accepted write whose read was stale, given the
// writes applied before it and k, the number of them after which the
// resource last held the value w read (-1 if it never did).
func staleRead(w sim.Section, before []sim.Section, k int) Violation {
	v := Violation{
		Kind:    KindResourceSafety,
		Lock:    w.Lock,
		Windows: []Window{{Start: w.ReadAt, End: w.WriteAt}},
	}
	// The writes applied since the resource last held the value w read.
	if k < 0 {
		v.Clients = []string{w.Client}
		v.Explanation = fmt.Sprintf("%s read %d at %s and its write of %d%s was accepted at %s, but the resource had never held %d until then.",
			w.Client, w.ReadValue, w.ReadAt, w.ReadValue+1, tokenNote(w), w.WriteAt, w.ReadValue)
		return v
	}
	lost := before[k:]
	if len(lost) == 1 && lost[0].ReadValue == w.ReadValue {
		x := lost[0]
		v.Clients = uniqueInOrder([]string{x.Client, w.Client})
		// Enough digits to show the order: both reads before the first write.
		d := digitsFor([2]sim.Time{x.ReadAt, w.ReadAt}, [2]sim.Time{x.WriteAt, w.WriteAt}, [2]sim.Time{w.ReadAt, x.WriteAt})
		at := func(t sim.Time) string { return fmtAt(t, d) }
		v.Explanation = fmt.Sprintf("%s and %s both read %d (at %s and %s) and both writes were accepted: %s's write of %d%s at %s was lost when %s wrote %d%s at %s.",
			x.Client, w.Client, w.ReadValue, at(x.ReadAt), at(w.ReadAt),
			x.Client, x.ReadValue+1, tokenNote(x), at(x.WriteAt),
			w.Client, w.ReadValue+1, tokenNote(w), at(w.WriteAt))
		return v
	}
	names := []string{w.Client}
	var items []string
	for i, x := range lost {
		names = append(names, x.Client)
		if i < maxListed {
			items = append(items, fmt.Sprintf("%s's write of %d%s at %s", x.Client, x.ReadValue+1, tokenNote(x), x.WriteAt))
		}
	}
	if n := len(lost) - maxListed; n > 0 {
		items = append(items, fmt.Sprintf("%d more", n))
	}
	what, were := "that update was", "was"
	if len(lost) > 1 {
		what, were = "those updates were", "were"
	}
	v.Clients = uniqueInOrder(names)
	v.Explanation = fmt.Sprintf("%s read %d at %s and wrote %d%s at %s, but %s %s accepted in between: %s lost.",
		w.Client, w.ReadValue, w.ReadAt, w.ReadValue+1, tokenNote(w), w.WriteAt, joinAnd(items), were, what)
	return v
}

// tokenNote renders a section's fencing token as " (token 3)", or nothing.
func tokenNote(s sim.Section) string {
	if !s.HasToken {
		return ""
	}
	return fmt.Sprintf(" (token %d)", s.Token)
}

// fencingStory tells how fencing kept the resource safe while the lock
// failed: the rejected reads and writes on the locks of vs, from the first
// overlap on, each with the use of a newer token that fenced it off.
func fencingStory(h *sim.History, vs []Violation) string {
	since := map[string]sim.Time{}
	for _, v := range vs {
		for _, w := range v.Windows {
			if t, ok := since[v.Lock]; !ok || w.Start < t {
				since[v.Lock] = w.Start
			}
		}
	}
	type rejection struct {
		s    sim.Section
		at   sim.Time
		read bool
	}
	var rs []rejection
	for _, s := range h.Sections {
		start, ok := since[s.Lock]
		if !ok {
			continue
		}
		r := rejection{s: s}
		switch {
		case s.ReadRejected:
			r.at, r.read = s.ReadAt, true
			if r.at == 0 {
				r.at = s.ReadSent
			}
		case s.Written && s.Outcome == sim.WriteRejected:
			r.at = s.WriteAt
		default:
			continue
		}
		if r.at >= start {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return "no read or write was rejected: the critical sections of the overlapping holders did not conflict at the resource"
	}
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].at != rs[j].at {
			return rs[i].at < rs[j].at
		}
		return rs[i].s.ID < rs[j].s.ID
	})
	var parts []string
	for i, r := range rs {
		if i == maxListed {
			parts = append(parts, fmt.Sprintf("%d more rejections", len(rs)-maxListed))
			break
		}
		op := "write"
		if r.read {
			op = "read"
		}
		part := fmt.Sprintf("%s's %s", r.s.Client, op)
		if r.s.HasToken {
			part += fmt.Sprintf(" with token %d", r.s.Token)
		}
		part += fmt.Sprintf(" was rejected at %s", r.at)
		if f, verb, at, ok := fencer(h, r.s, r.at); ok {
			part += fmt.Sprintf(" after %s %s with token %d at %s", f.Client, verb, f.Token, at)
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ")
}

// fencer finds the use of a newer token that fenced off s at time at: the
// latest accepted write by another client with a larger token no later than
// at or, failing that, the latest read served to one (fencing in mark mode).
func fencer(h *sim.History, s sim.Section, at sim.Time) (sim.Section, string, sim.Time, bool) {
	if !s.HasToken {
		return sim.Section{}, "", 0, false
	}
	newer := func(x sim.Section) bool {
		return x.Lock == s.Lock && x.Client != s.Client && x.HasToken && x.Token > s.Token
	}
	var best sim.Section
	var bestAt sim.Time
	found := false
	for _, x := range h.Sections {
		if newer(x) && x.Written && x.Outcome == sim.WriteAccepted && x.WriteAt <= at &&
			(!found || x.WriteAt > bestAt || (x.WriteAt == bestAt && x.ID < best.ID)) {
			best, bestAt, found = x, x.WriteAt, true
		}
	}
	if found {
		return best, "wrote", bestAt, true
	}
	for _, x := range h.Sections {
		if newer(x) && x.Read && !x.ReadRejected && x.ReadAt <= at &&
			(!found || x.ReadAt > bestAt || (x.ReadAt == bestAt && x.ID < best.ID)) {
			best, bestAt, found = x, x.ReadAt, true
		}
	}
	return best, "read", bestAt, found
}

// sortViolations orders violations by the start of their first window, then
// by lock and explanation.
func sortViolations(vs []Violation) {
	start := func(v Violation) sim.Time {
		if len(v.Windows) == 0 {
			return 0
		}
		return v.Windows[0].Start
	}
	sort.SliceStable(vs, func(i, j int) bool {
		if a, b := start(vs[i]), start(vs[j]); a != b {
			return a < b
		}
		if vs[i].Lock != vs[j].Lock {
			return vs[i].Lock < vs[j].Lock
		}
		return vs[i].Explanation < vs[j].Explanation
	})
}

// joinAnd joins items as "a", "a and b" or "a, b and c".
func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// fmtDuration renders d rounded to the millisecond, the precision of
// sim.Time's String: "1.2s", "250ms"; a span shorter than a millisecond is
// not rounded to nothing: "300µs", "1ns".
func fmtDuration(d time.Duration) string {
	for _, u := range []time.Duration{time.Millisecond, time.Microsecond} {
		if r := d.Round(u); r != 0 || d == 0 {
			return r.String()
		}
	}
	return d.String()
}

// uniqueInOrder drops repeated names, keeping the first of each.
// It is linear: a violation may name every writer of a long history.
func uniqueInOrder(names []string) []string {
	var out []string
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

func minTime(a, b sim.Time) sim.Time {
	if a < b {
		return a
	}
	return b
}
