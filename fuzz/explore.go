package fuzz

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/internal/suggest"
	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// Exhaustive exploration (simrun explore, issue 27): instead of drawing
// schedules at random, enumerate every schedule within stated bounds and
// run each. The space of one fault is: every target the kind can hit,
// every placement where the fault can change what happens (just before
// and just after each instant at which the target acts in the base run),
// and every parameter class that matters (below, at and above each margin
// the scenario's timings define). K faults are every set of K distinct
// single faults.
//
// What pruning assumes (docs/guide/exploration.md):
//   - A process observes a fault only when it acts: when it handles a
//     message or one of its timers does something visible (sends, logs a
//     key event). A fault placed after the target's last action in the base
//     run cannot change the run (pruned: "idle until the end").
//   - A clock jump or a crash for good lands in a gap between two actions
//     of its target; every moment of one gap is the same to the target, so
//     "just after action i" and "just before action i+1" are one schedule
//     (pruned: "same gap"). A pause and a crash with a restart differ by
//     when they end, so both are kept. Timer ticks that did nothing visible in the base run (Redis's
//     serverCron with no key to expire) are not actions: a fault before
//     such a tick is assumed to act as one before the next action.
//   - Placements come from the base run (the scenario with the explored
//     kinds' own faults removed). A fault changes what follows it, so the
//     later placements are those of the base run, not of the faulted one:
//     this is a bounded, not a complete, search of K > 1.
//   - With Orders, the same-instant order choices of the base run's ties
//     are single faults too (explore_order.go).

// ExploreKinds are the fault kinds explore enumerates (the ones that hit
// one process and have parameter classes).
var ExploreKinds = []string{faults.KindClockJump, faults.KindPause, faults.KindCrash}

// DefaultExploreKinds is --faults' default.
var DefaultExploreKinds = []string{faults.KindClockJump, faults.KindPause}

// DefaultMaxSchedules is --max-schedules' default: about a minute of runs
// of a catalogue-sized scenario on 2 cores.
const DefaultMaxSchedules = 20000

// Epsilon is the distance of a placement from the action it precedes or
// follows, and the step around each margin of the parameter classes'
// "below" and "above".
const (
	PlaceEpsilon  = time.Microsecond
	MarginEpsilon = time.Millisecond
)

// ExploreConfig bounds an exploration.
type ExploreConfig struct {
	Base *scenarios.Scenario
	// Kinds are the explored fault kinds (DefaultExploreKinds when nil).
	// The base's own faults of these kinds are replaced; its other faults
	// stay, as the environment every schedule runs in.
	Kinds []string
	// MaxFaults is K, the most faults of one schedule (1 when 0).
	MaxFaults int
	// Targets limits the targets (nil: every process a kind can hit).
	Targets []string
	// Grid adds placements every Grid of the run (0: none).
	Grid time.Duration
	// MaxSchedules refuses a larger space unless Force.
	MaxSchedules int
	Force        bool
	Checks       []string
	Workers      int
	Shard        Shard
	Progress     func(Progress)
	// NoStatePrune runs every schedule (no pruning by world state).
	NoStatePrune bool
	// Orders adds the same-instant order choices of the base run's ties
	// to the single faults (explore_order.go).
	Orders bool
}

// Candidate is one single fault of the space, with its coverage labels.
type Candidate struct {
	Spec      faults.Spec
	Target    string
	Placement string // "before deliver@1.002s", "grid@2s", ...
	Class     string // "ttl 10s: above", "crash"
}

// Plan is the enumerated space.
type Plan struct {
	Env        []faults.Spec // the base's faults kept in every schedule
	Candidates []Candidate
	K          int
	Total      int // schedules: sum over k<=K of C(len(Candidates), k)
	Pruned     map[string]int
	Margins    []Margin
	Targets    []string
	Kinds      []string
	Bounds     string
	// Ties counts the instants of the base run (after its start) at which
	// two or more messages or timers are handled by different processes or
	// come from different peers. Without Orders explore keeps the kernel's
	// order of those events (the order they were queued in), and the
	// summary says so.
	Ties int
	// Orders: the order choices are among the candidates (after the
	// faults'); OrderChoices counts them, or would with Orders.
	Orders       bool
	OrderChoices int
	// OrderPruned counts the ties' events no order fault can name (a
	// delivery without another sender); they are not choices.
	OrderPruned int
}

// Margin is a duration the scenario's timings define.
type Margin struct {
	Name string
	D    time.Duration
}

// BadBounds is an error in the bounds (exit 2).
type BadBounds struct{ Msg string }

func (e *BadBounds) Error() string { return e.Msg }

