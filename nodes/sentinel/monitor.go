package sentinel

import (
	"strconv"
	"strings"

	"github.com/locksim/locksim/nodes/redis/resp"
	"github.com/locksim/locksim/sim"
)

// reconnect is sentinelReconnectInstance (sentinel.c:2398-2495): a closed
// link is re-opened at most once per second, and a PING goes out at once.
func (s *Sentinel) reconnect(ri *instance) {
	l := &ri.link
	if !l.disconnected {
		return
	}
	now := s.now()
	if now-l.lastReconn < pingPeriod {
		return
	}
	l.lastReconn = now
	l.gen++
	l.disconnected = false
	l.pending = 0
	l.ccConnTime = now
	s.sendPing(ri)
}

// closeLink is instanceLinkCloseConnection (sentinel.c:1042-1053): the
// connection is closed, requests in flight are forgotten and their replies
// will be ignored.
func (s *Sentinel) closeLink(ri *instance) {
	s.env.Close(ri.id)
	s.linkLost(ri)
}

// ConnEnded is the link's disconnect callback (sentinelDisconnectCallback
// and instanceLinkConnectionError, sentinel.c): a reset (a crashed
// instance's host), a FIN or a timed-out connection marks the link
// disconnected; sentinelReconnectInstance re-opens it within a second.
func (s *Sentinel) ConnEnded(env *sim.Env, peer sim.ProcID, why sim.ConnEnd) {
	s.env = env
	// A client's connection: its subscriptions end with it (freeClient).
	s.dropSubscriptions(peer)
	if ri := s.m.ri; ri != nil && ri.id == peer && !ri.link.disconnected {
		s.linkLost(ri)
	}
	for _, ri := range s.m.slaves {
		if ri.id == peer && !ri.link.disconnected {
			s.linkLost(ri)
		}
	}
	for _, ri := range s.m.sentinels {
		if ri.id == peer && !ri.link.disconnected {
			s.linkLost(ri)
		}
	}
}

// linkLost marks a link disconnected and forgets its requests.
func (s *Sentinel) linkLost(ri *instance) {
	ri.link.disconnected = true
	ri.link.pending = 0
	ri.link.gen++
	for id, p := range s.pending { // deletion only: the order cannot matter
		if p.ri == ri {
			delete(s.pending, id)
		}
	}
}

// sendPeriodicCommands is sentinelSendPeriodicCommands
// (sentinel.c:3116-3174).
func (s *Sentinel) sendPeriodicCommands(ri *instance) {
	now := s.now()
	if ri.link.disconnected {
		return
	}
	if ri.link.pending >= maxPendingCommands {
		return
	}
	// INFO every 10 s, every second for a replica while its master is ODOWN
	// or failing over, or while it reports its master link down
	// (sentinel.c:3137-3146).
	period := int64(infoPeriod)
	if ri.kind == kindReplica && (s.m.ri.odown || s.m.inProgress || ri.masterLinkDownTime != 0) {
		period = 1000
	}
	// PING when the last reply is older than min(down_after, 1 s), at most
	// every half period (sentinel.c:3148-3162).
	ping := s.m.downAfter
	if ping > pingPeriod {
		ping = pingPeriod
	}
	if ri.kind != kindSentinel && (ri.infoRefresh == 0 || now-ri.infoRefresh > period) {
		s.sendRedis(ri, reqInfo, infoArgs...)
	}
	if now-ri.link.lastPongTime > ping && now-ri.link.lastPingTime > ping/2 {
		s.sendPing(ri)
	}
	// Hello every 2 s (sentinel.c:3165-3168). Simplification: only to the
	// other sentinels (see Hello).
	if ri.kind == kindSentinel && now-ri.lastPubTime > publishPeriod {
		s.sendHello(ri)
	}
}

// infoArgs is the INFO command Sentinel sends. Real Sentinel sends a bare
// INFO (default sections: run_id from "server", the rest from
// "replication", sentinel.c:3152).
var infoArgs = []string{"INFO"}

// sendPing is sentinelSendPing (sentinel.c:3096-3110): act_ping_time keeps
// the time of the oldest unanswered ping.
func (s *Sentinel) sendPing(ri *instance) {
	s.sendRedis(ri, reqPing, "PING")
	ri.link.lastPingTime = s.now()
	if ri.link.actPingTime == 0 {
		ri.link.actPingTime = ri.link.lastPingTime
	}
}

