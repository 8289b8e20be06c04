package realmode

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/locksim/locksim/realmode/launch"
	"github.com/locksim/locksim/scenarios"
)

// needServers skips (loudly) when redis-server is missing, and fails under
// CI=true, where .ci/run installs it.
func needServers(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err == nil {
		if _, err := exec.LookPath("cc"); err == nil {
			return
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("redis-server, redis-sentinel and a C compiler are required under CI=true (apt-get install redis-server redis-sentinel gcc)")
	}
	t.Skip("SKIPPED: real mode needs redis-server, redis-sentinel and a C compiler (apt-get install redis-server redis-sentinel gcc)")
}

// alive reports whether a process with this pid exists (signal 0).
func alive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) == nil
}

// haveServers reports whether the real servers of s's kinds beyond Redis
// (memcached, MariaDB, ZooKeeper) are installed: under CI=true a missing one fails the
// test, elsewhere the scenario is skipped loudly.
func haveServers(t *testing.T, s *scenarios.Scenario) bool {
	t.Helper()
	var missing []string
	if len(s.Memcached()) > 0 {
		if _, err := launch.MemcachedBinary(""); err != nil {
			missing = append(missing, "memcached")
		}
	}
	if len(s.MySQL()) > 0 {
		if _, _, err := launch.MariaDBBinaries("", ""); err != nil {
			missing = append(missing, "mariadb-server")
		}
	}
	if s.ZK() != nil && zkMissing() != "" {
		missing = append(missing, "zookeeper")
	}
	if len(missing) == 0 {
		return true
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s needs %v, required under CI=true (apt-get install %v)", s.Name, missing, missing)
	}
	t.Logf("SKIPPED: %s needs %v (apt-get install %v)", s.Name, missing, missing)
	return false
}
