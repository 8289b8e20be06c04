package realmode

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/locksim/locksim/realmode/lazyfs"
)

// A real run's private temporary folder (servers' data directories, lazyfs
// mounts, the clock library) is named RunDirPrefix+random under the system's
// temporary directory and holds OwnerFile, which names the simrun process
// that made it. A run removes its folder when it ends; a SIGKILLed one
// cannot, and its lazyfs mounts stay (the kernel never unmounts a FUSE file
// system whose daemon died). CleanStale, at the next start, removes what
// such a run left: only folders with an owner file whose owner is dead, so
// nothing of another tool, or of a run still going, is touched.
const (
	RunDirPrefix = "locksim-real-"
	OwnerFile    = ".locksim-owner"
)

// newRunDir makes a run's temporary folder with its owner file.
func newRunDir() (string, error) {
	dir, err := os.MkdirTemp("", RunDirPrefix)
	if err != nil {
		return "", err
	}
	self, err := processStart(os.Getpid())
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, OwnerFile), []byte(owner(os.Getpid(), self)), 0o644)
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// owner is an owner file's text: the PID and its start time in clock ticks
// since boot (/proc/PID/stat field 22), so a PID reused by another process
// is not taken for the owner.
func owner(pid int, start uint64) string {
	return fmt.Sprintf("locksim real run\npid %d\nstart %d\n", pid, start)
}

// processStart is the start time of pid (clock ticks since boot).
func processStart(pid int) (uint64, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("unreadable /proc stat")
	}
	f := strings.Fields(string(stat[i+1:]))
	// f[0] is field 3 (state): field 22 is f[19].
	if len(f) < 20 {
		return 0, errors.New("short /proc stat")
	}
	if f[0] == "Z" || f[0] == "X" {
		return 0, errors.New("exited")
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// ownerAlive reads dir's owner file: ok false when there is none (not a
// folder of locksim's); alive when the process that wrote it still runs.
func ownerAlive(dir string) (ok, alive bool) {
	data, err := os.ReadFile(filepath.Join(dir, OwnerFile))
	if err != nil {
		return false, false
	}
	var pid int
	var start uint64
	if _, err := fmt.Sscanf(string(data), "locksim real run\npid %d\nstart %d\n", &pid, &start); err != nil {
		return false, false
	}
	now, err := processStart(pid)
	return true, err == nil && now == start
}

// CleanStale removes what killed real runs left under the system's
// temporary directory: their servers still running (there should be none:
// each has a death signal), their mounts, their folders. It returns one
// line per thing removed, for the caller to print, and the errors of what
// it could not remove.
func CleanStale() ([]string, error) {
	return cleanStale(os.TempDir())
}

func cleanStale(tmp string) ([]string, error) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, RunDirPrefix+"*"))
	sort.Strings(dirs)
	var done []string
	var errs []error
	for _, dir := range dirs {
		ok, alive := ownerAlive(dir)
		if !ok || alive {
			continue
		}
		d, err := cleanRunDir(dir)
		done = append(done, d...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return done, errors.Join(errs...)
}

// cleanRunDir kills the processes working in dir, unmounts its mounts and
// removes it.
func cleanRunDir(dir string) ([]string, error) {
	var done []string
	real, err := filepath.EvalSymlinks(dir) // as mountinfo and /proc name it
	if err != nil {
		return nil, err
	}
	// Unmount first: a process blocked on a FUSE request whose daemon died
	// (state D) cannot die before its connection is aborted, which a forced
	// unmount does (fs/fuse/inode.c fuse_umount_begin).
	mounts, err := mountsUnder(real)
	if err != nil {
		return nil, err
	}
	// The deepest first, so a mount inside another goes before it.
	sort.Sort(sort.Reverse(sort.StringSlice(mounts)))
	for _, m := range mounts {
		if err := syscall.Unmount(m, syscall.MNT_FORCE); err != nil {
			if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
				return done, fmt.Errorf("cannot unmount %s a killed real run left: %v", m, err)
			}
		}
		done = append(done, "mount "+m)
	}
	pids := processesIn(real)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		done = append(done, fmt.Sprintf("process %d", pid))
	}
	// A killed process's files close as it exits; wait for that (bounded)
	// before removing its folder.
	for end := time.Now().Add(10 * time.Second); len(pids) > 0 && time.Now().Before(end); {
		pids = processesIn(real)
		if len(pids) > 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return done, fmt.Errorf("cannot remove %s a killed real run left: %v", dir, err)
	}
	return append(done, "folder "+dir), nil
}

// mountsUnder lists the lazyfs mount points inside dir
// (/proc/self/mountinfo).
func mountsUnder(dir string) ([]string, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		// id parent major:minor root mountpoint options... - fstype source super
		f := strings.Fields(line)
		sep := -1
		for i, x := range f {
			if x == "-" {
				sep = i
				break
			}
		}
		if len(f) < 5 || sep < 0 || sep+1 >= len(f) || f[sep+1] != lazyfs.Type {
			continue
		}
		if m := unescapeMount(f[4]); inside(m, dir) {
			out = append(out, m)
		}
	}
	return out, nil
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func inside(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// processesIn lists the live processes whose working directory is inside
// dir (every server runs in its data directory), this one excepted.
func processesIn(dir string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil {
			continue
		}
		cwd = strings.TrimSuffix(cwd, " (deleted)")
		if inside(cwd, dir) {
			if _, err := processStart(pid); err == nil { // not a zombie
				out = append(out, pid)
			}
		}
	}
	return out
}
