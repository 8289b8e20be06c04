package usercode

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing/synctest"
	"time"

	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/sim"
)

// world is the driver of one run (sim.Driver): it runs inside the bubble's
// root goroutine, with the kernel, and lets the user goroutines run only
// while it waits in synctest.Wait or sleeps towards the next event.
//
// What the user goroutines do that the simulation must see (a command
// written on a simulated connection, a connection closed, a lock call
// returned, a log line) becomes an item on w.ready, tagged with a stable
// key (client process, stream, connection ordinal, sequence in the
// stream). At each Flush the items ready at that instant are sorted by the
// key, so the order in which the Go scheduler ran the goroutines never
// reaches the kernel: an item reaches its client process as a kernel timer
// (sim.Kernel.Wake), so a paused client acts on it only after its resume and
// a crashed one never.
//
// What the kernel hands to user goroutines (reply bytes, a connection
// reset, the start of a lock call) is queued on w.handoff by kernel steps
// and performed by the root right before the next synctest.Wait, so user
// goroutines never run while a kernel step does.
type world struct {
	k      *sim.Kernel
	epoch  time.Time     // the bubble's time at the kernel's time 0
	notify chan struct{} // something became ready (made in the bubble)

	mu    sync.Mutex
	ready []item

	handoff []func()    // root only
	moved   bool        // the bubble's clock moved since the last wait (root only)
	tm      *time.Timer // the root's sleep towards the next event, reused
	insts   []*instance

	failMu  sync.Mutex
	failure error

	watch *watchdog

	// scenario names the run (for Proc.check); over is set once the run's
	// bubble has ended.
	scenario string
	over     atomic.Bool

	// busy are the calls of user code in flight (Obtain, Release, Extend,
	// goroutines of Proc.Go), by serial, as the hang report names them;
	// hang is set at the end of a run that some of them outlived.
	busyMu  sync.Mutex
	busy    map[uint64]string
	busySeq uint64
	hang    *BlockedError
	// unfinished are the calls in flight when the run ended, before the
	// end cancelled their contexts (root only).
	unfinished []string

	// limits are the replies of limits of locksim the user code got
	// (limits.go), in kernel order (root only).
	limits []record.Unsupported

	// redis lists the processes Proc.Redis may reach (Redis servers,
	// cluster nodes and sentinels); kinds says what every other server
	// is, for the error.
	redis []string
	kinds map[string]string
}

// notRedis says why node is not a Redis server or sentinel of the
// scenario, "" when it is one.
func (w *world) notRedis(node string) string {
	if slices.Contains(w.redis, node) {
		return ""
	}
	known := "none"
	if len(w.redis) > 0 {
		known = strings.Join(w.redis, ", ")
	}
	if what, ok := w.kinds[node]; ok {
		return fmt.Sprintf("%q is %s, not a Redis server or sentinel (the scenario's: %s)", node, what, known)
	}
	return fmt.Sprintf("no Redis server or sentinel named %q in the scenario (its Redis servers and sentinels: %s)", node, known)
}

// item is one action of user code for its client process, performed in a
// kernel step of that process (instance.Fire).
type item struct {
	inst   *instance
	stream int32  // -1: the control stream (lock calls, logs); else the server's process id
	conn   uint32 // connection ordinal within (client, server)
	seq    uint64 // order within the stream
	act    func(*instance)
}

// streamControl is the stream of lock calls and logs.
const streamControl = -1

func newWorld(k *sim.Kernel, wd *watchdog) *world {
	return &world{k: k, epoch: time.Now(), notify: make(chan struct{}, 1), watch: wd, moved: true}
}

// push queues an item from a user goroutine and wakes the root.
func (w *world) push(it item) {
	w.mu.Lock()
	w.ready = append(w.ready, it)
	w.mu.Unlock()
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

func (w *world) hasReady() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.ready) > 0
}

