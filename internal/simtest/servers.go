package simtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// NeedBinaries is the house rule for tests that need real programs (a
// server, a compiler): when one of bins is not on PATH (a bare name may
// also be found in /usr/sbin, where Debian puts mariadbd), the test fails
// under CI=true, where .ci/run must have installed it, and is skipped
// loudly elsewhere. what names the suite; install says how to get the
// programs ("apt-get install -y redis-server"). It returns the paths, in
// the order of bins.
func NeedBinaries(t testing.TB, what, install string, bins ...string) []string {
	t.Helper()
	var paths, missing []string
	for _, b := range bins {
		p, err := exec.LookPath(b)
		if err != nil && !strings.Contains(b, "/") {
			if _, serr := os.Stat("/usr/sbin/" + b); serr == nil {
				p, err = "/usr/sbin/"+b, nil
			}
		}
		if err != nil {
			missing = append(missing, b)
			continue
		}
		paths = append(paths, p)
	}
	if len(missing) == 0 {
		return paths
	}
	msg := strings.Join(missing, ", ") + " not found: " + what
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s must run under CI=true (%s)", msg, install)
	}
	t.Skipf("%s is SKIPPED (%s)", msg, install)
	return nil
}
