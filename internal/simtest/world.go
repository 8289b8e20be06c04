package simtest

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/sim"
)

// Step is the granularity of RunUntil: the kernel runs this much true time
// between two checks of the condition. 100 µs is well below any latency or
// timer the models use, so a reply is seen within 100 µs of its arrival.
const Step = 100 * time.Microsecond

// World is a kernel under test with processes known by name.
type World struct {
	T testing.TB
	K *sim.Kernel

	ids   map[string]sim.ProcID
	names []string // in the order added
}

// Options configure NewWorld beyond the latency.
type Options struct {
	// Seed is the kernel's seed; 0 means 1.
	Seed uint64
	// Latency, if set, replaces the fixed latency by a range each message's
	// delay is drawn from (with the kernel's seeded randomness).
	Latency *sim.Range
}

// NewWorld returns a world whose network delivers every message after a
// fixed latency and whose kernel keeps its trace.
func NewWorld(t testing.TB, latency time.Duration, opts ...Options) *World {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	lat := sim.Fixed(latency)
	if o.Latency != nil {
		lat = *o.Latency
	}
	k := sim.New(sim.Config{Seed: o.Seed, KeepTrace: true, Network: sim.NetConfig{Latency: lat}})
	return &World{T: t, K: k, ids: map[string]sim.ProcID{}}
}

// Add registers a process under name with the given clock.
func (w *World) Add(name string, factory func() sim.Process, clock sim.ClockSpec) sim.ProcID {
	id := w.K.Add(name, factory, clock)
	w.ids[name] = id
	w.names = append(w.names, name)
	return id
}

// AddProcess registers one process value (a probe, a fake) under name: the
// kernel's factory hands back the same value on a restart, so the test keeps
// its pointer.
func (w *World) AddProcess(name string, p sim.Process, clock sim.ClockSpec) sim.ProcID {
	return w.Add(name, func() sim.Process { return p }, clock)
}

// ID returns the id of the process called name; an unknown name fails the
// test with the names known.
func (w *World) ID(name string) sim.ProcID {
	w.T.Helper()
	if id, ok := w.ids[name]; ok {
		return id
	}
	if id, ok := w.K.Lookup(name); ok {
		return id
	}
	w.T.Fatalf("simtest: unknown process %q (known: %s)", name, strings.Join(w.Names(), ", "))
	return 0
}

// Has reports whether a process called name was added.
func (w *World) Has(name string) bool {
	_, ok := w.K.Lookup(name)
	return ok
}

// Names returns the names of the processes added, in the order added.
func (w *World) Names() []string { return append([]string(nil), w.names...) }

// Process returns the current instance of the process called name (a
// restart makes a new one), or nil.
func (w *World) Process(name string) sim.Process { return w.K.Process(w.ID(name)) }

// Start runs the kernel at time 0, so that every process has been
// initialised (and a probe has its Env) before the test sends anything.
func (w *World) Start() { w.RunTo(0) }

// RunTo runs the kernel until true time t; an error (a budget) fails the test.
func (w *World) RunTo(t sim.Time) {
	w.T.Helper()
	if err := w.K.Run(t); err != nil {
		w.T.Fatalf("simtest: kernel run to %s: %v", t, err)
	}
}

// Advance runs the kernel for d of true time.
func (w *World) Advance(d time.Duration) { w.T.Helper(); w.RunTo(w.K.Now().Add(d)) }

// RunUntil runs the kernel in steps of Step until cond holds or limit of
// true time has passed, and reports whether cond held.
func (w *World) RunUntil(limit time.Duration, cond func() bool) bool {
	w.T.Helper()
	end := w.K.Now().Add(limit)
	for !cond() {
		if w.K.Now() >= end {
			return false
		}
		w.RunTo(w.K.Now().Add(Step))
	}
	return true
}

// At schedules f at true time d (between process steps).
func (w *World) At(d time.Duration, f func()) { w.K.At(sim.At(d), f) }

// On runs f, at the same instant and between process steps, the first time
// an event of kind happens at process proc.
func (w *World) On(kind sim.Kind, proc string, f func()) {
	id := w.ID(proc)
	done := false
	w.K.Observe(func(e sim.ObservedEvent) {
		if !done && e.Kind == kind && e.Proc == id {
			done = true
			w.K.At(e.At, f)
		}
	})
}

// Events returns the trace events of kind emitted by proc ("" for any).
func (w *World) Events(kind sim.Kind, proc string) []sim.Event {
	var out []sim.Event
	for _, e := range w.K.Trace() {
		if e.Kind == kind && (proc == "" || e.Proc == proc) {
			out = append(out, e)
		}
	}
	return out
}

// Texts returns the texts of Events(kind, proc).
func (w *World) Texts(kind sim.Kind, proc string) []string {
	var out []string
	for _, e := range w.Events(kind, proc) {
		out = append(out, e.Text)
	}
	return out
}

// TraceHas reports whether an event of kind at proc contains text.
func (w *World) TraceHas(kind sim.Kind, proc, text string) bool {
	for _, e := range w.Events(kind, proc) {
		if strings.Contains(e.Text, text) {
			return true
		}
	}
	return false
}

// Mark returns the position in the trace now, for Since.
func (w *World) Mark() int { return len(w.K.Trace()) }

// Since returns the events recorded after mark whose kind is in kinds (all
// kinds when none is given), rendered one a line as
// "TIME PROC KIND[ >PEER] TEXT". The order is the trace's, so the text is
// deterministic.
func (w *World) Since(mark int, kinds ...sim.Kind) string {
	want := map[sim.Kind]bool{}
	for _, k := range kinds {
		want[k] = true
	}
	var b strings.Builder
	tr := w.K.Trace()
	if mark > len(tr) {
		mark = len(tr)
	}
	for _, e := range tr[mark:] {
		if len(want) > 0 && !want[e.Kind] {
			continue
		}
		b.WriteString(FormatEvent(e))
		b.WriteByte('\n')
	}
	return b.String()
}

// FormatEvent renders one trace event as Since does (a kernel event such as
// a partition has no process).
func FormatEvent(e sim.Event) string {
	s := e.At.String()
	if e.Proc != "" {
		s += " " + e.Proc
	}
	s += " " + string(e.Kind)
	if e.Peer != "" {
		s += " >" + e.Peer
	}
	if e.Text != "" {
		s += " " + e.Text
	}
	return s
}

// SortedKeys returns m's keys in order, for output that must not depend on
// map iteration.
func SortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
