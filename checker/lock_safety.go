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
		Expect:   []Verdict{Holds, Violated},
		Fuzz:     FuzzByDefault,
	}
}

// Judge is porcupine's verdict; a history of stock counters without any
// lock client has no lock to judge: NotUsed, never a vacuous holds.
func (lockSafety) Judge(h *sim.History, opts Options) Judgement {
	if countersOnly(h) {
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

// Stream carries nothing: two overlapping beliefs are never separated by
// a quiet point, and the pieces are legal iff the whole is (split.go).
func (lockSafety) Stream(opts Options) PieceJudge { return lockPieces{withDefault(opts.Timeout)} }

type lockPieces struct{ timeout time.Duration }

func (l lockPieces) Piece(p *sim.History) (bool, string) {
	if v := checkLock(p, l.timeout, false).verdict; v != Holds {
		return false, "lock safety " + string(v)
	}
	return true, ""
}

func (lockPieces) Final(*sim.History) Judgement { return Judgement{Verdict: Holds} }

// countersOnly reports whether h holds stock counters and no lock client
// at all (issue 13's flash sale): there is no lock to judge.
func countersOnly(h *sim.History) bool {
	return len(h.Counter) > 0 && len(h.Wants) == 0 && len(h.Attempts) == 0 && len(h.Beliefs) == 0
}
