package sim

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unsafe"
)

// Kind names a trace event kind. The kernel's own kinds are constants below;
// models add their own (key-set, acquired, ...) and fault triggers match on
// them.
type Kind string

// Kernel event kinds.
const (
	KindStart      Kind = "start"       // a process started (Peer empty)
	KindSend       Kind = "send"        // Proc sent message #N to Peer
	KindDeliver    Kind = "deliver"     // message #N from Peer was handled by Proc
	KindDrop       Kind = "drop"        // message #N from Proc to Peer was lost (Text says why)
	KindTimer      Kind = "timer"       // a timer of Proc fired
	KindPause      Kind = "pause"       // Proc was paused
	KindResume     Kind = "resume"      // Proc resumed
	KindCrash      Kind = "crash"       // Proc crashed
	KindRestart    Kind = "restart"     // Proc restarted
	KindClockJump  Kind = "clock-jump"  // Proc's wall clock was stepped
	KindClockDrift Kind = "clock-drift" // Proc's clock rate changed
	KindPartition  Kind = "partition"   // a partition began
	KindHeal       Kind = "heal"        // partitions and link faults were removed
	KindLinkFault  Kind = "link-fault"  // a one-way drop or delay was set
	KindFault      Kind = "fault"       // a fault recorded by the fault schedule
	KindConnEnd    Kind = "conn-end"    // Proc learnt (or decided) that its connection with Peer ended (Text says why)
	KindRetransmit Kind = "retransmit"  // a segment of message #N from Proc to Peer stalled or was retransmitted
)

// History event kinds, emitted by the history recorder; fault triggers use
// them (SCENARIO_FORMAT.md, "Triggers").
const (
	KindAcquireStart  Kind = "acquire-start"
	KindAcquired      Kind = "acquired"
	KindAcquireFailed Kind = "acquire-failed"
	KindReleased      Kind = "released"
	KindLockLost      Kind = "lock-lost"
	KindResourceRead  Kind = "resource-read"
	KindResourceWrite Kind = "resource-write"
)

// Event is one observable event of a run. Events are numbered in the order
// they happened; At is true time.
type Event struct {
	Seq  uint64 `json:"seq"`
	At   Time   `json:"t"`
	Kind Kind   `json:"kind"`
	Proc string `json:"proc,omitempty"`
	Peer string `json:"peer,omitempty"`
	Text string `json:"text,omitempty"`
	// Fields are the event's typed payload (Attr), for readers that must
	// not parse Text.
	Fields Attrs `json:"fields,omitempty"`
}

// Clone returns a copy of e that shares no memory with it: what a sink
// keeps of an event it was lent (Config.TraceBorrow).
func (e *Event) Clone() Event {
	c := *e
	c.Text = strings.Clone(e.Text)
	c.Fields = e.Fields.Clone()
	return c
}

// Equal reports whether two events are the same.
func (e *Event) Equal(o *Event) bool {
	return e.Seq == o.Seq && e.At == o.At && e.Kind == o.Kind && e.Proc == o.Proc && e.Peer == o.Peer && e.Text == o.Text && e.Fields.Equal(o.Fields)
}

// Tracer is implemented by messages and timer tags that render themselves
// into the trace without reflection (the fast path). Other values are
// rendered with fmt's %+v, which is deterministic for values without
// pointers, maps of pointers or funcs: messages must be such values.
// AppendTrace follows the append convention: it appends its rendering to b
// and returns the extended slice, leaving b's existing bytes alone (b is the
// kernel's hash buffer).
type Tracer interface {
	AppendTrace(b []byte) []byte
}

// appendValue renders a message or a timer tag.
func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return b
	case Tracer:
		return x.AppendTrace(b)
	case string:
		return append(b, x...)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case uint64:
		return strconv.AppendUint(b, x, 10)
	case fmt.Stringer:
		return append(b, x.String()...)
	default:
		return fmt.Appendf(b, "%T%+v", v, v)
	}
}

// kindCode returns the one-byte code of a kernel or history kind in the
// canonical encoding, 0 for any other kind (which is then spelled out).
func kindCode(k Kind) byte {
	switch k {
	case KindStart:
		return codeStart
	case KindSend:
		return codeSend
	case KindDeliver:
		return codeDeliver
	case KindDrop:
		return codeDrop
	case KindTimer:
		return codeTimer
	case KindPause:
		return 6
	case KindResume:
		return 7
	case KindCrash:
		return 8
	case KindRestart:
		return 9
	case KindClockJump:
		return 10
	case KindClockDrift:
		return 11
	case KindPartition:
		return 12
	case KindHeal:
		return 13
	case KindLinkFault:
		return 14
	case KindFault:
		return 15
	case KindAcquireStart:
		return 16
	case KindAcquired:
		return 17
	case KindAcquireFailed:
		return 18
	case KindReleased:
		return 19
	case KindLockLost:
		return 20
	case KindResourceRead:
		return 21
	case KindResourceWrite:
		return 22
	case KindConnEnd:
		return codeConnEnd
	case KindRetransmit:
		return codeRetransmit
	}
	return 0
}

