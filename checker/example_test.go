package checker_test

import (
	"fmt"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/sim"
)

// Kleppmann's story: c1 is paused while it holds the lock, its lease expires
// and c2 acquires it; fencing rejects c1's late write.
func ExampleCheck() {
	sec := func(x int64) sim.Time { return sim.At(time.Duration(x) * time.Second) }
	h := &sim.History{
		Beliefs: []sim.Belief{
			{ID: 0, Client: "c1", Lock: "L", AttemptStart: 0, Start: sec(1), End: sec(31), Reason: sim.EndExpired, Token: 33, HasToken: true},
			{ID: 1, Client: "c2", Lock: "L", AttemptStart: sec(2), Start: sec(24), End: sec(27), Reason: sim.EndReleased, Token: 34, HasToken: true},
		},
		Sections: []sim.Section{
			{ID: 0, Client: "c1", Lock: "L", BeliefID: 0, Token: 33, HasToken: true,
				ReadAt: sec(2), Read: true, ReadValue: 0,
				WriteAt: sec(30), Written: true, WriteValue: 1, Outcome: sim.WriteRejected},
			{ID: 1, Client: "c2", Lock: "L", BeliefID: 1, Token: 34, HasToken: true,
				ReadAt: sec(25), Read: true, ReadValue: 0,
				WriteAt: sec(26), Written: true, WriteValue: 1, Outcome: sim.WriteAccepted},
		},
		Wants: []sim.Want{
			{Client: "c1", Lock: "L", Start: 0, End: sec(1), Got: true},
			{Client: "c2", Lock: "L", Start: sec(2), End: sec(24), Got: true},
		},
		Faults: []sim.FaultRecord{{At: sec(3), Until: sec(29), Kind: "pause", Liveness: sim.LiveSpan, Targets: []string{"c1"}, Text: "c1 paused for 26s"}},
		End:    sec(60),
	}
	r := checker.Check(h, checker.Options{DefaultMaxWait: 30 * time.Second})
	for _, p := range checker.Properties() {
		fmt.Println(p.About().Title+":", r.Verdicts.Of(p.About().Name))
	}
	for _, v := range r.Violations {
		fmt.Println(v.Kind+":", v.Explanation)
	}
	fmt.Println("fencing:", r.Fencing)
	// Output:
	// lock safety: violated
	// resource safety: holds
	// liveness: holds
	// token order: holds
	// lock-safety: c1 believed it held the lock "L" from 1.000s to 31.000s and c2 from 24.000s to 27.000s; the overlap began 21s after c1 paused for 26s at 3.000s.
	// fencing: c1's write with token 33 was rejected at 30.000s after c2 wrote with token 34 at 26.000s
}
