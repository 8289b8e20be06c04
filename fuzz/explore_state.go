package fuzz

import (
	"fmt"
	"sort"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// Pruning by world state (issue 27). A full hash of the world state is
// not cheap here: the kernel's queue holds closures, and every node and
// client model would need a canonical encoding. explore uses a cheaper
// criterion that is sound for the safety properties, proved from the
// kernel's pause semantics (sim.Kernel.Pause: nothing of a paused process
// runs, its clocks keep running, messages and due timers wait in its inbox
// and are handled in order when it resumes; timers keep their deadlines):
//
// Let S1 and S2 be two single-pause schedules of the same target placed at
// the same instant t, of lengths d1 < d2, and suppose that in S1's run the
// target has no event in [t+d1, t+d2] (no delivery, timer, send, fault,
// nothing with the target as process or peer but another's send to it,
// which does nothing to it until it arrives) but its resume at t+d1. Up
// to t+d1 the two runs are the same run (same seed, same faults but for a
// length nobody reads before then). At t+d1 in S1 the target resumes with
// an empty inbox (anything waiting would be handled at once: an event at
// t+d1) and then does nothing until t+d2 (nothing reaches it: that would
// be an event); in S2 it stays paused, and nothing arrives for it either
// (the rest of the world ran as in S1, since the target did nothing
// observable in either run), so at t+d2 it resumes with an empty inbox.
// After t+d2 both worlds hold the same state: the same process states,
// clocks, random streams, connections and kernel queue (the one resume
// event each pushed at pause time has run). They continue identically, so
// every belief, grant, token and resource operation (what lock safety,
// resource safety and token order judge) is the same, and S2 need not
// run: it has S1's verdicts. What differs is the trace (the resume's
// instant), the pause's end in the history's fault records, and
// explanations that quote the pause: liveness judges fault windows, so
// this pruning is off when liveness is checked; explanations of pruned
// findings say which schedule they are the same as. The pruning is also
// off when the environment has triggered faults (a trigger might fire on
// the resume), and for schedules of more than one fault.

// statePruneReason is the Pruned line of this pruning.
const statePruneReason = "same world state: a longer pause of the same target at the same instant ends while the target is idle in the shorter one's run (safety verdicts copied)"

// stateGroups returns, for each schedule of [first, end) that may be
// pruned by world state, its group: the single-pause schedules of the same
// target and instant, in increasing length (nil when the pruning is off).
func stateGroups(cfg ExploreConfig, pl *Plan, first, end int) map[int][]int {
	if cfg.NoStatePrune || contains(cfg.Checks, checker.KindLiveness) {
		return nil
	}
	for _, f := range pl.Env {
		if f.On != nil {
			return nil
		}
	}
	type key struct {
		target string
		at     time.Duration
	}
	groups := map[key][]int{}
	for n := first; n < end && n < len(pl.Candidates); n++ {
		c := pl.Candidates[n]
		if c.Spec.Kind != faults.KindPause || c.Spec.At == nil {
			continue
		}
		k := key{c.Target, c.Spec.At.Lo}
		if groups[k] != nil {
			continue
		}
		// The group's members are contiguous: every class of one
		// placement is planned together, but a shard may start or end
		// within a group, so look on both sides.
		var g []int
		for m := n; m >= 0 && sameGroup(pl, m, c); m-- {
			g = append(g, m)
		}
		for m := n + 1; m < len(pl.Candidates) && sameGroup(pl, m, c); m++ {
			g = append(g, m)
		}
		sort.SliceStable(g, func(a, b int) bool {
			da, db := pl.Candidates[g[a]].Spec.For.Lo, pl.Candidates[g[b]].Spec.For.Lo
			if da != db {
				return da < db
			}
			return g[a] < g[b]
		})
		groups[k] = g
	}
	out := map[int][]int{}
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		for _, m := range g {
			if m >= first && m < end {
				out[m] = g
			}
		}
	}
	return out
}

func sameGroup(pl *Plan, m int, c Candidate) bool {
	d := pl.Candidates[m]
	return d.Spec.Kind == faults.KindPause && d.Target == c.Target && d.Spec.At != nil && d.Spec.At.Lo == c.Spec.At.Lo
}

// targetEvents are the instants at which a process has an event in a run
// (as process or peer), and when it resumed.
type targetEvents struct {
	at      []sim.Time
	resumed []sim.Time
}