// Margins returns the durations of the scenario's locks that a clock jump,
// a pause or a crash's restart delay is compared with: each ttl, lease,
// timeout, renewal period, and for Redlock the drift allowance and
// validity (TTL - drift, drift = TTL x drift_factor + drift_extra;
// antirez's Redlock article, "Is the algorithm asynchronous?"); and the
// servers' min-replicas-max-lag, repl-ping-replica-period and repl-timeout
// (with a replica), Sentinel's down-after and failover timeout.
func Margins(s *scenarios.Scenario) []Margin {
	seen := map[time.Duration]bool{}
	var out []Margin
	add := func(name string, d time.Duration) {
		if d <= 0 || seen[d] {
			return
		}
		seen[d] = true
		out = append(out, Margin{name, d})
	}
	for _, c := range s.Clients {
		l := c.Lock
		add("ttl "+l.TTL.String(), l.TTL)
		add("lifetime", l.ServerLifetime())
		if l.DriftFactor > 0 && l.TTL > 0 {
			drift := time.Duration(float64(l.TTL)*l.DriftFactor) + l.DriftExtra
			add("drift "+drift.String(), drift)
			add("validity "+(l.TTL-drift).String(), l.TTL-drift)
		}
		add("lease "+l.Lease.String(), l.Lease)
		if l.Lease > 0 && l.Watchdog {
			r := l.RenewEvery
			if r == 0 {
				r = l.Lease / 3
			}
			add("renew "+r.String(), r)
		}
		add("session_timeout "+l.SessionTimeout.String(), l.SessionTimeout)
		add("node_timeout "+l.NodeTimeout.String(), l.NodeTimeout)
		add("wait_timeout "+l.WaitTimeout.String(), l.WaitTimeout)
		add("timeout "+l.LockTimeout.String(), l.LockTimeout)
		add("exptime "+l.Exptime.String(), l.Exptime)
		add("extend_every "+l.ExtendEvery.String(), l.ExtendEvery)
	}
	// The servers' timeouts a crash's restart delay (or a pause) is
	// compared with: how stale a replica may be before a master refuses
	// writes (min-replicas-max-lag), when Sentinel calls a master down and
	// how long its failover may take.
	def := redis.DefaultConfig()
	for _, r := range s.Redis() {
		if r.MinReplicasToWrite > 0 {
			add("min_replicas_max_lag "+r.MinReplicasMaxLag.String(), r.MinReplicasMaxLag)
		}
		if r.ReplicaOf != "" {
			// The model's repl-ping-replica-period and repl-timeout
			// (redis.DefaultConfig; a scenario cannot change them).
			add("repl_ping_period "+def.ReplPingReplicaPeriod.String(), def.ReplPingReplicaPeriod)
			add("repl_timeout "+def.ReplTimeout.String(), def.ReplTimeout)
		}
	}
	if st := s.Sentinel(); st != nil {
		add("down_after "+st.DownAfter.String(), st.DownAfter)
		add("failover_timeout "+st.FailoverTimeout.String(), st.FailoverTimeout)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].D < out[j].D })
	return out
}

// class is one parameter class of a fault kind: set fills the spec's
// parameters and returns the class's label. A class that ends (a pause, a
// crash with a restart) differs by when it ends, so two placements in the
// same gap between the target's actions are two schedules; one that does
// not end (a clock jump, a crash for good) is the same from anywhere in
// the gap.
type class struct {
	set  func(*faults.Spec) string
	ends bool
}

// classes returns the parameter classes of kind on a target (client: a
// lock client, whose power cut is its crash). run is the scenario's
// duration: a pause that long outlasts the run from any placement.
func classes(kind string, ms []Margin, run time.Duration, client bool) []class {
	var out []class
	switch kind {
	case faults.KindClockJump:
		for _, m := range ms {
			m := m
			for _, c := range []struct {
				name string
				by   time.Duration
			}{{"below", m.D - MarginEpsilon}, {"at", m.D}, {"above", m.D + MarginEpsilon}, {"backward", -m.D}} {
				if c.by == 0 {
					continue
				}
				c := c
				out = append(out, class{set: func(s *faults.Spec) string { s.By = c.by; return m.Name + ": " + c.name }})
			}
		}
	case faults.KindPause:
		for _, d := range lengths(ms) {
			d := d
			out = append(out, class{set: func(s *faults.Spec) string { s.For = sim.Fixed(d.d); return d.label }, ends: true})
		}
		out = append(out, class{set: func(s *faults.Spec) string { s.For = sim.Fixed(run); return "past the end of the run" }, ends: true})
	case faults.KindCrash:
		modes := []string{"process", "power"}
		if client {
			modes = modes[:1] // a client keeps nothing on a disk
		}
		for _, mode := range modes {
			mode := mode
			out = append(out, class{set: func(s *faults.Spec) string { s.Mode = mode; return "crash (" + mode + "), no restart" }})
			delays := append([]length{{0, "at once"}}, lengths(ms)...)
			for _, d := range delays {
				d := d
				out = append(out, class{set: func(s *faults.Spec) string {
					s.Mode = mode
					s.RestartAfter = &sim.Range{Lo: d.d, Hi: d.d}
					return "crash (" + mode + "), restart " + d.label
				}, ends: true})
			}
		}
	}
	return out
}

