package faults

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/locksim/locksim/sim"
)

// Hooks are the actions a fault needs from the world beyond the kernel.
type Hooks struct {
	// Promote makes a replica a master (REPLICAOF NO ONE, as an operator
	// would send it). Nil when the world has no Redis replicas.
	Promote func(node sim.ProcID)
	// Events returns the node trigger events a process emits (its kind's
	// declaration); nil, or nil for a process, when it emits none.
	Events func(proc sim.ProcID) []NodeEvent
	// Select returns the members of a selector's set in declaration
	// order (nil for an unknown set) and the known sets' names
	// (selector.go). Nil: the world has no sets, and a selector is an
	// error.
	Select func(set string) (members, sets []string)
	// Reshard starts migrating the slot of key from the master from to
	// the master to, as redis-cli --cluster reshard does, keeping the slot
	// open hold long once its keys moved; it returns the fault's record
	// text. Nil when the world has no Redis Cluster.
	Reshard func(from, to sim.ProcID, key string, hold time.Duration) string
	// ClusterFailover sends CLUSTER FAILOVER (mode "" or "default",
	// "force", "takeover") to a cluster replica as an operator would and
	// returns the fault's record text. Nil when the world has no Redis
	// Cluster.
	ClusterFailover func(node sim.ProcID, mode string) string
}

// Install schedules specs on k. Names must already be validated; an unknown
// name (process, kind or trigger event) or an out-of-range drift rate is an
// error here too (never a panic), and Install then schedules nothing. Random
// sizes (ranges) are drawn from the kernel's "faults" stream: timed faults
// when they are installed, triggered ones when they fire, so a run is
// reproducible from its seed.
func Install(k *sim.Kernel, specs []Spec, hooks Hooks) error {
	in := &Installer{k: k, hooks: hooks, rand: k.Rand("faults"), pauseEnd: map[sim.ProcID]sim.Time{}}
	// Our own copy: the caller may reuse its slice, and the kind table's
	// accessors then read the specs in place (no copy per call).
	specs, orig, err := in.expand(specs)
	if err != nil {
		return err
	}
	for i := range specs {
		if err := in.check(&specs[i]); err != nil {
			return fmt.Errorf("faults[%d]: %w", orig[i], err)
		}
	}
	for i := range specs {
		s := &specs[i]
		s.index = orig[i]
		if s.At != nil {
			at := sim.Time(s.At.Draw(in.rand))
			k.At(at, func() { in.apply(s) })
			continue
		}
		id, _ := k.Lookup(s.On.Proc)
		count := s.On.Count
		if count <= 0 {
			count = 1
		}
		kind, _ := in.traceKind(s.On, id)
		in.triggers = append(in.triggers, armed{spec: s, proc: id, kind: kind, left: count})
	}
	if len(in.triggers) > 0 {
		in.down = map[sim.ProcID]bool{}
		k.Observe(in.observe)
	}
	return nil
}

type armed struct {
	spec  *Spec
	proc  sim.ProcID
	kind  sim.Kind
	left  int
	fired bool
}

type Installer struct {
	k        *sim.Kernel
	hooks    Hooks
	rand     *sim.Rand
	triggers []armed
	// pauseEnd is when the last pause this installer applied to a process
	// ends. NB: the kernel has no accessor for the end of a pause, and only
	// the installer pauses processes, so this bookkeeping tells whether a
	// new pause extends the current one or is ignored by the kernel.
	pauseEnd map[sim.ProcID]sim.Time
	// down is whether a process was crashed after the last crash or restart
	// event the observer saw: the kernel traces an ignored crash (of a
	// process already down) or restart (of a running process) with the same
	// kind as a real one, and a trigger must count only real ones.
	down map[sim.ProcID]bool
}

// traceKind resolves a trigger's event to the trace kind that proc logs
// for it: a client or any-process event's, or the node event proc's kind
// declares (Hooks.Events).
func (in *Installer) traceKind(t *Trigger, proc sim.ProcID) (sim.Kind, bool) {
	if k, ok := eventKinds[t.Event]; ok {
		return k, true
	}
	if in.hooks.Events == nil {
		return "", false
	}
	for _, e := range in.hooks.Events(proc) {
		if e.Name == t.Event {
			return e.Trace, true
		}
	}
	return "", false
}

