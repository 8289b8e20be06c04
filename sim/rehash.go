package sim

import (
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
)

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
	t := &tracer{h: sha256.New(), buf: make([]byte, 0, 8192)}
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
		switch e.Kind {
		case KindSend, KindDeliver, KindDrop:
			num, rest, ok := strings.Cut(strings.TrimPrefix(text, "#"), " ")
			n, perr := strconv.ParseUint(num, 10, 64)
			if !strings.HasPrefix(text, "#") || perr != nil {
				return zero, fmt.Errorf("event #%d: a %s without its message number", i+1, e.Kind)
			}
			if !ok {
				rest = ""
			}
			text = rest
			if e.Kind != KindSend {
				hashMsg = n
			}
		}
		b := t.begin(e.At, kindCode(e.Kind), e.Kind, proc, peer, hashMsg)
		b = append(b, text...)
		// end without keeping events or notifying observers.
		t.end(b, e.At, e.Kind, proc, peer, 0, nil)
	}
	return t.sum(), nil
}
