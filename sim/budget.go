package sim

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
)

// Budgets. Every run is bounded twice: by the number of events it may
// execute (Config.MaxEvents) and by the memory the process may hold
// (Config.MaxMemory). Both stop Run with an error that names the budget,
// what consumed it and how to raise it, so that a runaway scenario ends
// with a message instead of a hang or the Go runtime's out-of-memory crash.

// memCheckMask sets how often Run samples the heap: once every
// memCheckMask+1 events. Reading runtime/metrics costs about a microsecond;
// every 4,096 events it is noise (the kernel runs ~10 M events/s).
const memCheckMask = 1<<12 - 1

// heapSample reads the bytes of live and not-yet-swept heap objects, the
// figure the garbage collector's limit is about. It is the process's
// heap, not the kernel's alone: runs in parallel (fuzz workers) share it.
var heapMetric = [1]metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

func heapInUse() int64 {
	s := heapMetric // a copy: Run may be called from several goroutines
	metrics.Read(s[:])
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// liveHeapOver returns the heap in use when it exceeds budget once the
// garbage is collected, else 0. The heap figure counts objects not yet
// swept: what an earlier run (or an earlier part of this one) left behind
// would otherwise count against this run (issue 33 item 2: after one run's
// memory-budget stop, the next runs in the process stopped "after 0
// events"). A collection runs only when the figure is over the budget, and
// the runtime's soft limit (simrun sets it to the budget) makes that rare
// unless the live heap is really over it.
//
// NB: the budget bounds the process's heap, which runs in parallel in one
// process (fuzz, sweep and matrix workers) share: a run may be stopped for
// what a run beside it holds, never for what an earlier run held.
func liveHeapOver(budget int64) int64 {
	if heapInUse() <= budget {
		return 0
	}
	runtime.GC()
	if used := heapInUse(); used > budget {
		return used
	}
	return 0
}

// SetWork replaces the work budget (Config.MaxWork; 0: DefaultMaxWork,
// negative: none).
func (k *Kernel) SetWork(maxWork int64) {
	if maxWork == 0 {
		maxWork = DefaultMaxWork
	}
	k.cfg.MaxWork = maxWork
}

// SetBudgets replaces the event budget (per Run; 0 keeps the current one)
// and the memory budget (bytes; 0 turns it off) set by Config.
func (k *Kernel) SetBudgets(maxEvents, maxMemory int64) {
	if maxEvents > 0 {
		k.cfg.MaxEvents = maxEvents
	}
	k.cfg.MaxMemory = maxMemory
}

// SetStop makes Run ask stop, once every few thousand events (with the
// memory budget's check), whether to stop: a non-nil error ends Run with
// an *ErrStopped wrapping it (a cancelled context's Err, for a caller
// that gives up). Stopping only ends a run early, at an event boundary;
// it never changes an event, so a run that is not stopped is the run
// without a stop, event for event. Nil removes it.
func (k *Kernel) SetStop(stop func() error) { k.stop = stop }

// ErrStopped is returned by Run when the stop function (SetStop) said to
// stop. It unwraps to that function's error.
type ErrStopped struct {
	Err    error
	At     Time  // true time reached
	Events int64 // events executed so far
}

func (e *ErrStopped) Error() string {
	return fmt.Sprintf("run stopped at true time %s after %d events: %v", e.At, e.Events, e.Err)
}

func (e *ErrStopped) Unwrap() error { return e.Err }

// ErrMemory is returned by Run when the process's heap exceeds the memory
// budget (Config.MaxMemory).
type ErrMemory struct {
	Budget int64 // bytes
	InUse  int64 // bytes of heap objects when the budget was found exceeded
	At     Time  // true time reached
	Events int64 // events executed so far
	// Kept is the number of trace events kept in memory (Config.KeepTrace),
	// History the number of history records: the two consumers a run
	// controls.
	Kept, History int
	// Streamed is true when the history was handed to a sink in pieces
	// (Kernel.SetHistorySink): History then counts the piece in progress
	// (which grows without bound when no quiet point comes) and SinkHeld
	// the records the sink keeps.
	Streamed bool
	SinkHeld int
}

func (e *ErrMemory) Error() string {
	var consumer string
	switch {
	case e.Kept > 0:
		consumer = fmt.Sprintf("%d trace events kept in memory and %d history records", e.Kept, e.History)
	default:
		consumer = fmt.Sprintf("%d history records (the trace is not kept)", e.History)
	}
	if e.Streamed {
		consumer += fmt.Sprintf("; the history goes to the checker in pieces cut at quiet points (no lock held, wanted or in use) "+
			"or at the instant a lock is granted while no acquire attempt is in flight, "+
			"and no quiet point came for these %d records (some client always had an attempt in flight, or a lock was always held or awaited); the checker keeps %d more", e.History, e.SinkHeld)
	}
	return fmt.Sprintf("memory budget of %s exceeded: %s of heap in use at true time %s after %d events; held: %s. "+
		"Shorten the scenario's duration, or raise the budget with --max-memory (0 turns it off)",
		FormatBytes(e.Budget), FormatBytes(e.InUse), e.At, e.Events, consumer)
}

// FormatBytes renders a byte count with a binary unit (1.5 GiB).
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// ParseBytes reads a byte count: a number with an optional unit B, KiB,
// MiB, GiB, TiB (or KB, MB, GB, TB, also read as binary units, and
// decimal fractions such as 1.5GiB).
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size (write e.g. 512MiB or 4GiB)", s)
	}
	mult := map[string]float64{"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
		"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("%q: unknown unit %q (use B, KiB, MiB, GiB or TiB)", s, strings.TrimSpace(t[i:]))
	}
	n := v * mult
	if n >= 1<<62 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	if n > 0 && n < 1<<20 {
		return 0, fmt.Errorf("%q is below 1MiB: no run fits in it", s)
	}
	return int64(n), nil
}

