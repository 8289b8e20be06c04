package sim

import (
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
)

// probeMemoryLimit reads the process's limits on Linux: cgroups (v2, then
// v1), RLIMIT_AS and RLIMIT_DATA, and physical memory; the smallest wins.
func probeMemoryLimit() MemoryLimit {
	var best MemoryLimit
	consider := func(n int64, source string, virtual bool) {
		if n > 0 && (best.Bytes == 0 || n < best.Bytes) {
			best = MemoryLimit{Bytes: n, Source: source, Virtual: virtual}
		}
	}
	if n, src := cgroupMemoryLimit("/proc/self/cgroup", "/sys/fs/cgroup"); n > 0 {
		consider(n, src, false)
	}
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &rl) == nil && rl.Cur < 1<<62 {
		consider(int64(rl.Cur), "the address-space limit (ulimit -v, RLIMIT_AS)", true)
	}
	if syscall.Getrlimit(syscall.RLIMIT_DATA, &rl) == nil && rl.Cur < 1<<62 {
		consider(int64(rl.Cur), "the data-segment limit (ulimit -d, RLIMIT_DATA)", false)
	}
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) == nil {
		consider(int64(si.Totalram)*int64(si.Unit), "the machine's physical memory", false)
	}
	return best
}

// cgroupMemoryLimit returns the smallest memory limit of the process's
// cgroup and its ancestors (a child cannot use more than any ancestor
// allows), reading the membership file (/proc/self/cgroup) and the cgroup
// file system mounted at root. cgroup v2 lists "0::/path" and keeps
// memory.max ("max" for none) in root/path; v1 lists "N:memory:/path" (the
// controller may share its line: "N:cpu,memory:/path") and keeps
// memory.limit_in_bytes in root/memory/path, where "no limit" is a number
// near 2^63 rounded down to the page size.
func cgroupMemoryLimit(membership, root string) (int64, string) {
	data, err := os.ReadFile(membership)
	if err != nil {
		return 0, ""
	}
	var best int64
	var src string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var dir, file, what string
		switch {
		case parts[0] == "0" && parts[1] == "":
			dir, file, what = root, "memory.max", "the cgroup's memory limit (memory.max)"
		case hasController(parts[1], "memory"):
			dir, file, what = path.Join(root, "memory"), "memory.limit_in_bytes", "the cgroup's memory limit (memory.limit_in_bytes)"
		default:
			continue
		}
		if n := smallestOnPath(dir, parts[2], file); n > 0 && (best == 0 || n < best) {
			best, src = n, what
		}
	}
	return best, src
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// smallestOnPath reads file in dir/p and each ancestor up to dir. In a
// container the cgroup namespace may show a path that the mounted file
// system does not have (the mount is the namespace's root): then only the
// files that exist count.
func smallestOnPath(dir, p, file string) int64 {
	var best int64
	for q := path.Clean("/" + p); ; q = path.Dir(q) {
		if n := readLimit(path.Join(dir, q, file)); n > 0 && (best == 0 || n < best) {
			best = n
		}
		if q == "/" {
			break
		}
	}
	return best
}

func readLimit(file string) int64 {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	s := strings.TrimSpace(string(data))
	if s == "max" {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= 1<<62 {
		return 0 // v1's "unlimited" is about 2^63
	}
	return n
}