func (in *Installer) id(name string) (sim.ProcID, error) {
	id, ok := in.k.Lookup(name)
	if !ok {
		known := make([]string, in.k.NumProcs())
		for i := range known {
			known[i] = in.k.Name(sim.ProcID(i))
		}
		sort.Strings(known)
		return sim.NoProc, fmt.Errorf("unknown process %q (known: %s)", name, strings.Join(known, ", "))
	}
	return id, nil
}

// check resolves every name the spec uses and rejects what apply could not
// perform.
func (in *Installer) check(s *Spec) error {
	d, ok := Lookup(s.Kind)
	if !ok {
		return fmt.Errorf("kind: unknown fault kind %q (known: %s)", s.Kind, strings.Join(Kinds, ", "))
	}
	names := d.names(s)
	switch {
	case s.At != nil && s.On != nil:
		return fmt.Errorf("needs at or on, not both")
	case s.At == nil && s.On == nil:
		return fmt.Errorf("needs at or on")
	case s.On != nil:
		names = append(names, s.On.Proc)
	}
	for _, n := range names {
		if _, err := in.id(n); err != nil {
			return err
		}
	}
	if s.On != nil {
		id, _ := in.id(s.On.Proc)
		if _, ok := in.traceKind(s.On, id); !ok {
			return fmt.Errorf("on.event: %s never emits event %q", s.On.Proc, s.On.Event)
		}
	}
	if err := d.checkFields(s); err != nil {
		return err
	}
	if msg := d.CheckInstant(s); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	if d.Check != nil {
		return d.Check(in, *s)
	}
	return nil
}

func (in *Installer) observe(ev sim.ObservedEvent) {
	counts := true
	switch ev.Kind {
	case sim.KindCrash, sim.KindRestart:
		// A real crash takes a process down, a real restart brings it up;
		// an ignored one changes nothing (see installer.down).
		now := in.k.Crashed(ev.Proc)
		counts = now != in.down[ev.Proc]
		in.down[ev.Proc] = now
	}
	for i := range in.triggers {
		t := &in.triggers[i]
		if t.fired || ev.Kind != t.kind || ev.Proc != t.proc || !counts {
			continue
		}
		t.left--
		if t.left > 0 {
			continue
		}
		t.fired = true
		s := t.spec
		after := s.After.Draw(in.rand)
		in.k.At(in.k.Now()+sim.Time(after), func() { in.apply(s) })
	}
}

// apply performs one fault now and records it.
func (in *Installer) apply(s *Spec) {
	d, _ := Lookup(s.Kind) // check accepted the kind
	targets := d.names(s)
	sort.Strings(targets)
	rec := sim.FaultRecord{Kind: s.Kind, Targets: targets, Liveness: d.Liveness, Spec: s.index + 1}
	node, _ := in.k.Lookup(s.Node)
	rec = d.Apply(in, *s, node, rec)
	if s.Selector != "" {
		rec.Text += fmt.Sprintf(" [%s chosen by selector %q]", s.Node, s.Selector)
	}
	in.k.RecordFault(rec)
}

// applyPause pauses a process (KindPause).
func applyPause(in *Installer, s Spec, node sim.ProcID, rec sim.FaultRecord) sim.FaultRecord {
	k := in.k
	now := k.Now()
	d := s.For.Draw(in.rand)
	end := addSat(now, d)
	old, paused := in.pauseEnd[node]
	paused = paused && k.Paused(node)
	running := k.Process(node) != nil
	k.Pause(node, d)
	switch {
	case !running:
		// The kernel ignores a pause of a process that is not running.
		rec.Text = fmt.Sprintf("%s was not paused for %s: it was %s", s.Node, d, in.notRunning(node))
		rec.Ignored = true
	case paused && end <= old:
		// The kernel only extends a pause.
		rec.Text = fmt.Sprintf("%s was not paused for %s: it was already paused until %s", s.Node, d, old)
		rec.Ignored = true
		rec.Until = old
	default:
		in.pauseEnd[node] = end
		rec.Text = fmt.Sprintf("%s paused for %s", s.Node, d)
		if paused {
			rec.Text += fmt.Sprintf(" (extending a pause that was to end at %s)", old)
		}
		rec.Until = end
	}
	return rec
}

