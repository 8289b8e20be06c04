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
// Tracer to render it without reflection.
type Message = any

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
	// KeepTrace keeps every event in memory (for JSONL export and
	// divergence reports). The trace hash is computed either way.
	KeepTrace bool
}

// DefaultMaxEvents is the event budget when Config.MaxEvents is 0.
const DefaultMaxEvents = 50_000_000

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
	id      ProcID
	name    string
	factory func() Process
	p       Process
	env     Env
	state   procState
	inc     uint32 // incarnation: bumped by every crash
	clock   clockState
	timers  []int32 // active timer slots of this process
	inbox   []pendingItem
	inboxAt int // next inbox item to replay after a resume
	pauseV  uint32
	rand    Rand
	netRand Rand
	disk    Disk
	open    openRecords
}

type timerSlot struct {
	proc     ProcID
	clock    Clock
	deadline int64
	tag      any
	gen      uint32 // identity: bumped when the slot is freed
	sched    uint32 // version of the queued event; bumped on re-plan
	active   bool
	paused   bool // fired while the process was paused; waits in its inbox
	pos      int32
}

type msgSlot struct {
	from, to ProcID
	msg      Message
	id       uint64
	dstInc   uint32
}

// Kernel is the discrete-event simulator: single-threaded, in virtual time.
type Kernel struct {
	cfg      Config
	now      Time
	seq      uint64
	q        queue
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
	tr       *tracer
	hist     History
	events   int64
	started  bool
	finished bool
}

// New returns a kernel for one run.
func New(cfg Config) *Kernel {
	if cfg.MaxEvents == 0 {
		cfg.MaxEvents = DefaultMaxEvents
	}
	k := &Kernel{cfg: cfg, byName: map[string]ProcID{}, tr: newTracer(cfg.KeepTrace)}
	k.net.init(k, cfg.Network)
	return k
}

// Seed returns the run's seed.
func (k *Kernel) Seed() uint64 { return k.cfg.Seed }

