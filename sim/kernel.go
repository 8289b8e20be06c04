package sim

import (
	"fmt"
	"time"
)

// ProcID identifies a process within a Kernel (its registration index).
type ProcID int32

// NoProc is the ProcID of "no process".
const NoProc ProcID = -1

// Message is a value sent between processes. It must be an immutable value
// without pointers (so its trace rendering is deterministic); implement
// Tracer to render it without reflection. The one exception is a pooled
// message (Recycler): a pointer the sender took from a pool, which the
// kernel hands back to its pool once the message is done with.
type Message = any

// Recycler is implemented by pooled messages: pointers to request and reply
// structs that a sender takes from a pool instead of boxing a struct value
// into a Message, which allocates on every send (issue 15: two of those per
// Redis command were a third of a Redlock cycle's allocations). For a
// message sent with Env.SendPooled, the kernel calls Recycle exactly once,
// after the destination's Receive returns, or when the message is lost
// (dropped, or its destination crashed or restarted). The sender says so
// (SendPooled) rather than the kernel asking every message: that type
// assertion cost 2.5% of a Redlock cycle. The rules that make this safe:
//   - a sender sends a pooled message once, and does not touch it after
//     Send (the kernel renders it into the trace during Send);
//   - a receiver does not keep the pointer (nor a pointer into it) after
//     Receive returns: it copies out the fields it needs. Race builds
//     poison recycled messages instead of reusing them, so a test that
//     keeps one sees garbage (see nodes/redis/resp).
type Recycler interface {
	Recycle()
}

// Process is a simulated program: a deterministic state machine driven by
// the kernel. The kernel calls Init when the process starts and again on a
// fresh instance after each restart; Receive for each delivered message; Fire
// for each timer. A process acts only through its Env and must return
// promptly: it never blocks, sleeps or starts goroutines.
type Process interface {
	Init(env *Env)
	Receive(env *Env, from ProcID, msg Message)
	Fire(env *Env, tag any)
}

// Shutdowner is implemented by processes that do something on a clean
// shutdown (Redis flushes its AOF and saves its RDB).
type Shutdowner interface {
	Shutdown(env *Env)
}

// Config configures a Kernel.
type Config struct {
	// Seed is the run's one seed: every random draw derives from it.
	Seed uint64
	// Network is the default behaviour of every link.
	Network NetConfig
	// MaxEvents bounds the number of events one Run may execute; a runaway
	// model stops with ErrBudget instead of hanging. 0 means DefaultMaxEvents.
	MaxEvents int64
	// MaxMemory bounds the process's heap in bytes while Run executes
	// (sampled every few thousand events); a run that outgrows it stops
	// with *ErrMemory. 0 means no bound.
	MaxMemory int64
	// MaxWork bounds the work one Run may do, measured as the bytes of
	// event content the run records (every message, command, value and
	// note its trace hash reads); a run that exceeds it stops with
	// *ErrWork. 0 means DefaultMaxWork; negative, no bound.
	MaxWork int64
	// KeepTrace keeps every event in memory (for JSONL export and
	// divergence reports). The trace hash is computed either way.
	KeepTrace bool
	// TraceSink, when set, receives every event as it is recorded, in
	// order (to stream the trace to a file on a long run, or keep only the
	// events a summary needs). The event is the sink's to keep.
	TraceSink func(*Event)
	// TraceFilter, when set, chooses the events TraceSink receives by
	// kind: the others are hashed but never built as Events (a summary's
	// few key kinds cost a map lookup per event, not a copy of each).
	TraceFilter func(Kind) bool
	// TraceBorrow lends TraceSink its events instead of giving them: the
	// Event, its Text and its Fields are valid only during the call and
	// are reused by the next event (Event.Clone keeps one). A sink that
	// keeps few of the events it sees (a summary) then costs no copy and
	// no allocation per event. Ignored when the trace is kept.
	TraceBorrow bool
}

// DefaultMaxEvents is the event budget when Config.MaxEvents is 0.
const DefaultMaxEvents = 50_000_000

