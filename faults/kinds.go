package faults

import (
	"fmt"
	"strings"
	"time"

	"github.com/locksim/locksim/sim"
)

// This file is the fault-kind table: each kind is declared once, in one
// entry of table, with its fields (type, whether required, validation),
// how it is applied, rendered in words, generated for fuzzing, shrunk and
// read by the liveness verdict. The scenario reader and writer
// (scenarios/parse.go, edit.go, validate.go), the installer, the generator,
// the shrinker (fuzz/shrink.go) and real mode's check work from the table,
// so adding a fault kind means adding an entry here, or declaring it in a
// file of its own with one Register call (and its docs:
// docs/scenario-format.md, docs/extending.md).

// Fault kind names as scenarios spell them (SCENARIO_FORMAT.md, "Fault
// kinds (core)").
const (
	KindClockJump  = "clock-jump"
	KindClockDrift = "clock-drift"
	KindPause      = "pause"
	KindCrash      = "crash"
	KindRestart    = "restart"
	KindPartition  = "partition"
	KindHeal       = "heal"
	KindDrop       = "drop"
	KindDelay      = "delay"
	KindPromote    = "promote"
	// KindClockStrobe and KindPartitionRing are Jepsen's clock strobe
	// and majorities ring (issue 23).
	KindClockStrobe   = "clock-strobe"
	KindPartitionRing = "partition-ring"
	// KindReshard migrates a Redis Cluster slot as redis-cli --cluster
	// reshard does (issue 26).
	KindReshard = "reshard"
	// KindManualFailover is an operator's CLUSTER FAILOVER [FORCE|
	// TAKEOVER] sent to a Redis Cluster replica (issue 32).
	KindManualFailover = "manual-failover"
	// KindOrder chooses which of the events due at one instant runs
	// first (issue 27): explore --orders enumerates it, the generator
	// never draws it, and real mode refuses it.
	KindOrder = "order"
)

// FieldType is the type of a fault field, which fixes how scenarios read
// and write it and how the shrinker varies it.
type FieldType uint8

const (
	// FieldProc is a process name (Ptr: *string); it is one of the
	// fault's targets.
	FieldProc FieldType = iota
	// FieldEnum is one of Field.Enum (Ptr: *string; "" is Field.Default).
	FieldEnum
	// FieldDuration is a duration (Ptr: *time.Duration).
	FieldDuration
	// FieldRange is a duration or a range lo..hi (Ptr: *sim.Range).
	FieldRange
	// FieldOptRange is a range that may be absent (Ptr: **sim.Range; nil
	// means never).
	FieldOptRange
	// FieldFloat is a number (Ptr: *float64).
	FieldFloat
	// FieldInt is an integer (Ptr: *int).
	FieldInt
	// FieldGroups is a list of groups of process names (Ptr:
	// *[][]string); every name is one of the fault's targets.
	FieldGroups
	// FieldString is any string that names no process (Ptr: *string),
	// e.g. a key.
	FieldString
)

// Field is one field of a fault kind.
type Field struct {
	// Name is the field's key in a scenario file.
	Name string
	Type FieldType
	// Required fields must be given; optional ones are written back only
	// when set.
	Required bool
	// Signed durations are written with their sign (+30s).
	Signed bool
	// Enum and Default: the values of a FieldEnum ("" reads as Default).
	Enum    []string
	Default string
	// Replica: the process must be a Redis replica.
	Replica bool
	// Check validates the field once read ("" when valid); nil accepts
	// any value of the type. The message is shown after the field's path.
	Check func(s *Spec) string
	// ShrinkMin is the smallest magnitude the shrinker reduces a duration
	// or range to; ShrinkZero lets it reach zero.
	ShrinkMin  time.Duration
	ShrinkZero bool
	// Ptr returns a pointer to the field's value in s (the type above).
	Ptr func(s *Spec) any
}

// KindDef declares one fault kind.
type KindDef struct {
	Name string
	// Doc is the kind's reference text (Markdown, one paragraph): what the
	// fault does and what each field means. simrun docs writes it, with the
	// fields' types and defaults, into docs/reference/faults.md.
	Doc string
	// Fields in the order they are read, written and shrunk.
	Fields []Field
	// NeedsReplica: the kind applies only to worlds with a Redis replica.
	NeedsReplica bool
	// MinProcs: the kind applies only to worlds of at least this many
	// processes (0: any).
	MinProcs int
	// NeedsCluster: the kind applies only to worlds with a Redis Cluster
	// (GenWorld.Reshards).
	NeedsCluster bool
	// Clock: the kind changes its node's clocks (real mode needs the
	// clock library on that node, or refuses it).
	Clock bool
	// Instant: the fault acts at one instant given by at: (not a range,
	// not a trigger), and the shrinker does not move it.
	Instant bool
	// NotDrawn: the generator never draws the kind (Applicable leaves it
	// out, CheckKinds refuses it): it means something only where the run
	// without it has what it acts on (an order choice needs a tie).
	NotDrawn bool
	// NotDrawnWhy says why, for CheckKinds' error.
	NotDrawnWhy string
	// Liveness says how the kind's records bear on the liveness verdict;
	// the installer copies it into sim.FaultRecord.
	Liveness sim.FaultLiveness
	// Real says how real mode carries the kind out on real servers, in
	// words: the kernel actions Apply takes that real mode maps onto the
	// real processes (realmode/faults.go: signals, restarts, the clock
	// library, the proxy). "" means it cannot: real mode refuses a
	// scenario with the kind (exit 2), saying RealRefusal.
	Real string
	// RealRefusal says why real mode cannot carry the kind out, when
	// Real is "" ("" : that the kind registered no real-mode emulation).
	RealRefusal string
	// Words renders the kind-specific part of Spec.String.
	Words func(b *strings.Builder, s Spec)
	// Check rejects what Apply could not perform beyond the field checks
	// (nil: nothing more).
	Check func(in *Installer, s Spec) error
	// Apply performs the fault now and returns rec with its Text, Until
	// and Ignored filled in (by value: nothing escapes through the func).
	// It acts through in.Kernel(); a random size is drawn from
	// in.Rand().
	Apply func(in *Installer, s Spec, node sim.ProcID, rec sim.FaultRecord) sim.FaultRecord
	// Generate draws the kind-specific fields of a fault into s (a copy,
	// returned: no pointer to a local escapes through the func value);
	// prior are the faults drawn before it. Nil for a NotDrawn kind.
	Generate func(g *Gen, s Spec, prior []Spec) Spec
}

