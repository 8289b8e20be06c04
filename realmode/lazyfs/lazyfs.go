// Package lazyfs is a FUSE file system that loses what was not fsynced
// when told the power failed, as a machine's page cache does: real mode
// puts a Redis server's data directory on it when a scenario cuts the
// server's power while its AOF is fsynced lazily (appendfsync everysec or
// no), where killing the process would keep every write (the kernel's page
// cache survives a process).
//
// It is a loopback over a backing directory (go-fuse's LoopbackNode): every
// operation reaches the backing file at once, and the file system keeps,
// per file, the size at its last fsync and the bytes that writes since then
// overwrote. PowerLoss puts those bytes back and truncates each file to its
// synced size. The idea is Jepsen's lazyfs (github.com/dsrhaslab/lazyfs),
// which keeps unsynced data in its own cache instead.
//
// Simplifications: metadata is durable at once (a file created, renamed or
// removed stays so; lazyfs and a real file system lose an unsynced
// directory entry too), and a file's data is synced whole by fsync or
// fdatasync of any of its descriptors.
package lazyfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// ErrUnavailable says that FUSE cannot be mounted here (no /dev/fuse, or
// no permission to mount).
var ErrUnavailable = errors.New("lazyfs: FUSE is not available")

// Available reports whether /dev/fuse can be opened (a mount also needs
// CAP_SYS_ADMIN or fusermount3).
func Available() error {
	f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	f.Close()
	return nil
}

// FS is one mounted lazy file system.
type FS struct {
	server   *fuse.Server
	mnt      string
	watchdog *exec.Cmd // unmounts mnt if this process dies (startWatchdog)
	lifeline *os.File  // the watchdog's stdin: closed when this process dies

	mu    sync.Mutex
	files map[uint64]*fileState // by backing inode number
}

// fileState is what PowerLoss needs of one file: a descriptor of its own
// (valid after a rename or an unlink), its size at the last fsync, and the
// bytes overwritten since, oldest first.
type fileState struct {
	fd     int
	synced int64
	undo   []undo
}

type undo struct {
	off int64
	old []byte
}

// Type is the file system type of a lazyfs mount in /proc/self/mountinfo.
const Type = "fuse.lazyfs"

// Mount mounts a lazy view of backing at mnt (both directories must
// exist).
func Mount(mnt, backing string) (*FS, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	lfs := &FS{mnt: mnt, files: map[uint64]*fileState{}}
	var st syscall.Stat_t
	if err := syscall.Stat(backing, &st); err != nil {
		return nil, fmt.Errorf("lazyfs: %w", err)
	}
	root := &fs.LoopbackRoot{Path: backing, Dev: uint64(st.Dev)}
	root.NewNode = func(r *fs.LoopbackRoot, _ *fs.Inode, _ string, _ *syscall.Stat_t) fs.InodeEmbedder {
		return &node{LoopbackNode: fs.LoopbackNode{RootData: r}, fs: lfs}
	}
	rootNode := root.NewNode(root, nil, "", &st)
	root.RootNode = rootNode
	fd, err := mountDevice(mnt, backing)
	if err != nil {
		return nil, err
	}
	zero := time.Duration(0)
	// The magic mount point /dev/fd/N makes go-fuse serve the connection
	// already mounted on fd instead of mounting one of its own.
	server, err := fs.Mount(fmt.Sprintf("/dev/fd/%d", fd), rootNode, &fs.Options{
		MountOptions: fuse.MountOptions{FsName: backing, Name: Type[len("fuse."):]},
		AttrTimeout:  &zero, EntryTimeout: &zero, NegativeTimeout: &zero,
	})
	if err != nil {
		_ = syscall.Unmount(mnt, syscall.MNT_DETACH)
		syscall.Close(fd)
		return nil, fmt.Errorf("%w: mounting %s: %v", ErrUnavailable, mnt, err)
	}
	lfs.server = server
	if err := lfs.startWatchdog(); err != nil {
		_ = lfs.Unmount()
		return nil, fmt.Errorf("lazyfs: %s: %w", mnt, err)
	}
	return lfs, nil
}