// DefaultMaxWork is the work budget when Config.MaxWork is 0: 16 GiB of
// event content. The event budget alone let a run whose events carry a
// megabyte each (a filler of 1 MiB values every nanosecond) run for hours:
// copying and hashing a value costs time in proportion to its size, and
// the event count does not see it (issue 33 item 7). The bytes of event
// content are a deterministic measure of that work, so that a verdict
// never depends on the machine's load, unlike a wall-clock limit. 16 GiB
// is about 10 to 20 seconds of hashing on one unloaded core; the 50
// million events of the event budget at a typical 50 to 150 bytes each
// stay well inside it.
const DefaultMaxWork int64 = 16 << 30

// ClockSpec is the initial state of a process's clocks.
type ClockSpec struct {
	// Offset of the wall clock from true time.
	Offset time.Duration
	// DriftPPB is the rate error of both clocks in parts per billion
	// (see RateFromDrift).
	DriftPPB int64
}

type procState uint8

const (
	stNew procState = iota
	stRunning
	stPaused
	stCrashed
)

type pendingItem struct {
	kind eventKind // evDeliver or evTimer
	idx  int32
	gen  uint32
}

type proc struct {
	// lastWrite is when the process, a server, last accepted a write as
	// a master (Env.WroteAsMaster; promotion.go); 0 when never.
	lastWrite Time
	// demoted: its last role change (RoleChanged) was a demotion, and it
	// accepted no write as a master since.
	demoted bool
	id      ProcID
	name    string
	factory func() Process
	p       Process
	env     Env
	state   procState
	inc     uint32 // incarnation: bumped by every crash and every restart
	// powerFloor is the first incarnation whose sent data survives: data of
	// earlier incarnations died in a power loss of the host.
	powerFloor uint32
	clock      ClockState
	timers     int // number of active timer slots of this process
	// inbox holds the messages and due timers that wait for the process,
	// in the order they became due: filled while it is paused, and also
	// while it replays the inbox after a resume, so that nothing that
	// arrives later overtakes what waited (links stay FIFO).
	inbox   []pendingItem
	inboxAt int // next inbox item to replay after a resume
	// replayQueued is true while an evInbox event of this incarnation is
	// in the queue (so that a pause and resume at one instant never start
	// a second replay chain).
	replayQueued bool
	pauseV       uint32
	pauseUntil   Time // end of the current pause
	rand         Rand
	netRand      Rand
	hostDown     bool // crashed by a power loss: its host answers nothing
	disk         Disk
	open         openRecords
	// witness is what the process said it held when it last crashed
	// (CrashWitness), for its next incarnation's history records.
	witness *crashWitness
}

// waiting reports whether an arriving message or due timer must wait in
// the inbox: the process is paused, or it has not yet replayed what
// waited during its last pause.
func (p *proc) waiting() bool { return p.state == stPaused || p.inboxAt < len(p.inbox) }

type timerSlot struct {
	proc     ProcID
	clock    Clock
	deadline int64
	tag      any
	due      Time   // true time of the queued event (when not in the inbox)
	gen      uint32 // identity: bumped when the slot is freed, never 0
	sched    uint32 // version of the queued event; bumped on re-plan
	active   bool
	inInbox  bool  // became due while the process was waiting; in its inbox
	wnode    int32 // 1 + its wheel node while its queued event waits there (wheel.go), else 0
}

type msgSlot struct {
	from, to ProcID
	msg      Message
	rec      Recycler // msg, when sent pooled (SendPooled)
	id       uint64
	sentAt   Time   // first transmission (retransmission timing)
	epoch    uint32 // the connection's epoch (conn.go)
	dstInc   uint32 // incarnations of the ends the connection is bound to
	srcInc   uint32
	kind     uint8   // slotData, slotNotice or slotLocal
	why      ConnEnd // of a notice
	ch       uint8   // which of the pair's connections (Env.SendOn)
}

