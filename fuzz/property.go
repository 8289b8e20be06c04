package fuzz

import (
	"fmt"
	"strings"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/scenarios"
)

// A campaign knows a property by its violation kind (About().Kind), the
// word findings are grouped under; everything else about it comes from the
// checker's registry.

// Properties returns the kinds of the properties a campaign can check
// (checker.About.Fuzz), in the order findings name them: registry order.
func Properties() []string {
	var out []string
	for _, a := range fuzzable() {
		out = append(out, a.Kind)
	}
	return out
}

// fuzzable returns the registered properties a campaign can target.
func fuzzable() []checker.About {
	var out []checker.About
	for _, p := range checker.Properties() {
		if a := p.About(); a.Fuzz != checker.NotFuzzed {
			out = append(out, a)
		}
	}
	return out
}

// about returns the fuzzable property of kind.
func about(kind string) (checker.About, bool) {
	for _, a := range fuzzable() {
		if a.Kind == kind {
			return a, true
		}
	}
	return checker.About{}, false
}

// DefaultChecks returns the properties a campaign on a base with
// expectations e checks: the properties fuzzed by default that e claims
// hold, or all of them when e claims none holds (see the package doc).
func DefaultChecks(e scenarios.Expect) []string {
	var out, all []string
	for _, a := range fuzzable() {
		if a.Fuzz != checker.FuzzByDefault {
			continue
		}
		all = append(all, a.Kind)
		if e.Of(a.Name) == checker.Holds {
			out = append(out, a.Kind)
		}
	}
	if len(out) == 0 {
		out = all
	}
	return out
}

// ParseChecks reads a comma-separated list of properties, each by its
// kind, its name or its short label ("lock"). It returns them in
// Properties order, without duplicates.
func ParseChecks(list string) ([]string, error) {
	want := map[string]bool{}
	var allowed []string
	for _, a := range fuzzable() {
		allowed = append(allowed, a.Short)
	}
	for _, p := range strings.Split(list, ",") {
		p = strings.TrimSpace(p)
		found := false
		for _, a := range fuzzable() {
			if p == a.Kind || p == a.Name || p == a.Short {
				want[a.Kind], found = true, true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown property %q (allowed: %s)", p, strings.Join(allowed, ", "))
		}
	}
	var out []string
	for _, p := range Properties() {
		if want[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

// Verdict returns o's verdict on a property.
func Verdict(o *scenarios.Outcome, kind string) checker.Verdict {
	return o.Verdicts.Of(expectKey(kind))
}

// expectKey is the expect block's field for a property: its name.
func expectKey(kind string) string {
	a, _ := about(kind)
	return a.Name
}

// expected returns what e expects of a property ("" when nothing).
func expected(e scenarios.Expect, kind string) checker.Verdict {
	return e.Of(expectKey(kind))
}

// Violated returns the checked properties o violates (in Properties order)
// and whether a checked property's verdict is unknown (a checker timeout).
func Violated(o *scenarios.Outcome, checks []string) (violated []string, inconclusive bool) {
	for _, p := range Properties() {
		if !contains(checks, p) {
			continue
		}
		switch Verdict(o, p) {
		case checker.Violated:
			violated = append(violated, p)
		case checker.Unknown:
			inconclusive = true
		}
	}
	return violated, inconclusive
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fuzzVerdicts keeps the verdicts of the properties a campaign can check,
// the ones a finding records.
func fuzzVerdicts(vs checker.Verdicts) checker.Verdicts {
	out := checker.Verdicts{}
	for _, a := range fuzzable() {
		out = append(out, checker.Judged{Property: a.Name, Verdict: vs.Of(a.Name)})
	}
	return out
}

// verdictsText renders the verdicts of the properties a campaign can check
// ("lock_safety violated, resource_safety holds, liveness not-judged").
func verdictsText(vs checker.Verdicts) string {
	var parts []string
	for _, j := range fuzzVerdicts(vs) {
		parts = append(parts, j.Property+" "+string(j.Verdict))
	}
	return strings.Join(parts, ", ")
}