// startWatchdog starts a process that unmounts the file system when this
// one dies without doing so (SIGKILL), as fusermount3's auto_unmount does:
// a shell blocked reading a pipe whose only writer is this process (the
// descriptor is close-on-exec, so no server holds it); the kernel closes
// it when this process dies, the read ends and the shell detaches the
// mount. It has its own process group (a terminal's Ctrl-C is not for it)
// and no death signal: it must outlive this process. Unmount stops it
// first.
func (l *FS) startWatchdog() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	cmd := exec.Command("sh", "-c", `read -r _; exec umount -l -- "$0"`, l.mnt)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("unmount watchdog: %w", err)
	}
	l.watchdog, l.lifeline = cmd, w
	return nil
}

// mountDevice opens /dev/fuse with close-on-exec and mounts the FUSE
// connection at mnt, as go-fuse's direct mount does (fuse/mount_linux.go
// mountDirect) except for the flag: go-fuse opens the device without
// O_CLOEXEC and, on that path, never sets it, so every process started
// after the mount (the servers) inherited the connection. The kernel aborts
// a FUSE connection only when its last descriptor closes (fs/fuse/dev.c
// fuse_dev_release), so after a SIGKILL of simrun a server waiting on a
// request the dead daemon had already read stayed in state D for ever: it
// held that last descriptor itself. With only this process holding it, the
// death of this process aborts the connection: every waiting request fails
// with ENOTCONN and the servers die of their death signal. The mount point
// itself stays (the kernel never unmounts a FUSE file system on its own):
// the watchdog removes it (startWatchdog), else the next start
// (realmode CleanStale).
func mountDevice(mnt, backing string) (int, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(mnt, &st); err != nil {
		return -1, fmt.Errorf("lazyfs: %w", err)
	}
	fd, err := syscall.Open("/dev/fuse", syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	// The options fusermount passes (go-fuse mountDirect); max_read is
	// go-fuse's default MaxWrite (fuse/server.go).
	data := fmt.Sprintf("fd=%d,rootmode=%o,user_id=%d,group_id=%d,max_read=%d",
		fd, st.Mode&syscall.S_IFMT, os.Geteuid(), os.Getegid(), 128<<10)
	if err := syscall.Mount(backing, mnt, Type, syscall.MS_NOSUID|syscall.MS_NODEV, data); err != nil {
		syscall.Close(fd)
		return -1, fmt.Errorf("%w: mounting %s: %v", ErrUnavailable, mnt, err)
	}
	return fd, nil
}

// PowerLoss drops every write not fsynced: each file gets back the bytes
// unsynced writes overwrote and its size at its last fsync. Call it while
// nothing writes (the process that used the files is dead).
func (l *FS) PowerLoss() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var first error
	for _, f := range l.files {
		for i := len(f.undo) - 1; i >= 0; i-- {
			if _, err := syscall.Pwrite(f.fd, f.undo[i].old, f.undo[i].off); err != nil && first == nil {
				first = err
			}
		}
		f.undo = nil
		if err := syscall.Ftruncate(f.fd, f.synced); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Sync makes everything written so far durable, as sync(2) does.
func (l *FS) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.files {
		var st syscall.Stat_t
		if err := syscall.Fstat(f.fd, &st); err != nil {
			return err
		}
		f.synced, f.undo = st.Size, nil
	}
	return nil
}

// Unmount unmounts the file system and closes its descriptors; when the
// mount is busy it is detached (umount -l), never left behind.
func (l *FS) Unmount() error {
	if l.watchdog != nil {
		_ = l.watchdog.Process.Kill()
		_ = l.watchdog.Wait()
		l.lifeline.Close()
		l.watchdog = nil
	}
	err := syscall.Unmount(l.mnt, 0)
	if err != nil {
		if derr := syscall.Unmount(l.mnt, syscall.MNT_DETACH); derr == nil {
			err = nil
		}
	}
	if err == nil {
		l.server.Wait() // the serve loops end once the kernel says ENODEV
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for ino, f := range l.files {
		syscall.Close(f.fd)
		delete(l.files, ino)
	}
	return err
}

// state returns the state of the file open on fd, made on first use with
// the file's current size as synced (what the file held before this file
// system first saw it change is durable).
func (l *FS) state(fd int) (*fileState, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if f, ok := l.files[st.Ino]; ok {
		return f, nil
	}
	// A descriptor of our own, for reading what a write overwrites (the
	// caller's may be write-only) and for PowerLoss after a rename.
	dup, err := syscall.Open(fmt.Sprintf("/proc/self/fd/%d", fd), syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := &fileState{fd: dup, synced: st.Size}
	l.files[st.Ino] = f
	return f, nil
}

// saveOld records the synced bytes in [off, end) before they change.
func (f *fileState) saveOld(off, end int64) error {
	if end > f.synced {
		end = f.synced
	}
	if off >= end {
		return nil
	}
	old := make([]byte, end-off)
	n, err := syscall.Pread(f.fd, old, off)
	if err != nil {
		return err
	}
	f.undo = append(f.undo, undo{off: off, old: old[:n]})
	return nil
}

// node is a loopback node whose files are lazy.
type node struct {
	fs.LoopbackNode
	fs *FS
}

var (
	_ fs.NodeOpener    = (*node)(nil)
	_ fs.NodeCreater   = (*node)(nil)
	_ fs.NodeSetattrer = (*node)(nil)
)

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, ff, errno := n.LoopbackNode.Open(ctx, flags)
	if errno != 0 {
		return fh, ff, errno
	}
	return n.wrap(fh), ff, 0
}

func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	ino, fh, ff, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if errno != 0 {
		return ino, fh, ff, errno
	}
	return ino, n.wrap(fh), ff, 0
}

// Setattr records what a truncation through the path removes.
func (n *node) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if sz, ok := in.GetSize(); ok {
		if _, lazy := f.(*file); !lazy { // file.Setattr records its own
			p := n.LoopbackNode.RootData.Path + "/" + n.Path(nil)
			fd, err := syscall.Open(p, syscall.O_RDWR, 0)
			if err != nil {
				return fs.ToErrno(err)
			}
			errno := n.fs.truncating(fd, int64(sz))
			syscall.Close(fd)
			if errno != 0 {
				return errno
			}
		}
	}
	return n.LoopbackNode.Setattr(ctx, f, in, out)
}

