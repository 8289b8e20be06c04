package sentinel

import (
	"fmt"
	"sort"

	"github.com/locksim/locksim/sim"
)

// startFailoverIfNeeded is sentinelStartFailoverIfNeeded
// (sentinel.c:4972-5002): the master is ODOWN, no failover is running, and
// the last attempt (ours, or a vote for another) started at least
// 2*failover_timeout ago.
func (s *Sentinel) startFailoverIfNeeded() bool {
	m := &s.m
	if !m.ri.odown || m.inProgress {
		return false
	}
	if s.now()-m.failoverStartTime < m.failoverTimeout*2 {
		return false
	}
	s.startFailover()
	return true
}

// startFailover is sentinelStartFailover (sentinel.c:4948-4960): a new
// epoch, and a start time up to SENTINEL_MAX_DESYNC in the future. NB: the
// desync does not delay the vote request (it goes out in the same timer run,
// sentinel.c:5403-5404); it shifts the election deadline and the retry
// time, so that sentinels that failed together do not retry together.
func (s *Sentinel) startFailover() {
	m := &s.m
	now := s.now()
	m.state = foWaitStart
	m.inProgress = true
	s.setEpoch(s.currentEpoch + 1)
	m.failoverEpoch = s.currentEpoch
	m.failoverStartTime = now + s.env.Rand().Int63n(maxDesync)
	m.stateChangeTime = now
	s.env.Logf(KindFailoverStart, "+try-failover master %s %s epoch %d", m.name, m.ri.name, m.failoverEpoch)
	s.publish("+try-failover", s.instanceText(m.ri)) // sentinel.c:4956
}

// failoverStateMachine is sentinelFailoverStateMachine
// (sentinel.c:5331-5356): one step per timer run.
func (s *Sentinel) failoverStateMachine() {
	if !s.m.inProgress {
		return
	}
	switch s.m.state {
	case foWaitStart:
		s.failoverWaitStart()
	case foSelectSlave:
		s.failoverSelectSlave()
	case foSendSlaveOfNoOne:
		s.failoverSendSlaveOfNoOne()
	case foWaitPromotion:
		s.failoverWaitPromotion()
	case foReconfSlaves:
		s.failoverReconfNextSlave()
	}
}

// failoverWaitStart is sentinelFailoverWaitStart (sentinel.c:5108-5139):
// go on if elected, abort if not elected within min(10 s, failover_timeout)
// of the (desynchronised) start time.
func (s *Sentinel) failoverWaitStart() {
	m := &s.m
	leader := s.getLeader(m.failoverEpoch)
	if leader != s.myid {
		timeout := int64(electionTimeout)
		if timeout > m.failoverTimeout {
			timeout = m.failoverTimeout
		}
		if s.now()-m.failoverStartTime > timeout {
			s.abortFailover("not-elected")
		}
		return
	}
	s.env.Logf(KindElected, "+elected-leader master %s %s epoch %d", m.name, m.ri.name, m.failoverEpoch)
	s.publish("+elected-leader", s.instanceText(m.ri)) // sentinel.c:5133
	m.state = foSelectSlave
	m.stateChangeTime = s.now()
}

// failoverSelectSlave is sentinelFailoverSelectSlave (sentinel.c:5141-5158).
func (s *Sentinel) failoverSelectSlave() {
	m := &s.m
	cands := s.selectSlave()
	if len(cands) == 0 {
		s.abortFailover("no-good-slave")
		return
	}
	ri := cands[0]
	// The text ranks every candidate (name:priority/offset), so that a
	// report can say why this replica won.
	b := fmt.Appendf(nil, "+selected-slave %s (priority %d, offset %d; ranking", ri.name, ri.slavePriority, ri.slaveReplOffset)
	for _, c := range cands {
		b = fmt.Appendf(b, " %s:%d/%d", c.name, c.slavePriority, c.slaveReplOffset)
	}
	s.env.Log(KindSelectedReplica, string(append(b, ')')))
	ri.promoted = true
	m.promoted = ri
	m.state = foSendSlaveOfNoOne
	m.stateChangeTime = s.now()
}