// length is a duration class: 1 ms shorter than, equal to or 1 ms longer
// than a margin.
type length struct {
	d     time.Duration
	label string
}

func lengths(ms []Margin) []length {
	var out []length
	for _, m := range ms {
		for _, c := range []length{{m.D - MarginEpsilon, "shorter"}, {m.D, "equal"}, {m.D + MarginEpsilon, "longer"}} {
			if c.d > 0 {
				out = append(out, length{c.d, m.Name + ": " + c.label})
			}
		}
	}
	return out
}

// PlanExplore enumerates the space of cfg, running the base once for its
// placements.
func PlanExplore(cfg *ExploreConfig) (*Plan, error) {
	if cfg.Kinds == nil {
		cfg.Kinds = DefaultExploreKinds
	}
	if cfg.MaxFaults == 0 {
		cfg.MaxFaults = 1
	}
	if cfg.MaxFaults < 0 {
		return nil, &BadBounds{fmt.Sprintf("--max-faults must be at least 1, got %d (a schedule without faults explores nothing)", cfg.MaxFaults)}
	}
	if cfg.MaxSchedules < 0 {
		return nil, &BadBounds{fmt.Sprintf("--max-schedules must be at least 1 (0: the default %d), got %d", DefaultMaxSchedules, cfg.MaxSchedules)}
	}
	if cfg.MaxSchedules == 0 {
		cfg.MaxSchedules = DefaultMaxSchedules
	}
	if len(cfg.Kinds) == 0 && !cfg.Orders {
		return nil, &BadBounds{"--faults: no fault kind given (allowed: " + strings.Join(ExploreKinds, ", ") + "; or --orders alone)"}
	}
	for _, k := range cfg.Kinds {
		if k == faults.KindOrder {
			return nil, &BadBounds{"--faults: explore enumerates the same-instant order choices with --orders, not as a fault kind of --faults"}
		}
		if !contains(ExploreKinds, k) {
			msg := fmt.Sprintf("--faults: explore cannot enumerate fault kind %q (allowed: %s)", k, strings.Join(ExploreKinds, ", "))
			if s := suggest.DidYouMean(k, ExploreKinds); s != "" {
				msg += "; " + s
			}
			return nil, &BadBounds{msg}
		}
	}
	if cfg.Checks == nil {
		cfg.Checks = DefaultChecks(cfg.Base.Expect)
	}
	if len(cfg.Checks) == 0 {
		return nil, &BadBounds{"no property to check: the base expects none to hold and none was given with --check"}
	}
	pl := &Plan{K: cfg.MaxFaults, Pruned: map[string]int{}, Kinds: cfg.Kinds, Margins: Margins(cfg.Base), Orders: cfg.Orders}
	for _, f := range cfg.Base.Faults {
		if !contains(cfg.Kinds, f.Kind) {
			pl.Env = append(pl.Env, f)
		}
	}
	base, err := cfg.Base.WithFaults(pl.Env)
	if err != nil {
		return nil, fmt.Errorf("base without the explored faults: %v", err)
	}
	// The base run: when each process acts.
	type instant struct {
		at    sim.Time
		kinds map[sim.Kind]bool
		first sim.Kind
	}
	acts := map[string][]*instant{}
	ties := &tieRecorder{}
	sink := func(e *sim.Event) {
		if e.Proc == "" {
			return
		}
		l := acts[e.Proc]
		if len(l) == 0 || l[len(l)-1].at != e.At {
			l = append(l, &instant{at: e.At, kinds: map[sim.Kind]bool{}})
			acts[e.Proc] = l
		}
		in := l[len(l)-1]
		if !in.kinds[e.Kind] && in.first == "" && active(e.Kind) {
			in.first = e.Kind
		}
		in.kinds[e.Kind] = true
		ties.event(e)
	}
	if _, err := scenarios.Run(base, base.Seed, scenarios.Options{TraceSink: sink, Stream: true}); err != nil {
		return nil, fmt.Errorf("base run: %v", err)
	}
	ties.flush()
	pl.Ties = len(ties.ties)
	orderPruned := map[string]int{}
	orders := orderCandidates(ties.ties, orderPruned)
	pl.OrderChoices = len(orders)
	for _, n := range orderPruned {
		pl.OrderPruned += n
	}
	w := WorldOf(base)
	all := append(append(append(append([]string{}, w.Masters...), w.Replicas...), w.Others...), w.Clients...)
	if cfg.Targets != nil {
		for _, t := range cfg.Targets {
			if !contains(all, t) {
				return nil, &BadBounds{fmt.Sprintf("--targets: %s %q is not a process a fault can hit (processes: %s)", cfg.Base.Name, t, strings.Join(all, ", "))}
			}
		}
		all = cfg.Targets
	}
	pl.Targets = all
	end := sim.At(base.Duration)
	// counted: the single faults placed; over: past --max-schedules
	// (without --force), when they are only counted.
	counted, over := 0, false
	for _, kind := range cfg.Kinds {
		for _, target := range all {
			cls := classes(kind, pl.Margins, base.Duration, contains(w.Clients, target))
			var times []sim.Time
			var labels []string
			var last sim.Time = -1
			for _, in := range acts[target] {
				if in.first == "" {
					continue
				}
				// Just before and just after each action.
				if in.at >= sim.Time(PlaceEpsilon) {
					times = append(times, in.at-sim.Time(PlaceEpsilon))
					labels = append(labels, fmt.Sprintf("before %s@%s", in.first, in.at))
				}
				times = append(times, in.at+sim.Time(PlaceEpsilon))
				labels = append(labels, fmt.Sprintf("after %s@%s", in.first, in.at))
				last = in.at
			}
			idx := make([]int, len(times))
			for i := range idx {
				idx[i] = i
			}
			sort.SliceStable(idx, func(a, b int) bool { return times[idx[a]] < times[idx[b]] })
			// The grid's placements are drawn as they come, merged in time
			// order after the actions' (a grid of 10us over a minute is six
			// million placements: built up front they exhausted memory,
			// issue 33 item 4); those after the target's last action are
			// only counted.
			var gridT sim.Time
			gridOn := cfg.Grid > 0
			if gridOn && last >= 0 {
				idle := int64(0)
				if first := (last/sim.Time(cfg.Grid) + 1) * sim.Time(cfg.Grid); first < end {
					idle = int64((end-first-1)/sim.Time(cfg.Grid)) + 1
				}
				pl.Pruned["idle until the end: the target does nothing after the fault"] += int(idle) * len(cls)
			} else if gridOn {
				pl.Pruned["idle until the end: the target does nothing after the fault"] += int((end-1)/sim.Time(cfg.Grid)+1) * len(cls)
				gridOn = false
			}
			var actAt []sim.Time
			for _, in := range acts[target] {
				if in.first != "" {
					actAt = append(actAt, in.at)
				}
			}
			sort.Slice(actAt, func(a, b int) bool { return actAt[a] < actAt[b] })
			ai := 0
			prevGap := -1
			for k := 0; ; {
				var t sim.Time
				var label func() string
				gridDone := !gridOn || gridT > last || gridT >= end
				switch {
				case k < len(idx) && (gridDone || times[idx[k]] <= gridT):
					i := idx[k]
					t, label = times[i], func() string { return labels[i] }
					k++
				case !gridDone:
					gt := gridT
					t, label = gt, func() string { return fmt.Sprintf("grid@%s", gt) }
					gridT += sim.Time(cfg.Grid)
				default:
					t = -1
				}
				if t < 0 {
					break
				}
				if t > last {
					pl.Pruned["idle until the end: the target does nothing after the fault"] += len(cls)
					continue
				}
				// Which gap between two actions t falls in: the actions
				// before t, counted as t advances (placements come in
				// time order).
				for ai < len(actAt) && actAt[ai] < t {
					ai++
				}
				gap := ai
				sameGap := gap == prevGap
				prevGap = gap
				for _, c := range cls {
					if sameGap && !c.ends {
						pl.Pruned["same gap: the target did not act between two placements of a "+kind+" that does not end"]++
						continue
					}
					// Every single fault is a schedule of its own, so the
					// space is at least as large as the candidates: past
					// --max-schedules they are only counted, for the
					// refusal to say how large the space is.
					counted++
					if over {
						continue
					}
					s := faults.Spec{Kind: kind, Node: target, At: &sim.Range{Lo: time.Duration(t), Hi: time.Duration(t)}}
					class := c.set(&s)
					pl.Candidates = append(pl.Candidates, Candidate{Spec: s, Target: target, Placement: label(), Class: class})
					switch n := len(pl.Candidates); {
					case n > MaxCandidates:
						return nil, tooManyCandidates()
					case n > cfg.MaxSchedules && !cfg.Force:
						over = true
					}
				}
			}
		}
	}
	if over {
		// Refused below with the size of the whole space; the single
		// faults not kept are only counted.
		pl.Candidates = pl.Candidates[:0]
		if cfg.Orders {
			counted += len(orders)
		}
	}
	if cfg.Orders && !over {
		pl.Candidates = append(pl.Candidates, orders...)
		for r, n := range orderPruned {
			pl.Pruned[r] += n
		}
	}
	if !over {
		counted = len(pl.Candidates)
	}
	pl.Total = spaceSize(counted, pl.K)
	var ms []string
	for _, m := range pl.Margins {
		ms = append(ms, m.Name)
	}
	pl.Bounds = fmt.Sprintf("faults %s, at most %d, targets %s, placements before/after each action of the target", strings.Join(cfg.Kinds, ","), pl.K, strings.Join(all, ","))
	if cfg.Grid > 0 {
		pl.Bounds += fmt.Sprintf(" and every %s", cfg.Grid)
	}
	pl.Bounds += fmt.Sprintf(", margins %s (±%s)", strings.Join(ms, ", "), MarginEpsilon)
	if cfg.Orders {
		pl.Bounds += fmt.Sprintf(", same-instant order: each other event first at each of %d ties", pl.Ties)
		if len(cfg.Kinds) == 0 {
			pl.Bounds = fmt.Sprintf("no faults but the same-instant order, at most %d choices: each other event first at each of %d ties", pl.K, pl.Ties)
		}
	}
	if pl.Total < 0 || (pl.Total > cfg.MaxSchedules && !cfg.Force) {
		size := fmt.Sprint(pl.Total)
		if pl.Total < 0 {
			size = "more than 2^62"
		}
		hint := "narrow --faults/--targets/--max-faults"
		if cfg.Grid > 0 {
			hint = "widen --grid, narrow --faults/--targets/--max-faults"
		}
		if pl.Total < 0 {
			// Past 2^62 schedules no count holds the space, and --force
			// cannot walk it either: only a narrower space can.
			return nil, &BadBounds{fmt.Sprintf("the space has %s schedules (%d single faults, at most %d per schedule), more than any exploration can walk, --force or not: %s", size, counted, pl.K, hint)}
		}
		return nil, &BadBounds{fmt.Sprintf("the space has %s schedules (%d single faults, at most %d per schedule), more than --max-schedules %d: %s, raise --max-schedules, or pass --force", size, counted, pl.K, cfg.MaxSchedules, hint)}
	}
	return pl, nil
}

