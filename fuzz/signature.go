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
	set := map[string]bool{}
	for _, s := range specs {
		set[faultTarget(s)] = true
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func faultTarget(s faults.Spec) string {
	switch {
	case s.Node != "":
		return s.Kind + " " + s.Node
	case s.From != "" || s.To != "":
		return s.Kind + " " + s.From + "->" + s.To
	case len(s.Groups) > 0:
		gs := make([]string, len(s.Groups))
		for i, g := range s.Groups {
			g = append([]string(nil), g...)
			sort.Strings(g)
			gs[i] = "{" + strings.Join(g, " ") + "}"
		}
		sort.Strings(gs)
		return s.Kind + " " + strings.Join(gs, "|")
	}
	return s.Kind
}

// Group is the findings that share a property and a signature.
type Group struct {
	Kind      string `json:"kind"`
	Signature string `json:"signature"`
	// Findings are the finding numbers, in run order.
	Findings []int `json:"findings"`
}

// Groups groups the shrunk findings of res by their first violated
// property and the signature of their shrunk schedule, in the order of
// each group's first finding. Findings not shrunk (not kept, or no
// --shrink) have no reliable signature (their schedules carry faults that
// do not matter) and are left out.
func Groups(res *Result) []Group {
	var out []Group
	index := map[string]int{}
	for _, f := range res.Findings {
		if f.Shrunk == nil {
			continue
		}
		sig := Signature(f.Shrunk.After)
		key := f.Kind() + "\x00" + sig
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, Group{Kind: f.Kind(), Signature: sig})
		}
		out[i].Findings = append(out[i].Findings, f.Number)
	}
	return out
}
