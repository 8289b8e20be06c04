package sim

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"strconv"
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
}

// Tracer is implemented by messages and timer tags that render themselves
// into the trace without reflection (the fast path). Other values are
// rendered with fmt's %+v, which is deterministic for values without
// pointers, maps of pointers or funcs: messages must be such values.
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

// tracer records events: it always feeds the rolling hash, and keeps the
// events themselves only when asked to.
type tracer struct {
	h      hash.Hash
	buf    []byte // pending bytes for the hash
	text   []byte // scratch for the current event's text
	seq    uint64
	last   Time
	keep   bool
	events []Event
	obs    []func(ObservedEvent)
}

// ObservedEvent is what observers (fault triggers) see of an event.
type ObservedEvent struct {
	At   Time
	Kind Kind
	Proc ProcID // -1 when the event belongs to no process
	Peer ProcID // -1 when there is none
}

func newTracer(keep bool) *tracer {
	return &tracer{h: sha256.New(), keep: keep, buf: make([]byte, 0, 8192), text: make([]byte, 0, 256)}
}

// record appends one event. text is the event's rendered detail; it is
// copied when events are kept.
func (t *tracer) record(at Time, kind Kind, proc, peer ProcID, procName, peerName string, msg uint64, text []byte) {
	t.seq++
	// Canonical encoding: the time since the previous event, the kind, the
	// two process ids (+1, so that NoProc is 0), the message number (0 for
	// none) and the text, each
	// length-prefixed or varint-coded so that the encoding is unambiguous.
	b := t.buf
	b = binary.AppendUvarint(b, uint64(at-t.last))
	t.last = at
	b = append(b, byte(len(kind)))
	b = append(b, kind...)
	b = binary.AppendUvarint(b, uint64(proc+1))
	b = binary.AppendUvarint(b, uint64(peer+1))
	b = binary.AppendUvarint(b, msg)
	b = binary.AppendUvarint(b, uint64(len(text)))
	b = append(b, text...)
	if len(b) >= 4096 {
		t.h.Write(b)
		b = b[:0]
	}
	t.buf = b
	if t.keep {
		txt := string(text)
		if msg != 0 {
			txt = "#" + strconv.FormatUint(msg, 10) + " " + txt
			if len(text) == 0 {
				txt = txt[:len(txt)-1]
			}
		}
		t.events = append(t.events, Event{Seq: t.seq, At: at, Kind: kind, Proc: procName, Peer: peerName, Text: txt})
	}
	for _, f := range t.obs {
		f(ObservedEvent{At: at, Kind: kind, Proc: proc, Peer: peer})
	}
}

// sum returns the SHA-256 of everything recorded so far.
func (t *tracer) sum() [32]byte {
	if len(t.buf) > 0 {
		t.h.Write(t.buf)
		t.buf = t.buf[:0]
	}
	var out [32]byte
	copy(out[:], t.h.Sum(nil))
	return out
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
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return n
	}
	return -1
}