// fail records the first failure of user code (a panic); the next Flush
// stops the run with it.
func (w *world) fail(err error) {
	w.failMu.Lock()
	if w.failure == nil {
		w.failure = err
	}
	w.failMu.Unlock()
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

func (w *world) failed() error {
	w.failMu.Lock()
	defer w.failMu.Unlock()
	return w.failure
}

// nowT is the bubble's current time as a kernel time.
func (w *world) nowT() sim.Time { return sim.Time(time.Since(w.epoch)) }

// settle performs the hand-offs and waits until every user goroutine is
// durably blocked again.
//
// The wait is skipped when nothing can have woken a user goroutine since
// the last one: no hand-off ran and the bubble's clock has not moved (then
// every user goroutine is still durably blocked, and only the root runs).
// User goroutines act only through hand-offs, their own timers (which need
// the clock to move) and goroutines they start (which run before the wait
// that follows their start ends).
func (w *world) settle() {
	woke := w.moved
	for len(w.handoff) > 0 {
		woke = true
		h := w.handoff
		w.handoff = nil
		for _, f := range h {
			f()
		}
	}
	if !woke {
		return
	}
	w.moved = false
	w.watch.enter(time.Duration(w.nowT()))
	synctest.Wait()
	w.watch.leave()
}

// Advance implements sim.Driver.
func (w *world) Advance(now, next sim.Time) (sim.Time, bool) {
	w.reap()
	for {
		w.settle()
		if w.hasReady() || w.failed() != nil {
			return now, true
		}
		if next <= now || next == sim.Never {
			return next, false
		}
		select { // a stale signal
		case <-w.notify:
		default:
		}
		d := w.epoch.Add(time.Duration(next)).Sub(time.Now())
		if w.tm == nil {
			w.tm = time.NewTimer(d)
		} else {
			w.tm.Reset(d) // stopped or fired and drained: Go 1.23 timers
		}
		select {
		case <-w.tm.C:
		case <-w.notify:
			w.tm.Stop()
		}
		w.moved = true
		w.settle()
		t := w.nowT()
		if t > next {
			t = next
		}
		if w.hasReady() || w.failed() != nil {
			return t, true
		}
		if t >= next {
			return next, false
		}
		now = t
	}
}

// failureSignal carries a user-code failure out of the kernel's Run.
type failureSignal struct{ err error }

// Flush implements sim.Driver.
func (w *world) Flush() {
	if err := w.failed(); err != nil {
		panic(failureSignal{err})
	}
	w.mu.Lock()
	items := w.ready
	w.ready = nil
	w.mu.Unlock()
	sort.SliceStable(items, func(i, j int) bool {
		a, b := &items[i], &items[j]
		if a.inst.id != b.inst.id {
			return a.inst.id < b.inst.id
		}
		if a.inst.inc != b.inst.inc {
			return a.inst.inc < b.inst.inc
		}
		if a.stream != b.stream {
			return a.stream < b.stream
		}
		if a.conn != b.conn {
			return a.conn < b.conn
		}
		return a.seq < b.seq
	})
	var acting []*instance
	for _, it := range items {
		in := it.inst
		if in.dead.Load() {
			continue
		}
		if len(in.outbox) == 0 {
			acting = append(acting, in)
		}
		in.outbox = append(in.outbox, it)
	}
	// A running client acts at once; a paused one (or one still handed
	// what waited during its pause) gets its items as a timer due now,
	// behind what waits.
	for _, in := range acting {
		if in.waking {
			continue // a wake-up is already queued
		}
		if w.k.Waiting(in.id) {
			in.waking = true
			w.k.Wake(in.id, wakeTag{})
			continue
		}
		in.Fire(wakeTag{})
	}
}

// reap ends the instances whose process crashed or restarted since: their
// lock calls are cancelled, their connections reset, their items dropped.
func (w *world) reap() {
	kept := w.insts[:0]
	for _, in := range w.insts {
		if w.k.Incarnation(in.id) != in.inc {
			in.kill("client crashed")
			continue
		}
		kept = append(kept, in)
	}
	for i := len(kept); i < len(w.insts); i++ {
		w.insts[i] = nil
	}
	w.insts = kept
}

// finish ends every instance at the end of the run and lets their
// goroutines return before the bubble ends (synctest refuses to end a
// bubble whose goroutines are still blocked).
func (w *world) finish() {
	w.unfinished = w.inFlight()
	for _, in := range w.insts {
		in.kill("run ended")
	}
	w.insts = nil
	for range 3 {
		w.settle()
		// Sleepers (retry delays, tickers) wake, see their context
		// cancelled and return.
		time.Sleep(time.Hour)
		w.moved = true
	}
	w.settle()
	w.blocked()
}

// busyEnter notes a call of user code in flight until the returned
// function runs (any goroutine).
func (w *world) busyEnter(what string) func() {
	w.busyMu.Lock()
	if w.busy == nil {
		w.busy = map[uint64]string{}
	}
	w.busySeq++
	id := w.busySeq
	w.busy[id] = what
	w.busyMu.Unlock()
	return func() {
		w.busyMu.Lock()
		delete(w.busy, id)
		w.busyMu.Unlock()
	}
}

// blocked notes, at the end of the run, the calls of user code that are
// still in flight though every context was cancelled and every
// connection reset: they wait on something inside the bubble that nothing
// will ever release (a channel no one sends on, ignoring the context).
// synctest would end the run with its deadlock panic; Run reports a
// *BlockedError instead.
func (w *world) blocked() {
	calls := w.inFlight()
	if len(calls) == 0 {
		return
	}
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var stacks []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "synctest bubble") && !strings.Contains(g, "usercode.(*world).blocked") {
			stacks = append(stacks, g)
		}
	}
	w.hang = &BlockedError{Scenario: w.scenario, Calls: calls, Goroutines: strings.Join(stacks, "\n\n")}
}

