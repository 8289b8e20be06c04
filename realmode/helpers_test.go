package realmode

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
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