// MaxCandidates bounds the single faults of an exploration, even with
// --force: each is kept with its placement and class (about a kilobyte
// measured with the run it needs), and a space
// of more than 131,072 single faults has more schedules than anyone runs.
const MaxCandidates = 1 << 17

// tooManyCandidates refuses a space of more than MaxCandidates single
// faults, even with --force.
func tooManyCandidates() error {
	return &BadBounds{fmt.Sprintf("the space has more than %d single faults, the most an exploration may place even with --force: widen --grid, narrow --faults or --targets", MaxCandidates)}
}

// active reports whether an event kind is something a process does (not a
// timer tick alone, nor its start).
func active(k sim.Kind) bool {
	switch k {
	case sim.KindTimer, sim.KindStart, sim.KindFault, sim.KindPartition, sim.KindHeal, sim.KindLinkFault:
		return false
	}
	return k != "loaded"
}

// spaceSize is sum_{k=1..K} C(n, k), or -1 when it overflows.
func spaceSize(n, K int) int {
	total := 0
	c := 1
	for k := 1; k <= K && k <= n; k++ {
		// c = C(n, k) = C(n, k-1) * (n-k+1) / k
		if c > (1<<62)/(n-k+1) {
			return -1
		}
		c = c * (n - k + 1) / k
		total += c
		if total > 1<<62 {
			return -1
		}
	}
	return total
}

