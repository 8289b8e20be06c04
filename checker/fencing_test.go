package checker

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locksim/locksim/sim"
)

func TestCheckTokenOrder(t *testing.T) {
	// under links a section to the belief with the given ID.
	under := func(x sim.Section, belief int) sim.Section {
		x.BeliefID = belief
		return x
	}
	noToken := func(x sim.Section) sim.Section {
		x.Token, x.HasToken = 0, false
		return x
	}
	tests := []struct {
		name     string
		beliefs  []sim.Belief
		sections []sim.Section
		faults   []sim.FaultRecord
		want     Verdict
		texts    []string
	}{
		{name: "no section", want: NotUsed},
		{name: "sections without tokens", want: NotUsed,
			sections: []sim.Section{noToken(sect("c1", 0, s(1), s(2), 0, sim.WriteAccepted))}},
		{name: "increasing tokens", want: Holds,
			sections: []sim.Section{sect("c1", 1, s(1), s(2), 0, sim.WriteAccepted), sect("c2", 2, s(3), s(4), 1, sim.WriteAccepted)}},
		{name: "a lower token rejected is fencing at work", want: Holds,
			sections: []sim.Section{sect("c2", 34, s(1), s(2), 0, sim.WriteAccepted), sect("c1", 33, s(1), s(3), 0, sim.WriteRejected)}},
		{name: "token 33 accepted after 34", want: Violated,
			sections: []sim.Section{sect("c2", 34, s(1), s(2), 0, sim.WriteAccepted), sect("c1", 33, s(1), s(3), 1, sim.WriteAccepted)},
			texts:    []string{`the resource accepted c1's write with token 33 at 3.000s after it had accepted c2's write with token 34 at 2.000s; no fault preceded the lower token's acceptance.`}},
		{name: "one token issued twice because the counter restarted empty", want: Violated,
			beliefs: []sim.Belief{withToken(bel("c1", s(0), s(1), s(2)), 1), withToken(bel("c2", s(4), s(5), s(6)), 1)},
			sections: []sim.Section{
				under(sect("c1", 1, ms(1100), ms(1900), 0, sim.WriteAccepted), 0),
				under(sect("c2", 1, ms(5100), ms(5900), 1, sim.WriteAccepted), 1),
			},
			faults: []sim.FaultRecord{fault(ms(3200), 0, "restart", "A restarted", "A")},
			texts:  []string{`token 1 was issued to c1 and c2 (with the locks acquired at 1.000s and 5.000s) and the resource accepted both writes, at 1.900s and 5.900s; the second grant of token 1 began 1.8s after A restarted at 3.200s.`}},
		{name: "two sections of one grant may share its token", want: Holds,
			beliefs: []sim.Belief{withToken(bel("c1", s(0), s(1), s(9)), 7)},
			sections: []sim.Section{
				under(sect("c1", 7, s(2), s(3), 0, sim.WriteAccepted), 0),
				under(sect("c1", 7, s(4), s(5), 1, sim.WriteAccepted), 0),
			}},
		{name: "one client twice with one token", want: Violated,
			sections: []sim.Section{sect("c1", 3, s(2), s(3), 0, sim.WriteAccepted), sect("c1", 3, s(4), s(5), 1, sim.WriteAccepted)},
			texts:    []string{`token 3 was issued to c1 twice and the resource accepted both writes, at 3.000s and 5.000s; no fault preceded the second grant of token 3.`}},
		{name: "locks are judged separately", want: Holds,
			sections: []sim.Section{
				sect("c1", 5, s(1), s(2), 0, sim.WriteAccepted),
				func() sim.Section { x := sect("c2", 1, s(3), s(4), 0, sim.WriteAccepted); x.Lock = "M"; return x }(),
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := history(s(10), tt.beliefs, tt.sections)
			h.Faults = tt.faults
			v, vs := CheckTokenOrder(h)
			assert.Equal(t, tt.want, v)
			var texts []string
			for _, x := range vs {
				assert.Equal(t, KindTokenOrder, x.Kind)
				texts = append(texts, x.Explanation)
			}
			assert.Equal(t, tt.texts, texts)
		})
	}
}