// pingReply is sentinelPingReplyCallback (sentinel.c:2793-2833): PONG,
// -LOADING and -MASTERDOWN count as "available"; any reply is a pong.
func (s *Sentinel) pingReply(ri *instance, v resp.Value) {
	now := s.now()
	if v.Kind == resp.KindStatus || v.Kind == resp.KindError {
		if strings.HasPrefix(v.Str, "PONG") || strings.HasPrefix(v.Str, "LOADING") || strings.HasPrefix(v.Str, "MASTERDOWN") {
			ri.link.lastAvailTime = now
			ri.link.actPingTime = 0
		}
	}
	ri.link.lastPongTime = now
}

// checkSubjectivelyDown is sentinelCheckSubjectivelyDown
// (sentinel.c:4537-4604).
func (s *Sentinel) checkSubjectivelyDown(ri *instance) {
	now := s.now()
	l := &ri.link
	var elapsed int64
	if l.actPingTime != 0 {
		elapsed = now - l.actPingTime
	} else if l.disconnected {
		elapsed = now - l.lastAvailTime
	}
	// A link with a ping pending for more than half of down_after is closed
	// and re-opened, once it is 15 s old (sentinel.c:4549-4560).
	if !l.disconnected && now-l.ccConnTime > minLinkReconnectPeriod && l.actPingTime != 0 &&
		now-l.actPingTime > s.m.downAfter/2 && now-l.lastPongTime > s.m.downAfter/2 {
		s.closeLink(ri)
	}
	// Down: no valid reply for down_after, or a master that has reported
	// role slave for down_after plus two INFO periods (sentinel.c:4576-4586).
	down := elapsed > s.m.downAfter ||
		(ri.kind == kindMaster && ri.roleReported == roleReplica && now-ri.roleReportedAt > s.m.downAfter+2*infoPeriod)
	if down {
		if !ri.sdown {
			ri.sdown = true
			ri.sDownSince = now
			s.env.Logf(KindSDown, "+sdown %s %s (no valid reply for %d ms)", ri.kind, ri.name, elapsed)
			s.publish("+sdown", s.instanceText(ri)) // sentinel.c:4592
		}
	} else if ri.sdown {
		ri.sdown = false
		s.env.Logf(KindSDownEnd, "-sdown %s %s", ri.kind, ri.name)
		s.publish("-sdown", s.instanceText(ri)) // sentinel.c:4599
	}
}

// checkObjectivelyDown is sentinelCheckObjectivelyDown
// (sentinel.c:4611-4644): this sentinel's SDOWN plus the other sentinels that
// last said "down" reach the quorum. A weak quorum: the answers may be up to
// 5 s old.
func (s *Sentinel) checkObjectivelyDown() {
	m := &s.m
	votes := 0
	odown := false
	if m.ri.sdown {
		votes = 1
		for _, p := range m.sentinels {
			if p.masterDown {
				votes++
			}
		}
		odown = votes >= m.quorum
	}
	now := s.now()
	if odown {
		if !m.ri.odown {
			m.ri.odown = true
			m.ri.oDownSince = now
			s.env.Logf(KindODown, "+odown master %s %s #quorum %d/%d", m.name, m.ri.name, votes, m.quorum)
			s.publish("+odown", s.instanceText(m.ri)+" #quorum "+strconv.Itoa(votes)+"/"+strconv.Itoa(m.quorum)) // sentinel.c:4633
		}
	} else if m.ri.odown {
		m.ri.odown = false
		s.env.Logf(KindODownEnd, "-odown master %s %s", m.name, m.ri.name)
		s.publish("-odown", s.instanceText(m.ri)) // sentinel.c:4640
	}
}

// askMasterStateToOtherSentinels is sentinelAskMasterStateToOtherSentinels
// (sentinel.c:4691-4735): while the master is SDOWN, ask every other
// sentinel each second whether it agrees; during a failover the request also
// asks for its vote.
func (s *Sentinel) askMasterStateToOtherSentinels(forced bool) {
	m := &s.m
	now := s.now()
	for _, p := range m.sentinels {
		// An answer older than 5 ask periods no longer counts.
		if now-p.lastMasterDownReplyTime > askPeriod*5 {
			p.masterDown = false
			p.leader = ""
		}
		if !m.ri.sdown || p.link.disconnected {
			continue
		}
		if !forced && now-p.lastMasterDownReplyTime < askPeriod {
			continue
		}
		runID := "*"
		if m.state > foNone {
			runID = s.myid
		}
		s.nextID++
		s.pending[s.nextID] = pendingReq{ri: p, gen: p.link.gen, kind: reqIsMasterDown}
		p.link.pending++
		s.env.Send(p.id, IsMasterDownReq{ID: s.nextID, MasterAddr: m.ri.name, MasterPort: Port, Epoch: s.currentEpoch, RunID: runID})
	}
}