// Add registers a process. factory makes a fresh instance at start and at
// every restart. Processes start (Init) at true time 0, in registration
// order. Names must be unique; Add panics otherwise (a programming error:
// scenarios validate names before they build a kernel).
func (k *Kernel) Add(name string, factory func() Process, clock ClockSpec) ProcID {
	if _, dup := k.byName[name]; dup {
		panic(fmt.Sprintf("sim: duplicate process name %q", name))
	}
	if k.started {
		panic("sim: Add after Run")
	}
	id := ProcID(len(k.procs))
	p := &proc{id: id, name: name, factory: factory}
	p.env = Env{k: k, p: p}
	p.disk = Disk{k: k}
	p.clock = clockState{wallBase: Epoch + int64(clock.Offset), ppb: clock.DriftPPB}
	p.rand.Reset(k.cfg.Seed, "proc/"+name)
	p.netRand.Reset(k.cfg.Seed, "net/"+name)
	k.procs = append(k.procs, p)
	k.byName[name] = id
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

// TraceHash returns the SHA-256 over the canonical encoding of every event so
// far.
func (k *Kernel) TraceHash() [32]byte { return k.tr.sum() }

// Trace returns the kept events (nil unless Config.KeepTrace).
func (k *Kernel) Trace() []Event { return k.tr.events }

// Disk returns a process's disk (for tests and inspection).
func (k *Kernel) Disk(id ProcID) *Disk { return &k.procs[id].disk }

// Process returns the current instance of a process (nil while crashed).
func (k *Kernel) Process(id ProcID) Process { return k.procs[id].p }

// ReadClock returns a process's clock reading now.
func (k *Kernel) ReadClock(id ProcID, c Clock) int64 { return k.procs[id].clock.read(c, k.now) }

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

// ErrBudget is returned by Run when the event budget is exhausted.
type ErrBudget struct {
	Budget int64
	At     Time
}

func (e *ErrBudget) Error() string {
	return fmt.Sprintf("sim: event budget of %d events exhausted at true time %s: a process is probably looping (raise the budget if the scenario really needs more)", e.Budget, e.At)
}

func (k *Kernel) start() {
	if k.started {
		return
	}
	k.started = true
	k.net.grow(len(k.procs))
	for _, p := range k.procs {
		pp := p
		k.At(0, func() { k.startProc(pp) })
	}
}

func (k *Kernel) startProc(p *proc) {
	if p.state != stNew {
		return
	}
	p.state = stRunning
	p.p = p.factory()
	k.trace(KindStart, p.id, NoProc, nil)
	p.p.Init(&p.env)
}

// Run executes events until true time until is reached (events at exactly
// until still run), the queue is empty, or the event budget is exhausted.
// Run may be called again with a later deadline to continue.
func (k *Kernel) Run(until Time) error {
	k.start()
	for k.q.len() > 0 {
		if k.q.peek().at > until {
			break
		}
		if k.events >= k.cfg.MaxEvents {
			return &ErrBudget{Budget: k.cfg.MaxEvents, At: k.now}
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
		}
	}
	if until != Never && k.now < until {
		k.now = until
	}
	return nil
}

// trace records an event whose detail is v rendered.
func (k *Kernel) trace(kind Kind, proc, peer ProcID, v any) {
	t := k.tr
	t.text = appendValue(t.text[:0], v)
	k.traceText(kind, proc, peer, t.text)
}

func (k *Kernel) traceText(kind Kind, proc, peer ProcID, text []byte) {
	k.traceMsg(kind, proc, peer, 0, text)
}

func (k *Kernel) traceMsg(kind Kind, proc, peer ProcID, msg uint64, text []byte) {
	var pn, qn string
	if k.tr.keep {
		pn, qn = k.Name(proc), k.Name(peer)
	}
	k.tr.record(k.now, kind, proc, peer, pn, qn, msg, text)
}

// Tracef records a kernel-level event with formatted detail (fault
// schedules and scenario code use it; processes use Env.Log).
func (k *Kernel) Tracef(kind Kind, proc ProcID, format string, args ...any) {
	k.tr.text = fmt.Appendf(k.tr.text[:0], format, args...)
	k.traceText(kind, proc, NoProc, k.tr.text)
}

// ---- timers ----

func (k *Kernel) setTimer(p *proc, c Clock, deadline int64, tag any) TimerID {
	var i int32
	if n := len(k.freeTm); n > 0 {
		i = k.freeTm[n-1]
		k.freeTm = k.freeTm[:n-1]
	} else {
		i = int32(len(k.timers))
		k.timers = append(k.timers, timerSlot{})
	}
	t := &k.timers[i]
	t.proc, t.clock, t.deadline, t.tag, t.active, t.paused = p.id, c, deadline, tag, true, false
	t.sched++
	t.pos = int32(len(p.timers))
	p.timers = append(p.timers, i)
	k.push(p.clock.when(c, deadline, k.now), evTimer, i, t.sched)
	return TimerID{idx: i, gen: t.gen}
}

func (k *Kernel) freeTimer(i int32) {
	t := &k.timers[i]
	p := k.procs[t.proc]
	last := p.timers[len(p.timers)-1]
	p.timers[t.pos] = last
	k.timers[last].pos = t.pos
	p.timers = p.timers[:len(p.timers)-1]
	t.active = false
	t.tag = nil
	t.gen++
	t.sched++
	k.freeTm = append(k.freeTm, i)
}

func (k *Kernel) cancelTimer(id TimerID) bool {
	if id.idx < 0 || int(id.idx) >= len(k.timers) {
		return false
	}
	t := &k.timers[id.idx]
	if !t.active || t.gen != id.gen {
		return false
	}
	k.freeTimer(id.idx)
	return true
}

// replan re-queues every pending timer of p after its clock changed.
func (k *Kernel) replan(p *proc) {
	for _, i := range p.timers {
		t := &k.timers[i]
		if t.paused {
			continue // it is waiting in the inbox; re-checked on resume
		}
		t.sched++
		k.push(p.clock.when(t.clock, t.deadline, k.now), evTimer, i, t.sched)
	}
}

func (k *Kernel) fireTimer(i int32, sched uint32) {
	t := &k.timers[i]
	if !t.active || t.sched != sched {
		return // cancelled or re-planned
	}
	p := k.procs[t.proc]
	if p.state == stPaused {
		t.paused = true
		p.inbox = append(p.inbox, pendingItem{kind: evTimer, idx: i, gen: t.gen})
		return
	}
	// A timer fires when its clock reaches the deadline; after a backward
	// jump the queued time may be early, so re-check.
	if p.clock.read(t.clock, k.now) < t.deadline {
		t.sched++
		k.push(p.clock.when(t.clock, t.deadline, k.now), evTimer, i, t.sched)
		return
	}
	tag := t.tag
	k.freeTimer(i)
	k.trace(KindTimer, p.id, NoProc, tag)
	p.p.Fire(&p.env, tag)
}

// ---- lifecycle ----

// Pause stops a process for d: nothing of it runs, its clocks keep running,
// messages and timers wait and are handled in order when it resumes. Pausing
// a paused process extends the pause if the new end is later.
func (k *Kernel) Pause(id ProcID, d time.Duration) {
	p := k.procs[id]
	if p.state == stCrashed || p.state == stNew {
		k.Tracef(KindPause, id, "ignored: process is not running")
		return
	}
	p.state = stPaused
	p.pauseV++
	v := p.pauseV
	k.Tracef(KindPause, id, "for %v", d)
	k.At(k.now+Time(d), func() {
		if p.state == stPaused && p.pauseV == v {
			k.resume(p)
		}
	})
}

func (k *Kernel) resume(p *proc) {
	p.state = stRunning
	k.trace(KindResume, p.id, NoProc, nil)
	if p.inboxAt < len(p.inbox) {
		k.push(k.now, evInbox, int32(p.id), p.inc)
	}
}

// replayInbox handles the next item that waited during a pause, then queues
// the rest, one event per item, so that other events at the same instant
// interleave deterministically.
func (k *Kernel) replayInbox(p *proc, inc uint32) {
	if p.inc != inc || p.state != stRunning || p.inboxAt >= len(p.inbox) {
		return
	}
	it := p.inbox[p.inboxAt]
	p.inboxAt++
	if p.inboxAt == len(p.inbox) {
		p.inbox = p.inbox[:0]
		p.inboxAt = 0
	} else {
		k.push(k.now, evInbox, int32(p.id), p.inc)
	}
	switch it.kind {
	case evDeliver:
		k.handle(p, it.idx)
	case evTimer:
		t := &k.timers[it.idx]
		if !t.active || t.gen != it.gen {
			return
		}
		t.paused = false
		t.sched++
		k.fireTimer(it.idx, t.sched)
	}
}

// Crash kills a process: its memory and timers are gone, messages waiting
// for it are lost, and its disk keeps what the crash mode allows. Open
// history records of the process end with reason "crashed".
func (k *Kernel) Crash(id ProcID, mode CrashMode) {
	p := k.procs[id]
	if p.state == stCrashed || p.state == stNew {
		k.Tracef(KindCrash, id, "ignored: process is not running")
		return
	}
	if mode == CrashClean && p.state == stRunning {
		if s, ok := p.p.(Shutdowner); ok {
			s.Shutdown(&p.env)
		}
	}
	p.state = stCrashed
	p.inc++
	for len(p.timers) > 0 {
		k.freeTimer(p.timers[len(p.timers)-1])
	}
	for _, it := range p.inbox[p.inboxAt:] {
		if it.kind == evDeliver {
			k.dropMsg(it.idx, "crashed")
		}
	}
	p.inbox, p.inboxAt = p.inbox[:0], 0
	p.p = nil
	p.disk.crash(mode, k.now)
	k.Tracef(KindCrash, id, "mode %s", mode)
	k.closeOpen(p, EndCrashed)
}

// Restart starts a fresh instance of a crashed process; it recovers from its
// disk in Init. Restarting a process that is not crashed does nothing.
func (k *Kernel) Restart(id ProcID) {
	p := k.procs[id]
	if p.state != stCrashed {
		k.Tracef(KindRestart, id, "ignored: process is not crashed")
		return
	}
	p.state = stRunning
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
	p.clock.reanchor(k.now)
	p.clock.wallBase += int64(d)
	k.Tracef(KindClockJump, id, "%+v", d)
	k.replan(p)
}

// SetDrift sets the rate error of both of a process's clocks from now on
// (ppb parts per billion; see RateFromDrift).
func (k *Kernel) SetDrift(id ProcID, ppb int64) {
	p := k.procs[id]
	p.clock.reanchor(k.now)
	p.clock.ppb = ppb
	k.Tracef(KindClockDrift, id, "%d ppb", ppb)
	k.replan(p)
}

// ClockOffset returns how far a process's clock is from true time (for
// clocks plots): reading minus (Epoch + now) for the wall clock, reading
// minus now for the monotonic clock.
func (k *Kernel) ClockOffset(id ProcID, c Clock) time.Duration {
	r := k.procs[id].clock.read(c, k.now)
	if c == Wall {
		return time.Duration(r - Epoch - int64(k.now))
	}
	return time.Duration(r - int64(k.now))
}