func (n *node) wrap(fh fs.FileHandle) fs.FileHandle {
	lf, ok := fh.(*fs.LoopbackFile)
	if !ok {
		return fh
	}
	return &file{LoopbackFile: lf, fs: n.fs}
}

// truncating records the synced bytes a truncation to size removes.
func (l *FS) truncating(fd int, size int64) syscall.Errno {
	l.mu.Lock()
	defer l.mu.Unlock()
	st, err := l.state(fd)
	if err != nil {
		return fs.ToErrno(err)
	}
	if err := st.saveOld(size, st.synced); err != nil {
		return fs.ToErrno(err)
	}
	return 0
}

// file is a loopback file whose writes since its last fsync PowerLoss
// undoes.
type file struct {
	*fs.LoopbackFile
	fs *FS
}

// PassthroughFd: never (a kernel passthrough would write to the backing
// file without Write seeing it).
func (f *file) PassthroughFd() (int, bool) { return -1, false }

// fd is the backing file's descriptor.
func (f *file) fd() int {
	fd, _ := f.LoopbackFile.PassthroughFd()
	return fd
}

func (f *file) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	f.fs.mu.Lock()
	st, err := f.fs.state(f.fd())
	if err == nil {
		err = st.saveOld(off, off+int64(len(data)))
	}
	f.fs.mu.Unlock()
	if err != nil {
		return 0, fs.ToErrno(err)
	}
	return f.LoopbackFile.Write(ctx, data, off)
}

// Writev is Write of the buffers one after another.
func (f *file) Writev(ctx context.Context, data [][]byte, off int64) (uint32, syscall.Errno) {
	var total uint32
	for _, d := range data {
		n, errno := f.Write(ctx, d, off+int64(total))
		total += n
		if errno != 0 {
			return total, errno
		}
	}
	return total, 0
}

// fsyncHook, when set, runs as an fsync request arrives (tests hold one
// in flight there).
var fsyncHook func()

// Fsync makes the file's data durable: its size now is its synced size
// and nothing is to be undone.
func (f *file) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	if fsyncHook != nil {
		fsyncHook()
	}
	if errno := f.LoopbackFile.Fsync(ctx, flags); errno != 0 {
		return errno
	}
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	st, err := f.fs.state(f.fd())
	if err != nil {
		return fs.ToErrno(err)
	}
	var s syscall.Stat_t
	if err := syscall.Fstat(st.fd, &s); err != nil {
		return fs.ToErrno(err)
	}
	st.synced, st.undo = s.Size, nil
	return 0
}

func (f *file) Setattr(ctx context.Context, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if sz, ok := in.GetSize(); ok {
		if errno := f.fs.truncating(f.fd(), int64(sz)); errno != 0 {
			return errno
		}
	}
	return f.LoopbackFile.Setattr(ctx, in, out)
}