// Schedule returns the candidates of schedule number i (0..Total-1): the
// single faults first, then the pairs in lexicographic order, and so on.
func (pl *Plan) Schedule(i int) []int {
	n := len(pl.Candidates)
	c := 1
	for k := 1; k <= pl.K; k++ {
		c = c * (n - k + 1) / k
		if i < c {
			return unrank(n, k, i)
		}
		i -= c
	}
	return nil
}

// unrank returns the i-th k-combination of 0..n-1 in lexicographic order.
func unrank(n, k, i int) []int {
	out := make([]int, 0, k)
	x := 0
	for r := k; r > 0; r-- {
		for {
			c := binom(n-x-1, r-1)
			if i < c {
				break
			}
			i -= c
			x++
		}
		out = append(out, x)
		x++
	}
	return out
}

func binom(n, k int) int {
	if k < 0 || k > n {
		return 0
	}
	c := 1
	for j := 1; j <= k; j++ {
		c = c * (n - k + j) / j
	}
	return c
}

// Specs returns the whole fault schedule of schedule i: the environment
// and its faults.
func (pl *Plan) Specs(i int) []faults.Spec {
	out := append([]faults.Spec{}, pl.Env...)
	for _, c := range pl.Schedule(i) {
		out = append(out, pl.Candidates[c].Spec)
	}
	return out
}