// Kernel is the discrete-event simulator: single-threaded, in virtual time.
type Kernel struct {
	cfg Config
	// stop, when set, is asked every memCheckMask+1 events whether to
	// stop the run (SetStop).
	stop     func() error
	now      Time
	seq      uint64
	q        queue
	wheel    wheel // timer events not due within a slot (wheel.go)
	procs    []*proc
	byName   map[string]ProcID
	timers   []timerSlot
	freeTm   []int32
	msgs     []msgSlot
	freeMsg  []int32
	calls    []func()
	freeCall []int32
	msgID    uint64
	net      network
	// hostsDown counts the processes crashed by a power loss (their hosts
	// answer nothing), so the send path can skip the check when it is 0.
	hostsDown int
	tr        *tracer
	hist      History
	hs        histStream // the history handed over in pieces (stream.go)
	events    int64
	// staleTimers counts (from above) the queued events of timers that were
	// cancelled or re-planned: they stay in the heap until compactTimers
	// drops them (see cancelTimer).
	staleTimers int
	started     bool
	finished    bool
	drv         Driver // outside work (driver.go), nil when none
}

// New returns a kernel for one run.
func New(cfg Config) *Kernel {
	if cfg.MaxWork == 0 {
		cfg.MaxWork = DefaultMaxWork
	}
	if cfg.MaxEvents == 0 {
		cfg.MaxEvents = DefaultMaxEvents
	}
	k := &Kernel{cfg: cfg, byName: map[string]ProcID{}, tr: newTracer(cfg.KeepTrace)}
	k.tr.sink = cfg.TraceSink
	k.tr.filter = cfg.TraceFilter
	k.tr.borrow = cfg.TraceBorrow
	k.net.init(k, cfg.Network)
	return k
}

// Seed returns the run's seed.
func (k *Kernel) Seed() uint64 { return k.cfg.Seed }

// Add registers a process. factory makes a fresh instance at start and at
// every restart. Processes start (Init) at true time 0, in registration
// order; the start is scheduled when Add is called, so a fault scheduled
// with At for time 0 after Add finds the process running. Names must be
// unique and clock.DriftPPB in range; Add panics otherwise (programming
// errors: scenarios validate names and drifts before they build a kernel).
func (k *Kernel) Add(name string, factory func() Process, clock ClockSpec) ProcID {
	if _, dup := k.byName[name]; dup {
		panic(fmt.Sprintf("sim: duplicate process name %q", name))
	}
	if k.started {
		panic("sim: Add after Run")
	}
	checkPPB(clock.DriftPPB)
	id := ProcID(len(k.procs))
	p := &proc{id: id, name: name, factory: factory}
	p.env = Env{k: k, p: p}
	p.disk = Disk{k: k}
	p.clock = NewClockState(clock.Offset, clock.DriftPPB)
	if clock != (ClockSpec{}) {
		k.hist.Clocks = append(k.hist.Clocks, ClockRecord{Proc: name, Offset: clock.Offset, DriftPPB: clock.DriftPPB})
	}
	p.rand.Reset(k.cfg.Seed, "proc/"+name)
	p.netRand.Reset(k.cfg.Seed, "net/"+name)
	k.procs = append(k.procs, p)
	k.byName[name] = id
	k.net.grow(len(k.procs))
	k.At(0, func() { k.startProc(p) })
	return id
}

// Lookup returns the ProcID of a named process.
func (k *Kernel) Lookup(name string) (ProcID, bool) {
	id, ok := k.byName[name]
	return id, ok
}

// Name returns a process's name ("" for NoProc).
func (k *Kernel) Name(id ProcID) string {
	if id < 0 || int(id) >= len(k.procs) {
		return ""
	}
	return k.procs[id].name
}

// NumProcs returns how many processes are registered.
func (k *Kernel) NumProcs() int { return len(k.procs) }

// ActiveTimers returns how many timers process id has pending (set and
// neither fired nor cancelled); 0 for an unknown id. Tests use it to show
// that a long run does not accumulate timers.
func (k *Kernel) ActiveTimers(id ProcID) int {
	if id < 0 || int(id) >= len(k.procs) {
		return 0
	}
	return k.procs[id].timers
}

// QueuedEvents returns how many events wait in the kernel's queue
// (deliveries, timers, scheduled calls, retransmissions), including the
// stale events of cancelled timers that have not yet been discarded.
func (k *Kernel) QueuedEvents() int { return k.queued() }

// Now returns the current true time.
func (k *Kernel) Now() Time { return k.now }

