package fuzz

import (
	"fmt"
	"strings"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/scenarios"
)

// Properties are the properties a campaign can check, in the order
// findings name them (the checker's violation kinds).
var Properties = []string{checker.KindLockSafety, checker.KindResourceSafety, checker.KindLiveness}

// DefaultChecks returns the properties a campaign on a base with
// expectations e checks: the safety properties e claims hold, or both
// safety properties when e claims none holds (see the package doc).
func DefaultChecks(e scenarios.Expect) []string {
	var out []string
	if e.LockSafety == string(checker.Holds) {
		out = append(out, checker.KindLockSafety)
	}
	if e.ResourceSafety == string(checker.Holds) {
		out = append(out, checker.KindResourceSafety)
	}
	if len(out) == 0 {
		out = []string{checker.KindLockSafety, checker.KindResourceSafety}
	}
	return out
}

// ParseChecks reads a comma-separated list of properties; "lock",
// "resource" and "liveness" are accepted as short names. It returns them
// in Properties order, without duplicates.
func ParseChecks(list string) ([]string, error) {
	want := map[string]bool{}
	for _, p := range strings.Split(list, ",") {
		p = strings.TrimSpace(p)
		switch p {
		case "lock", checker.KindLockSafety, "lock_safety":
			want[checker.KindLockSafety] = true
		case "resource", checker.KindResourceSafety, "resource_safety":
			want[checker.KindResourceSafety] = true
		case checker.KindLiveness:
			want[checker.KindLiveness] = true
		default:
			return nil, fmt.Errorf("unknown property %q (allowed: lock, resource, liveness)", p)
		}
	}
	var out []string
	for _, p := range Properties {
		if want[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

// Verdict returns o's verdict on a property.
func Verdict(o *scenarios.Outcome, prop string) checker.Verdict {
	switch prop {
	case checker.KindLockSafety:
		return o.LockSafety
	case checker.KindResourceSafety:
		return o.ResourceSafety
	case checker.KindLiveness:
		return o.Liveness
	}
	return ""
}

// expectKey is the expect block's field for a property.
func expectKey(prop string) string {
	switch prop {
	case checker.KindLockSafety:
		return "lock_safety"
	case checker.KindResourceSafety:
		return "resource_safety"
	}
	return "liveness"
}

// expected returns what e expects of a property ("" when nothing).
func expected(e scenarios.Expect, prop string) string {
	switch prop {
	case checker.KindLockSafety:
		return e.LockSafety
	case checker.KindResourceSafety:
		return e.ResourceSafety
	}
	return e.Liveness
}

// Violated returns the checked properties o violates (in Properties order)
// and whether a checked property's verdict is unknown (a checker timeout).
func Violated(o *scenarios.Outcome, checks []string) (violated []string, inconclusive bool) {
	for _, p := range Properties {
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

// verdictsText renders o's three verdicts ("lock_safety violated,
// resource_safety holds, liveness not-judged").
func verdictsText(o *scenarios.Outcome) string {
	return fmt.Sprintf("lock_safety %s, resource_safety %s, liveness %s", o.LockSafety, o.ResourceSafety, o.Liveness)
}