// ExploreResult is a fuzz Result (findings, inconclusive runs, errors:
// what WriteFindings, Groups, WriteJSON and WriteJUnit read) with the
// space's coverage.
type ExploreResult struct {
	*Result
	Plan *Plan
	// Verdict per schedule of the shard: true when violated.
	Violated []bool
	// Covered counts the placements, targets and classes of the schedules
	// run.
	Placements, Targets, Classes int
	Groups                       []ExploreGroup
	// StatePruned counts the schedules not run because they reach the
	// world state of a shorter pause (explore_state.go).
	StatePruned int
	// StatePrunedRuns are those schedules' numbers, in order (a shard's
	// and a merge's say none: only the count is recorded).
	StatePrunedRuns []int
	// OrderRuns counts the schedules run with a same-instant order choice,
	// OrderTies the ties they covered, OrderViolating those that violated.
	OrderRuns, OrderTies, OrderViolating int
}

// Explore runs the schedules of pl in cfg.Shard's range.
func Explore(ctx context.Context, cfg ExploreConfig, pl *Plan) (*ExploreResult, error) {
	if cfg.Shard.N == 0 {
		cfg.Shard = Whole
	}
	first, end := cfg.Shard.Range(pl.Total)
	res := &Result{Base: cfg.Base.Name, Seed: cfg.Base.Seed, First: first, Planned: end - first, Kinds: cfg.Kinds, Checks: cfg.Checks, Command: "explore", Symmetry: SymmetryOf(cfg.Base)}
	er := &ExploreResult{Result: res, Plan: pl, Violated: make([]bool, end-first)}
	// The units of work: a schedule, or the schedules of one group of
	// pauses that world-state pruning runs in order in one worker
	// (explore_state.go). A unit's schedules are contiguous, so the units
	// done (a prefix) are a prefix of the range.
	groups := stateGroups(cfg, pl, first, end)
	type unit struct{ lo, hi int }
	var units []unit
	for n := first; n < end; {
		hi := n + 1
		if g := groups[n]; g != nil {
			for hi < end && len(groups[hi]) > 0 && &groups[hi][0] == &g[0] {
				hi++
			}
		}
		units = append(units, unit{n, hi})
		n = hi
	}
	type unitResult struct {
		rs     []runResult
		pruned []int
	}
	results := make([]runResult, end-first)
	var prog Progress
	doneUnits := Each(ctx, 0, len(units), cfg.Workers, func(i int) unitResult {
		u := units[i]
		var ur unitResult
		memo := map[int]groupResult{}
		for n := u.lo; n < u.hi; n++ {
			if g := groups[n]; g != nil {
				r := exploreGroup(cfg, pl, g, n, memo)
				if r.sameAs >= 0 {
					ur.pruned = append(ur.pruned, n)
				}
				ur.rs = append(ur.rs, r.rr)
				continue
			}
			ur.rs = append(ur.rs, runSchedule(cfg, pl, n, nil))
		}
		return ur
	}, func(i int, ur unitResult) {
		for j, r := range ur.rs {
			results[units[i].lo+j-first] = r
			prog.Runs++
			if r.finding != nil {
				prog.Found++
			}
			if r.inconclusive {
				prog.Inconclusive++
			}
		}
		er.StatePruned += len(ur.pruned)
		er.StatePrunedRuns = append(er.StatePrunedRuns, ur.pruned...)
		if cfg.Progress != nil {
			cfg.Progress(prog)
		}
	})
	done := 0
	if doneUnits > 0 {
		done = units[doneUnits-1].hi - first
	}
	// Each finishes a prefix of the units.
	res.Runs = done
	sort.Ints(er.StatePrunedRuns)
	for i := 0; i < done; i++ {
		r := results[i]
		switch {
		case r.err != nil:
			res.Errors = append(res.Errors, RunError{RunRef{r.run, r.seed}, r.err.Error()})
		case r.finding != nil:
			er.Violated[i] = true
			res.Findings = append(res.Findings, r.finding)
		case r.inconclusive:
			res.Inconclusive = append(res.Inconclusive, RunRef{r.run, r.seed})
		}
	}
	er.summarise()
	return er, nil
}