// failoverSendSlaveOfNoOne is sentinelFailoverSendSlaveOfNoOne
// (sentinel.c:5160-5185).
func (s *Sentinel) failoverSendSlaveOfNoOne() {
	m := &s.m
	if m.promoted.link.disconnected {
		if s.now()-m.stateChangeTime > m.failoverTimeout {
			s.abortFailover("slave-timeout")
		}
		return
	}
	s.sendReplicaOf(m.promoted, "")
	m.state = foWaitPromotion
	m.stateChangeTime = s.now()
}

// failoverWaitPromotion is sentinelFailoverWaitPromotion
// (sentinel.c:5188-5195). The promotion itself is seen in INFO
// (refreshInfo).
func (s *Sentinel) failoverWaitPromotion() {
	if s.now()-s.m.stateChangeTime > s.m.failoverTimeout {
		s.abortFailover("slave-timeout")
	}
}

// abortFailover is sentinelAbortFailover (sentinel.c:5360-5373).
func (s *Sentinel) abortFailover(reason string) {
	m := &s.m
	m.inProgress = false
	m.state = foNone
	m.stateChangeTime = s.now()
	if m.promoted != nil {
		m.promoted.promoted = false
		m.promoted = nil
	}
	s.env.Logf(KindFailoverAbort, "-failover-abort-%s master %s %s epoch %d", reason, m.name, m.ri.name, m.failoverEpoch)
}

// selectSlave is sentinelSelectSlave (sentinel.c:5062-5105) with
// compareSlavesForPromotion (sentinel.c:5034-5060). It returns the suitable
// replicas best first; Redis promotes the first.
func (s *Sentinel) selectSlave() []*instance {
	m := &s.m
	now := s.now()
	maxDown := m.downAfter * 10
	if m.ri.sdown {
		maxDown += now - m.ri.sDownSince
	}
	var cands []*instance
	for _, ri := range m.slaves {
		if ri.sdown || ri.odown || ri.link.disconnected {
			continue
		}
		if now-ri.link.lastAvailTime > pingPeriod*5 {
			continue
		}
		if ri.slavePriority == 0 {
			continue
		}
		validity := int64(infoPeriod * 3)
		if m.ri.sdown {
			validity = pingPeriod * 5
		}
		if now-ri.infoRefresh > validity {
			continue
		}
		if ri.masterLinkDownTime > maxDown {
			continue
		}
		cands = append(cands, ri)
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.slavePriority != b.slavePriority {
			return a.slavePriority < b.slavePriority
		}
		if a.slaveReplOffset != b.slaveReplOffset {
			return a.slaveReplOffset > b.slaveReplOffset
		}
		// Lexicographically smaller run id (strcasecmp). Simplification: an
		// instance whose INFO has no run_id is compared by its process name
		// (Redis sorts a missing run id last).
		return lowerASCII(a.runIDOrName()) < lowerASCII(b.runIDOrName())
	})
	return cands
}

