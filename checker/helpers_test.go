package checker

import (
	"time"

	"github.com/locksim/locksim/sim"
)

// s returns x seconds of true time.
func s(x int64) sim.Time { return sim.At(time.Duration(x) * time.Second) }

// ms returns x milliseconds of true time.
func ms(x int64) sim.Time { return sim.At(time.Duration(x) * time.Millisecond) }

// bel is a released belief of client on lock "L", acquired by an attempt
// that started at attempt.
func bel(client string, attempt, start, end sim.Time) sim.Belief {
	return sim.Belief{Client: client, Lock: "L", AttemptStart: attempt, Start: start, End: end, Reason: sim.EndReleased}
}

// onLock returns b on lock.
func onLock(lock string, b sim.Belief) sim.Belief {
	b.Lock = lock
	return b
}

// open returns b still held at the end of the run.
func open(b sim.Belief) sim.Belief {
	b.Open, b.End, b.Reason = true, 0, sim.EndRunEnd
	return b
}

// withToken returns b with a fencing token.
func withToken(b sim.Belief, tok int64) sim.Belief {
	b.Token, b.HasToken = tok, true
	return b
}

// sect is a critical section of client on lock "L" with fencing token tok:
// the storage node served its read of value at readAt and decided its write
// of value+1 at writeAt.
func sect(client string, tok int64, readAt, writeAt sim.Time, value int64, outcome sim.WriteOutcome) sim.Section {
	return sim.Section{
		Client: client, Lock: "L", BeliefID: -1, Token: tok, HasToken: true,
		ReadSent: readAt, ReadAt: readAt, Read: true, ReadValue: value,
		WriteSent: writeAt, WriteAt: writeAt, Written: outcome != sim.WriteNone,
		WriteValue: value + 1, Outcome: outcome, ResultAt: writeAt,
	}
}

// want is a want of client on lock "L" from start to end, got or not.
func want(client string, start, end sim.Time, got bool, reason string) sim.Want {
	return sim.Want{Client: client, Lock: "L", Start: start, End: end, Got: got, Reason: reason}
}

// openWant is a want of client on lock "L" still open when the run ended.
func openWant(client string, start sim.Time) sim.Want {
	return sim.Want{Client: client, Lock: "L", Start: start, Open: true, Reason: "run-end"}
}

// fault is a fault record.
func fault(at, until sim.Time, kind, text string, targets ...string) sim.FaultRecord {
	return sim.FaultRecord{At: at, Until: until, Kind: kind, Text: text, Targets: targets, Liveness: liveness[kind]}
}

// liveness is what faults' kind table declares for the kinds these tests
// record (faults.TestKindLiveness holds the table to it); the installer
// fills it into every record it makes.
var liveness = map[string]sim.FaultLiveness{
	"pause":     sim.LiveSpan,
	"partition": sim.LiveLink,
	"delay":     sim.LiveLink,
	"drop":      sim.LiveLink,
	"crash":     sim.LiveCrash,
	"restart":   sim.LiveRestart,
	"heal":      sim.LiveHeal,
}

// history builds a history ending at end, numbering beliefs and sections.
func history(end sim.Time, beliefs []sim.Belief, sections []sim.Section) *sim.History {
	h := &sim.History{End: end}
	for i, b := range beliefs {
		b.ID = i
		h.Beliefs = append(h.Beliefs, b)
	}
	for i, x := range sections {
		x.ID = i
		h.Sections = append(h.Sections, x)
	}
	return h
}