// applyCrash crashes a process and schedules its restart (KindCrash).
func applyCrash(in *Installer, s Spec, node sim.ProcID, rec sim.FaultRecord) sim.FaultRecord {
	k := in.k
	now := k.Now()
	mode := sim.CrashProcess
	switch s.Mode {
	case "power":
		mode = sim.CrashPower
	case "clean":
		mode = sim.CrashClean
	}
	if k.Process(node) == nil {
		// The kernel ignores the crash of a process that is not
		// running, and the restart that belongs to this crash would
		// restart a process this fault did not take down.
		rec.Text = fmt.Sprintf("%s did not crash (%s): it was %s", s.Node, mode, in.notRunning(node))
		rec.Ignored = true
		k.Crash(node, mode)
		if s.RestartAfter != nil {
			s.RestartAfter.Draw(in.rand) // keep the stream's draws independent of the state
		}
		return rec
	}
	k.Crash(node, mode)
	rec.Text = fmt.Sprintf("%s crashed (%s)", s.Node, mode)
	// NB: a crash without restart settles when it happens (Until 0):
	// the node is gone for good and the rest of the system is expected
	// to work around it (a Sentinel failover, a Redlock majority), so
	// liveness is judged from then on. A partition that never heals,
	// by contrast, is still acting (Until Never).
	if s.RestartAfter != nil {
		d := s.RestartAfter.Draw(in.rand)
		rec.Until = addSat(now, d)
		rec.Text += fmt.Sprintf(" and restarted %s later", d)
		k.At(rec.Until, func() { k.Restart(node) })
	}
	return rec
}

// applyPartition splits the network and schedules its heal (KindPartition).
func applyPartition(in *Installer, s Spec, node sim.ProcID, rec sim.FaultRecord) sim.FaultRecord {
	k := in.k
	groups := make([][]sim.ProcID, len(s.Groups))
	var words []string
	for i, g := range s.Groups {
		for _, n := range g {
			id, _ := k.Lookup(n)
			groups[i] = append(groups[i], id)
		}
		words = append(words, "["+strings.Join(g, " ")+"]")
	}
	pid := k.Partition(groups)
	rec.Text = "the network split into " + strings.Join(words, " ")
	rec.Until = sim.Never
	if s.HealAfter != nil {
		d := s.HealAfter.Draw(in.rand)
		rec.Until = addSat(k.Now(), d)
		rec.Text += fmt.Sprintf(" for %s", d)
		k.At(rec.Until, func() { k.Unpartition(pid) })
	}
	return rec
}

// applyClockJump steps a wall clock and schedules the step back
// (KindClockJump, revert_after). The step back is a fault record of its
// own, so that explanations and liveness windows see it.
func applyClockJump(in *Installer, s Spec, node sim.ProcID, rec sim.FaultRecord) sim.FaultRecord {
	k := in.k
	k.JumpWall(node, s.By)
	rec.Text = fmt.Sprintf("%s's wall clock jumped %s", s.Node, signed(s.By))
	if s.RevertAfter != nil {
		d := s.RevertAfter.Draw(in.rand)
		rec.Text += fmt.Sprintf(" (reverting %s later)", d)
		back := rec
		back.Text = fmt.Sprintf("%s's wall clock jumped back %s, %s after its jump of %s", s.Node, signed(-s.By), d, signed(s.By))
		k.At(addSat(k.Now(), d), func() {
			k.JumpWall(node, -s.By)
			k.RecordFault(back)
		})
	}
	return rec
}

