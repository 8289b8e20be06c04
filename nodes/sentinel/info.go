package sentinel

import (
	"strconv"
	"strings"
)

// refreshInfo is sentinelRefreshInstanceInfo (sentinel.c:2511-2766): parse an
// INFO reply, then, unless in TILT, act on what it shows. Field names are
// those of genRedisInfoString (server.c:5997-6127): run_id, role,
// master_host, master_port, master_link_status,
// master_link_down_since_seconds, slave_priority, slave_repl_offset and
// slaveN:ip=...,port=... A host is a process name in the simulation.
func (s *Sentinel) refreshInfo(ri *instance, info string) {
	m := &s.m
	now := s.now()
	r := roleUnknown
	ri.masterLinkDownTime = 0
	for _, l := range strings.Split(info, "\n") {
		l = strings.TrimSuffix(l, "\r")
		key, val, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		switch {
		case key == "run_id":
			if ri.runID != "" && ri.runID != val {
				s.env.Logf(KindReboot, "+reboot %s %s", ri.kind, ri.name)
			}
			ri.runID = val
		case ri.kind == kindMaster && len(key) > 5 && strings.HasPrefix(key, "slave") && isDigits(key[5:]):
			s.discoverReplica(val)
		case key == "master_link_down_since_seconds":
			n, _ := strconv.ParseInt(val, 10, 64)
			ri.masterLinkDownTime = n * 1000
		case key == "role":
			switch val {
			case "master":
				r = roleMaster
			case "slave":
				r = roleReplica
			}
		}
		if r != roleReplica {
			continue
		}
		switch key {
		case "master_host":
			if ri.slaveMasterHost != val {
				ri.slaveMasterHost = val
				ri.slaveConfChangeTime = now
			}
		case "master_port":
			p, _ := strconv.Atoi(val)
			if ri.slaveMasterPort != p {
				ri.slaveMasterPort = p
				ri.slaveConfChangeTime = now
			}
		case "master_link_status":
			ri.slaveMasterLinkUp = strings.EqualFold(val, "up")
		case "slave_priority":
			ri.slavePriority, _ = strconv.Atoi(val)
		case "slave_repl_offset":
			ri.slaveReplOffset, _ = strconv.ParseInt(val, 10, 64)
		}
	}
	ri.infoRefresh = now

	// Acting half. The role change is remembered even in TILT.
	if r != ri.roleReported {
		ri.roleReportedAt = now
		ri.roleReported = r
		if r == roleReplica {
			ri.slaveConfChangeTime = now
		}
	}
	if s.tilt {
		return
	}

	// A replica reports role master.
	if ri.kind == kindReplica && r == roleMaster {
		if ri.promoted && m.inProgress && m.state == foWaitPromotion {
			// Our failover's promotion is confirmed (sentinel.c:2680-2703).
			m.configEpoch = m.failoverEpoch
			m.state = foReconfSlaves
			m.stateChangeTime = now
			s.flushConfig()
			s.env.Logf(KindPromotedReplica, "+promoted-slave %s (master %s, epoch %d)", ri.name, m.name, m.failoverEpoch)
			s.publish("+promoted-slave", s.instanceText(ri)) // sentinel.c:2693
			s.forceHelloUpdate()
		} else if !ri.promoted && s.masterLooksSane() && ri.noDownFor(now, publishPeriod*4) &&
			now-ri.roleReportedAt > publishPeriod*4 {
			// Anything else claiming to be master (an old master that came
			// back) is told to replicate the current master once it has
			// claimed it for 4 publish periods = 8 s (sentinel.c:2704-2718).
			// Until then it accepts writes from clients still talking to it.
			s.sendReplicaOf(ri, m.ri.name)
			s.env.Logf(KindConvertToReplica, "+convert-to-slave %s (claimed master for %d ms; master is %s)",
				ri.name, now-ri.roleReportedAt, m.ri.name)
			s.publish("+convert-to-slave", s.instanceText(ri)) // sentinel.c:2715
		}
	}

	// A replica replicating from the wrong master is fixed after
	// failover_timeout (sentinel.c:2721-2738).
	if ri.kind == kindReplica && r == roleReplica &&
		(ri.slaveMasterPort != Port || ri.slaveMasterHost != m.ri.name) {
		if s.masterLooksSane() && ri.noDownFor(now, m.failoverTimeout) && now-ri.slaveConfChangeTime > m.failoverTimeout {
			s.sendReplicaOf(ri, m.ri.name)
			s.env.Logf(KindFixReplicaConfig, "+fix-slave-config %s (replicating %s, master is %s)", ri.name, ri.slaveMasterHost, m.ri.name)
		}
	}

	// Progress of a replica being reconfigured (sentinel.c:2740-2764).
	if ri.kind == kindReplica && r == roleReplica && (ri.reconfSent || ri.reconfInProg) {
		if ri.reconfSent && m.promoted != nil && ri.slaveMasterHost == m.promoted.name && ri.slaveMasterPort == Port {
			ri.reconfSent = false
			ri.reconfInProg = true
		}
		if ri.reconfInProg && ri.slaveMasterLinkUp {
			ri.reconfInProg = false
			ri.reconfDone = true
			s.env.Logf(KindReconfDone, "+slave-reconf-done %s", ri.name)
			s.publish("+slave-reconf-done", s.instanceText(ri)) // sentinel.c:2763
		}
	}
}

// masterLooksSane is sentinelMasterLooksSane (sentinel.c:2502-2508).
func (s *Sentinel) masterLooksSane() bool {
	ri := s.m.ri
	return ri.roleReported == roleMaster && !ri.sdown && !ri.odown && s.now()-ri.infoRefresh < infoPeriod*2
}

// discoverReplica adds a replica listed in the master's INFO
// ("slaveN:ip=NAME,port=6379,...", sentinel.c:2555-2595).
func (s *Sentinel) discoverReplica(val string) {
	var name string
	for _, f := range strings.Split(val, ",") {
		if v, ok := strings.CutPrefix(f, "ip="); ok {
			name = v
		}
	}
	if name == "" || name == s.m.ri.name || find(s.m.slaves, name) != nil {
		return
	}
	id, ok := s.env.Lookup(name)
	if !ok {
		return
	}
	s.m.slaves = insertSorted(s.m.slaves, newInstance(kindReplica, name, id, s.now()))
	s.env.Logf(KindDiscovered, "+slave %s (master %s)", name, s.m.ri.name)
	s.flushConfig()
}

// sendReplicaOf is sentinelSendSlaveOf (sentinel.c:4880-4946). Redis sends
// MULTI, SLAVEOF, CONFIG REWRITE, CLIENT KILL TYPE normal, CLIENT KILL TYPE
// pubsub, EXEC and ignores the replies; the effect is observed through INFO.
// Simplification: the model sends REPLICAOF and CONFIG REWRITE (so that the
// node keeps its new role across a restart), back to back on the FIFO link
// but without MULTI/EXEC, and no CLIENT KILL: the network has no
// connections to kill, so clients of the node are not disconnected. An empty
// host sends REPLICAOF NO ONE.
func (s *Sentinel) sendReplicaOf(ri *instance, host string) {
	if host == "" {
		s.sendRedis(ri, reqReplicaOf, "REPLICAOF", "NO", "ONE")
	} else {
		s.sendRedis(ri, reqReplicaOf, "REPLICAOF", host, portString)
	}
	s.sendRedis(ri, reqReplicaOf, "CONFIG", "REWRITE")
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