// Codes of the kinds on the hot path (kindCode agrees).
const (
	codeStart   byte = 1
	codeSend    byte = 2
	codeDeliver byte = 3
	codeDrop    byte = 4
	codeTimer   byte = 5
	// codes of the connection kinds
	codeConnEnd    byte = 23
	codeRetransmit byte = 24
)

// tracer records events: it always feeds the rolling hash, and keeps the
// events themselves only when asked to.
//
// Canonical encoding of one event, hashed in order: the true time since the
// previous event (uvarint); the kind as a one-byte code, or 0, the length
// (uvarint) and the name for kinds without a code; the process and the peer
// (uvarint of id+1, so that NoProc is 0); the message number (uvarint, 0
// for none; also 0 for a send, whose number is implied: sends are numbered
// in trace order); and the text, length-prefixed (uvarint). Every field is
// self-delimiting, so the encoding of a trace is unambiguous.
type tracer struct {
	h      traceHash
	buf    []byte // pending bytes for the hash (less than a block of them, then the event being recorded)
	mark   int    // position of the current event's text length in buf
	code   byte   // the current event's kind code (0: none)
	seq    uint64
	last   Time
	keep   bool
	events []Event
	// sink receives every event as it is recorded (Config.TraceSink), so
	// that a long run can stream its trace to disk instead of keeping it.
	sink func(*Event)
	// filter, when set, chooses the kinds the sink receives
	// (Config.TraceFilter).
	filter func(Kind) bool
	// borrow lends the sink its events (Config.TraceBorrow): view is the
	// one Event handed over, its text in buf (or vtext) and its fields in
	// vattrs, all reused by the next event.
	borrow bool
	view   Event
	vtext  []byte
	vattrs []Attr
	// kinds caches the filter's answer for the kinds with a code: 0 not
	// asked yet, 1 taken, 2 refused (the kernel's own kinds are most
	// events; asking the filter each time was about 1% of a run).
	kinds [32]uint8
	obs   []func(ObservedEvent)
}

// wants reports whether an event of the kind is built as an Event: kept,
// or streamed to a sink that takes its kind.
func (t *tracer) wants(kind Kind) bool {
	return t.keep || (t.sink != nil && (t.filter == nil || t.filter(kind)))
}

// gives reports whether the sink takes an event of the kind, whose code is
// code (0: none).
func (t *tracer) gives(code byte, kind Kind) bool {
	if t.sink == nil {
		return false
	}
	if t.filter == nil {
		return true
	}
	if code == 0 || int(code) >= len(t.kinds) {
		return t.filter(kind)
	}
	switch t.kinds[code] {
	case 1:
		return true
	case 2:
		return false
	}
	ok := t.filter(kind)
	t.kinds[code] = 2
	if ok {
		t.kinds[code] = 1
	}
	return ok
}

// ObservedEvent is what observers (fault triggers) see of an event.
type ObservedEvent struct {
	At   Time
	Kind Kind
	Proc ProcID // -1 when the event belongs to no process
	Peer ProcID // -1 when there is none
}

func newTracer(keep bool) *tracer {
	return &tracer{h: newTraceHash(), keep: keep, buf: make([]byte, 0, 8192)}
}

// appendUvarint is binary.AppendUvarint with a fast path for one byte.
func appendUvarint(b []byte, v uint64) []byte {
	if v < 0x80 {
		return append(b, byte(v))
	}
	return binary.AppendUvarint(b, v)
}

// begin starts recording an event: it encodes the header into the hash
// buffer and returns the buffer, to which the caller appends the event's
// text before calling end. hashMsg is the message number as hashed.
func (t *tracer) begin(at Time, code byte, kind Kind, proc, peer ProcID, hashMsg uint64) []byte {
	b := t.buf
	b = appendUvarint(b, uint64(at-t.last))
	t.last = at
	t.code = code
	if code != 0 {
		b = append(b, code)
	} else {
		b = append(b, 0)
		b = appendUvarint(b, uint64(len(kind)))
		b = append(b, kind...)
	}
	b = appendUvarint(b, uint64(proc+1))
	b = appendUvarint(b, uint64(peer+1))
	b = appendUvarint(b, hashMsg)
	t.mark = len(b)
	return append(b, 0) // the text length, fixed by end
}