// Register adds d at the end of the fault-kind table and returns the
// function that removes it again: a fault kind declared outside this
// file (a test's throwaway kind) reaches the scenario reader and writer,
// validation, the installer, the generator, the shrinker and real mode's
// check with this one call, as a built-in kind does with its entry in
// table. A kind without a name, fields without Ptr, a kind without Words
// or Apply, a drawn kind without Generate, or a name already taken is a
// programming error and panics. NB: the table is global, as checker's
// property registry: register at init or in a test that does not run in
// parallel with others that read the table.
func Register(d KindDef) (undo func()) {
	switch {
	case d.Name == "":
		panic("faults.Register: a fault kind needs a name")
	case d.Words == nil || d.Apply == nil:
		panic(fmt.Sprintf("faults.Register: fault kind %q needs Words and Apply", d.Name))
	case !d.NotDrawn && d.Generate == nil:
		panic(fmt.Sprintf("faults.Register: fault kind %q is drawn by the generator and needs Generate (or NotDrawn)", d.Name))
	}
	for _, f := range d.Fields {
		if f.Name == "" || f.Ptr == nil {
			panic(fmt.Sprintf("faults.Register: fault kind %q: every field needs a name and Ptr", d.Name))
		}
	}
	if _, taken := Lookup(d.Name); taken {
		panic(fmt.Sprintf("faults.Register: fault kind %q is already declared", d.Name))
	}
	saved, savedNames := table, Kinds
	table = append(append([]KindDef(nil), saved...), d)
	Kinds = kindNames()
	return func() { table, Kinds = saved, savedNames }
}

// RealRefusal says why real mode cannot carry out a fault of kind ("" when
// it can: its declaration says how, KindDef.Real).
func RealRefusal(kind string) string {
	d, ok := Lookup(kind)
	switch {
	case !ok:
		return fmt.Sprintf("unknown fault kind %q", kind)
	case d.Real != "":
		return ""
	case d.RealRefusal != "":
		return d.RealRefusal
	}
	return fmt.Sprintf("fault kind %s registered no real-mode emulation (faults.KindDef.Real), so only the simulator can run it: run it with simrun run", kind)
}

// Lookup returns the declaration of a fault kind.
func Lookup(kind string) (*KindDef, bool) {
	for i := range table {
		if table[i].Name == kind {
			return &table[i], true
		}
	}
	return nil, false
}

// ClockKind reports whether a fault kind changes its node's clocks.
func ClockKind(kind string) bool {
	d, ok := Lookup(kind)
	return ok && d.Clock
}

// Kinds are the fault kinds in table order (Register appends to it).
var Kinds = kindNames()

func kindNames() []string {
	out := make([]string, len(table))
	for i := range table {
		out[i] = table[i].Name
	}
	return out
}

// Common fields.
var (
	nodeField = Field{Name: "node", Type: FieldProc, Required: true, Ptr: func(s *Spec) any { return &s.Node }}
	fromField = Field{Name: "from", Type: FieldProc, Required: true, Ptr: func(s *Spec) any { return &s.From }}
	toField   = Field{Name: "to", Type: FieldProc, Required: true, Ptr: func(s *Spec) any { return &s.To },
		Check: func(s *Spec) string {
			if s.From == s.To && s.From != "" {
				return "a link needs two different processes"
			}
			return ""
		}}
)

// reshardToField is a reshard's target master: another master than from.
var reshardToField = Field{Name: "to", Type: FieldProc, Required: true, Ptr: func(s *Spec) any { return &s.To },
	Check: func(s *Spec) string {
		if s.From == s.To && s.From != "" {
			return fmt.Sprintf("is %s, the master the slot migrates from: a reshard moves the slot to another master of the cluster", s.From)
		}
		return ""
	}}

func positiveRange(r sim.Range) string {
	if r.Lo <= 0 {
		return "must be positive"
	}
	return ""
}

