package fuzz

import (
	"fmt"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
)

// Same-instant order choices (issue 27, explore --orders). Events due at
// the same true time run in the order they were queued. At each instant of
// the base run (after its start) at which two or more messages or timers
// are handled, by different processes or from different peers (a tie),
// explore adds one single-fault candidate per other event of the tie: an
// order fault (faults.KindOrder) that runs that event first, the others
// keeping their order. The bound: at an instant with n distinct events
// (a process and the peer of its delivery, or its timer), n - 1 choices,
// never every permutation of them (n!). An event that ran first in the
// base run is not a choice (the base order), and a later event of the
// same process and peer is the one the order fault would move anyway.
//
// What this assumes: the events of a tie are those the base run handled
// at that instant, in the order it handled them; a choice whose event is
// not due when the order fault runs (a message to a paused process waits
// in its inbox) changes nothing, which its fault record says.

// tieEvent is one distinct event of a tie: a delivery to proc from peer,
// or a timer of proc.
type tieEvent struct {
	proc, peer string
	timer      bool
}

// tie is an instant of the base run with two or more distinct events, in
// the order the base ran them.
type tie struct {
	at     sim.Time
	events []tieEvent
}

// tieRecorder collects the base run's ties from its trace, in time order.
type tieRecorder struct {
	cur  tie
	ties []tie
}

func (r *tieRecorder) event(e *sim.Event) {
	if (e.Kind != sim.KindDeliver && e.Kind != sim.KindTimer) || e.At <= 0 {
		return
	}
	if e.At != r.cur.at {
		r.flush()
		r.cur = tie{at: e.At}
	}
	te := tieEvent{proc: e.Proc, peer: e.Peer, timer: e.Kind == sim.KindTimer}
	if te.timer {
		te.peer = ""
	}
	for _, x := range r.cur.events {
		if x == te {
			return
		}
	}
	r.cur.events = append(r.cur.events, te)
}

// flush keeps the current instant when it is a tie (two or more distinct
// events: the same process and peer twice is one).
func (r *tieRecorder) flush() {
	if len(r.cur.events) > 1 {
		r.ties = append(r.ties, r.cur)
	}
	r.cur = tie{}
}

// orderCandidates returns the order choices of the ties: at each, every
// event but the first run first. Choices that cannot be written (a
// delivery whose sender is unknown or the process itself) are counted in
// pruned.
func orderCandidates(ties []tie, pruned map[string]int) []Candidate {
	var out []Candidate
	for _, t := range ties {
		at := time.Duration(t.at)
		for _, e := range t.events[1:] {
			s := faults.Spec{Kind: faults.KindOrder, Node: e.proc, At: &sim.Range{Lo: at, Hi: at}}
			switch {
			case e.timer:
				s.Event = "timer"
			case e.peer == "" || e.peer == e.proc:
				pruned["same instant: a delivery without another sender cannot be named (order's from)"]++
				continue
			default:
				s.From = e.peer
			}
			out = append(out, Candidate{Spec: s, Target: e.proc, Placement: fmt.Sprintf("tie@%s", t.at), Class: orderClass(s)})
		}
	}
	return out
}

// orderClass labels an order choice: "A's delivery from c2 first".
func orderClass(s faults.Spec) string {
	if s.Event == "timer" {
		return s.Node + "'s timer first"
	}
	return s.Node + "'s delivery from " + s.From + " first"
}

// isOrder reports whether a candidate is an order choice.
func (c *Candidate) isOrder() bool { return c.Spec.Kind == faults.KindOrder }
