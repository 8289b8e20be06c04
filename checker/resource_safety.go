package checker

import (
	"time"

	"github.com/locksim/locksim/sim"
)

// ResourceSafety is the name of the resource-safety property.
const ResourceSafety = "resource_safety"

// KindResourceSafety is the kind of a resource-safety violation.
const KindResourceSafety = "resource-safety"

// resourceSafety asks whether the critical sections on the protected
// resource are explained by some order in which each accepted write
// incremented the value it read (porcupine with ResourceModel, piece by
// piece: split.go), and whether the stock counters sold what they had
// (CheckCounters): both are the resource's safety, so a history with both
// is safe only if both are.
type resourceSafety struct{}

func (resourceSafety) About() About {
	return About{
		Name: ResourceSafety, Title: "resource safety", Kind: KindResourceSafety, Short: "resource",
		Explains: "the protected resource's history is explained by some serial order of its accepted writes (no lost update, no oversold stock)",
		Doc: "`violated` when the resource accepted writes that no mutually exclusive order explains: a lost update (porcupine, a fetch-and-increment counter, one operation per critical section)." +
			"\n\nFor stock counters (`counters`) it is judged on the counter operations the clients record (client-side call and return times, the value each saw, whether it sold, whether the outcome is known): a porcupine model of the stock in which a purchase that saw v happens when the stock is v and a sale decrements it (DECR: the stock was reply + 1); an outcome the client never learned (a timeout, a lost connection) may or may not have taken effect (a nondeterministic model, returning at infinity). More acknowledged sales than the declared stock is named \"oversold\"." +
			"\n\n`not-used` when no critical section and no stock counter touched the resource.",
		Expect: []Verdict{Holds, Violated, NotUsed},
		Fuzz:   FuzzByDefault,
	}
}

// Judge is porcupine's verdict on the critical sections joined with the
// stock counters' (CheckCounters); a history with neither has nothing to
// judge: NotUsed, never a vacuous holds (issue 25).
func (resourceSafety) Judge(h *sim.History, opts Options) Judgement {
	if len(h.Sections) == 0 && len(h.Counter) == 0 {
		return Judgement{Verdict: NotUsed}
	}
	timeout := withDefault(opts.Timeout)
	p := checkResource(h, timeout, opts.Visualize)
	j := Judgement{Verdict: p.verdict}
	if p.verdict == Violated {
		j.explain = func() ([]Violation, *page) {
			vs := explainResource(h)
			if opts.Visualize && p.index > 0 {
				return vs, &page{piece: p, rows: sectionClients(checkedSections(h)), vs: vs, file: PageResource}
			}
			return vs, nil
		}
	}
	cv, cvs := CheckCounters(h, timeout)
	if cv == NotUsed {
		return j
	}
	switch {
	case len(h.Sections) == 0:
		j.Verdict = cv
	case cv == Violated:
		j.Verdict = Violated
	case cv == Unknown && j.Verdict == Holds:
		j.Verdict = Unknown
	}
	j.Violations = append(j.Violations, cvs...)
	return j
}

// Stream carries each resource's value at the cut, the start of the next
// piece's counter (split.go). The stock counters are not cut into pieces:
// the kernel keeps their records until the end of the run, so they all
// arrive with the last piece and are judged there, whole.
func (resourceSafety) Stream(opts Options) PieceJudge {
	return &resourcePieces{timeout: withDefault(opts.Timeout), value: map[string]int64{}}
}

type resourcePieces struct {
	timeout time.Duration
	value   map[string]int64 // each resource's value at the last cut
	used    bool             // some piece had a section or a counter op
}

func (r *resourcePieces) Piece(p *sim.History) (bool, string) {
	if len(p.Sections) > 0 || len(p.Counter) > 0 {
		r.used = true
	}
	if v := checkResourceFrom(p, r.timeout, false, r.value).verdict; v != Holds {
		return false, "resource safety " + string(v)
	}
	if len(p.Counter) > 0 {
		if v, _ := CheckCounters(p, r.timeout); v != Holds && v != NotUsed {
			return false, "resource safety (stock counters) " + string(v)
		}
	}
	return true, ""
}

func (r *resourcePieces) Final(*sim.History) Judgement {
	if !r.used {
		return Judgement{Verdict: NotUsed}
	}
	return Judgement{Verdict: Holds}
}