var table = []KindDef{
	{
		Name: KindClockJump,
		Doc:  "Step `node`'s wall clock by `by` (signed: `+30s`, `-5s`); the monotonic clock is unaffected. With `revert_after`, step it back by the same amount that long after (as a Chaos Mesh TimeChaos ends, or NTP corrects), recorded as a fault of its own.",
		Real: "a step of a real server's wall clock through the clock library (realmode/clockshift); a client's clocks are the kernel's",
		Fields: []Field{nodeField, {Name: "by", Type: FieldDuration, Required: true, Signed: true, ShrinkMin: time.Millisecond, Ptr: func(s *Spec) any { return &s.By }},
			{Name: "revert_after", Type: FieldOptRange, ShrinkMin: time.Millisecond, Ptr: func(s *Spec) any { return &s.RevertAfter },
				Check: func(s *Spec) string {
					if s.RevertAfter != nil {
						return positiveRange(*s.RevertAfter)
					}
					return ""
				}}},
		Clock: true,
		Words: func(b *strings.Builder, s Spec) {
			fmt.Fprintf(b, " %s by %s", s.Node, signed(s.By))
			if s.RevertAfter != nil {
				fmt.Fprintf(b, " revert after %s", *s.RevertAfter)
			}
		},
		Apply: applyClockJump,
		Generate: func(g *Gen, s Spec, prior []Spec) Spec {
			s.Node = g.target()
			s.By = g.size(maxJumpTTLs * g.w.TTL)
			// Forward twice as often: a forward step expires keys early,
			// Kleppmann's case; a backward step keeps them longer.
			if g.intn(3) == 0 {
				s.By = -s.By
			}
			// A quarter of the jumps revert (an NTP correction, a
			// Chaos Mesh TimeChaos that ends).
			if g.intn(4) == 0 {
				d := g.size(maxRevertTTLs * g.w.TTL)
				s.RevertAfter = &sim.Range{Lo: d, Hi: d}
			}
			return s
		},
	},
	{
		Name:  KindClockDrift,
		Doc:   "From now on both of `node`'s clocks run at 1 + `rate` (`0.01` is 1% fast, `-0.01` 1% slow).",
		Real:  "a new rate of a real server's clocks through the clock library (realmode/clockshift); a client's clocks are the kernel's",
		Clock: true,
		Fields: []Field{nodeField, {Name: "rate", Type: FieldFloat, Required: true, Ptr: func(s *Spec) any { return &s.Rate },
			Check: func(s *Spec) string {
				if _, err := sim.RateFromDrift(s.Rate); err != nil {
					return err.Error()
				}
				return ""
			}}},
		Words: func(b *strings.Builder, s Spec) { fmt.Fprintf(b, " %s rate %g", s.Node, s.Rate) },
		Apply: func(in *Installer, s Spec, node sim.ProcID, rec sim.FaultRecord) sim.FaultRecord {
			ppb, _ := sim.RateFromDrift(s.Rate)
			in.k.SetDrift(node, ppb)
			rec.Text = fmt.Sprintf("%s's clocks began to run at rate %s", s.Node, rate(s.Rate))
			return rec
		},
		Generate: func(g *Gen, s Spec, prior []Spec) Spec {
			s.Node = g.target()
			milli := 1 + g.intn(maxDriftMilli)
			if g.intn(2) == 0 {
				milli = -milli
			}
			s.Rate = float64(milli) / 1000
			return s
		},
	},
	{
		Name: KindPause,
		Doc:  "Stop the process `node` for `for` (a GC pause, SIGSTOP): nothing runs, its clocks keep running, and messages to it queue in its inbox and are handled in order on resume.",
		Real: "SIGSTOP of a real server, SIGCONT at the resume; a client is paused in the kernel",
		Fields: []Field{nodeField, {Name: "for", Type: FieldRange, Required: true, ShrinkMin: time.Millisecond, Ptr: func(s *Spec) any { return &s.For },
			Check: func(s *Spec) string { return positiveRange(s.For) }}},
		Liveness: sim.LiveSpan,
		Words:    func(b *strings.Builder, s Spec) { fmt.Fprintf(b, " %s for %s", s.Node, s.For) },
		Apply:    applyPause,
		Generate: func(g *Gen, s Spec, prior []Spec) Spec {
			s.Node = g.target()
			s.For = sim.Fixed(g.size(maxPauseTTLs * g.w.TTL))
			return s
		},
	},
	{
		Name: KindCrash,
		Doc:  "Crash the process `node`. `mode`: `process` (the default): the page cache survives; `power`: only fsynced data (and what the OS wrote back after 30s) survives, and the host sends nothing; `clean`: shutdown hooks run. With `restart_after`, start it again that long after.",
		Real: "SIGKILL of a real server (mode process; mode power first makes the host a black hole to its peers through the proxy, and drops its data directory's unsynced writes), SHUTDOWN (mode clean)",
		Fields: []Field{nodeField,
			{Name: "mode", Type: FieldEnum, Enum: []string{"process", "power", "clean"}, Default: "process", Ptr: func(s *Spec) any { return &s.Mode },
				Check: func(s *Spec) string {
					switch s.Mode {
					case "", "process", "power", "clean":
						return ""
					}
					return fmt.Sprintf("unknown crash mode %q (allowed: process, power, clean)", s.Mode)
				}},
			{Name: "restart_after", Type: FieldOptRange, ShrinkZero: true, Ptr: func(s *Spec) any { return &s.RestartAfter },
				Check: func(s *Spec) string {
					if s.RestartAfter != nil && s.RestartAfter.Lo < 0 {
						return "must not be negative"
					}
					return ""
				}},
		},
		Liveness: sim.LiveCrash,
		Words: func(b *strings.Builder, s Spec) {
			fmt.Fprintf(b, " %s mode %s", s.Node, s.mode())
			if s.RestartAfter != nil {
				fmt.Fprintf(b, " restart after %s", *s.RestartAfter)
			}
		},
		Apply: applyCrash,
		Generate: func(g *Gen, s Spec, prior []Spec) Spec {
			s.Node = g.target()
			if g.intn(2) == 0 {
				s.Mode = "power"
			}
			if g.intn(4) != 0 {
				d := g.dur(0, maxRestartTTLs*g.w.TTL)
				s.RestartAfter = &sim.Range{Lo: d, Hi: d}
			}
			return s
		},
	},
	{
		Name:     KindRestart,
		Doc:      "Start the crashed process `node` again: a fresh instance recovers from its durable state.",
		Real:     "the same binary and arguments on the same data directory",
		Fields:   []Field{nodeField},
		Liveness: sim.LiveRestart,
		Words:    func(b *strings.Builder, s Spec) { fmt.Fprintf(b, " %s", s.Node) },
		Apply: func(in *Installer, s Spec, node sim.ProcID, rec sim.FaultRecord) sim.FaultRecord {
			k := in.k
			if k.Crashed(node) {
				rec.Text = fmt.Sprintf("%s restarted", s.Node)
			} else {
				// The kernel restarts only a crashed process.
				rec.Text = fmt.Sprintf("%s was not restarted: it was %s", s.Node, in.notRunning(node))
				rec.Ignored = true
			}
			k.Restart(node)
			return rec
		},
		Generate: func(g *Gen, s Spec, prior []Spec) Spec {
			var crashed []string
			for _, p := range prior {
				if p.Kind == KindCrash {
					crashed = append(crashed, p.Node)
				}
			}
			if len(crashed) > 0 {
				s.Node = g.pick(crashed)
			} else {
				// Harmless: the kernel ignores the restart of a running
				// process, and a later crash may make it count.
				s.Node = g.proc()
			}
			return s
		},
	},
	{
		Name: KindPartition,
		Doc:  "Only processes in the same group of `groups` can talk; unlisted processes keep their links. Connections across it stall (retransmitted, delivered in order after the heal) until a timeout ends them. Partitions stack: a later one adds its cuts, and `heal_after` ends only its own.",
		Real: "the fault-injecting proxy holds the bytes between the groups' real servers until the heal; the kernel cuts the clients' links",
		Fields: []Field{
			{Name: "groups", Type: FieldGroups, Required: true, Ptr: func(s *Spec) any { return &s.Groups },
				Check: func(s *Spec) string {
					if len(s.Groups) < 2 {
						// Unlisted processes keep their links, so one group cuts nothing.
						return "needs at least two groups (processes not listed keep their links, so a single group cuts nothing): [[c1, A], [c2, B]]"
					}
					return ""
				}},
			healAfterField,
		},
		Liveness: sim.LiveLink,
		Words: func(b *strings.Builder, s Spec) {
			for _, g := range s.Groups {
				fmt.Fprintf(b, " [%s]", strings.Join(g, " "))
			}
			if s.HealAfter != nil {
				fmt.Fprintf(b, " heal after %s", *s.HealAfter)
			}
		},
		Apply: applyPartition,
		Generate: func(g *Gen, s Spec, prior []Spec) Spec {
			s.Groups = g.groups()
			s.HealAfter = g.healAfter()
			return s
		},
	},
	{
		Name:     KindHeal,
		Doc:      "Remove every partition and link fault; stalled connections deliver at their next retransmission.",
		Real:     "the proxy releases every cut and delay",
		Liveness: sim.LiveHeal,
		Words:    func(b *strings.Builder, s Spec) {},
		Apply: func(in *Installer, s Spec, node sim.ProcID, rec sim.FaultRecord) sim.FaultRecord {
			in.k.Heal()
			rec.Text = "every partition and link fault healed"
			return rec
		},
		Generate: func(g *Gen, s Spec, prior []Spec) Spec { return s },
	},
	{
		Name: KindDrop,
		Doc:  "Lose the next `count` messages on the one-way link `from` -> `to`, as a middlebox that forgets the flow: each resets its connection (both ends learn; what the sender sent on it before it learnt is lost too).",
		Real: "the kernel drops the messages of a link with a client (between two real servers there is no TCP counterpart: real mode refuses it)",
		Fields: []Field{fromField, toField, {Name: "count", Type: FieldInt, Required: true, Ptr: func(s *Spec) any { return &s.Count },
			Check: func(s *Spec) string {
				if s.Count < 1 {
					return fmt.Sprintf("must be at least 1, got %d", s.Count)
				}
				return ""
			}}},
		Liveness: sim.LiveLink,
		Words:    func(b *strings.Builder, s Spec) { fmt.Fprintf(b, " %s->%s next %d", s.From, s.To, s.Count) },
		Apply: func(in *Installer, s Spec, node sim.ProcID, rec sim.FaultRecord) sim.FaultRecord {
			from, _ := in.k.Lookup(s.From)
			to, _ := in.k.Lookup(s.To)
			in.k.DropNext(from, to, s.Count)
			rec.Text = fmt.Sprintf("the next %d messages from %s to %s were dropped, each resetting its connection", s.Count, s.From, s.To)
			return rec
		},
		Generate: func(g *Gen, s Spec, prior []Spec) Spec {
			s.From, s.To = g.link()
			s.Count = 1 + g.intn(3)
			if g.intn(4) == 0 {
				s.Count = 1 + g.intn(maxDropCount)
			}
			return s
		},
	},
	{
		Name: KindDelay,
		Doc:  "Add `by` of latency to the one-way link `from` -> `to` for `for` (order is kept).",
		Real: "the proxy delays the bytes between two real servers; the kernel delays a client's link",
		Fields: []Field{fromField, toField,
			{Name: "by", Type: FieldDuration, Required: true, ShrinkMin: time.Millisecond, Ptr: func(s *Spec) any { return &s.By },
				Check: func(s *Spec) string {
					if s.By <= 0 {
						return "must be positive"
					}
					return ""
				}},
			{Name: "for", Type: FieldRange, Required: true, ShrinkMin: time.Millisecond, Ptr: func(s *Spec) any { return &s.For },
				Check: func(s *Spec) string { return positiveRange(s.For) }},
		},
		Liveness: sim.LiveLink,
		Words:    func(b *strings.Builder, s Spec) { fmt.Fprintf(b, " %s->%s by %s for %s", s.From, s.To, s.By, s.For) },
		Apply: func(in *Installer, s Spec, node sim.ProcID, rec sim.FaultRecord) sim.FaultRecord {
			from, _ := in.k.Lookup(s.From)
			to, _ := in.k.Lookup(s.To)
			d := s.For.Draw(in.rand)
			in.k.Delay(from, to, s.By, d)
			rec.Text = fmt.Sprintf("messages from %s to %s were delayed by %s for %s", s.From, s.To, s.By, d)
			rec.Until = addSat(in.k.Now(), d)
			return rec
		},
		Generate: func(g *Gen, s Spec, prior []Spec) Spec {
			s.From, s.To = g.link()
			s.By = g.size(maxDelayByTTLs * g.w.TTL)
			s.For = sim.Fixed(g.size(maxDelayForTTL * g.w.TTL))
			return s
		},
	},
	{
		Name:         KindPromote,
		Doc:          "Make the replica `node` a master (REPLICAOF NO ONE from an operator): a manual failover.",
		Real:         "REPLICAOF NO ONE sent to the real replica by the world's operator",
		Fields:       []Field{{Name: "node", Type: FieldProc, Required: true, Replica: true, Ptr: func(s *Spec) any { return &s.Node }}},
		NeedsReplica: true,
		Words:        func(b *strings.Builder, s Spec) { fmt.Fprintf(b, " %s", s.Node) },
		Check: func(in *Installer, s Spec) error {
			if in.hooks.Promote == nil {
				return fmt.Errorf("promote: the world has no way to promote a node")
			}
			return nil
		},
		Apply: func(in *Installer, s Spec, node sim.ProcID, rec sim.FaultRecord) sim.FaultRecord {
			in.hooks.Promote(node)
			rec.Text = fmt.Sprintf("%s was promoted to master", s.Node)
			return rec
		},
		Generate: func(g *Gen, s Spec, prior []Spec) Spec { s.Node = g.pick(g.w.Replicas); return s },
	},
	{
		// Jepsen's clock strobe: jepsen/src/jepsen/nemesis/time.clj
		// strobe-time! and resources/strobe-time.c (delta ms, period ms,
		// duration s).
		Name: KindClockStrobe,
		Doc:  "Jepsen's clock strobe (`jepsen.nemesis.time` `strobe-time!`): set `node`'s wall clock to its offset plus `delta`, then back, every `period`, for `for`; at the first flip due at or after `for` it is left at its offset. Each flip is a wall-clock jump (timers re-planned); at most 100,000 flips.",
		Real: "the clock library steps the real server's wall clock back and forth, as the kernel does",
		Fields: []Field{nodeField,
			{Name: "delta", Type: FieldDuration, Required: true, Signed: true, ShrinkMin: time.Millisecond, Ptr: func(s *Spec) any { return &s.By },
				Check: func(s *Spec) string {
					if s.By == 0 {
						return "must not be zero"
					}
					return ""
				}},
			{Name: "period", Type: FieldDuration, Required: true, ShrinkMin: time.Millisecond, Ptr: func(s *Spec) any { return &s.Period },
				Check: func(s *Spec) string {
					if s.Period <= 0 {
						return "must be positive"
					}
					return ""
				}},
			{Name: "for", Type: FieldRange, Required: true, ShrinkMin: time.Millisecond, Ptr: func(s *Spec) any { return &s.For },
				Check: func(s *Spec) string {
					if msg := positiveRange(s.For); msg != "" {
						return msg
					}
					if s.Period > 0 && s.For.Hi/s.Period > maxStrobeFlips {
						return fmt.Sprintf("flips the clock %d times (for / period); at most %d", s.For.Hi/s.Period, maxStrobeFlips)
					}
					return ""
				}},
		},
		Clock:    true,
		Liveness: sim.LiveSpan,
		Words: func(b *strings.Builder, s Spec) {
			fmt.Fprintf(b, " %s delta %s every %s for %s", s.Node, signed(s.By), s.Period, s.For)
		},
		Apply: applyClockStrobe,
		Generate: func(g *Gen, s Spec, prior []Spec) Spec {
			s.Node = g.target()
			// Jepsen's strobe-gen-select draws delta 4 ms..262 s, period
			// 1 ms..1 s, duration 0..32 s (time.clj); locksim scales delta
			// and duration with the ttl and keeps the period in
			// 1..1000 ms.
			s.By = g.size(maxJumpTTLs * g.w.TTL)
			if g.intn(3) == 0 {
				s.By = -s.By
			}
			s.Period = g.dur(time.Millisecond, time.Second)
			d := g.size(maxStrobeTTLs * g.w.TTL)
			if max := maxStrobeFlips * s.Period; d > max {
				d = max
			}
			s.For = sim.Fixed(d)
			return s
		},
	},
	{
		// Jepsen's majorities ring: jepsen/src/jepsen/nemesis.clj
		// majorities-ring, majorities-ring-perfect.
		Name: KindPartitionRing,
		Doc:  "Jepsen's majorities ring (`jepsen.nemesis` `majorities-ring-perfect`): `ring` lists n positions in ring order, each a group of processes that keep their links (a client beside its node); for each window of m = n/2+1 consecutive positions, the middle one drops messages from the positions outside it. Each position hears a majority and no two hear the same one; not transitive (with five positions each talks to its two neighbours only). Unlisted processes keep every link. `heal_after` ends the ring's cuts that long after.",
		Real: "the proxy holds the bytes between real servers the ring separates; the kernel cuts the clients' links",
		Fields: []Field{
			{Name: "ring", Type: FieldGroups, Required: true, Ptr: func(s *Spec) any { return &s.Ring },
				Check: func(s *Spec) string {
					if len(s.Ring) < 3 {
						return "needs at least three positions (each a group of processes that stay together): [[c1, A], [B], [C], [c2, D], [E]]"
					}
					return ""
				}},
			healAfterField,
		},
		Liveness: sim.LiveLink,
		MinProcs: 3,
		Words: func(b *strings.Builder, s Spec) {
			for _, g := range s.Ring {
				fmt.Fprintf(b, " [%s]", strings.Join(g, " "))
			}
			if s.HealAfter != nil {
				fmt.Fprintf(b, " heal after %s", *s.HealAfter)
			}
		},
		Apply: applyRing,
		Generate: func(g *Gen, s Spec, prior []Spec) Spec {
			s.Ring = g.ring()
			s.HealAfter = g.healAfter()
			return s
		},
	},
	{
		// A slot migration as redis-cli --cluster reshard runs it
		// (clusterManagerMoveSlot, R 7.0.15 src/redis-cli.c:4413-4485),
		// by the world's operator (Hooks.Reshard).
		Name: KindReshard,
		Doc:  "Redis Cluster only: migrate the slot of `key` from the master `from` to the master `to` as `redis-cli --cluster reshard` does (CLUSTER SETSLOT IMPORTING on the target, MIGRATING on the source, GETKEYSINSLOT + MIGRATE in batches of 10, SETSLOT NODE everywhere), sent by an operator process, in real mode to the real servers; `hold` keeps the slot open that long after its keys moved (clients meet ASK and TRYAGAIN meanwhile). See [Redis Cluster](../design/redis-cluster.md).",
		Real: "the operator's migration commands (CLUSTER SETSLOT, MIGRATE) sent to the real cluster nodes",
		Fields: []Field{
			{Name: "key", Type: FieldString, Required: true, Ptr: func(s *Spec) any { return &s.Key },
				Check: func(s *Spec) string {
					if s.Key == "" {
						return "must name the key whose slot migrates"
					}
					return ""
				}},
			fromField, reshardToField,
			{Name: "hold", Type: FieldRange, ShrinkZero: true, Ptr: func(s *Spec) any { return &s.Hold },
				Check: func(s *Spec) string {
					if s.Hold.Lo < 0 {
						return "must not be negative"
					}
					return ""
				}},
		},
		Liveness:     sim.LiveSettles,
		NeedsCluster: true,
		Words: func(b *strings.Builder, s Spec) {
			fmt.Fprintf(b, " slot of %q %s -> %s", s.Key, s.From, s.To)
			if s.Hold != (sim.Range{}) {
				fmt.Fprintf(b, " hold %s", s.Hold)
			}
		},
		Check: func(in *Installer, s Spec) error {
			if in.hooks.Reshard == nil {
				return fmt.Errorf("reshard: the world has no Redis Cluster to reshard")
			}
			return nil
		},
		Apply: func(in *Installer, s Spec, node sim.ProcID, rec sim.FaultRecord) sim.FaultRecord {
			from, _ := in.k.Lookup(s.From)
			to, _ := in.k.Lookup(s.To)
			hold := s.Hold.Draw(in.rand)
			rec.Text = in.hooks.Reshard(from, to, s.Key, hold)
			if hold > 0 {
				rec.Until = addSat(in.k.Now(), hold)
			}
			return rec
		},
		Generate: func(g *Gen, s Spec, prior []Spec) Spec {
			r := g.w.Reshards[g.intn(len(g.w.Reshards))]
			s.Key, s.From = r.Key, r.From
			var others []string
			for _, m := range r.Masters {
				if m != r.From {
					others = append(others, m)
				}
			}
			s.To = g.pick(others)
			if g.intn(2) == 0 {
				s.Hold = sim.Fixed(g.size(g.w.TTL))
			}
			return s
		},
	},
	{
		// An operator's CLUSTER FAILOVER to a cluster replica (R 7.0.15
		// src/cluster.c:5751-5831): default (the master pauses its
		// writes, the replica catches up, then a forced election), force
		// (an election at once, without the master's agreement) or
		// takeover (new configEpoch without a vote, the slots taken at
		// once), by the world's operator (Hooks.ClusterFailover). The
		// reply (an error when the node is a master, or its master is
		// down without force) is traced. The generator does not draw it
		// (NotDrawnWhy).
		Name: KindManualFailover,
		Doc:  "Redis Cluster only: an operator's `CLUSTER FAILOVER` sent to the cluster replica `node`, with `mode` `default` (the master stops writes, the replica catches up, then an election), `force` (an election at once, without the master's agreement) or `takeover` (a new configEpoch without a vote, the slots taken at once). Sent by the world's operator process (in real mode, to the real server); the reply, an error when `node` is a master or its master is down without `force`, is an `operator-step` trace event. Never drawn by `simrun fuzz`. See [Redis Cluster](../design/redis-cluster.md).",
		Real: "CLUSTER FAILOVER [FORCE|TAKEOVER] sent to the real replica by the world's operator through its gateway",
		Fields: []Field{nodeField,
			{Name: "mode", Type: FieldEnum, Enum: []string{"default", "force", "takeover"}, Default: "default", Ptr: func(s *Spec) any { return &s.Mode },
				Check: func(s *Spec) string {
					switch s.Mode {
					case "", "default", "force", "takeover":
						return ""
					}
					return fmt.Sprintf("unknown mode %q (allowed: default, force, takeover: CLUSTER FAILOVER [FORCE|TAKEOVER])", s.Mode)
				}},
		},
		NeedsCluster: true,
		NotDrawn:     true,
		NotDrawnWhy:  "an operator's CLUSTER FAILOVER is staged in a scenario (drawing it would change every cluster campaign's draws)",
		Liveness:     sim.LiveSettles,
		Words: func(b *strings.Builder, s Spec) {
			fmt.Fprintf(b, " %s", s.Node)
			if s.Mode != "" && s.Mode != "default" {
				fmt.Fprintf(b, " %s", s.Mode)
			}
		},
		Check: func(in *Installer, s Spec) error {
			if in.hooks.ClusterFailover == nil {
				return fmt.Errorf("manual-failover: the world has no Redis Cluster")
			}
			return nil
		},
		Apply: func(in *Installer, s Spec, node sim.ProcID, rec sim.FaultRecord) sim.FaultRecord {
			rec.Text = in.hooks.ClusterFailover(node, s.Mode)
			return rec
		},
		Generate: func(g *Gen, s Spec, prior []Spec) Spec {
			panic("faults: the generator never draws a manual-failover fault (NotDrawn)")
		},
	},
	{
		// The order of the events due at one instant (sim.Kernel.PreferNow):
		// the node's first due event (with from, its first delivery from
		// that sender; with event timer, its first timer) runs before every
		// other event due at that instant, the others keeping their order.
		Name:        KindOrder,
		Doc:         "The order of the events due at one instant (`at:` one instant; no range, no trigger): `node`'s first event due then (with `from`, its first delivery from that sender; with `event` `timer` instead of `any`, its first timer) runs before every other event due at that instant, the others keeping their order. Not a fault to liveness; never drawn by `simrun fuzz`; `simrun explore --orders` enumerates it; real mode refuses it. The fault record says what moved or that nothing was due.",
		RealRefusal: "order chooses which of the events due at one instant of simulated time runs first; real servers share no instant to order (their events race in real time), so only the simulator can replay it: run it with simrun run",
		Fields: []Field{nodeField,
			{Name: "event", Type: FieldEnum, Enum: []string{"any", "timer"}, Default: "any", Ptr: func(s *Spec) any { return &s.Event },
				Check: func(s *Spec) string {
					switch s.Event {
					case "", "any", "timer":
						return ""
					}
					return fmt.Sprintf("unknown event %q (allowed: any, timer)", s.Event)
				}},
			{Name: "from", Type: FieldProc, Ptr: func(s *Spec) any { return &s.From },
				Check: func(s *Spec) string {
					switch {
					case s.From == "":
						return ""
					case s.Event == "timer":
						return "names the sender of a delivery; a timer has none (drop from, or event: timer)"
					case s.From == s.Node:
						return "a process does not deliver to itself over the network: name another sender"
					}
					return ""
				}},
		},
		Instant:     true,
		NotDrawn:    true,
		NotDrawnWhy: "it acts only where the run without it has what it acts on (an order choice needs events due at one instant; simrun explore --orders enumerates them)",
		Liveness:    sim.LiveNone,
		Words: func(b *strings.Builder, s Spec) {
			fmt.Fprintf(b, " %s", orderWhat(s))
		},
		Apply: applyOrder,
		Generate: func(g *Gen, s Spec, prior []Spec) Spec {
			panic("faults: the generator never draws an order fault (NotDrawn)")
		},
	},
}