// Events returns how many events have been executed.
func (k *Kernel) Events() int64 { return k.events }

// Rand returns a fresh random stream for a named component (the fault
// generator, the scenario builder). Same seed and name, same draws.
func (k *Kernel) Rand(name string) *Rand { return NewRand(k.cfg.Seed, name) }

// Observe registers a function called after every trace event. Observers
// must not call into processes; they may schedule work with At.
func (k *Kernel) Observe(f func(ObservedEvent)) { k.tr.obs = append(k.tr.obs, f) }

// TraceEvents returns how many trace events have been recorded (the
// length of the trace, whether or not it is kept). Events counts kernel
// steps instead, which is the kernel's throughput measure.
func (k *Kernel) TraceEvents() uint64 { return k.tr.seq }

// TraceHash returns the trace hash (traceHash, 256 bits) of the canonical
// encoding of every event so far.
func (k *Kernel) TraceHash() [32]byte { return k.tr.sum() }

// Trace returns the kept events (nil unless Config.KeepTrace).
func (k *Kernel) Trace() []Event { return k.tr.events }

// Disk returns a process's disk (for tests and inspection).
func (k *Kernel) Disk(id ProcID) *Disk { return &k.procs[id].disk }

// Process returns the current instance of a process (nil while crashed).
func (k *Kernel) Process(id ProcID) Process { return k.procs[id].p }

// ReadClock returns a process's clock reading now.
func (k *Kernel) ReadClock(id ProcID, c Clock) int64 { return k.procs[id].clock.Read(c, k.now) }

// Paused reports whether a process is paused.
func (k *Kernel) Paused(id ProcID) bool { return k.procs[id].state == stPaused }

// Crashed reports whether a process is crashed.
func (k *Kernel) Crashed(id ProcID) bool { return k.procs[id].state == stCrashed }

func (k *Kernel) push(at Time, kind eventKind, idx int32, gen uint32) {
	k.seq++
	k.q.push(event{at: at, seq: k.seq, ik: uint32(idx)<<3 | uint32(kind), gen: gen})
}

// At schedules f to run at true time t (now if t is in the past). Callbacks
// run between process steps, in scheduling order at equal times. Fault
// schedules use it.
func (k *Kernel) At(t Time, f func()) {
	if t < k.now {
		t = k.now
	}
	var i int32
	if n := len(k.freeCall); n > 0 {
		i = k.freeCall[n-1]
		k.freeCall = k.freeCall[:n-1]
		k.calls[i] = f
	} else {
		i = int32(len(k.calls))
		k.calls = append(k.calls, f)
	}
	k.push(t, evCall, i, 0)
}

func (k *Kernel) startProc(p *proc) {
	if p.state != stNew {
		return
	}
	p.state = stRunning
	p.p = p.factory()
	k.traceV(codeStart, KindStart, p.id, NoProc, nil)
	p.p.Init(&p.env)
}

// Run executes events until true time until is reached (events at exactly
// until still run), the queue is empty, or the event budget of this call is
// exhausted (then it returns *ErrBudget and leaves the remaining events
// queued). Run may be called again with a later deadline to continue.
func (k *Kernel) Run(until Time) error {
	k.started = true
	budget := k.events + k.cfg.MaxEvents
	if budget < k.events { // MaxEvents near the int64 limit
		budget = 1<<63 - 1
	}
	start := k.events
	work := uint64(1<<64 - 1)
	if k.cfg.MaxWork > 0 {
		work = k.tr.h.n + uint64(k.cfg.MaxWork)
	}
	for {
		if k.drv != nil && k.advance(until) {
			if k.events >= budget {
				return &ErrBudget{Budget: k.cfg.MaxEvents, At: k.now, Pending: k.pendingSummary()}
			}
			continue
		}
		if next := k.next(); next == nil || next.at > until {
			break
		}
		if k.events >= budget {
			return &ErrBudget{Budget: k.cfg.MaxEvents, At: k.now, Pending: k.pendingSummary()}
		}
		if k.tr.h.n >= work {
			return &ErrWork{Budget: k.cfg.MaxWork, At: k.now, Events: k.events - start, Pending: k.pendingSummary()}
		}
		if k.events&memCheckMask == 0 {
			if k.cfg.MaxMemory > 0 {
				if used := liveHeapOver(k.cfg.MaxMemory); used > 0 {
					return &ErrMemory{Budget: k.cfg.MaxMemory, InUse: used, At: k.now, Events: k.events,
						Kept: len(k.tr.events), History: k.hist.Len(), Streamed: k.hs.sink != nil, SinkHeld: k.heldBySink()}
				}
			}
			if k.stop != nil {
				if err := k.stop(); err != nil {
					return &ErrStopped{Err: err, At: k.now, Events: k.events}
				}
			}
		}
		e := k.q.pop()
		k.now = e.at
		k.events++
		idx := e.idx()
		switch e.kind() {
		case evDeliver:
			k.deliver(idx)
		case evTimer:
			k.fireTimer(idx, e.gen)
		case evCall:
			f := k.calls[idx]
			k.calls[idx] = nil
			k.freeCall = append(k.freeCall, idx)
			f()
		case evInbox:
			k.replayInbox(k.procs[idx], e.gen)
		case evRetx:
			k.retransmit(idx, e.gen)
		}
	}
	if until != Never && k.now < until {
		k.now = until
	}
	return nil
}