func (ri *instance) runIDOrName() string {
	if ri.runID != "" {
		return ri.runID
	}
	return ri.name
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// failoverReconfNextSlave is sentinelFailoverReconfNextSlave
// (sentinel.c:5260-5318): tell the other replicas to replicate the promoted
// one, parallel_syncs at a time.
func (s *Sentinel) failoverReconfNextSlave() {
	m := &s.m
	now := s.now()
	inProgress := 0
	for _, ri := range m.slaves {
		if ri.reconfSent || ri.reconfInProg {
			inProgress++
		}
	}
	for _, ri := range m.slaves {
		if inProgress >= m.parallelSyncs {
			break
		}
		if ri.promoted || ri.reconfDone {
			continue
		}
		if ri.reconfSent && now-ri.slaveReconfSentT > slaveReconfTimeout {
			ri.reconfSent = false
			ri.reconfDone = true
			s.env.Logf(KindReconfDone, "-slave-reconf-sent-timeout %s", ri.name)
		}
		if ri.reconfSent || ri.reconfInProg || ri.link.disconnected {
			continue
		}
		s.sendReplicaOf(ri, m.promoted.name)
		ri.reconfSent = true
		ri.slaveReconfSentT = now
		s.env.Logf(KindReconfReplica, "+slave-reconf-sent %s (replicaof %s)", ri.name, m.promoted.name)
		inProgress++
	}
	s.failoverDetectEnd()
}

// failoverDetectEnd is sentinelFailoverDetectEnd (sentinel.c:5197-5258).
func (s *Sentinel) failoverDetectEnd() {
	m := &s.m
	if m.promoted == nil || m.promoted.sdown {
		return
	}
	notReconfigured := 0
	for _, ri := range m.slaves {
		if ri.promoted || ri.reconfDone || ri.sdown {
			continue
		}
		notReconfigured++
	}
	timeout := false
	if s.now()-m.stateChangeTime > m.failoverTimeout {
		notReconfigured = 0
		timeout = true
		s.env.Logf(KindFailoverEnd, "+failover-end-for-timeout master %s", m.name)
		s.publish("+failover-end-for-timeout", s.instanceText(m.ri)) // sentinel.c:5224
	}
	if notReconfigured == 0 {
		if !timeout {
			s.env.Logf(KindFailoverEnd, "+failover-end master %s", m.name)
			s.publish("+failover-end", s.instanceText(m.ri)) // sentinel.c:5228
		}
		m.state = foUpdateConfig
		m.stateChangeTime = s.now()
	}
	if timeout {
		for _, ri := range m.slaves {
			if ri.promoted || ri.reconfDone || ri.reconfSent || ri.link.disconnected {
				continue
			}
			s.sendReplicaOf(ri, m.promoted.name)
			ri.reconfSent = true
			s.env.Logf(KindReconfReplica, "+slave-reconf-sent-be %s (replicaof %s)", ri.name, m.promoted.name)
		}
	}
}

// switchToPromoted is sentinelFailoverSwitchToPromotedSlave
// (sentinel.c:5320-5329).
func (s *Sentinel) switchToPromoted() {
	m := &s.m
	ref := m.ri
	if m.promoted != nil {
		ref = m.promoted
	}
	s.env.LogfAttrs(KindSwitchMaster, []sim.Attr{sim.Str("master_name", m.name), sim.Str("from", m.ri.name), sim.Str("to", ref.name)},
		"+switch-master %s %s %d %s %d", m.name, m.ri.name, Port, ref.name, Port)
	// Published before the address changes (sentinel.c:5324-5328), in the
	// same event-loop step: a client that asks after the message is
	// answered the new master.
	s.publish("+switch-master", m.name+" "+m.ri.name+" "+portString+" "+ref.name+" "+portString)
	s.resetMasterAndChangeAddress(ref.name, ref.id)
}

// resetMasterAndChangeAddress is sentinelResetMasterAndChangeAddress
// (sentinel.c:1595-1652) with sentinelResetMaster (sentinel.c:1533-1567):
// the new address becomes the master; the old master and the other replicas
// become replicas, with fresh state; the failover state is cleared and a new
// failover may start at once. The sentinels and their votes are kept.
func (s *Sentinel) resetMasterAndChangeAddress(addr string, id sim.ProcID) {
	m := &s.m
	now := s.now()
	var names []string
	for _, ri := range m.slaves {
		if ri.name != addr {
			names = append(names, ri.name)
		}
		s.closeLink(ri)
	}
	if addr != m.ri.name {
		names = append(names, m.ri.name)
	}
	// Reset the master (flags, link, failover state) but keep what
	// sentinelResetMaster keeps: info_refresh, last reconnect time.
	old := m.ri
	s.closeLink(old)
	ri := newInstance(kindMaster, addr, id, now)
	ri.infoRefresh = old.infoRefresh
	ri.link.lastReconn = old.link.lastReconn
	ri.link.actPingTime = now
	ri.link.lastPingTime = 0
	m.ri = ri
	m.leader = ""
	m.inProgress = false
	m.state = foNone
	m.stateChangeTime = 0
	m.failoverStartTime = 0
	m.promoted = nil
	m.slaves = m.slaves[:0]
	for _, n := range names {
		rid, ok := s.env.Lookup(n)
		if !ok {
			continue
		}
		m.slaves = insertSorted(m.slaves, newInstance(kindReplica, n, rid, now))
	}
	s.flushConfig()
}
