package lazyfs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mount mounts a lazy file system for the test (skipped loudly without
// FUSE, failed under CI=true).
func mount(t *testing.T) (*FS, string, string) {
	t.Helper()
	if err := Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("lazyfs needs FUSE under CI=true: %v", err)
		}
		t.Skipf("SKIPPED: %v", err)
	}
	dir := t.TempDir()
	mnt, backing := filepath.Join(dir, "mnt"), filepath.Join(dir, "backing")
	require.NoError(t, os.Mkdir(mnt, 0o755))
	require.NoError(t, os.Mkdir(backing, 0o755))
	l, err := Mount(mnt, backing)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, l.Unmount()) })
	return l, mnt, backing
}

// TestPowerLossDropsUnsyncedWrites: what was fsynced survives a power
// loss; appends, overwrites and a truncation since the last fsync do not;
// a file never fsynced is empty; without a power loss every write stays.
func TestPowerLossDropsUnsyncedWrites(t *testing.T) {
	l, mnt, backing := mount(t)
	p := filepath.Join(mnt, "aof")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString("SET a 1\n")
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	_, err = f.WriteString("SET b 2\n")
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("X"), 0) // overwrite synced data
	if err != nil {
		// O_APPEND forbids WriteAt in Go: overwrite through another descriptor.
		g, err := os.OpenFile(p, os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = g.WriteAt([]byte("X"), 0)
		require.NoError(t, err)
		require.NoError(t, g.Close())
	}
	require.NoError(t, os.WriteFile(filepath.Join(mnt, "never-synced"), []byte("lost"), 0o644))
	require.NoError(t, f.Close())
	got, err := os.ReadFile(filepath.Join(backing, "aof"))
	require.NoError(t, err)
	assert.Equal(t, "XET a 1\nSET b 2\n", string(got), "every write reaches the backing file at once")

	require.NoError(t, l.PowerLoss())
	got, err = os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "SET a 1\n", string(got), "only the fsynced bytes survive")
	got, err = os.ReadFile(filepath.Join(mnt, "never-synced"))
	require.NoError(t, err)
	assert.Empty(t, string(got))

	// A truncation since the last fsync is undone too.
	require.NoError(t, os.Truncate(p, 3))
	require.NoError(t, l.PowerLoss())
	got, err = os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "SET a 1\n", string(got))
}

// TestSyncMakesEverythingDurable: Sync is an fsync of every file (real mode
// calls it when the run starts: the model's servers start with their disks
// synced).
func TestSyncMakesEverythingDurable(t *testing.T) {
	l, mnt, _ := mount(t)
	p := filepath.Join(mnt, "redis.conf")
	require.NoError(t, os.WriteFile(p, []byte("port 1\n"), 0o644))
	require.NoError(t, l.Sync())
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString("appendonly yes\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, l.PowerLoss())
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "port 1\n", string(got))
}

// TestChildrenDoNotInheritTheFUSEDevice: a process started after the
// mount holds no descriptor of /dev/fuse. go-fuse's direct mount opened it
// without close-on-exec (and never set it), so every server started after a
// mount kept the FUSE connection open: when simrun was killed, a server
// blocked on a request the dead daemon had read waited in state D for ever,
// since the kernel aborts the connection only when its last descriptor
// closes, and the server itself held one (issue 33, item 1).
func TestChildrenDoNotInheritTheFUSEDevice(t *testing.T) {
	mount(t)
	cmd := exec.Command("sleep", "60")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	fdDir := fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid)
	ents, err := os.ReadDir(fdDir)
	require.NoError(t, err)
	var fuse []string
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join(fdDir, e.Name())); err == nil && target == "/dev/fuse" {
			fuse = append(fuse, e.Name())
		}
	}
	assert.Empty(t, fuse, "descriptors of /dev/fuse inherited by a child")
}

// TestKilledOwnerLeavesNoMountNorProcess: the process that mounted a lazy
// file system is SIGKILLed while its child (with a death signal, as every
// server) waits for an fsync the file system has received and not answered:
// no process is left working in the file system (none stuck in state D)
// and the mount goes (the watchdog). Without close-on-exec on /dev/fuse the
// writer held the FUSE connection and waited in state D for ever (issue 33,
// item 1); without the watchdog the mount stayed.
func TestKilledOwnerLeavesNoMountNorProcess(t *testing.T) {
	if os.Getenv("LAZYFS_OWNER_MNT") != "" {
		ownerHelper()
		return
	}
	if err := Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("lazyfs needs FUSE under CI=true: %v", err)
		}
		t.Skipf("SKIPPED: %v", err)
	}
	dir := t.TempDir()
	mnt := filepath.Join(dir, "mnt")
	require.NoError(t, os.Mkdir(mnt, 0o755))
	require.NoError(t, os.Mkdir(mnt+".disk", 0o755))
	owner := exec.Command(os.Args[0], "-test.run=^TestKilledOwnerLeavesNoMountNorProcess$")
	owner.Env = append(os.Environ(), "LAZYFS_OWNER_MNT="+mnt)
	stdout, err := owner.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, owner.Start())
	t.Cleanup(func() { _ = owner.Process.Kill() })
	var line string
	_, err = fmt.Fscanln(stdout, &line)
	require.NoError(t, err)
	require.Equal(t, "fsync", line, "the owner's writer did not reach its fsync")
	require.NoError(t, owner.Process.Kill())
	_ = owner.Wait()
	var left []string
	still := true
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		left, still = workingIn(t, mnt), mounted(t, mnt)
		if len(left) == 0 && !still {
			break
		}
	}
	if still {
		_ = exec.Command("umount", "-f", mnt).Run()
		_ = exec.Command("umount", "-l", mnt).Run()
	}
	assert.Empty(t, left, "processes working in the file system outlived its killed owner")
	assert.False(t, still, "the mount outlived its killed owner")
}

// ownerHelper is the owner process of TestKilledOwnerLeavesNoMountNorProcess:
// it mounts, holds every fsync request unanswered, starts a writer that
// appends and fsyncs, says "fsync" once the first one arrives and waits to
// be killed.
func ownerHelper() {
	mnt := os.Getenv("LAZYFS_OWNER_MNT")
	var once sync.Once
	fsyncHook = func() {
		once.Do(func() { fmt.Println("fsync") })
		select {}
	}
	if _, err := Mount(mnt, mnt+".disk"); err != nil {
		fmt.Println("mount:", err)
		os.Exit(1)
	}
	w := exec.Command("sh", "-c", `while :; do echo 0123456789 >> f; sync f; done`)
	w.Dir = mnt
	w.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := w.Start(); err != nil {
		fmt.Println("writer:", err)
		os.Exit(1)
	}
	select {}
}

// workingIn lists the live processes whose working directory is dir, with
// their state letter.
func workingIn(t *testing.T, dir string) []string {
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || (cwd != dir && !strings.HasPrefix(cwd, dir+"/")) {
			continue
		}
		pid, _ := strconv.Atoi(e.Name())
		if st := procState(pid); st != "" && st != "Z" && st != "X" {
			cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			out = append(out, fmt.Sprintf("%d %s (state %s)", pid, strings.ReplaceAll(string(cmd), "\x00", " "), st))
		}
	}
	return out
}

// procState is the state letter of pid ("" when it is gone).
func procState(pid int) string {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	i := strings.LastIndexByte(string(stat), ')')
	f := strings.Fields(string(stat[i+1:]))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// mounted reports whether mnt is a mount point (/proc/self/mountinfo).
func mounted(t *testing.T, mnt string) bool {
	data, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == mnt {
			return true
		}
	}
	return false
}