// trace records an event whose detail is v rendered.
func (k *Kernel) trace(kind Kind, proc, peer ProcID, v any) {
	k.traceV(kindCode(kind), kind, proc, peer, v)
}

// traceV records an event of a kind whose code is known.
func (k *Kernel) traceV(code byte, kind Kind, proc, peer ProcID, v any) {
	b := k.tr.begin(k.now, code, kind, proc, peer, 0)
	b = appendValue(b, v)
	k.tr.end(b, k.now, kind, proc, peer, 0, k)
}

// traceText records an event with a plain text.
func (k *Kernel) traceText(kind Kind, proc, peer ProcID, text string) {
	b := k.tr.begin(k.now, kindCode(kind), kind, proc, peer, 0)
	b = append(b, text...)
	k.tr.end(b, k.now, kind, proc, peer, 0, k)
}

// traceAttrs records an event with a plain text and typed fields.
func (k *Kernel) traceAttrs(kind Kind, proc, peer ProcID, text string, attrs ...Attr) {
	b := k.tr.begin(k.now, kindCode(kind), kind, proc, peer, 0)
	b = append(b, text...)
	k.tr.end(b, k.now, kind, proc, peer, 0, k, attrs...)
}

// tracefAttrs is Tracef with typed fields (the kernel's own fault events:
// not on the hot path).
func (k *Kernel) tracefAttrs(kind Kind, proc ProcID, attrs []Attr, format string, args ...any) {
	b := k.tr.begin(k.now, kindCode(kind), kind, proc, NoProc, 0)
	b = fmt.Appendf(b, format, args...)
	k.tr.end(b, k.now, kind, proc, NoProc, 0, k, attrs...)
}

// TracefAttrs is Tracef with typed fields: real mode records there what
// it reads from real servers (a Redis Cluster node's failure detection and
// elections from its log).
func (k *Kernel) TracefAttrs(kind Kind, proc ProcID, attrs []Attr, format string, args ...any) {
	k.tracefAttrs(kind, proc, attrs, format, args...)
}

// Tracef records a kernel-level event with formatted detail (fault
// schedules and scenario code use it; processes use Env.Log).
func (k *Kernel) Tracef(kind Kind, proc ProcID, format string, args ...any) {
	b := k.tr.begin(k.now, kindCode(kind), kind, proc, NoProc, 0)
	b = fmt.Appendf(b, format, args...)
	k.tr.end(b, k.now, kind, proc, NoProc, 0, k)
}

// ---- timers ----

func (k *Kernel) setTimer(p *proc, c Clock, deadline int64, tag any) TimerID {
	var i int32
	if n := len(k.freeTm); n > 0 {
		i = k.freeTm[n-1]
		k.freeTm = k.freeTm[:n-1]
	} else {
		i = int32(len(k.timers))
		// gen starts at 1 so that the zero TimerID names no timer.
		k.timers = append(k.timers, timerSlot{gen: 1})
	}
	t := &k.timers[i]
	t.proc, t.clock, t.deadline, t.tag, t.active, t.inInbox = p.id, c, deadline, tag, true, false
	p.timers++
	k.queueTimer(p, i, t, false)
	return TimerID{idx: i, gen: t.gen}
}

