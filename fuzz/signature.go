package fuzz

import (
	"sort"
	"strings"

	"github.com/locksim/locksim/faults"
)

// Signature names what a schedule does, without sizes and times: the set of
// its faults' kinds and targets ("clock-jump C", "pause c1", "partition
// {A B}|{C c1}", "delay A->c1"), sorted, joined by ", ". Two shrunk
// findings with one signature are, as far as the schedule can tell, one
// bug: a big campaign reports its distinct signatures, not every run.
func Signature(specs []faults.Spec) string {
	return signatureWith(specs, func(n string) string { return n })
}

// signatureWith is Signature with the processes renamed by rn.
func signatureWith(specs []faults.Spec, rn func(string) string) string {
	set := map[string]bool{}
	for _, s := range specs {
		set[faultTarget(s, rn)] = true
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func faultTarget(s faults.Spec, rn func(string) string) string {
	switch {
	case s.Node != "":
		return s.Kind + " " + rn(s.Node)
	case s.From != "" || s.To != "":
		return s.Kind + " " + rn(s.From) + "->" + rn(s.To)
	case len(s.Groups) > 0:
		gs := make([]string, len(s.Groups))
		for i, g := range s.Groups {
			r := make([]string, len(g))
			for j, n := range g {
				r[j] = rn(n)
			}
			sort.Strings(r)
			gs[i] = "{" + strings.Join(r, " ") + "}"
		}
		sort.Strings(gs)
		return s.Kind + " " + strings.Join(gs, "|")
	}
	return s.Kind
}

// Group is the findings that share a property and a signature (up to
// interchangeable processes); Signature is its first finding's.
type Group struct {
	Kind      string `json:"kind"`
	Signature string `json:"signature"`
	// Findings are the finding numbers, in run order.
	Findings []int `json:"findings"`
}

// Groups groups the shrunk findings of res by their first violated
// property and the signature of their shrunk schedule up to the base's
// interchangeable processes (res.Symmetry: {pause A} and {pause D} are
// one group over five Redlock masters of one configuration), in the
// order of each group's first finding, whose signature the group shows. Findings not shrunk (not kept, or no
// --shrink) have no reliable signature (their schedules carry faults that
// do not matter) and are left out.
func Groups(res *Result) []Group {
	var out []Group
	index := map[string]int{}
	for _, f := range res.Findings {
		if f.Shrunk == nil {
			continue
		}
		key := f.Kind() + "\x00" + res.Symmetry.Canonical(f.Shrunk.After)
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, Group{Kind: f.Kind(), Signature: Signature(f.Shrunk.After)})
		}
		out[i].Findings = append(out[i].Findings, f.Number)
	}
	return out
}
