package sim

import (
	"fmt"
	"strconv"
	"strings"
)

// msgKinds are the kinds whose events may carry a message number, true
// where they always do. The connection kinds ("retransmit", "conn-end") are
// named by their strings: some of their events carry one, some do not.
var msgKinds = map[Kind]bool{
	KindSend: true, KindDeliver: true, KindDrop: true,
	"retransmit": false, "conn-end": false,
}

// cutMsgNumber splits "#N rest" (or "#N") into N and rest.
func cutMsgNumber(text string) (uint64, string, bool) {
	if !strings.HasPrefix(text, "#") {
		return 0, "", false
	}
	num, rest, _ := strings.Cut(text[1:], " ")
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil || n == 0 {
		return 0, "", false
	}
	return n, rest, true
}

// HashEvents recomputes the trace hash of a recorded trace (events read back
// with ReadJSONL), so that a trace file can be matched to the result that
// names its hash: a trace of another scenario, another seed or another
// version hashes differently. lookup maps a process name to its id in the
// kernel that produced the trace (Kernel.Lookup of a world built from the
// same scenario).
//
// It inverts the canonical encoding of tracer: the message number that a
// kept event carries as a "#N" prefix of its text goes back to its place
// (hashed as 0 for a send, whose number is implied).
//
// NB: JSON cannot carry invalid UTF-8, so a trace whose texts held some
// reads back altered and hashes differently; no model writes such texts.
func HashEvents(events []Event, lookup func(name string) (ProcID, bool)) ([32]byte, error) {
	var zero [32]byte
	t := newTracer(false)
	id := func(i int, name string) (ProcID, error) {
		if name == "" {
			return NoProc, nil
		}
		p, ok := lookup(name)
		if !ok {
			return NoProc, fmt.Errorf("event #%d names process %q, which this world does not have", i+1, name)
		}
		return p, nil
	}
	for i, e := range events {
		if e.At < t.last {
			return zero, fmt.Errorf("event #%d goes back in time (%s after %s)", i+1, e.At, t.last)
		}
		proc, err := id(i, e.Proc)
		if err != nil {
			return zero, err
		}
		peer, err := id(i, e.Peer)
		if err != nil {
			return zero, err
		}
		text, hashMsg := e.Text, uint64(0)
		required, carries := msgKinds[e.Kind]
		if carries {
			n, rest, ok := cutMsgNumber(text)
			switch {
			case ok:
				text = rest
				if e.Kind != KindSend {
					hashMsg = n
				}
			case required:
				return zero, fmt.Errorf("event #%d: a %s without its message number", i+1, e.Kind)
			}
		}
		b := t.begin(e.At, kindCode(e.Kind), e.Kind, proc, peer, hashMsg)
		b = append(b, text...)
		// end without keeping events or notifying observers.
		t.end(b, e.At, e.Kind, proc, peer, 0, nil)
	}
	return t.sum(), nil
}