// end finishes the event begun by begin; b is the buffer begin returned
// with the text appended. msg is the message number (0 for none) and
// names are the process names and attrs the typed fields (both used only
// when events are kept).
func (t *tracer) end(b []byte, at Time, kind Kind, proc, peer ProcID, msg uint64, k *Kernel, attrs ...Attr) {
	t.seq++
	n := len(b) - t.mark - 1
	if n < 0x80 {
		b[t.mark] = byte(n)
	} else {
		// Make room for a longer length: shift the text right.
		var l [binary.MaxVarintLen64]byte
		w := binary.PutUvarint(l[:], uint64(n))
		b = append(b, l[:w-1]...)
		copy(b[t.mark+w:], b[t.mark+1:t.mark+1+n])
		copy(b[t.mark:], l[:w])
	}
	give := t.gives(t.code, kind)
	if give && t.borrow && !t.keep {
		t.lend(b[len(b)-n:], at, kind, proc, peer, msg, k, attrs)
	} else if t.keep || give {
		txt := string(b[len(b)-n:])
		if msg != 0 {
			if n == 0 {
				txt = "#" + strconv.FormatUint(msg, 10)
			} else {
				txt = "#" + strconv.FormatUint(msg, 10) + " " + txt
			}
		}
		ev := Event{Seq: t.seq, At: at, Kind: kind, Proc: k.Name(proc), Peer: k.Name(peer), Text: txt, Fields: keepAttrs(attrs)}
		if give {
			t.sink(&ev)
		}
		if t.keep {
			t.events = append(t.events, ev)
		}
	}
	if len(b) >= 4096 {
		b = b[:copy(b, b[t.h.blocks(b):])]
	}
	t.buf = b
	for _, f := range t.obs {
		f(ObservedEvent{At: at, Kind: kind, Proc: proc, Peer: peer})
	}
}

// lend hands the sink the event as a view (Config.TraceBorrow): its text
// is txt, bytes of the hash buffer, and its fields a copy of attrs into a
// buffer of the tracer (copying them into it, unlike keeping attrs, does
// not move the callers' variadic arguments to the heap); both are reused
// by the next event.
func (t *tracer) lend(txt []byte, at Time, kind Kind, proc, peer ProcID, msg uint64, k *Kernel, attrs []Attr) {
	if msg != 0 {
		v := strconv.AppendUint(append(t.vtext[:0], '#'), msg, 10)
		if len(txt) > 0 {
			v = append(append(v, ' '), txt...)
		}
		t.vtext = v
		txt = v
	}
	t.vattrs = append(t.vattrs[:0], attrs...)
	ev := &t.view
	*ev = Event{Seq: t.seq, At: at, Kind: kind, Proc: k.Name(proc), Peer: k.Name(peer)}
	if len(txt) > 0 {
		ev.Text = unsafe.String(&txt[0], len(txt))
	}
	if len(attrs) > 0 {
		ev.Fields = t.vattrs
	}
	t.sink(ev)
	*ev = Event{}
	clear(t.vattrs)
}

// sum returns the trace hash (traceHash) of everything recorded so far.
func (t *tracer) sum() [32]byte {
	t.buf = t.buf[:copy(t.buf, t.buf[t.h.blocks(t.buf):])]
	return t.h.sum(t.buf)
}

// HashString renders a trace hash as hex.
func HashString(h [32]byte) string { return hex.EncodeToString(h[:]) }

// WriteJSONL writes events as JSON Lines, one event per line.
func WriteJSONL(w io.Writer, events []Event) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i := range events {
		if err := enc.Encode(&events[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ReadJSONL reads events written by WriteJSONL.
func ReadJSONL(r io.Reader) ([]Event, error) {
	dec := json.NewDecoder(r)
	var out []Event
	for {
		var e Event
		if err := dec.Decode(&e); err == io.EOF {
			return out, nil
		} else if err != nil {
			return out, fmt.Errorf("trace line %d: %w", len(out)+1, err)
		}
		out = append(out, e)
	}
}

// FirstDivergence returns the index of the first event that differs between
// two traces, or -1 when they are identical.
func FirstDivergence(a, b []Event) int {
	n := len(a)
	if len(b) < n {
		n = len(b)
	}
	for i := 0; i < n; i++ {
		if !a[i].Equal(&b[i]) {
			return i
		}
	}
	if len(a) != len(b) {
		return n
	}
	return -1
}