// applyClockStrobe flips a wall clock between its offset and the offset
// plus delta every period for a while, then leaves it at its offset
// (KindClockStrobe), as Jepsen's strobe-time.c does: it sets the weird
// offset first, sleeps a period after each setting, stops setting once the
// duration has passed at a wake-up, and then resets the normal offset.
// Each flip is a wall-clock jump of the kernel (timers re-planned); the
// flips are events at exact true times, so the strobe is deterministic.
// NB: strobe-time.c sets the clock from CLOCK_MONOTONIC plus an offset it
// read at start, so a drift or jump of the same clock during the strobe
// is undone at its next flip; the kernel's flips are relative steps that
// keep it (a simplification).
func applyClockStrobe(in *Installer, s Spec, node sim.ProcID, rec sim.FaultRecord) sim.FaultRecord {
	k := in.k
	start := k.Now()
	d := s.For.Draw(in.rand)
	end := addSat(start, d)
	flips := int64(d / s.Period)
	if time.Duration(flips)*s.Period < d {
		flips++ // strobe-time.c sets the clock at every wake-up before end
	}
	// The reset happens at the wake-up after the last setting.
	stop := addSat(start, time.Duration(flips)*s.Period)
	weird := false
	var flip func()
	flip = func() {
		now := k.Now()
		if now >= end {
			if weird {
				k.JumpWall(node, -s.By)
			}
			return
		}
		if weird {
			k.JumpWall(node, -s.By)
		} else {
			k.JumpWall(node, s.By)
		}
		weird = !weird
		k.At(now+sim.Time(s.Period), flip)
	}
	flip()
	rec.Text = fmt.Sprintf("%s's wall clock strobed by %s every %s for %s (%d settings)", s.Node, signed(s.By), s.Period, d, flips)
	rec.Until = stop
	return rec
}

// applyRing cuts the links of Jepsen's majorities ring (KindPartitionRing),
// after majorities-ring-perfect (jepsen/src/jepsen/nemesis.clj): the n
// positions form a ring; for each position i the window of m = n/2+1
// consecutive positions from i (util/majority) is a majority, and the
// position in the window's middle (index floor(m/2)) drops every message
// from the positions outside it (the grudge, applied by net/drop-all! as
// inbound drops). For n <= 5 the cuts are symmetric (each position talks
// to its neighbours only, for n = 5); Jepsen uses majorities-ring-stochastic
// for more than five nodes, locksim the same construction for every n
// (some cuts are then one-way): each position still hears from a majority,
// and no two hear from the same one. A position is a group of processes
// that keep their links to each other (a Jepsen client talks to its own
// node); unlisted processes keep every link. The ring is in the order
// written (Jepsen shuffles the nodes; the generator shuffles for fuzzing).
func applyRing(in *Installer, s Spec, node sim.ProcID, rec sim.FaultRecord) sim.FaultRecord {
	k := in.k
	n := len(s.Ring)
	m := n/2 + 1
	pos := make([][]sim.ProcID, n)
	for i, g := range s.Ring {
		for _, name := range g {
			id, _ := k.Lookup(name)
			pos[i] = append(pos[i], id)
		}
	}
	var ids []int
	var sees []string
	for i := 0; i < n; i++ {
		inWin := make([]bool, n)
		for j := 0; j < m; j++ {
			inWin[(i+j)%n] = true
		}
		centre := (i + m/2) % n
		var from []sim.ProcID
		var heard []string
		for j := 0; j < n; j++ {
			if !inWin[j] {
				from = append(from, pos[j]...)
			}
		}
		for j := 0; j < m; j++ {
			if w := (i + j) % n; w != centre {
				heard = append(heard, "["+strings.Join(s.Ring[w], " ")+"]")
			}
		}
		ids = append(ids, k.CutOneWay(from, pos[centre]))
		sees = append(sees, fmt.Sprintf("[%s] hears %s", strings.Join(s.Ring[centre], " "), strings.Join(heard, " ")))
	}
	rec.Text = "the network became a majorities ring: " + strings.Join(sees, "; ")
	rec.Until = sim.Never
	if s.HealAfter != nil {
		d := s.HealAfter.Draw(in.rand)
		rec.Until = addSat(k.Now(), d)
		rec.Text += fmt.Sprintf(" for %s", d)
		k.At(rec.Until, func() {
			for _, id := range ids {
				k.Unpartition(id)
			}
		})
	}
	return rec
}

// notRunning says what a process that a fault could not act on was.
func (in *Installer) notRunning(id sim.ProcID) string {
	switch {
	case in.k.Crashed(id):
		return "crashed"
	case in.k.Process(id) == nil:
		return "not started"
	case in.k.Paused(id):
		return "paused"
	}
	return "running"
}

// addSat returns t+d, or sim.Never if the sum overflows (a pause "for
// ever"), as the kernel computes the end of a pause or a delay.
func addSat(t sim.Time, d time.Duration) sim.Time {
	if u := t + sim.Time(d); d <= 0 || u > t {
		return u
	}
	return sim.Never
}

func rate(r float64) string {
	return fmt.Sprintf("1%+g", r)
}
