package launch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/realmode/lazyfs"
	"github.com/stretchr/testify/require"
)

// TestStartOnOwnFUSE: a server whose directory is a FUSE file system that
// this very process serves (a lazy data directory) starts without hanging
// the process, even while garbage collections stop the world again and
// again. A child chdir'ing there between fork and exec used to deadlock
// the whole process (start's NB), so the scenario runs in a child test
// binary that the test kills after a bound: a hung process cannot fail a
// test, nor even reach its own -timeout.
func TestStartOnOwnFUSE(t *testing.T) {
	if dir := os.Getenv("LOCKSIM_LAUNCH_FUSE"); dir != "" {
		fuseChild(dir)
		return
	}
	if err := lazyfs.Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("this test needs FUSE under CI=true: %v", err)
		}
		t.Skipf("SKIPPED: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a bound for busy machines: the child takes seconds
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestStartOnOwnFUSE$")
	cmd.Env = append(os.Environ(), "LOCKSIM_LAUNCH_FUSE="+t.TempDir())
	out, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "the child hung starting servers on its own FUSE mount:\n%s", out)
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "started 40 times")
}

// fuseChild mounts a lazy file system and starts (and stops) a process in
// it 40 times while another goroutine collects garbage without pause.
func fuseChild(dir string) {
	mnt, backing := filepath.Join(dir, "mnt"), filepath.Join(dir, "backing")
	for _, d := range []string{mnt, backing} {
		if err := os.Mkdir(d, 0o755); err != nil {
			fmt.Println("ERR", err)
			os.Exit(1)
		}
	}
	l, err := lazyfs.Mount(mnt, backing)
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	defer l.Unmount()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			default:
				runtime.GC()
			}
		}
	}()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	for i := 0; i < 40; i++ {
		s := &Server{name: "sleep", bin: sleep, args: []string{"60"}, dir: mnt, timeout: 10 * time.Second,
			ready: func(string, time.Duration) error { return nil }, logs: []string{}}
		if err := s.start(); err != nil {
			fmt.Println("ERR", strings.TrimSpace(err.Error()))
			os.Exit(1)
		}
		s.Stop()
	}
	fmt.Println("started 40 times")
}