// ErrWork is returned by Run when the work budget of the call
// (Config.MaxWork, bytes of event content) is exhausted.
type ErrWork struct {
	Budget int64
	At     Time
	Events int64 // events this call executed
	// Pending names what waited in the queue (see ErrBudget.Pending).
	Pending string
}

func (e *ErrWork) Error() string {
	per := int64(0)
	if e.Events > 0 {
		per = e.Budget / e.Events
	}
	s := fmt.Sprintf("work budget of %s of event content exhausted at true time %s after %d events (about %s an event: some process sends or stores large values very often)",
		FormatBytes(e.Budget), e.At, e.Events, FormatBytes(per))
	if e.Pending != "" {
		s += "; queued then: " + e.Pending
	}
	return s + ". Make the values smaller or rarer, or raise the budget with --max-work"
}

// ErrBudget is returned by Run when the event budget of the call
// (Config.MaxEvents) is exhausted.
type ErrBudget struct {
	Budget int64
	At     Time
	// Pending names what waited in the queue when the budget ran out, the
	// busiest first ("c1: 40 timers"): a process that loops shows up here.
	Pending string
}

func (e *ErrBudget) Error() string {
	s := fmt.Sprintf("event budget of %d events exhausted at true time %s", e.Budget, e.At)
	if e.Pending != "" {
		s += "; queued then: " + e.Pending
	}
	return s + ". A process is probably looping; if the scenario really needs more, raise the budget with --max-events"
}

// pendingSummary counts the queued events by process and kind, busiest
// first (ties by name), at most four entries. It runs only when a budget
// stops a run.
func (k *Kernel) pendingSummary() string {
	type key struct {
		proc ProcID
		kind eventKind
	}
	counts := map[key]int{}
	k.eachQueued(func(e *event) {
		if k.timerStale(e) {
			return // a cancelled timer's event, skipped when it pops
		}
		p := NoProc
		switch e.kind() {
		case evDeliver:
			p = k.msgs[e.idx()].to
		case evTimer:
			p = k.timers[e.idx()].proc
		case evInbox:
			p = ProcID(e.idx())
		case evRetx:
			// idx is a link; its sender retransmits.
			_, p, _ = k.net.linkAt(int(e.idx()))
		}
		counts[key{p, e.kind()}]++
	})
	keys := make([]key, 0, len(counts))
	for c := range counts {
		keys = append(keys, c)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if counts[a] != counts[b] {
			return counts[a] > counts[b]
		}
		if na, nb := k.Name(a.proc), k.Name(b.proc); na != nb {
			return na < nb
		}
		return a.kind < b.kind
	})
	what := [...]string{evDeliver: "messages", evTimer: "timers", evCall: "scheduled faults", evInbox: "inbox replays", evRetx: "retransmissions"}
	var parts []string
	for i, c := range keys {
		if i == 4 {
			parts = append(parts, fmt.Sprintf("and %d more", len(keys)-4))
			break
		}
		name := k.Name(c.proc)
		if name == "" {
			name = "kernel"
		}
		parts = append(parts, fmt.Sprintf("%s: %d %s", name, counts[c], what[c.kind]))
	}
	return strings.Join(parts, ", ")
}

// SetTraceSink sets Config.TraceSink on a built kernel (before Run).
func (k *Kernel) SetTraceSink(f func(*Event)) { k.tr.sink = f }

// SetTraceFilter sets Config.TraceFilter on a built kernel (before Run).
func (k *Kernel) SetTraceFilter(f func(Kind) bool) {
	k.tr.filter = f
	k.tr.kinds = [len(k.tr.kinds)]uint8{}
}

// SetTraceBorrow sets Config.TraceBorrow on a built kernel (before Run).
func (k *Kernel) SetTraceBorrow(borrow bool) { k.tr.borrow = borrow }
