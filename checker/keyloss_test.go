package checker

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

func loss(at sim.Time, node, key string, cause sim.KeyLossCause, detail string) sim.KeyLoss {
	return sim.KeyLoss{At: at, Node: node, Key: key, Cause: cause, Detail: detail}
}

// TestKeyLossExplanations: an overlap explanation names the server's own
// losses of the first holder's lock key between the two beliefs, before
// the fault clause (or instead of "no fault preceded").
func TestKeyLossExplanations(t *testing.T) {
	// c1 believes from 0.003s to 5.011s, c2 from 1.003s to 2.010s.
	pair := []sim.Belief{onLock("lock", bel("c1", ms(1), ms(3), ms(5011))), onLock("lock", bel("c2", ms(1000), ms(1003), ms(2010)))}
	const head = `c1 believed it held the lock "lock" from 0.003s to 5.011s and c2 from 1.003s to 2.010s; `
	tests := []struct {
		name    string
		beliefs []sim.Belief
		losses  []sim.KeyLoss
		faults  []sim.FaultRecord
		want    string
	}{
		{
			name:   "an eviction, without a fault",
			losses: []sim.KeyLoss{loss(ms(1001), "A", "lock", sim.LossEvicted, "maxmemory 1450 bytes, policy volatile-lru")},
			want:   head + `A evicted the lock key "lock" at 1.001s (maxmemory 1450 bytes, policy volatile-lru) while c1 believed it held the lock, then c2 acquired it at 1.003s.`,
		},
		{
			name:   "an expiry, before the holder's pause",
			losses: []sim.KeyLoss{loss(ms(900), "A", "lock", sim.LossExpired, "")},
			faults: []sim.FaultRecord{fault(ms(100), ms(4100), "pause", "c1 paused for 4s", "c1")},
			want:   head + `A expired the lock key "lock" at 0.900s (its TTL ran out) while c1 believed it held the lock, then c2 acquired it at 1.003s; the overlap began 903ms after c1 paused for 4s at 0.100s.`,
		},
		{
			name:   "a session expiry deletes a child of the lock's znode",
			losses: []sim.KeyLoss{loss(ms(950), "zk", "/lock/_c_ab-lock-0000000000", sim.LossSessionExpired, "session s1 timeout 10s")},
			want:   head + `zk expired the session of the lock node "/lock/_c_ab-lock-0000000000" at 0.950s (session s1 timeout 10s) while c1 believed it held the lock, then c2 acquired it at 1.003s.`,
		},
		{
			name:   "a killed connection's row lock",
			losses: []sim.KeyLoss{loss(ms(1002), "D", "lock", sim.LossConnectionKilled, "table locks, conn 1 wait_timeout")},
			want:   head + `D closed the connection holding the row lock "lock" and rolled it back at 1.002s (table locks, conn 1 wait_timeout) while c1 believed it held the lock, then c2 acquired it at 1.003s.`,
		},
		{
			name: "a quorum's keys expiring one after another make one item, another cause its own",
			losses: []sim.KeyLoss{
				loss(ms(900), "A", "lock", sim.LossExpired, ""),
				loss(ms(910), "B", "lock", sim.LossExpired, ""),
				loss(ms(920), "C", "lock", sim.LossExpired, ""),
				loss(ms(930), "D", "lock", sim.LossEvicted, "maxmemory 1 bytes, policy allkeys-lru"),
			},
			want: head + `A, B and C expired the lock key "lock" between 0.900s and 0.920s (its TTL ran out) and D evicted the lock key "lock" at 0.930s (maxmemory 1 bytes, policy allkeys-lru) while c1 believed it held the lock, then c2 acquired it at 1.003s.`,
		},
		{
			name:    "the times get the digits that keep the loss before the grant",
			beliefs: []sim.Belief{onLock("lock", bel("c1", ms(1), ms(3), ms(5011))), onLock("lock", bel("c2", ms(1000), ms(1003)+500, ms(2010)))},
			losses:  []sim.KeyLoss{loss(ms(1003)+200, "A", "lock", sim.LossExpired, "")},
			want:    `c1 believed it held the lock "lock" from 0.003s to 5.011s and c2 from 1.003s to 2.010s; A expired the lock key "lock" at 1.003000200s (its TTL ran out) while c1 believed it held the lock, then c2 acquired it at 1.003000500s.`,
		},
		{
			name:    "one client twice",
			beliefs: []sim.Belief{onLock("lock", bel("c1", ms(1), ms(3), ms(5011))), onLock("lock", bel("c1", ms(1000), ms(1003), ms(2010)))},
			losses:  []sim.KeyLoss{loss(ms(1001), "A", "lock", sim.LossExpired, "")},
			want:    `c1 believed it held the lock "lock" twice at once, from 0.003s to 5.011s and from 1.003s to 2.010s; A expired the lock key "lock" at 1.001s (its TTL ran out) while c1 believed it held the lock, then c1 again acquired it at 1.003s.`,
		},
		{
			name: "a loss whose server knew its holder is named for that holder only",
			losses: []sim.KeyLoss{
				{At: ms(900), Node: "zk", Key: "/lock/_c_cd-lock-0000000001", Cause: sim.LossSessionExpired, Holder: "c3"},
				{At: ms(950), Node: "zk", Key: "/lock/_c_ab-lock-0000000000", Cause: sim.LossSessionExpired, Holder: "c1"},
			},
			want: head + `zk expired the session of the lock node "/lock/_c_ab-lock-0000000000" at 0.950s while c1 believed it held the lock, then c2 acquired it at 1.003s.`,
		},
		{
			name: "losses of another key, before the first belief, at or after the second one are not named",
			losses: []sim.KeyLoss{
				loss(ms(2), "A", "lock", sim.LossExpired, ""),
				loss(ms(500), "A", "other", sim.LossEvicted, "maxmemory 1 bytes, policy allkeys-lru"),
				loss(ms(600), "zk", "/lockx/_c_ab-lock-0000000000", sim.LossSessionExpired, ""),
				loss(ms(700), "zk", "/lock", sim.LossSessionExpired, ""),
				loss(ms(1003), "A", "lock", sim.LossExpired, ""),
				loss(ms(1500), "B", "lock", sim.LossExpired, ""),
			},
			want: head + `no fault preceded the overlap.`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			beliefs := tt.beliefs
			if beliefs == nil {
				beliefs = pair
			}
			h := history(s(100), beliefs, nil)
			h.Faults, h.KeyLosses = tt.faults, tt.losses
			require.Equal(t, Violated, CheckLock(h, 0))
			vs := explainLock(h)
			require.Len(t, vs, 1)
			assert.Equal(t, tt.want, vs[0].Explanation)
		})
	}
}

// TestKeyLossesWithoutOverlap: a loss changes no verdict (a normal TTL
// expiry after a crash, for one, leaves the history legal).
func TestKeyLossesWithoutOverlap(t *testing.T) {
	h := history(s(100), []sim.Belief{onLock("lock", bel("c1", s(0), s(1), s(2))), onLock("lock", bel("c2", s(3), s(4), s(5)))}, nil)
	h.KeyLosses = []sim.KeyLoss{loss(ms(3500), "A", "lock", sim.LossExpired, "")}
	assert.Equal(t, Holds, CheckLock(h, 0))
	assert.Empty(t, overlaps(h))
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
