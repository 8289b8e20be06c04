package sentinel

import (
	"fmt"
	"strconv"
	"time"

	"github.com/locksim/locksim/nodes/redis/resp"
	"github.com/locksim/locksim/sim"
)

// Trace event kinds a sentinel logs (the real "+event" names in brackets).
const (
	KindSDown            sim.Kind = "sdown"              // +sdown: an instance is subjectively down
	KindSDownEnd         sim.Kind = "sdown-end"          // -sdown
	KindODown            sim.Kind = "odown"              // +odown: quorum agrees the master is down
	KindODownEnd         sim.Kind = "odown-end"          // -odown
	KindNewEpoch         sim.Kind = "new-epoch"          // +new-epoch
	KindFailoverStart    sim.Kind = "failover-start"     // +try-failover
	KindVote             sim.Kind = "vote"               // +vote-for-leader
	KindElected          sim.Kind = "elected"            // +elected-leader
	KindFailoverAbort    sim.Kind = "failover-abort"     // -failover-abort-*
	KindSelectedReplica  sim.Kind = "selected-replica"   // +selected-slave
	KindPromotedReplica  sim.Kind = "promoted-replica"   // +promoted-slave: INFO shows the chosen replica is master
	KindReconfReplica    sim.Kind = "reconf-replica"     // +slave-reconf-sent(-be)
	KindReconfDone       sim.Kind = "reconf-done"        // +slave-reconf-done / -slave-reconf-sent-timeout
	KindFailoverEnd      sim.Kind = "failover-end"       // +failover-end(-for-timeout)
	KindSwitchMaster     sim.Kind = "switch-master"      // +switch-master (own failover or a newer config from a hello)
	KindTilt             sim.Kind = "tilt"               // +tilt
	KindTiltEnd          sim.Kind = "tilt-end"           // -tilt
	KindConvertToReplica sim.Kind = "convert-to-replica" // +convert-to-slave: an old master is told to replicate
	KindFixReplicaConfig sim.Kind = "fix-replica-config" // +fix-slave-config
	KindDiscovered       sim.Kind = "discovered"         // +slave / +sentinel: a new instance was learned
	KindReboot           sim.Kind = "reboot"             // +reboot: an instance's run id changed
)

// Internal periods and limits of sentinel.c 7.2.4, in milliseconds.
const (
	pingPeriod             = 1000  // SENTINEL_PING_PERIOD, sentinel.c:83
	infoPeriod             = 10000 // sentinel_info_period, sentinel.c:85
	askPeriod              = 1000  // sentinel_ask_period, sentinel.c:87
	publishPeriod          = 2000  // sentinel_publish_period, sentinel.c:88
	tiltTrigger            = 2000  // sentinel_tilt_trigger, sentinel.c:90
	tiltPeriod             = 30000 // sentinel_tilt_period = PING_PERIOD*30, sentinel.c:91
	slaveReconfTimeout     = 10000 // sentinel_slave_reconf_timeout, sentinel.c:92
	minLinkReconnectPeriod = 15000 // sentinel_min_link_reconnect_period, sentinel.c:93
	electionTimeout        = 10000 // sentinel_election_timeout, sentinel.c:94
	maxPendingCommands     = 100   // SENTINEL_MAX_PENDING_COMMANDS, sentinel.c:102
	maxDesync              = 1000  // SENTINEL_MAX_DESYNC, sentinel.c:104
	defaultHz              = 10    // CONFIG_DEFAULT_HZ, server.h:114
)

// failoverState is the failover state machine's state
// (SENTINEL_FAILOVER_STATE_*, sentinel.c:110-116).
type failoverState uint8

const (
	foNone failoverState = iota
	foWaitStart
	foSelectSlave
	foSendSlaveOfNoOne
	foWaitPromotion
	foReconfSlaves
	foUpdateConfig
)

// master is the monitored master with everything Sentinel keeps per master:
// its replicas, the other sentinels and the failover state.
type master struct {
	ri              *instance
	name            string
	quorum          int
	downAfter       int64
	failoverTimeout int64
	parallelSyncs   int
	configEpoch     uint64

	leader      string
	leaderEpoch uint64

	inProgress        bool // SRI_FAILOVER_IN_PROGRESS
	state             failoverState
	failoverEpoch     uint64
	failoverStartTime int64
	stateChangeTime   int64
	promoted          *instance

	slaves    []*instance // sorted by name
	sentinels []*instance // sorted by name
}

