package sim

import (
	"math"
	"strconv"
	"time"
)

// TimerID identifies a timer for Cancel. The zero value is no timer.
type TimerID struct {
	idx int32
	gen uint32
}

// Env is a process's only window on the world: its clocks, the network, its
// timers, its random stream, its disk and the history recorder. The kernel
// keeps one Env per process for the whole run (it survives restarts).
type Env struct {
	k *Kernel
	p *proc
}

// ID returns the process's id.
func (e *Env) ID() ProcID { return e.p.id }

// Name returns the process's name.
func (e *Env) Name() string { return e.p.name }

// Lookup returns the id of a named process.
func (e *Env) Lookup(name string) (ProcID, bool) { return e.k.Lookup(name) }

// NameOf returns the name of a process.
func (e *Env) NameOf(id ProcID) string { return e.k.Name(id) }

// Wall returns the wall clock in nanoseconds since the Unix epoch.
func (e *Env) Wall() int64 { return e.p.clock.Read(Wall, e.k.now) }

// WallMs returns the wall clock in Unix milliseconds (Redis' mstime()).
func (e *Env) WallMs() int64 { return floorDiv(e.Wall(), int64(time.Millisecond)) }

// Mono returns the monotonic clock in nanoseconds.
func (e *Env) Mono() int64 { return e.p.clock.Read(Mono, e.k.now) }

// Read returns the reading of clock c.
func (e *Env) Read(c Clock) int64 { return e.p.clock.Read(c, e.k.now) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// Send sends a message to another process over the simulated network.
func (e *Env) Send(to ProcID, m Message) { e.k.send(e.p, to, m, nil) }

// SendPooled sends a pooled message (Recycler): the kernel calls its
// Recycle once the destination's Receive returned or the message was lost.
// A pooled message sent with Send is left to the garbage collector.
func (e *Env) SendPooled(to ProcID, m Recycler) { e.k.send(e.p, to, m, m) }

// SendOn is Send on the process's connection number ch (0 is Send's, up to
// MaxConns-1) with to: a second connection between the same two processes,
// with its own life (a reset, a close or a timeout of one leaves the other
// alone) but the same network path (partitions, delays and retransmission
// stalls act on both). A process that uses one implements ConnsObserver to
// learn which connection ended.
func (e *Env) SendOn(ch uint8, to ProcID, m Message) {
	if ch >= MaxConns {
		panic("sim: SendOn: no connection number " + strconv.Itoa(int(ch)))
	}
	e.k.sendOn(e.p, to, ch, m, nil)
}

// SendPooledOn is SendPooled on connection ch (SendOn).
func (e *Env) SendPooledOn(ch uint8, to ProcID, m Recycler) {
	if ch >= MaxConns {
		panic("sim: SendPooledOn: no connection number " + strconv.Itoa(int(ch)))
	}
	e.k.sendOn(e.p, to, ch, m, m)
}

// SetTimer sets a timer that fires when clock c reaches deadline (a reading
// of that clock). tag is handed back to Fire.
func (e *Env) SetTimer(c Clock, deadline int64, tag any) TimerID {
	return e.k.setTimer(e.p, c, deadline, tag)
}

// After sets a timer that fires when clock c has advanced by d (at once
// for d <= 0; a d too large for the clock's range means never).
func (e *Env) After(c Clock, d time.Duration, tag any) TimerID {
	now := e.Read(c)
	deadline := now + int64(d)
	if d > 0 && deadline < now {
		deadline = math.MaxInt64
	}
	return e.k.setTimer(e.p, c, deadline, tag)
}

// Cancel cancels a timer; it reports whether the timer was still pending.
func (e *Env) Cancel(id TimerID) bool { return e.k.cancelTimer(id) }

// Incarnation returns the process's incarnation number: 0 for the instance
// started with the run, changed by every crash and restart
// (Kernel.Incarnation).
func (e *Env) Incarnation() uint32 { return e.p.inc }

// Rand returns the process's own random stream ("proc/NAME"). It is not
// reset by a restart: the machine keeps drawing.
func (e *Env) Rand() *Rand { return &e.p.rand }

// Disk returns the process's disk.
func (e *Env) Disk() *Disk { return &e.p.disk }

// Log records a model event (key-set, expired, fsync, promoted, ...) in the
// trace. Fault triggers can match its kind.
func (e *Env) Log(kind Kind, text string) {
	e.k.traceText(kind, e.p.id, NoProc, text)
}

// LogBytes is Log with the text in a byte slice, for hot paths that render
// their text with appends into a scratch buffer instead of fmt (the trace
// copies the bytes; the caller may reuse b).
func (e *Env) LogBytes(kind Kind, text []byte) {
	k := e.k
	b := k.tr.begin(k.now, kindCode(kind), kind, e.p.id, NoProc, 0)
	b = append(b, text...)
	k.tr.end(b, k.now, kind, e.p.id, NoProc, 0, k)
}

// TraceKept reports whether the trace is kept or streamed, for a model
// whose typed fields cost work to build: it builds them only then.
func (e *Env) TraceKept() bool { return e.k.tr.keep || e.k.tr.sink != nil }

// TraceKeeps is TraceKept for an event of one kind: false when the trace
// is only streamed to a sink whose filter (Config.TraceFilter) refuses
// the kind.
func (e *Env) TraceKeeps(kind Kind) bool { return e.k.tr.wants(kind) }

// LogAttrs is Log with typed fields (Attr): the text is for people, the
// fields for readers of the trace (reports). The fields are copied only
// when the trace is kept.
func (e *Env) LogAttrs(kind Kind, text string, attrs ...Attr) {
	e.k.traceAttrs(kind, e.p.id, NoProc, text, attrs...)
}

// LogBytesAttrs is LogBytes with typed fields.
func (e *Env) LogBytesAttrs(kind Kind, text []byte, attrs ...Attr) {
	k := e.k
	b := k.tr.begin(k.now, kindCode(kind), kind, e.p.id, NoProc, 0)
	b = append(b, text...)
	k.tr.end(b, k.now, kind, e.p.id, NoProc, 0, k, attrs...)
}

// LogfAttrs is Logf with typed fields.
func (e *Env) LogfAttrs(kind Kind, attrs []Attr, format string, args ...any) {
	e.k.tracefAttrs(kind, e.p.id, attrs, format, args...)
}

// Logf is Log with formatting.
func (e *Env) Logf(kind Kind, format string, args ...any) {
	e.k.Tracef(kind, e.p.id, format, args...)
}