// idle reports whether the target had no event in [from, to] but a resume
// at from.
func (te *targetEvents) idle(from, to sim.Time) bool {
	i := sort.Search(len(te.at), func(i int) bool { return te.at[i] >= from })
	for ; i < len(te.at) && te.at[i] <= to; i++ {
		if te.at[i] != from {
			return false
		}
	}
	// Events at from: only the resume.
	n := 0
	for _, t := range te.at {
		if t == from {
			n++
		}
	}
	r := 0
	for _, t := range te.resumed {
		if t == from {
			r++
		}
	}
	return n == r
}

// stateRep is the last schedule of a group that ran: the representative
// of the longer pauses that reach its world state.
type stateRep struct {
	n  int
	rr runResult
	te *targetEvents
}

// exploreGroup runs schedule n of group g: the group's shorter pauses run
// (or are pruned) first, in the same worker, so that n's verdict comes from
// the last one that ran when n reaches its world state. The result says
// which schedule it is the same as (sameAs, -1 when it ran).
func exploreGroup(cfg ExploreConfig, pl *Plan, g []int, n int, memo map[int]groupResult) groupResult {
	if r, ok := memo[n]; ok {
		return r
	}
	var rep *stateRep
	for gi, m := range g {
		if r, ok := memo[m]; ok {
			if r.sameAs < 0 {
				rep = r.rep
			}
			if m == n {
				return r
			}
			continue
		}
		c := pl.Candidates[m]
		t := sim.Time(c.Spec.At.Lo)
		var r groupResult
		if rep != nil && rep.rr.err == nil && rep.te.idle(t+sim.At(pl.Candidates[rep.n].Spec.For.Lo), t+sim.At(c.Spec.For.Lo)) {
			r = groupResult{rr: copyRun(rep.rr, m, pl, rep.n), sameAs: rep.n}
		} else {
			te := &targetEvents{}
			var sink func(*sim.Event)
			if gi < len(g)-1 { // a longer pause may reach its state
				sink = func(e *sim.Event) {
					// A send to the target does nothing to it until it
					// arrives (the arrival is its event); anything else that
					// names it counts.
					if e.Proc == c.Target || e.Peer == c.Target && e.Kind != sim.KindSend {
						te.at = append(te.at, e.At)
						if e.Kind == sim.KindResume && e.Proc == c.Target {
							te.resumed = append(te.resumed, e.At)
						}
					}
				}
			}
			rr := runSchedule(cfg, pl, m, sink)
			rep = &stateRep{n: m, rr: rr, te: te}
			r = groupResult{rr: rr, sameAs: -1, rep: rep}
		}
		memo[m] = r
		if m == n {
			return r
		}
	}
	panic(fmt.Sprintf("explore: schedule %d is not in its group", n))
}

type groupResult struct {
	rr     runResult
	sameAs int
	rep    *stateRep
}

// copyRun is rep's result as the result of schedule m, which reaches its
// world state.
func copyRun(rep runResult, m int, pl *Plan, repN int) runResult {
	rr := runResult{run: m, seed: rep.seed, inconclusive: rep.inconclusive}
	if f := rep.finding; f != nil {
		rr.finding = &Finding{Run: m, Seed: f.Seed, Kinds: f.Kinds, Faults: pl.Specs(m), Verdicts: f.Verdicts,
			Explanation: fmt.Sprintf("(not run: the same world state as schedule %d once its pause ends) %s", repN, f.Explanation)}
	}
	return rr
}

// runSchedule runs schedule n, passing its trace to sink (nil: none).
func runSchedule(cfg ExploreConfig, pl *Plan, n int, sink func(*sim.Event)) runResult {
	seed := cfg.Base.Seed
	rr := runResult{run: n, seed: seed}
	specs := pl.Specs(n)
	s, err := cfg.Base.WithFaults(specs)
	if err != nil {
		rr.err = fmt.Errorf("schedule %d failed validation (an explore bug): %v", n, err)
		return rr
	}
	o, err := scenarios.Run(s, seed, scenarios.Options{Stream: true, TraceSink: sink, TraceBorrow: true})
	if err != nil {
		rr.err = RunErrorOf(err)
		return rr
	}
	return rr.judge(o, cfg.Checks, Finding{Run: n, Seed: seed, Faults: specs})
}
