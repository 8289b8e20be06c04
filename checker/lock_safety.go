package checker

import (
	"time"

	"github.com/locksim/locksim/sim"
)

// LockSafety is the name of the lock-safety property.
const LockSafety = "lock_safety"

// KindLockSafety is the kind of a lock-safety violation.
const KindLockSafety = "lock-safety"

// lockSafety asks whether two belief periods of a lock overlapped in true
// time, decided by porcupine with the owner-aware mutex model (LockModel)
// piece by piece (split.go), and explained from the history (explain.go).
type lockSafety struct{}

func (lockSafety) About() About {
	return About{
		Name: LockSafety, Title: "lock safety", Kind: KindLockSafety, Short: "lock",
		Explains: "no two clients believed they held the same lock at the same true time",
		Doc: "`violated` when two clients believed they held the lock at overlapping true times (porcupine, an owner-aware mutex over belief periods). A holder counts until its belief ends, at its next check, not at the end of the validity it computed (Redlock's and redsync's ttl - elapsed - drift); a holder that went on believing past that validity is named with the terms it computed (\"c1's validity ended at 4.948s (ttl 5s - 20ms elapsed - 52ms drift ...) but it kept believing until 5.024s without re-checking\", `redlock-hold-outlives-validity`)." +
			"\n\n`not-used` when no client was ever granted the lock: a `holds` there would be vacuous, and the output says so (\"lock safety not used: no client was granted the lock (685 acquire attempts, 684 failed)\"); a `holds` over a single grant carries the same kind of note." +
			"\n\nAn overlap explanation first names what the servers did on their own to the holder's key between the two beliefs: an expiry, an eviction, a ZooKeeper session expiry, a MySQL connection killed with its row lock, a restart that recovered less than the crashed server held, a demoted master whose full resync dropped the key. The history does not say which servers granted the lock, so a loss of that key on any server is named.",
		Expect: []Verdict{Holds, Violated, NotUsed},
		Fuzz:   FuzzByDefault,
	}
}

// Judge is porcupine's verdict; a history in which no client was ever
// granted the lock (no belief period: a history of stock counters without
// any lock client, or clients whose every attempt failed) has nothing to
// judge: NotUsed, never a vacuous holds (issue 25).
func (lockSafety) Judge(h *sim.History, opts Options) Judgement {
	if len(h.Beliefs) == 0 {
		return Judgement{Verdict: NotUsed}
	}
	p := checkLock(h, withDefault(opts.Timeout), opts.Visualize)
	j := Judgement{Verdict: p.verdict}
	if p.verdict == Violated {
		j.explain = func() ([]Violation, *page) {
			vs := explainLock(h)
			if opts.Visualize && p.index > 0 {
				return vs, &page{piece: p, rows: beliefClients(h), vs: vs, file: PageLock}
			}
			return vs, nil
		}
	}
	return j
}

// Stream carries whether any belief was seen: two overlapping beliefs are
// never separated by a quiet point, and the pieces are legal iff the whole
// is (split.go).
func (lockSafety) Stream(opts Options) PieceJudge {
	return &lockPieces{timeout: withDefault(opts.Timeout)}
}

type lockPieces struct {
	timeout time.Duration
	granted bool // some piece had a belief period
}

func (l *lockPieces) Piece(p *sim.History) (bool, string) {
	if len(p.Beliefs) > 0 {
		l.granted = true
	}
	if v := checkLock(p, l.timeout, false).verdict; v != Holds {
		return false, "lock safety " + string(v)
	}
	return true, ""
}

func (l *lockPieces) Final(*sim.History) Judgement {
	if !l.granted {
		return Judgement{Verdict: NotUsed}
	}
	return Judgement{Verdict: Holds}
}

// countersOnly reports whether h holds stock counters and no lock client
// at all (issue 13's flash sale): there is no lock to judge.
func countersOnly(h *sim.History) bool {
	return len(h.Counter) > 0 && len(h.Wants) == 0 && len(h.Attempts) == 0 && len(h.Beliefs) == 0
}