// isMasterDownReply is sentinelReceiveIsMasterDownReply
// (sentinel.c:4648-4685).
func (s *Sentinel) isMasterDownReply(p *instance, r IsMasterDownReply) {
	p.lastMasterDownReplyTime = s.now()
	p.masterDown = r.Down
	if r.Leader != "*" {
		p.leader = r.Leader
		p.leaderEpoch = r.LeaderEpoch
	}
}

// isMasterDownByAddr answers SENTINEL IS-MASTER-DOWN-BY-ADDR
// (sentinel.c:3950-4003). In TILT the answer is always "not down", but the
// vote is still given.
func (s *Sentinel) isMasterDownByAddr(r IsMasterDownReq) IsMasterDownReply {
	rep := IsMasterDownReply{ID: r.ID, Leader: "*"}
	known := r.MasterAddr == s.m.ri.name && r.MasterPort == Port
	if !s.tilt && known && s.m.ri.sdown {
		rep.Down = true
	}
	if known && r.RunID != "*" {
		rep.Leader, rep.LeaderEpoch = s.voteLeader(r.Epoch, r.RunID)
		if rep.Leader == "" {
			rep.Leader = "*"
		}
	}
	return rep
}

// sendHello is sentinelSendHello (sentinel.c:3017-3060).
// Simplification: last_pub_time is set when the hello is sent (Redis sets it
// when the PUBLISH is answered).
func (s *Sentinel) sendHello(p *instance) {
	addr := s.currentMasterAddr()
	p.lastPubTime = s.now()
	s.env.Send(p.id, Hello{
		Sentinel:          s.myid,
		CurrentEpoch:      s.currentEpoch,
		MasterName:        s.m.name,
		MasterAddr:        addr.name,
		MasterPort:        Port,
		MasterConfigEpoch: s.m.configEpoch,
	})
}

// forceHelloUpdate is sentinelForceHelloUpdateForMaster
// (sentinel.c:3082-3090): the next timer run sends a hello to every sentinel.
func (s *Sentinel) forceHelloUpdate() {
	for _, p := range s.m.sentinels {
		if p.lastPubTime >= publishPeriod+1 {
			p.lastPubTime -= publishPeriod + 1
		}
	}
}

// processHello is sentinelProcessHelloMessage (sentinel.c:2859-2965): learn
// the sender, adopt a newer epoch, and adopt a newer master configuration
// (this is how the sentinels that did not lead a failover switch master).
func (s *Sentinel) processHello(h Hello) {
	m := &s.m
	if h.MasterName != m.name || h.Sentinel == s.myid {
		return
	}
	now := s.now()
	si := find(m.sentinels, h.Sentinel)
	if si == nil {
		id, ok := s.env.Lookup(h.Sentinel)
		if !ok {
			return
		}
		si = newInstance(kindSentinel, h.Sentinel, id, now)
		m.sentinels = insertSorted(m.sentinels, si)
		s.env.Logf(KindDiscovered, "+sentinel %s", h.Sentinel)
		s.flushConfig()
	}
	if h.CurrentEpoch > s.currentEpoch {
		s.setEpoch(h.CurrentEpoch)
	}
	if m.configEpoch < h.MasterConfigEpoch {
		m.configEpoch = h.MasterConfigEpoch
		if h.MasterAddr != m.ri.name || h.MasterPort != Port {
			if id, ok := s.env.Lookup(h.MasterAddr); ok {
				s.env.LogfAttrs(KindSwitchMaster, []sim.Attr{sim.Str("master_name", m.name), sim.Str("from", m.ri.name), sim.Str("to", h.MasterAddr), sim.Str("sentinel", h.Sentinel)},
					"+switch-master %s %s %d %s %d (config-update-from sentinel %s)",
					m.name, m.ri.name, Port, h.MasterAddr, h.MasterPort, h.Sentinel)
				// sentinel.c:2949-2954: +config-update-from names the
				// sentinel whose hello carried the newer config, then
				// +switch-master "<name> <old-ip> <old-port> <new-ip> <new-port>".
				s.publish("+config-update-from", s.instanceText(si))
				s.publish("+switch-master", m.name+" "+m.ri.name+" "+portString+" "+h.MasterAddr+" "+strconv.Itoa(h.MasterPort))
				s.resetMasterAndChangeAddress(h.MasterAddr, id)
			}
		}
	}
	si.lastHelloTime = now
}
