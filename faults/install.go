package faults

import (
	"fmt"
	"strings"

	"github.com/locksim/locksim/sim"
)

// Hooks are the actions a fault needs from the world beyond the kernel.
type Hooks struct {
	// Promote makes a replica a master (REPLICAOF NO ONE, as an operator
	// would send it). Nil when the world has no Redis replicas.
	Promote func(node sim.ProcID)
}

// Install schedules specs on k. Names must already be validated; an unknown
// name is an error here too (never a panic). Random sizes (ranges) are drawn
// from the kernel's "faults" stream: timed faults when they are installed,
// triggered ones when they fire, so a run is reproducible from its seed.
func Install(k *sim.Kernel, specs []Spec, hooks Hooks) error {
	in := &installer{k: k, hooks: hooks, rand: k.Rand("faults")}
	for i := range specs {
		s := specs[i]
		if err := in.check(s); err != nil {
			return fmt.Errorf("faults[%d]: %w", i, err)
		}
		switch {
		case s.At != nil:
			at := sim.Time(s.At.Draw(in.rand))
			k.At(at, func() { in.apply(s) })
		case s.On != nil:
			id, _ := k.Lookup(s.On.Proc)
			kind, ok := eventKinds[s.On.Event]
			if !ok {
				return fmt.Errorf("faults[%d].on.event: unknown event %q", i, s.On.Event)
			}
			count := s.On.Count
			if count <= 0 {
				count = 1
			}
			in.triggers = append(in.triggers, armed{spec: s, proc: id, kind: kind, left: count})
		default:
			return fmt.Errorf("faults[%d]: needs at or on", i)
		}
	}
	if len(in.triggers) > 0 {
		k.Observe(in.observe)
	}
	return nil
}

type armed struct {
	spec  Spec
	proc  sim.ProcID
	kind  sim.Kind
	left  int
	fired bool
}

type installer struct {
	k        *sim.Kernel
	hooks    Hooks
	rand     *sim.Rand
	triggers []armed
}

func (in *installer) id(name string) (sim.ProcID, error) {
	id, ok := in.k.Lookup(name)
	if !ok {
		return sim.NoProc, fmt.Errorf("unknown process %q", name)
	}
	return id, nil
}

// check resolves every name the spec uses.
func (in *installer) check(s Spec) error {
	var names []string
	switch s.Kind {
	case "heal":
	case "partition":
		for _, g := range s.Groups {
			names = append(names, g...)
		}
	case "drop", "delay":
		names = []string{s.From, s.To}
	default:
		names = []string{s.Node}
	}
	if s.On != nil {
		names = append(names, s.On.Proc)
	}
	for _, n := range names {
		if _, err := in.id(n); err != nil {
			return err
		}
	}
	if s.Kind == "promote" && in.hooks.Promote == nil {
		return fmt.Errorf("promote: the world has no way to promote a node")
	}
	return nil
}

func (in *installer) observe(ev sim.ObservedEvent) {
	for i := range in.triggers {
		t := &in.triggers[i]
		if t.fired || ev.Kind != t.kind || ev.Proc != t.proc {
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
func (in *installer) apply(s Spec) {
	k := in.k
	now := k.Now()
	rec := sim.FaultRecord{Kind: s.Kind, Targets: s.Targets()}
	node, _ := k.Lookup(s.Node)
	switch s.Kind {
	case "clock-jump":
		k.JumpWall(node, s.By)
		rec.Text = fmt.Sprintf("%s's wall clock jumped %s", s.Node, signed(s.By))
	case "clock-drift":
		ppb, _ := sim.RateFromDrift(s.Rate)
		k.SetDrift(node, ppb)
		rec.Text = fmt.Sprintf("%s's clocks began to run at rate %s", s.Node, rate(s.Rate))
	case "pause":
		d := s.For.Draw(in.rand)
		k.Pause(node, d)
		rec.Text = fmt.Sprintf("%s paused for %s", s.Node, d)
		rec.Until = now + sim.Time(d)
	case "crash":
		mode := sim.CrashProcess
		switch s.Mode {
		case "power":
			mode = sim.CrashPower
		case "clean":
			mode = sim.CrashClean
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
			rec.Until = now + sim.Time(d)
			rec.Text += fmt.Sprintf(" and restarted %s later", d)
			k.At(rec.Until, func() { k.Restart(node) })
		}
	case "restart":
		k.Restart(node)
		rec.Text = fmt.Sprintf("%s restarted", s.Node)
	case "partition":
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
			rec.Until = now + sim.Time(d)
			rec.Text += fmt.Sprintf(" for %s", d)
			k.At(rec.Until, func() { k.Unpartition(pid) })
		}
	case "heal":
		k.Heal()
		rec.Text = "every partition and link fault healed"
	case "drop":
		from, _ := k.Lookup(s.From)
		to, _ := k.Lookup(s.To)
		k.DropNext(from, to, s.Count)
		rec.Text = fmt.Sprintf("the next %d messages from %s to %s were dropped", s.Count, s.From, s.To)
	case "delay":
		from, _ := k.Lookup(s.From)
		to, _ := k.Lookup(s.To)
		d := s.For.Draw(in.rand)
		k.Delay(from, to, s.By, d)
		rec.Text = fmt.Sprintf("messages from %s to %s were delayed by %s for %s", s.From, s.To, s.By, d)
		rec.Until = now + sim.Time(d)
	case "promote":
		in.hooks.Promote(node)
		rec.Text = fmt.Sprintf("%s was promoted to master", s.Node)
	}
	k.RecordFault(rec)
}

func rate(r float64) string {
	return fmt.Sprintf("1%+g", r)
}