// inFlight lists the calls of user code in flight, sorted.
func (w *world) inFlight() []string {
	w.busyMu.Lock()
	var calls []string
	for _, c := range w.busy {
		calls = append(calls, c)
	}
	w.busyMu.Unlock()
	sort.Strings(calls)
	return calls
}

// BlockedError is user code that was still blocked inside the simulation
// when the run ended: a call waiting on a channel, a sync.Cond or a
// WaitGroup that nothing would release, with its context (cancelled at
// the end) ignored. Like a hang, it names the client, the call and when it
// was made, and what it waits on (the goroutines' stacks).
type BlockedError struct {
	Scenario string
	// Calls are the calls in flight: "client c1: Obtain, called at
	// virtual time 1s".
	Calls []string
	// Goroutines are the stacks of the run's goroutines still blocked
	// (their headers say on what: "chan receive (durable)").
	Goroutines string
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("%s: user code blocked inside the simulation and never returned (it waits on something no simulated event releases, e.g. a channel no one sends on, and ignores its context, which was cancelled when the run ended):\n  %s\ngoroutines:\n%s", e.Scenario, strings.Join(e.Calls, "\n  "), e.Goroutines)
}

// wakeTag is the timer tag with which the driver hands items to a client.
type wakeTag struct{}

func (wakeTag) AppendTrace(b []byte) []byte { return append(b, "user-code"...) }

// resumeTag wakes a client's readers after its pause, behind the replies
// that waited in its inbox (sim.Kernel.Wake queues behind them).
type resumeTag struct{}

func (resumeTag) AppendTrace(b []byte) []byte { return append(b, "user-code resumed"...) }

// resumed is the kernel observer of resumes.
func (w *world) resumed(e sim.ObservedEvent) {
	if e.Kind != sim.KindResume {
		return
	}
	for _, in := range w.insts {
		if in.id == e.Proc && !in.dead.Load() {
			w.k.Wake(in.id, resumeTag{})
		}
	}
}

// recovered turns a recovered panic of user code into an error naming the
// client and the virtual time.
func (in *instance) recovered(what string, v any) error {
	return &PanicError{Client: in.name, At: time.Duration(in.w.nowT()), What: what, Value: fmt.Sprint(v), Stack: string(debug.Stack())}
}

// PanicError is a panic in user code: the run stops with it.
type PanicError struct {
	Client string
	At     time.Duration // virtual time
	What   string        // the call that panicked (Obtain, Release, a goroutine of Proc.Go, the factory)
	Value  string
	Stack  string
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("user code of client %s panicked in %s at virtual time %v: %s\n%s", e.Client, e.What, e.At, e.Value, e.Stack)
}

// watchdog notices a synctest.Wait that does not return: a user goroutine
// blocked on something outside the simulation (a real socket, a mutex never
// released) or spinning. It runs outside the bubble, on real time, and
// polls: the root counts its waits, so a count that stays the same while
// the root is inside a wait for Limit of real time is a hang.
type watchdog struct {
	in    atomic.Bool
	gen   atomic.Uint64
	limit time.Duration

	mu    sync.Mutex
	calls map[string]string // client -> the user call in flight
	at    time.Duration     // the virtual time of the last wait
}

func (d *watchdog) enter(at time.Duration) {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.at = at
	d.mu.Unlock()
	d.gen.Add(1)
	d.in.Store(true)
}

func (d *watchdog) leave() {
	if d == nil {
		return
	}
	d.in.Store(false)
}

// call notes (what != "") or clears the user call in flight of a client.
func (d *watchdog) call(client, what string) {
	if d == nil {
		return
	}
	d.mu.Lock()
	if what == "" {
		delete(d.calls, client)
	} else {
		d.calls[client] = what
	}
	d.mu.Unlock()
}