// Sentinel is one simulated Redis Sentinel process monitoring one master.
// Build it with New; the kernel drives it.
type Sentinel struct {
	cfg  Config
	env  *sim.Env
	myid string

	currentEpoch uint64
	tilt         bool
	tiltStart    int64
	previousTime int64

	m       master
	nextID  uint64
	pending map[uint64]pendingReq
	subs    []subscription // clients' SUBSCRIBEs, in the order made (pubsub.go)
}

// reqKind says what a pending request was, to route its reply.
type reqKind uint8

const (
	reqPing reqKind = iota + 1
	reqInfo
	reqReplicaOf
	reqIsMasterDown
)

type pendingReq struct {
	ri   *instance
	gen  uint32
	kind reqKind
}

// tick is the tag of the sentinel timer (sentinelTimer, run from serverCron).
type tick struct{}

// AppendTrace renders the timer tag.
func (tick) AppendTrace(b []byte) []byte { return append(b, "sentinel-timer"...) }

// New returns a sentinel process for cfg. It panics if cfg is invalid: call
// Validate first (scenarios validate before they build a world).
func New(cfg Config) sim.Process {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	return &Sentinel{cfg: cfg}
}

// savedConfig is what sentinelFlushConfig keeps in sentinel.conf across a
// restart (rewriteConfigSentinelOption: current-epoch, the monitored address,
// config-epoch, leader-epoch, known-replica and known-sentinel lines). The
// failover state and the vote's winner are not saved, as in Redis.
type savedConfig struct {
	CurrentEpoch uint64
	MasterAddr   string
	ConfigEpoch  uint64
	LeaderEpoch  uint64
	Replicas     []string
	Sentinels    []string
}

// confFile is the name of the sentinel's configuration file on its disk.
const confFile = "sentinel.conf"

// Init starts the sentinel, or restarts it from its rewritten config.
func (s *Sentinel) Init(env *sim.Env) {
	s.env = env
	s.myid = env.Name()
	s.pending = map[uint64]pendingReq{}
	s.subs = nil // a restarted sentinel has no clients
	now := env.WallMs()
	c := s.cfg
	s.m = master{
		name:            c.MasterName,
		quorum:          c.Quorum,
		downAfter:       c.DownAfter.Milliseconds(),
		failoverTimeout: c.FailoverTimeout.Milliseconds(),
		parallelSyncs:   c.ParallelSyncs,
	}
	masterAddr, replicas, sentinels := c.Master, c.Replicas, c.Sentinels
	if f := env.Disk().File(confFile); f.Len() > 0 {
		saved := f.Records()[f.Len()-1].(savedConfig)
		s.currentEpoch = saved.CurrentEpoch
		s.m.configEpoch = saved.ConfigEpoch
		s.m.leaderEpoch = saved.LeaderEpoch
		masterAddr, replicas, sentinels = saved.MasterAddr, saved.Replicas, saved.Sentinels
	}
	s.m.ri = newInstance(kindMaster, masterAddr, s.mustLookup(masterAddr), now)
	for _, r := range replicas {
		if r != masterAddr && find(s.m.slaves, r) == nil {
			s.m.slaves = insertSorted(s.m.slaves, newInstance(kindReplica, r, s.mustLookup(r), now))
		}
	}
	for _, p := range sentinels {
		if p != s.myid && find(s.m.sentinels, p) == nil {
			s.m.sentinels = insertSorted(s.m.sentinels, newInstance(kindSentinel, p, s.mustLookup(p), now))
		}
	}
	// sentinel.previous_time starts at the start time (sentinel.c:490-496
	// initSentinel), so the first timer run does not TILT.
	s.previousTime = now
	s.schedule()
}

func (s *Sentinel) mustLookup(name string) sim.ProcID {
	id, ok := s.env.Lookup(name)
	if !ok {
		panic(fmt.Sprintf("sentinel %s: unknown process %q in its configuration", s.myid, name))
	}
	return id
}

