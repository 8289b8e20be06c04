package locksim

import (
	"strings"
	"testing"
)

// RequireSafe fails the test t, naming why, unless res shows the run safe:
// no property violated or unknown (a checker timeout), and lock safety
// judged on at least one grant (a not-used lock safety proves nothing:
// Result.Vacuous says why). For tests of user code through the facade:
//
//	res, err := locksim.Run(s, locksim.Options{})
//	require.NoError(t, err)
//	locksim.RequireSafe(t, res)
func RequireSafe(t testing.TB, res *Result) {
	t.Helper()
	var why []string
	for _, j := range res.Verdicts {
		switch j.Verdict {
		case Violated, Unknown:
			why = append(why, j.Property+" "+string(j.Verdict))
		}
	}
	if res.LockSafety == NotUsed {
		why = append(why, "lock_safety not-used: nothing was granted, so nothing shows the lock safe")
	}
	if len(why) == 0 {
		return
	}
	msg := "locksim: run of " + res.Scenario + " is not safe: " + strings.Join(why, "; ")
	for _, e := range res.Explanations {
		msg += "\n  - " + e
	}
	for _, v := range res.Vacuous {
		msg += "\n  vacuous: " + v
	}
	t.Fatalf("%s\n  replay: seed %d", msg, res.Seed)
}