// queueTimer queues the event of timer slot i at the true time its clock
// will reach its deadline, superseding any event queued before.
func (k *Kernel) queueTimer(p *proc, i int32, t *timerSlot, requeue bool) {
	if requeue {
		k.staled(t) // the event queued before is superseded
	}
	t.sched++
	t.due = p.clock.When(t.clock, t.deadline, k.now)
	k.seq++
	e := event{at: t.due, seq: k.seq, ik: uint32(i)<<3 | uint32(evTimer), gen: t.sched}
	if t.wnode = k.wheel.put(e, k.now); t.wnode == 0 {
		k.q.push(e)
	}
}

// staled drops the queued event of timer t, which was cancelled or
// superseded: from the wheel at once, and in the heap by counting it among
// the stale events that pop as nothing or that compaction drops.
func (k *Kernel) staled(t *timerSlot) {
	if t.wnode != 0 {
		k.wheel.remove(t.wnode)
		t.wnode = 0
		return
	}
	k.staleTimers++
}

func (k *Kernel) freeTimer(i int32) {
	t := &k.timers[i]
	k.procs[t.proc].timers--
	t.active = false
	t.inInbox = false
	t.tag = nil
	t.gen++
	if t.gen == 0 {
		t.gen = 1
	}
	t.sched++
	k.freeTm = append(k.freeTm, i)
}

func (k *Kernel) cancelTimer(id TimerID) bool {
	if id.gen == 0 || id.idx < 0 || int(id.idx) >= len(k.timers) {
		return false
	}
	t := &k.timers[id.idx]
	if !t.active || t.gen != id.gen {
		return false
	}
	if !t.inInbox {
		k.staled(t)
	}
	k.freeTimer(id.idx)
	// A cancelled timer's event stays in the heap until its due time and is
	// then skipped (fireTimer). A client cancels almost every request
	// timeout it sets (the reply came first), so with a 5 s resource
	// timeout a fast Redlock client kept ~4,400 dead events queued (issue
	// 15's "4,374 pending timers in client c1"): the heap grew with rate x
	// timeout and every push and pop paid for its depth. Drop them once
	// they are at least half of the queue (amortised O(1) per cancel).
	if k.staleTimers >= compactMin && 2*k.staleTimers >= k.q.len() {
		k.compactTimers()
	}
	return true
}

// compactMin is the least number of stale timer events worth a compaction.
const compactMin = 256

// timerStale reports whether queued event e is a timer event that will be
// skipped when it pops (cancelled, or superseded by a re-plan).
func (k *Kernel) timerStale(e *event) bool {
	if e.kind() != evTimer {
		return false
	}
	t := &k.timers[e.idx()]
	return !t.active || t.sched != e.gen // fireTimer's test
}

// compactTimers drops the stale timer events from the queue. The order of
// the remaining events is unchanged (it depends only on their keys), so
// traces do not change.
func (k *Kernel) compactTimers() {
	k.q.removeIf(k.timerStale)
	k.staleTimers = 0
}

// replan re-queues the pending timers of p after its clock changed (only
// the wall-clock timers when wallOnly). A timer whose firing time does not
// change keeps its queued event, and with it its place among events of
// equal time. A timer waiting in the inbox is re-checked when it is
// replayed. NB: processes keep no list of their timers (that bookkeeping
// cost 5% of the hot loop); clock faults and crashes, which are rare, scan
// the timer slots instead, in slot order.
func (k *Kernel) replan(p *proc, wallOnly bool) {
	if p.timers == 0 {
		return
	}
	for i := range k.timers {
		t := &k.timers[i]
		if !t.active || t.proc != p.id || t.inInbox || (wallOnly && t.clock != Wall) {
			continue
		}
		if due := p.clock.When(t.clock, t.deadline, k.now); due != t.due {
			k.queueTimer(p, int32(i), t, true)
		}
	}
}