// schedule sets the next timer run. Sentinel runs from serverCron every
// 1000/hz ms and re-draws hz in [10, 20) after every run to desynchronise
// sentinels (sentinelTimer, sentinel.c:5470-5484; server.c:1478,1526). The
// cadence is on the monotonic clock: ae timers use getMonotonicUs since 6.2
// (reference §7, redis/redis#7644).
func (s *Sentinel) schedule() {
	hz := defaultHz + s.env.Rand().Intn(defaultHz)
	s.env.After(sim.Mono, time.Duration(1000/hz)*time.Millisecond, tick{})
}

// Fire runs the sentinel timer.
func (s *Sentinel) Fire(env *sim.Env, tag any) {
	if _, ok := tag.(tick); !ok {
		return
	}
	s.timer()
	s.schedule()
}

// now is mstime(): Sentinel reads the wall clock for all its timing
// (server.c:192-205 gettimeofday; reference §8.1).
func (s *Sentinel) now() int64 { return s.env.WallMs() }

// timer is sentinelTimer (sentinel.c:5470-5484) with
// sentinelHandleDictOfRedisInstances (sentinel.c:5415-5437): the master
// first, then its replicas, then the other sentinels, then the switch to the
// promoted replica if a failover reached that point.
func (s *Sentinel) timer() {
	s.checkTilt()
	s.handleInstance(s.m.ri)
	for _, ri := range s.m.slaves {
		s.handleInstance(ri)
	}
	for _, ri := range s.m.sentinels {
		s.handleInstance(ri)
	}
	if s.m.state == foUpdateConfig {
		s.switchToPromoted()
	}
}

// checkTilt is sentinelCheckTiltCondition (sentinel.c:5458-5468): a wall
// delta between timer runs below zero or above 2 s (a clock step, or the
// process was stopped) puts the sentinel in TILT for 30 s.
func (s *Sentinel) checkTilt() {
	now := s.now()
	delta := now - s.previousTime
	if delta < 0 || delta > tiltTrigger {
		s.tilt = true
		s.tiltStart = now
		s.env.Logf(KindTilt, "+tilt #tilt mode entered (timer delta %d ms)", delta)
		s.publish("+tilt", "#tilt mode entered") // sentinel.c:5465
	}
	s.previousTime = now
}

// handleInstance is sentinelHandleRedisInstance (sentinel.c:5379-5409).
func (s *Sentinel) handleInstance(ri *instance) {
	// Monitoring half.
	s.reconnect(ri)
	s.sendPeriodicCommands(ri)
	// Acting half: not in TILT.
	if s.tilt {
		if s.now()-s.tiltStart < tiltPeriod {
			return
		}
		s.tilt = false
		s.env.Log(KindTiltEnd, "-tilt #tilt mode exited")
		s.publish("-tilt", "#tilt mode exited") // sentinel.c:5392
	}
	s.checkSubjectivelyDown(ri)
	if ri.kind == kindMaster {
		s.checkObjectivelyDown()
		if s.startFailoverIfNeeded() {
			s.askMasterStateToOtherSentinels(true)
		}
		s.failoverStateMachine()
		s.askMasterStateToOtherSentinels(false)
	}
}

// Receive handles requests from clients and sentinels and replies to this
// sentinel's own requests.
func (s *Sentinel) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	switch m := msg.(type) {
	case *resp.Request:
		// A client's pooled request (resp/pool.go): answered in kind.
		if isSubscribe(m.Args) {
			s.subscribe(from, m.ID, m.Args)
			return
		}
		env.SendPooled(from, resp.NewReply(m.ID, s.command(m.Args)))
	case resp.Request:
		if isSubscribe(m.Args) {
			s.subscribe(from, m.ID, m.Args)
			return
		}
		env.Send(from, resp.Reply{ID: m.ID, Value: s.command(m.Args)})
	case resp.Reply:
		if p, ok := s.takePending(m.ID); ok {
			switch p.kind {
			case reqPing:
				s.pingReply(p.ri, m.Value)
			case reqInfo:
				if m.Value.Kind == resp.KindBulk || m.Value.Kind == resp.KindStatus {
					s.refreshInfo(p.ri, m.Value.Str)
				}
			}
		}
	case IsMasterDownReq:
		env.Send(from, s.isMasterDownByAddr(m))
	case IsMasterDownReply:
		if p, ok := s.takePending(m.ID); ok && p.kind == reqIsMasterDown {
			s.isMasterDownReply(p.ri, m)
		}
	case Hello:
		s.processHello(m)
	}
}