// names returns the process names the fault's fields name, in field order
// (the unsorted targets).
func (d *KindDef) names(s *Spec) []string {
	var out []string
	for _, f := range d.Fields {
		switch p := f.Ptr(s).(type) {
		case *string:
			if f.Type == FieldProc && (*p != "" || f.Required) {
				out = append(out, *p)
			}
		case *[][]string:
			for _, g := range *p {
				out = append(out, g...)
			}
		}
	}
	return out
}

// CheckInstant says why a fault of an Instant kind is not given one
// instant ("at: ..." or "on: ..."; "" when it is, or the kind is not one).
func (d *KindDef) CheckInstant(s *Spec) string {
	switch {
	case !d.Instant:
		return ""
	case s.On != nil:
		return fmt.Sprintf("on: fault kind %s acts at one instant, given by at: (a trigger cannot name it)", d.Name)
	case s.At != nil && s.At.Lo != s.At.Hi:
		return fmt.Sprintf("at: fault kind %s acts at one instant, not in a range (%s)", d.Name, *s.At)
	}
	return ""
}

// CheckFields runs the field checks of s's kind and returns the first
// failure as "field: message".
func CheckFields(s Spec) error {
	d, ok := Lookup(s.Kind)
	if !ok {
		return fmt.Errorf("kind: unknown fault kind %q (known: %s)", s.Kind, strings.Join(Kinds, ", "))
	}
	return d.checkFields(&s)
}

