package sentinel

import (
	"sort"

	"github.com/locksim/locksim/sim"
)

// kind says what a monitored instance is (SRI_MASTER, SRI_SLAVE,
// SRI_SENTINEL, sentinel.c:64-66).
type kind uint8

const (
	kindMaster kind = iota + 1
	kindReplica
	kindSentinel
)

func (k kind) String() string {
	switch k {
	case kindMaster:
		return "master"
	case kindReplica:
		return "replica"
	}
	return "sentinel"
}

// role is the role an instance reports in INFO (role_reported).
type role uint8

const (
	roleUnknown role = iota
	roleMaster
	roleReplica
)

// link is Sentinel's command connection to an instance (instanceLink,
// sentinel.c:1018-1040). The simulated network has no connections, so a
// link is a generation number: replies to requests sent on an older
// generation are ignored, as a closed hiredis context drops its callbacks.
// A connection that ends (ConnEnded) marks the link disconnected until the
// next reconnect (at most 1 s later, sentinel.c:2405).
type link struct {
	gen           uint32
	disconnected  bool
	pending       int   // requests in flight (pending_commands)
	ccConnTime    int64 // when the link was (re)connected
	lastReconn    int64
	actPingTime   int64 // oldest ping without a valid reply; 0 when answered
	lastPingTime  int64
	lastAvailTime int64 // last valid PING reply
	lastPongTime  int64 // last PING reply of any kind
}

// newLink returns a link in the state createInstanceLink leaves it
// (sentinel.c:1018-1040): disconnected, with the ping clocks at now so that
// an instance Sentinel cannot reach at all still times out.
func newLink(now int64) link {
	return link{disconnected: true, actPingTime: now, lastAvailTime: now, lastPongTime: now}
}

// instance is what a sentinel knows of one master, replica or sentinel
// (sentinelRedisInstance, sentinel.c:195-260). Times are wall-clock Unix
// milliseconds (mstime()).
type instance struct {
	kind  kind
	name  string // process name: the instance's address
	id    sim.ProcID
	runID string
	link  link

	sdown, odown   bool
	sDownSince     int64
	oDownSince     int64
	infoRefresh    int64
	roleReported   role
	roleReportedAt int64

	// Replica fields from INFO.
	masterLinkDownTime  int64
	slavePriority       int
	slaveReplOffset     int64
	slaveMasterHost     string
	slaveMasterPort     int
	slaveMasterLinkUp   bool
	slaveConfChangeTime int64

	// Failover flags of a replica (SRI_PROMOTED, SRI_RECONF_*).
	promoted         bool
	reconfSent       bool
	reconfInProg     bool
	reconfDone       bool
	slaveReconfSentT int64

	// Sentinel peer fields.
	masterDown              bool // SRI_MASTER_DOWN: it told us the master is down
	lastMasterDownReplyTime int64
	leader                  string
	leaderEpoch             uint64
	lastHelloTime           int64

	lastPubTime int64
}

// newInstance returns an instance as createSentinelRedisInstance leaves it
// (sentinel.c:1285-1372).
func newInstance(k kind, name string, id sim.ProcID, now int64) *instance {
	ri := &instance{kind: k, name: name, id: id, link: newLink(now)}
	ri.lastPubTime = now
	ri.lastHelloTime = now
	ri.lastMasterDownReplyTime = now
	ri.slavePriority = defaultSlavePriority
	ri.roleReportedAt = now
	ri.slaveConfChangeTime = now
	switch k {
	case kindMaster:
		ri.roleReported = roleMaster
	case kindReplica:
		ri.roleReported = roleReplica
	}
	return ri
}

// defaultSlavePriority is SENTINEL_DEFAULT_SLAVE_PRIORITY (sentinel.c:100),
// also redis.conf's replica-priority default.
const defaultSlavePriority = 100

// noDownFor reports whether the instance was neither SDOWN nor ODOWN in the
// last ms milliseconds (sentinelRedisInstanceNoDownFor, sentinel.c:1654-1662).
func (ri *instance) noDownFor(now, ms int64) bool {
	recent := ri.sDownSince
	if ri.oDownSince > recent {
		recent = ri.oDownSince
	}
	return recent == 0 || now-recent > ms
}

// insertSorted adds ri to a slice kept sorted by name, so that every
// iteration over instances (and so every message and trace event they cause)
// has a fixed order. Real Sentinel iterates a dict in hash order.
func insertSorted(list []*instance, ri *instance) []*instance {
	i := sort.Search(len(list), func(i int) bool { return list[i].name >= ri.name })
	list = append(list, nil)
	copy(list[i+1:], list[i:])
	list[i] = ri
	return list
}

// find returns the instance named name in list, or nil.
func find(list []*instance, name string) *instance {
	i := sort.Search(len(list), func(i int) bool { return list[i].name >= name })
	if i < len(list) && list[i].name == name {
		return list[i]
	}
	return nil
}