// summarise counts the coverage of the schedules run (First..First+Runs-1)
// and groups the findings.
func (er *ExploreResult) summarise() {
	pl := er.Plan
	places, targets, cls := map[string]bool{}, map[string]bool{}, map[string]bool{}
	ties := map[string]bool{}
	violated := map[int]bool{}
	for _, f := range er.Findings {
		violated[f.Run] = true
	}
	er.OrderRuns, er.OrderViolating = 0, 0
	for n := er.First; n < er.First+er.Runs; n++ {
		order := false
		for _, c := range pl.Schedule(n) {
			cd := pl.Candidates[c]
			if cd.isOrder() {
				order = true
				ties[cd.Placement] = true
				continue
			}
			places[cd.Target+" "+cd.Placement] = true
			targets[cd.Target] = true
			cls[cd.Spec.Kind+" "+cd.Class] = true
		}
		if order {
			er.OrderRuns++
			if violated[n] {
				er.OrderViolating++
			}
		}
	}
	er.Placements, er.Targets, er.Classes, er.OrderTies = len(places), len(targets), len(cls), len(ties)
	er.Groups = groupFindings(er.Result, len(pl.Env))
	er.Props = []JUnitProp{{"schedules", fmt.Sprint(er.Runs)}, {"same_instant_ties", fmt.Sprint(pl.Ties)}, {"orders", fmt.Sprint(pl.Orders)},
		{"order_schedules", fmt.Sprint(er.OrderRuns)}, {"order_pruned", fmt.Sprint(pl.OrderPruned)}, {"order_violating", fmt.Sprint(er.OrderViolating)}}
}

// sameInstantLine is the summary's account of the base run's ties and what
// explore did with their order.
func sameInstantLine(er *ExploreResult) string {
	pl := er.Plan
	if pl.Ties == 0 {
		return ""
	}
	head := fmt.Sprintf("same instant: at %d instants of the base run two or more messages or timers are due at once", pl.Ties)
	if !pl.Orders {
		return head + fmt.Sprintf("; explore kept the kernel's order of them (--orders runs each other event of a tie first: %d more single faults)", pl.OrderChoices)
	}
	return head + fmt.Sprintf("; %d order choices (each other event of a tie first, %d pruned): %d schedules with one ran, covering %d ties, %d violating", pl.OrderChoices, pl.OrderPruned, er.OrderRuns, er.OrderTies, er.OrderViolating)
}

// ExploreGroup is the schedules that violate the same property with the
// same signature (the explored faults' kinds and targets), up to the
// base's interchangeable processes (Symmetry): Signature is the first
// schedule's.
type ExploreGroup struct {
	Kind      string `json:"kind"`
	Signature string `json:"signature"`
	// Schedules are the schedule numbers, in order.
	Schedules []int `json:"schedules"`
	// Finding is the number of the group's first finding: the one written
	// (and shrunk with --shrink).
	Finding int `json:"finding"`
}

// groupFindings numbers the findings and keeps (for a file and shrinking)
// the first of each group.
func groupFindings(res *Result, env int) []ExploreGroup {
	Number(res, len(res.Findings)+1)
	var out []ExploreGroup
	index := map[string]int{}
	for _, f := range res.Findings {
		key := f.Kind() + "\x00" + res.Symmetry.Canonical(f.Faults[env:])
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, ExploreGroup{Kind: f.Kind(), Signature: Signature(f.Faults[env:]), Finding: f.Number})
		}
		f.Kept = !ok
		out[i].Schedules = append(out[i].Schedules, f.Run)
	}
	return out
}