func (d *KindDef) checkFields(s *Spec) error {
	for _, f := range d.Fields {
		if f.Check == nil {
			continue
		}
		if msg := f.Check(s); msg != "" {
			return fmt.Errorf("%s: %s", f.Name, msg)
		}
	}
	return nil
}

// healAfterField is the heal_after of the partition kinds (groups and
// ring): when the partition heals by itself.
var healAfterField = Field{Name: "heal_after", Type: FieldOptRange, ShrinkMin: time.Millisecond, Ptr: func(s *Spec) any { return &s.HealAfter },
	Check: func(s *Spec) string {
		if s.HealAfter != nil {
			return positiveRange(*s.HealAfter)
		}
		return ""
	}}

// healAfter draws a partition's heal_after: none in one schedule of four,
// otherwise a size up to maxHealTTLs lock lifetimes (the same draws for the
// partition kinds, groups and ring).
func (g *Gen) healAfter() *sim.Range {
	if g.intn(4) == 0 {
		return nil
	}
	d := g.size(maxHealTTLs * g.w.TTL)
	return &sim.Range{Lo: d, Hi: d}
}

// orderWhat names the event an order fault moves first.
func orderWhat(s Spec) string {
	switch {
	case s.From != "":
		return fmt.Sprintf("%s's delivery from %s", s.Node, s.From)
	case s.Event == "timer":
		return s.Node + "'s timer"
	}
	return s.Node + "'s first due event"
}

