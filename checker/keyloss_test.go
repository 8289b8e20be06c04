package checker

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locksim/locksim/sim"
)

func loss(at sim.Time, node, key string, cause sim.KeyLossCause, detail string) sim.KeyLoss {
	return sim.KeyLoss{At: at, Node: node, Key: key, Cause: cause, Detail: detail}
}

// TestConcatJoinsKeyLosses: the pieces of a streamed history, joined, keep
// every key loss in order, and the sink counts them among the records held.
func TestConcatJoinsKeyLosses(t *testing.T) {
	p1 := history(s(10), []sim.Belief{onLock("lock", bel("c1", s(0), s(1), s(2)))}, nil)
	p1.KeyLosses = []sim.KeyLoss{loss(s(3), "A", "lock", sim.LossExpired, "")}
	p2 := &sim.History{End: s(20), Beliefs: []sim.Belief{onLock("lock", bel("c2", s(11), s(12), s(13)))}}
	p2.Beliefs[0].ID = 1
	p2.KeyLosses = []sim.KeyLoss{loss(s(12), "B", "lock", sim.LossEvicted, "x"), loss(s(14), "A", "other", sim.LossExpired, "")}
	h := concat([]*sim.History{p1, p2}, nil, s(20))
	assert.Equal(t, []sim.KeyLoss{p1.KeyLosses[0], p2.KeyLosses[0], p2.KeyLosses[1]}, h.KeyLosses)
	assert.Len(t, h.Beliefs, 2)
	assert.Equal(t, 3, records(p2), "one belief and two losses")
}
