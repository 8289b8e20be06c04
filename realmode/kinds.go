package realmode

import (
	"sort"
	"strings"

	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/realmode/launch"
	"github.com/locksim/locksim/scenarios"
)

// launcher is real mode's part of a process kind (scenarios.ProcKind): how
// the kind's real servers start, and what of its section real mode cannot
// reproduce. A kind without a launcher makes real mode refuse a scenario
// that has processes of it (exit 2).
type launcher struct {
	// real names what runs for the kind ("redis-server").
	real string
	// check reports the first part of the kind's section real mode cannot
	// reproduce (nil: none).
	check func(s *scenarios.Scenario) error
	// start starts the kind's servers; nil when the kind stays a model
	// driven by the kernel in real time (the storage service, which is
	// locksim's own).
	start func(rt *runtime, s *scenarios.Scenario, env *startEnv) error
}

// startEnv is what launchers share: loopback addresses, the data directory
// and the binaries.
type startEnv struct {
	pool        *launch.AddrPool
	dir         string
	serverBin   string
	sentinelBin string
}

// launchers maps a process kind's name (scenarios.ProcKind.Name) to its
// launcher. The next kind with a real server (memcached, MariaDB) adds one
// entry and its start function.
var launchers = map[string]launcher{
	clients.NodeRedis: {real: "redis-server", check: checkRedis, start: startRedis},
	"sentinel":        {real: "redis-sentinel", start: startSentinels},
	"storage":         {real: "locksim's storage service"},
}

// checkRedis: the proxy delays the replication stream by one fixed amount.
func checkRedis(s *scenarios.Scenario) error {
	for _, n := range s.Redis() {
		if n.ReplicationDelay.Hi != n.ReplicationDelay.Lo {
			return &UnsupportedError{Where: "redis " + n.Name + ".replication_delay", Why: "the model draws a delay per message from the range; the proxy delays every byte by one fixed amount, so real mode takes a fixed replication_delay only"}
		}
	}
	return nil
}

// realKinds lists what real mode starts, for errors.
func realKinds() string {
	var out []string
	for _, l := range launchers {
		if l.start != nil {
			out = append(out, l.real)
		}
	}
	sort.Strings(out)
	return strings.Join(out, " and ")
}