// applyOrder moves the event an order fault names ahead of the others due
// at its instant (KindOrder).
func applyOrder(in *Installer, s Spec, node sim.ProcID, rec sim.FaultRecord) sim.FaultRecord {
	want := sim.Prefer{Proc: node, From: sim.NoProc, Timer: s.Event == "timer"}
	if s.From != "" {
		want.From, _ = in.k.Lookup(s.From)
	}
	what := orderWhat(s)
	ahead, ok := in.k.PreferNow(want)
	switch {
	case !ok:
		rec.Text = fmt.Sprintf("no %s was due at this instant: the order of its events was kept", what)
		rec.Ignored = true
	case ahead == 0:
		rec.Text = fmt.Sprintf("%s was first already among the events due at this instant", what)
		rec.Ignored = true
	default:
		rec.Text = fmt.Sprintf("%s went first, ahead of %d events due at this instant", what, ahead)
		// The timeline's order mark (reports): whose event went first,
		// and which one (not hashed, as every event's fields).
		rec.Fields = []sim.Attr{sim.Str("first", s.Node), sim.Int64("ahead", int64(ahead))}
		switch {
		case s.From != "":
			rec.Fields = append(rec.Fields, sim.Str("from", s.From))
		case s.Event == "timer":
			rec.Fields = append(rec.Fields, sim.Str("event", "timer"))
		}
	}
	return rec
}

