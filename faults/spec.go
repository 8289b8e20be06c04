package faults

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/locksim/locksim/sim"
)

// Kinds are the fault kinds (SCENARIO_FORMAT.md, "Fault kinds (core)").
var Kinds = []string{"clock-jump", "clock-drift", "pause", "crash", "restart", "partition", "heal", "drop", "delay", "promote"}

// Events are the trigger events (SCENARIO_FORMAT.md, "Triggers"), mapped to
// the trace kinds that processes emit. ClientEvents are emitted by lock
// clients, NodeEvents by servers; crashed and restarted by any process.
var (
	ClientEvents = []string{"acquire-start", "acquired", "released", "lock-lost", "resource-read", "resource-write"}
	NodeEvents   = []string{"key-set", "promoted"}
	AnyEvents    = []string{"crashed", "restarted"}
)

// eventKinds maps a trigger event name to the trace kind it matches.
var eventKinds = map[string]sim.Kind{
	"acquire-start":  sim.KindAcquireStart,
	"acquired":       sim.KindAcquired,
	"released":       sim.KindReleased,
	"lock-lost":      sim.KindLockLost,
	"resource-read":  sim.KindResourceRead,
	"resource-write": sim.KindResourceWrite,
	"key-set":        "key-set",  // nodes/redis emits it when it stores a lock key
	"promoted":       "promoted", // nodes/redis emits it when a replica becomes master
	"crashed":        sim.KindCrash,
	"restarted":      sim.KindRestart,
}

// Trigger fires a fault when the Count-th event of kind Event is emitted by
// process Proc (a client or a node, as the scenario names it).
type Trigger struct {
	Event string
	Proc  string
	Count int // 1 when not given
}

// Spec is one fault of a schedule. Which fields matter depends on Kind.
type Spec struct {
	// Exactly one of At and On is set.
	At *sim.Range
	On *Trigger
	// After delays a triggered fault.
	After sim.Range

	Kind string
	Node string
	// By: clock-jump step (signed) or delay's extra latency.
	By time.Duration
	// Rate: clock-drift's new rate error (0.01 = 1% fast).
	Rate float64
	// For: pause length or delay duration.
	For sim.Range
	// Mode: crash mode, "process" (default) or "power" (or "clean").
	Mode string
	// RestartAfter: restart a crashed node after this long (nil = never).
	RestartAfter *sim.Range
	// Groups: partition groups of process names.
	Groups [][]string
	// HealAfter: heal a partition after this long (nil = never).
	HealAfter *sim.Range
	// From, To, Count: drop and delay links.
	From, To string
	Count    int
}

// String renders the fault in words for summaries and explanations.
func (s Spec) String() string {
	var b strings.Builder
	b.WriteString(s.Kind)
	switch s.Kind {
	case "clock-jump":
		fmt.Fprintf(&b, " %s by %s", s.Node, signed(s.By))
	case "clock-drift":
		fmt.Fprintf(&b, " %s rate %g", s.Node, s.Rate)
	case "pause":
		fmt.Fprintf(&b, " %s for %s", s.Node, s.For)
	case "crash":
		fmt.Fprintf(&b, " %s mode %s", s.Node, s.mode())
		if s.RestartAfter != nil {
			fmt.Fprintf(&b, " restart after %s", *s.RestartAfter)
		}
	case "restart", "promote":
		fmt.Fprintf(&b, " %s", s.Node)
	case "partition":
		for _, g := range s.Groups {
			fmt.Fprintf(&b, " [%s]", strings.Join(g, " "))
		}
		if s.HealAfter != nil {
			fmt.Fprintf(&b, " heal after %s", *s.HealAfter)
		}
	case "drop":
		fmt.Fprintf(&b, " %s->%s next %d", s.From, s.To, s.Count)
	case "delay":
		fmt.Fprintf(&b, " %s->%s by %s for %s", s.From, s.To, s.By, s.For)
	}
	if s.At != nil {
		fmt.Fprintf(&b, " at %s", *s.At)
	} else if s.On != nil {
		fmt.Fprintf(&b, " on %s of %s", s.On.Event, s.On.Proc)
		if s.On.Count > 1 {
			fmt.Fprintf(&b, " (#%d)", s.On.Count)
		}
		if s.After != (sim.Range{}) {
			fmt.Fprintf(&b, " after %s", s.After)
		}
	}
	return b.String()
}

func (s Spec) mode() string {
	if s.Mode == "" {
		return "process"
	}
	return s.Mode
}

// signed renders a duration with an explicit sign (+30s, -5s).
func signed(d time.Duration) string {
	if d >= 0 {
		return "+" + d.String()
	}
	return d.String()
}

// Targets returns the processes a fault touches, in a stable order.
func (s Spec) Targets() []string {
	var out []string
	switch s.Kind {
	case "partition":
		for _, g := range s.Groups {
			out = append(out, g...)
		}
	case "drop", "delay":
		out = []string{s.From, s.To}
	case "heal":
	default:
		out = []string{s.Node}
	}
	sort.Strings(out)
	return out
}