// WriteExploreSummary prints an exploration's result: no violation in N
// schedules (with the bounds), or the violations grouped by signature;
// the coverage; what was pruned and why.
func WriteExploreSummary(w interface{ Write([]byte) (int, error) }, er *ExploreResult) {
	res, pl := er.Result, er.Plan
	fmt.Fprintf(w, "explore %s: %d of %d schedules, checking %s\n", res.Base, res.Runs, pl.Total, strings.Join(res.Checks, ", "))
	if len(pl.Env) > 0 {
		fmt.Fprintf(w, "environment kept in every schedule: %s\n", specStringsJoin(pl.Env))
	}
	if len(res.Findings) == 0 {
		fmt.Fprintf(w, "no violation in %d schedules (bounds: %s)\n", res.Runs, pl.Bounds)
	} else {
		fmt.Fprintf(w, "%d violating schedules in %d (bounds: %s)\n", len(res.Findings), res.Runs, pl.Bounds)
		writeInterchangeable(w, res.Symmetry)
		for _, g := range er.Groups {
			f := res.Findings[g.Finding-1]
			fmt.Fprintf(w, "\n%s violated, %s: %d schedules (%s)\n", g.Kind, g.Signature, len(g.Schedules), scheduleList(g.Schedules))
			fmt.Fprintf(w, "  first: schedule %d: %s\n", f.Run, specStringsJoin(f.Faults[len(pl.Env):]))
			if f.Explanation != "" {
				fmt.Fprintf(w, "  %s\n", firstLine(f.Explanation))
			}
			if f.ShrunkFile != "" {
				fmt.Fprintf(w, "  shrunk: %s\n", ReplayCommand(f.ShrunkFile, f.Seed))
			} else if f.File != "" {
				fmt.Fprintf(w, "  replay: %s\n", ReplayCommand(f.File, f.Seed))
			}
		}
	}
	fmt.Fprintf(w, "\ncoverage: %d placements, %d targets, %d parameter classes\n", er.Placements, er.Targets, er.Classes)
	if line := sameInstantLine(er); line != "" {
		fmt.Fprintln(w, line)
	}
	if len(pl.Pruned) > 0 {
		reasons := make([]string, 0, len(pl.Pruned))
		for r := range pl.Pruned {
			reasons = append(reasons, r)
		}
		sort.Strings(reasons)
		for _, r := range reasons {
			fmt.Fprintf(w, "pruned %d single faults: %s\n", pl.Pruned[r], r)
		}
	}
	if er.StatePruned > 0 {
		fmt.Fprintf(w, "pruned %d schedules: %s\n", er.StatePruned, statePruneReason)
	}
	if len(res.Inconclusive) > 0 {
		fmt.Fprintf(w, "%d schedules inconclusive\n", len(res.Inconclusive))
	}
	for _, e := range res.Errors {
		fmt.Fprintf(w, "schedule %d failed: %s\n", e.Run, e.Err)
	}
}

func specStringsJoin(specs []faults.Spec) string { return strings.Join(specStrings(specs), "; ") }

// scheduleList renders schedule numbers compactly (3-7, 9).
func scheduleList(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(ns[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ns[i], ns[j]))
		}
		i = j + 1
	}
	if len(parts) > 12 {
		parts = append(parts[:12], "...")
	}
	return strings.Join(parts, ", ")
}

// ExploreJSON is simrun explore --json's object.
type ExploreJSON struct {
	Base       string         `json:"base"`
	Bounds     string         `json:"bounds"`
	Schedules  int            `json:"schedules"`
	Total      int            `json:"total"`
	Violating  int            `json:"violating"`
	Pruned     map[string]int `json:"pruned"`
	Placements int            `json:"placements"`
	Targets    int            `json:"targets"`
	Classes    int            `json:"parameter_classes"`
	// StatePruned: schedules not run, with the verdicts of a schedule
	// whose world state they reach (explore_state.go).
	StatePruned int `json:"state_pruned"`
	// SameInstantTies: Plan.Ties, the base run's instants at which two or
	// more messages or timers are due at once. Orders: whether their order
	// was varied (--orders); OrderChoices and OrderPruned: the Plan's;
	// OrderSchedules, OrderTies and OrderViolating: ExploreResult's
	// (explore_order.go).
	SameInstantTies int            `json:"same_instant_ties"`
	Orders          bool           `json:"orders"`
	OrderChoices    int            `json:"order_choices"`
	OrderSchedules  int            `json:"order_schedules"`
	OrderPruned     int            `json:"order_pruned"`
	OrderTies       int            `json:"order_ties_covered"`
	OrderViolating  int            `json:"order_violating"`
	Groups          []ExploreGroup `json:"groups"`
	Result          JSONResult     `json:"result"`
}

// WriteExploreJSON writes er as one indented ExploreJSON object.
func WriteExploreJSON(w io.Writer, er *ExploreResult) error {
	res, pl := er.Result, er.Plan
	j := ExploreJSON{Base: res.Base, Bounds: pl.Bounds, Schedules: res.Runs, Total: pl.Total, Violating: len(res.Findings),
		Pruned: pl.Pruned, Placements: er.Placements, Targets: er.Targets, Classes: er.Classes, StatePruned: er.StatePruned, SameInstantTies: pl.Ties,
		Orders: pl.Orders, OrderChoices: pl.OrderChoices, OrderSchedules: er.OrderRuns, OrderPruned: pl.OrderPruned, OrderTies: er.OrderTies, OrderViolating: er.OrderViolating,
		Groups: er.Groups, Result: JSON(res)}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}
