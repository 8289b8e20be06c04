package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/realmode/launch"
)

// TestRealPortInUse: a server's port taken by another process is exit 2,
// naming the server, the address and "port in use", for real and twin.
func TestRealPortInUse(t *testing.T) {
	needRealServers(t)
	for _, cmd := range []string{"real", "twin"} {
		t.Run(cmd, func(t *testing.T) {
			var taken string
			realBeforeStart = func(name, addr string) {
				if name != "A" {
					return
				}
				ln, err := net.Listen("tcp", addr)
				require.NoError(t, err)
				t.Cleanup(func() { ln.Close() })
				taken = addr
			}
			t.Cleanup(func() { realBeforeStart = nil })
			args := []string{cmd, "get-del-release"}
			if cmd == "twin" {
				args = append(args, "--out", t.TempDir())
			}
			r := simrun(args...)
			assert.Equal(t, exitBadInput, r.code, r.stderr)
			require.NotEmpty(t, taken)
			assert.Contains(t, r.stderr, "cannot start a real server: A")
			assert.Contains(t, r.stderr, taken)
			assert.Contains(t, r.stderr, launch.ErrPortInUse.Error())
		})
	}
}

// children returns the PIDs of the processes whose parent is pid and
// whose command line names redis (redis-server, redis-sentinel).
func redisChildren(t *testing.T, pid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
		i := bytes.LastIndexByte(stat, ')')
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(pid) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if bytes.Contains(cmdline, []byte("redis")) {
			out = append(out, p)
		}
	}
	return out
}

// running reports whether pid is a live process (a zombie is not: it has
// exited and waits only for its new parent to reap it).
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	f := strings.Fields(string(stat[i+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// TestRealExitLeavesNoServer builds simrun, starts real and twin runs as
// processes, and ends each with Ctrl-C (SIGINT), SIGTERM or SIGKILL once
// its redis-servers run: an interrupted run exits 128+signal (130, 143, as
// every command: issue 33 item 9; it exited 3), and no server it
// started outlives it (after SIGKILL through the servers' parent-death
// signal). Normal exits, interrupts inside the package and failed starts
// are covered in realmode's tests and TestRealPortInUse.
func TestRealExitLeavesNoServer(t *testing.T) {
	needRealServers(t)
	if testing.Short() {
		t.Skip("builds simrun and runs real servers")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "simrun")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	for _, cmd := range []string{"real", "twin"} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
			t.Run(cmd+"/"+sig.String(), func(t *testing.T) {
				args := []string{cmd, "failover-replica-clock-synced"}
				if cmd == "twin" {
					args = append(args, "--out", t.TempDir())
				}
				p := exec.Command(bin, args...)
				// A SIGKILLed run cannot remove its servers' temporary
				// directory: keep it under the test's own.
				p.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
				var stderr bytes.Buffer
				p.Stderr = &stderr
				require.NoError(t, p.Start())
				done := make(chan error, 1)
				go func() { done <- p.Wait() }()
				t.Cleanup(func() {
					_ = p.Process.Kill()
					<-done
				})
				// Wait until the master and its replica run (a condition,
				// not a time; the bound only fails a hung start).
				var pids []int
				deadline := time.Now().Add(2 * time.Minute)
				for len(pids) < 2 {
					select {
					case err := <-done:
						done <- err
						t.Fatalf("simrun %s ended before its servers ran: %v\n%s", cmd, err, stderr.String())
					default:
					}
					require.True(t, time.Now().Before(deadline), "simrun %s started no servers", cmd)
					time.Sleep(20 * time.Millisecond)
					pids = redisChildren(t, p.Process.Pid)
				}
				t.Logf("servers %v", pids)
				require.NoError(t, p.Process.Signal(sig))
				err := <-done
				done <- err
				if sig != syscall.SIGKILL {
					var ee *exec.ExitError
					require.ErrorAs(t, err, &ee, stderr.String())
					assert.Equal(t, 128+int(sig), ee.ExitCode(), stderr.String())
					assert.Contains(t, stderr.String(), "interrupted")
				}
				for _, pid := range pids {
					gone := false
					for end := time.Now().Add(30 * time.Second); !gone && time.Now().Before(end); {
						gone = !running(pid)
						if !gone {
							time.Sleep(10 * time.Millisecond)
						}
					}
					if !gone {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
					assert.True(t, gone, "redis pid %d outlived simrun %s ended by %v", pid, cmd, sig)
				}
			})
		}
	}
}
