package launch

import "syscall"

// fuseMagic is the f_type statfs(2) reports for a FUSE file system
// (FUSE_SUPER_MAGIC, linux/magic.h).
const fuseMagic = 0x65735546

// onFUSE says whether dir is on a FUSE file system.
func onFUSE(dir string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(dir, &st) == nil && st.Type == fuseMagic
}
