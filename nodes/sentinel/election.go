package sentinel

import "strconv"

// voteLeader is sentinelVoteLeader (sentinel.c:4749-4775): one vote per
// epoch, first come first served, as in Raft. It returns the vote this
// sentinel holds for the latest epoch it voted in ("" when none is known,
// for example after a restart: only the epoch is saved).
func (s *Sentinel) voteLeader(reqEpoch uint64, reqRunID string) (string, uint64) {
	m := &s.m
	if reqEpoch > s.currentEpoch {
		s.setEpoch(reqEpoch)
	}
	if m.leaderEpoch < reqEpoch && s.currentEpoch <= reqEpoch {
		m.leader = reqRunID
		m.leaderEpoch = s.currentEpoch
		s.flushConfig()
		s.env.Logf(KindVote, "+vote-for-leader %s %d", m.leader, m.leaderEpoch)
		s.publish("+vote-for-leader", m.leader+" "+strconv.FormatUint(m.leaderEpoch, 10)) // sentinel.c:4763
		// Having voted for another, this sentinel will not start a failover
		// of its own for 2*failover_timeout (plus a desync of up to 1 s)
		// counted from now (sentinel.c:4768-4769, 4980).
		if m.leader != s.myid {
			m.failoverStartTime = s.now() + s.env.Rand().Int63n(maxDesync)
		}
	}
	return m.leader, m.leaderEpoch
}

// getLeader is sentinelGetLeader (sentinel.c:4805-4870): count the votes
// for epoch that the other sentinels reported, add our own (for the most
// voted candidate, or for ourselves), and return the winner if it has an
// absolute majority of all known sentinels and at least the quorum.
//
// NB: Redis picks among equally voted candidates in dict order; the model
// takes the lexicographically smallest, so runs are reproducible.
func (s *Sentinel) getLeader(epoch uint64) string {
	m := &s.m
	voters := len(m.sentinels) + 1
	var names []string
	counts := map[string]int{}
	for _, p := range m.sentinels {
		if p.leader != "" && p.leaderEpoch == s.currentEpoch {
			if counts[p.leader] == 0 {
				names = append(names, p.leader)
			}
			counts[p.leader]++
		}
	}
	sortStrings(names)
	winner, maxVotes := "", 0
	for _, n := range names {
		if counts[n] > maxVotes {
			winner, maxVotes = n, counts[n]
		}
	}
	candidate := s.myid
	if winner != "" {
		candidate = winner
	}
	myVote, voteEpoch := s.voteLeader(epoch, candidate)
	if myVote != "" && voteEpoch == epoch {
		counts[myVote]++
		if counts[myVote] > maxVotes {
			winner, maxVotes = myVote, counts[myVote]
		}
	}
	if winner != "" && (maxVotes < voters/2+1 || maxVotes < m.quorum) {
		winner = ""
	}
	return winner
}

// sortStrings sorts a short slice in place (insertion sort: candidates are
// at most the number of sentinels).
func sortStrings(a []string) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
