package realmode

import (
	"fmt"
	"path/filepath"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/realmode/launch"
	"github.com/locksim/locksim/scenarios"
)

// ZooKeeper: Debian's zookeeper 3.8, one standalone server for the
// scenario's zookeeper section (the model's one logical service), started
// with java in the run's directory (realmode/launch StartZooKeeper) with
// the section's tick_time, min_session_timeout and max_session_timeout;
// its gateway (zkgw.go) holds a real session per client.
func init() {
	launchers[scenarios.KindZooKeeper] = launcher{
		real: launch.ZooKeeperProgram, check: checkZooKeeper, start: startZooKeeper,
		group: ownGroup(scenarios.KindZooKeeper), checkFault: checkZooKeeperFault,
	}
}

// checkZooKeeper refuses what of the zookeeper section a real ZooKeeper
// cannot be given: Chubby's lock-delay (the model's extension, not
// ZooKeeper's) and a clock offset or drift (real mode does not shift the
// JVM's clocks; ZooKeeper expires sessions on System.nanoTime, which the
// clock library does not touch).
func checkZooKeeper(s *scenarios.Scenario) error {
	z := s.ZK()
	if z == nil {
		return nil
	}
	switch {
	case z.LockDelay > 0:
		return &UnsupportedError{Where: "zookeeper.lock_delay", Why: "real ZooKeeper has no lock-delay (Chubby's, Burrows 2006 section 2.4; the model's extension)"}
	case z.Clock != (scenarios.ClockSpec{}):
		return &UnsupportedError{Where: "zookeeper.clock", Why: "real mode does not shift a JVM's clocks (ZooKeeper expires sessions on System.nanoTime)"}
	}
	return nil
}

// checkZooKeeperFault: a clock fault on the ZooKeeper server (its clocks
// are not shifted). A power loss equals a kill: ZooKeeper fsyncs its
// transaction log before it answers (forceSync yes, the default).
func checkZooKeeperFault(s *scenarios.Scenario, f faults.Spec) string {
	z := s.ZK()
	if z == nil || f.Node != z.Name {
		return ""
	}
	if faults.ClockKind(f.Kind) {
		return "real mode does not shift a JVM's clocks (ZooKeeper expires sessions on System.nanoTime)"
	}
	return ""
}

// startZooKeeper starts the standalone server behind the proxy's front.
func startZooKeeper(rt *runtime, s *scenarios.Scenario, env *startEnv) error {
	z := s.ZK()
	if z == nil {
		return nil
	}
	java, jar, err := launch.ZooKeeperJava("", "")
	if err != nil {
		return startErr(z.Name, err)
	}
	srv := &server{name: z.Name, gw: newZKGateway, zk: newZKClients()}
	ip, port, err := rt.front(env.pool, srv)
	if err != nil {
		return err
	}
	o := zkLaunchOptions(z)
	o.Java, o.Jar, o.IP, o.Port, o.Dir = java, jar, ip, port, filepath.Join(env.dir, z.Name)
	ls, err := rt.group.StartZooKeeper(o)
	if err != nil {
		return startErr(z.Name, err)
	}
	rt.addServer(srv, ls)
	return nil
}

// zkLaunchOptions is what of the zookeeper section reaches the server's
// zoo.cfg: tickTime, minSessionTimeout and maxSessionTimeout (lock_delay
// and clock are refused by checkZooKeeper).
func zkLaunchOptions(z *scenarios.ZKSpec) launch.ZooKeeperOptions {
	return launch.ZooKeeperOptions{Name: z.Name, TickTime: z.TickTime, MinSessionTimeout: z.MinSessionTimeout, MaxSessionTimeout: z.MaxSessionTimeout}
}

// zkMissing names what a ZooKeeper scenario needs that is not installed
// ("" when nothing is missing).
func zkMissing() string {
	if _, _, err := launch.ZooKeeperJava("", ""); err != nil {
		return fmt.Sprint(err)
	}
	return ""
}