// takePending removes a pending request; ok is false when the request is
// unknown or was sent on a link that has since been closed.
func (s *Sentinel) takePending(id uint64) (pendingReq, bool) {
	p, ok := s.pending[id]
	if !ok {
		return p, false
	}
	delete(s.pending, id)
	if p.gen != p.ri.link.gen || p.ri.link.disconnected {
		return p, false
	}
	p.ri.link.pending--
	return p, true
}

// sendRedis sends a command to a Redis instance (or PING to a sentinel) on
// ri's link.
func (s *Sentinel) sendRedis(ri *instance, k reqKind, args ...string) {
	s.nextID++
	s.pending[s.nextID] = pendingReq{ri: ri, gen: ri.link.gen, kind: k}
	ri.link.pending++
	s.env.Send(ri.id, resp.Request{ID: s.nextID, Args: args})
}

// isSubscribe reports whether a client's command is SUBSCRIBE (pubsub.go).
func isSubscribe(args []string) bool { return len(args) > 0 && equalFold(args[0], "SUBSCRIBE") }

// command answers the commands a sentinel serves to clients: PING and
// SENTINEL get-master-addr-by-name (sentinel.c:4008-4022); SUBSCRIBE is
// subscribe's.
func (s *Sentinel) command(args []string) resp.Value {
	if len(args) == 0 {
		return resp.Err("ERR unknown command ''")
	}
	switch {
	case equalFold(args[0], "PING"):
		return resp.Status("PONG")
	case equalFold(args[0], "SENTINEL") && len(args) >= 2 && equalFold(args[1], "get-master-addr-by-name"):
		if len(args) != 3 {
			return resp.Err("ERR wrong number of arguments for 'sentinel|get-master-addr-by-name' command")
		}
		if args[2] != s.m.name {
			return resp.Nil()
		}
		return resp.Array(resp.Bulk(s.currentMasterAddr().name), resp.Bulk(portString))
	}
	return resp.Err(fmt.Sprintf("ERR unknown command '%s'", args[0]))
}

// currentMasterAddr is sentinelGetCurrentMasterAddress (sentinel.c:1665-1679):
// the promoted replica once it has acknowledged its promotion during our own
// failover, else the master.
func (s *Sentinel) currentMasterAddr() *instance {
	if s.m.inProgress && s.m.promoted != nil && s.m.state >= foReconfSlaves {
		return s.m.promoted
	}
	return s.m.ri
}

// flushConfig is sentinelFlushConfig (sentinel.c:2282-2297): the config is rewritten to a temporary
// file, fsynced and renamed, so it is durable at once.
func (s *Sentinel) flushConfig() {
	c := savedConfig{
		CurrentEpoch: s.currentEpoch,
		MasterAddr:   s.m.ri.name,
		ConfigEpoch:  s.m.configEpoch,
		LeaderEpoch:  s.m.leaderEpoch,
	}
	for _, ri := range s.m.slaves {
		c.Replicas = append(c.Replicas, ri.name)
	}
	for _, ri := range s.m.sentinels {
		c.Sentinels = append(c.Sentinels, ri.name)
	}
	s.env.Disk().File(confFile).Replace([]any{c})
}

// setEpoch raises the current epoch and saves it (+new-epoch).
func (s *Sentinel) setEpoch(e uint64) {
	s.currentEpoch = e
	s.flushConfig()
	s.env.Logf(KindNewEpoch, "+new-epoch %d", e)
	s.publish("+new-epoch", strconv.FormatUint(e, 10)) // sentinel.c:2937, 4753, 4954
}

// MasterAddr returns the process name this sentinel currently answers to
// get-master-addr-by-name. For tests and inspection.
func (s *Sentinel) MasterAddr() string { return s.currentMasterAddr().name }

// Epoch returns the sentinel's current epoch. For tests and inspection.
func (s *Sentinel) Epoch() uint64 { return s.currentEpoch }

// Tilted reports whether the sentinel is in TILT mode. For tests and
// inspection.
func (s *Sentinel) Tilted() bool { return s.tilt }

// equalFold is an ASCII case-insensitive comparison (Redis' strcasecmp).
func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