func (k *Kernel) fireTimer(i int32, sched uint32) {
	t := &k.timers[i]
	if !t.active || t.sched != sched {
		if k.staleTimers > 0 {
			k.staleTimers--
		}
		return // cancelled or re-planned
	}
	p := k.procs[t.proc]
	if p.waiting() {
		t.inInbox = true
		p.inbox = append(p.inbox, pendingItem{kind: evTimer, idx: i, gen: t.gen})
		return
	}
	k.runTimer(p, i, t)
}

// runTimer fires timer slot i of the running process p, unless its clock
// has not reached the deadline (a backward jump while the timer waited in
// the inbox): then it is queued again.
func (k *Kernel) runTimer(p *proc, i int32, t *timerSlot) {
	if p.clock.Read(t.clock, k.now) < t.deadline {
		k.queueTimer(p, i, t, false) // its event was popped
		return
	}
	tag := t.tag
	k.freeTimer(i)
	k.traceV(codeTimer, KindTimer, p.id, NoProc, tag)
	p.p.Fire(&p.env, tag)
}

// ---- lifecycle ----

// Pause stops a process for d: nothing of it runs, its clocks keep running,
// messages and timers wait and are handled in order when it resumes. Pausing
// a paused process extends the pause if the new end is later (and does
// nothing otherwise).
func (k *Kernel) Pause(id ProcID, d time.Duration) {
	p := k.procs[id]
	if p.state == stCrashed || p.state == stNew {
		k.tracefAttrs(KindPause, id, []Attr{Str("ignored", "not running")}, "ignored: process is not running")
		return
	}
	if d < 0 {
		d = 0
	}
	end := addSat(k.now, d)
	if p.state == stPaused && end <= p.pauseUntil {
		k.tracefAttrs(KindPause, id, []Attr{Dur("for", d), Str("ignored", "already paused"), Int64("until", int64(p.pauseUntil))}, "for %v: ignored, already paused until %s", d, p.pauseUntil)
		return
	}
	p.state = stPaused
	p.pauseV++
	p.pauseUntil = end
	v := p.pauseV
	k.tracefAttrs(KindPause, id, []Attr{Dur("for", d)}, "for %v", d)
	k.At(end, func() {
		if p.state == stPaused && p.pauseV == v {
			k.resume(p)
		}
	})
}

func (k *Kernel) resume(p *proc) {
	p.state = stRunning
	k.trace(KindResume, p.id, NoProc, nil)
	k.queueReplay(p)
}

// queueReplay queues the replay of p's inbox unless it is empty or a replay
// is already queued.
func (k *Kernel) queueReplay(p *proc) {
	if p.inboxAt < len(p.inbox) && !p.replayQueued {
		p.replayQueued = true
		k.push(k.now, evInbox, int32(p.id), p.inc)
	}
}

// replayInbox handles the next item that waited during a pause, then queues
// the replay of the rest, one event per item, so that work scheduled at the
// same instant while an item was handled (a fault triggered by an event the
// item caused) acts before the next item. Items that become due meanwhile
// join the end of the inbox.
func (k *Kernel) replayInbox(p *proc, inc uint32) {
	if p.inc != inc {
		return // queued for an incarnation that crashed since
	}
	p.replayQueued = false
	if p.state != stRunning || p.inboxAt >= len(p.inbox) {
		return // paused again: the next resume queues the replay
	}
	it := p.inbox[p.inboxAt]
	p.inboxAt++
	if p.inboxAt == len(p.inbox) {
		p.inbox = p.inbox[:0]
		p.inboxAt = 0
	}
	switch it.kind {
	case evDeliver:
		k.handle(p, it.idx)
	case evTimer:
		if t := &k.timers[it.idx]; t.active && t.gen == it.gen { // else cancelled by an earlier item
			t.inInbox = false
			k.runTimer(p, it.idx, t)
		}
	}
	k.queueReplay(p)
}

