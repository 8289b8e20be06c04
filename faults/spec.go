package faults

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/locksim/locksim/sim"
)

// Events are the trigger events (SCENARIO_FORMAT.md, "Triggers"), mapped to
// the trace kinds that processes emit. ClientEvents are emitted by lock
// clients, crashed and restarted by any process. The servers' events are
// declared with their process kinds (NodeEvent, scenarios.ProcKind
// TriggerEvents), since each kind's node logs its own.
var (
	ClientEvents = []string{"acquire-start", "acquired", "released", "lock-lost", "resource-read", "resource-write"}
	AnyEvents    = []string{"crashed", "restarted"}
)

// eventKinds maps a client or any-process trigger event to the trace kind
// it matches.
var eventKinds = map[string]sim.Kind{
	"acquire-start":  sim.KindAcquireStart,
	"acquired":       sim.KindAcquired,
	"released":       sim.KindReleased,
	"lock-lost":      sim.KindLockLost,
	"resource-read":  sim.KindResourceRead,
	"resource-write": sim.KindResourceWrite,
	"crashed":        sim.KindCrash,
	"restarted":      sim.KindRestart,
}

// NodeEvent is a trigger event that the servers of one process kind emit,
// declared with the kind (scenarios.ProcKind.TriggerEvents): the name
// on: {event: Name, node: X} uses, the trace kind the kind's node logs for
// it, and what it means (for docs and errors). Two kinds may declare the
// same name for their own trace kinds ("key-set": Redis's key-set,
// memcached's item-stored).
type NodeEvent struct {
	Name  string
	Trace sim.Kind
	Means string
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
	// index is the spec's place in the schedule Install was given (its
	// records' sim.FaultRecord.Spec, less one).
	index int
	// After delays a triggered fault.
	After sim.Range

	Kind string
	Node string
	// By: clock-jump step (signed), clock-strobe's delta (signed) or
	// delay's extra latency.
	By time.Duration
	// RevertAfter: step a jumped clock back after this long (nil = never).
	RevertAfter *sim.Range
	// Period: how often clock-strobe flips the clock.
	Period time.Duration
	// Rate: clock-drift's new rate error (0.01 = 1% fast).
	Rate float64
	// For: pause length, delay or strobe duration.
	For sim.Range
	// Mode: crash mode, "process" (default) or "power" (or "clean").
	Mode string
	// RestartAfter: restart a crashed node after this long (nil = never).
	RestartAfter *sim.Range
	// Groups: partition groups of process names.
	Groups [][]string
	// Ring: partition-ring's positions in ring order, each a group of
	// processes that stay together.
	Ring [][]string
	// HealAfter: heal a partition after this long (nil = never).
	HealAfter *sim.Range
	// Selector is the selector that chose Node ("any redis"), set by
	// Install when it resolves one (selector.go); "" otherwise.
	Selector string
	// From, To, Count: drop and delay links; From and To are also
	// reshard's source and target masters.
	From, To string
	Count    int
	// Key: reshard migrates the slot of this key.
	Key string
	// Hold: how long reshard keeps the slot open after its keys moved,
	// before CLUSTER SETSLOT NODE closes it.
	Hold sim.Range
	// Event: which of its node's due events an order fault moves first,
	// "any" (default, "") or "timer".
	Event string
}

// String renders the fault in words for summaries and explanations.
func (s Spec) String() string {
	var b strings.Builder
	b.WriteString(s.Kind)
	if d, ok := Lookup(s.Kind); ok {
		d.Words(&b, s)
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

// Targets returns the processes a fault touches (the names in its process
// and group fields), in a stable order.
func (s Spec) Targets() []string {
	d, ok := Lookup(s.Kind)
	if !ok {
		return nil
	}
	out := d.names(&s)
	sort.Strings(out)
	return out
}

// Clone deep-copies a spec (its pointers and groups), so that a copy can
// be changed without touching s (the shrinker varies copies).
func (s Spec) Clone() Spec {
	c := s
	if s.At != nil {
		at := *s.At
		c.At = &at
	}
	if s.On != nil {
		on := *s.On
		c.On = &on
	}
	if s.RestartAfter != nil {
		r := *s.RestartAfter
		c.RestartAfter = &r
	}
	if s.HealAfter != nil {
		h := *s.HealAfter
		c.HealAfter = &h
	}
	if s.RevertAfter != nil {
		r := *s.RevertAfter
		c.RevertAfter = &r
	}
	c.Groups = cloneGroups(s.Groups)
	c.Ring = cloneGroups(s.Ring)
	return c
}

func cloneGroups(gs [][]string) [][]string {
	if gs == nil {
		return nil
	}
	out := make([][]string, len(gs))
	for i, g := range gs {
		out[i] = append([]string(nil), g...)
	}
	return out
}