// What a kind's Apply and Generate may use, for a kind declared outside
// this package (Register): the built-in kinds use the same.

// Kernel is the kernel the fault acts on.
func (in *Installer) Kernel() *sim.Kernel { return in.k }

// Rand is the faults' random stream, for the sizes a fault draws when it
// acts (a range's draw).
func (in *Installer) Rand() *sim.Rand { return in.rand }

// Hooks are the world's actions beyond the kernel.
func (in *Installer) Hooks() Hooks { return in.hooks }

// NotRunning says why a process is not running ("crashed", ...), for a
// record that says the fault did nothing.
func (in *Installer) NotRunning(id sim.ProcID) string { return in.notRunning(id) }

// World is the world the generator draws for.
func (g *Gen) World() GenWorld { return g.w }

// Intn draws an integer in [0, n).
func (g *Gen) Intn(n int) int { return g.intn(n) }

// Size draws a positive duration up to max at the generator's grain:
// uniform three times in four, up to max/20 otherwise (the sizes every
// built-in kind draws).
func (g *Gen) Size(max time.Duration) time.Duration { return g.size(max) }

// Target draws the process a node fault hits (the campaign's targets or
// focus when it has them; a selector when the swarm allows one).
func (g *Gen) Target() string { return g.target() }

// Link draws a one-way link (from, to) between two processes.
func (g *Gen) Link() (from, to string) { return g.link() }