// Crash kills a process: its memory and timers are gone, messages waiting
// for it are lost, and its disk keeps what the crash mode allows. Open
// history records of the process end (beliefs with reason "crashed").
// NB: a CrashClean of a paused process cannot run its Shutdown hook (a
// stopped process does not handle SIGTERM); its files are still synced.
func (k *Kernel) Crash(id ProcID, mode CrashMode) {
	p := k.procs[id]
	if p.state == stCrashed || p.state == stNew {
		k.tracefAttrs(KindCrash, id, []Attr{Str("ignored", "not running")}, "ignored: process is not running")
		return
	}
	if mode == CrashClean && p.state == stRunning {
		if s, ok := p.p.(Shutdowner); ok {
			s.Shutdown(&p.env)
		}
	}
	p.witness = nil
	if w, ok := p.p.(CrashWitness); ok {
		p.witness = &crashWitness{memo: w.WitnessCrash(), mode: mode}
	}
	p.state = stCrashed
	p.hostDown = mode == CrashPower
	if p.hostDown {
		k.hostsDown++
		// What this and earlier incarnations sent and is still waiting
		// for retransmission dies with the host (conn.go retransmit).
		p.powerFloor = p.inc + 1
	} else {
		k.finOnCrash(p)
	}
	p.inc++
	for i := 0; p.timers > 0 && i < len(k.timers); i++ {
		if t := &k.timers[i]; t.active && t.proc == p.id {
			if !t.inInbox {
				k.staled(t)
			}
			k.freeTimer(int32(i))
		}
	}
	for _, it := range p.inbox[p.inboxAt:] {
		if it.kind == evDeliver {
			k.dropMsg(it.idx, "crashed")
		}
	}
	p.inbox, p.inboxAt, p.replayQueued = p.inbox[:0], 0, false
	p.p = nil
	p.disk.crash(mode, k.now)
	k.tracefAttrs(KindCrash, id, []Attr{Str("mode", mode.String())}, "mode %s", mode)
	k.closeOpen(p, EndCrashed)
}

// Restart starts a fresh instance of a crashed process; it recovers from its
// disk in Init. It has no connections: what was sent to an earlier
// incarnation never reaches it (conn.go). Restarting a process that is not
// crashed does nothing.
func (k *Kernel) Restart(id ProcID) {
	p := k.procs[id]
	if p.state != stCrashed {
		k.tracefAttrs(KindRestart, id, []Attr{Str("ignored", "not crashed")}, "ignored: process is not crashed")
		return
	}
	p.state = stRunning
	if p.hostDown {
		k.hostsDown--
	}
	p.hostDown = false
	p.inc++
	p.p = p.factory()
	k.trace(KindRestart, id, NoProc, nil)
	p.p.Init(&p.env)
}

// ---- clocks ----

// JumpWall steps a process's wall clock by d (forward or backward); its
// monotonic clock is unaffected. Timers on the wall clock are re-planned: a
// deadline passes early after a forward jump, late after a backward one.
func (k *Kernel) JumpWall(id ProcID, d time.Duration) {
	p := k.procs[id]
	p.clock.Jump(d)
	sign := "+"
	if d < 0 {
		sign = "" // d.String() has the minus sign
	}
	k.tracefAttrs(KindClockJump, id, []Attr{Dur("step", d)}, "%s%v", sign, d)
	k.replan(p, true)
}

// SetDrift sets the rate error of both of a process's clocks from now on
// (ppb parts per billion, in (-1e9, 1e9]; see RateFromDrift). It panics on
// a rate out of range (a programming error: scenarios validate drifts).
func (k *Kernel) SetDrift(id ProcID, ppb int64) {
	checkPPB(ppb)
	p := k.procs[id]
	p.clock.SetRate(k.now, ppb)
	k.tracefAttrs(KindClockDrift, id, []Attr{Int64("ppb", ppb)}, "%d ppb", ppb)
	k.replan(p, false)
}

// ClockOffset returns how far a process's clock is from true time (for
// clocks plots): reading minus (Epoch + now) for the wall clock, reading
// minus now for the monotonic clock.
func (k *Kernel) ClockOffset(id ProcID, c Clock) time.Duration {
	r := k.procs[id].clock.Read(c, k.now)
	if c == Wall {
		return time.Duration(r - Epoch - int64(k.now))
	}
	return time.Duration(r - int64(k.now))
}
