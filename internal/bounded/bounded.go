// Package bounded reads the files a user names (scenarios, results,
// traces, manifests) up to a size bound: a file of the wrong kind (a
// trace, a binary) is refused with its size instead of read for ever or
// echoed in errors, and anything that is not a regular file (a named pipe,
// a device such as /dev/zero, a socket, a directory) is refused before it
// is read, since reading one can block for ever (issue 33: a FIFO named
// x.yaml in a folder hung simrun run DIR).
package bounded

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Open opens path for reading if it is a regular file (a symbolic link is
// followed); what names the kind of file in errors ("a scenario file").
// The file is opened without blocking and checked again on the open
// descriptor, so a file replaced by a named pipe after the first check is
// refused too, not waited on.
func Open(path, what string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(path, what, st); err != nil {
		return nil, err
	}
	// O_NONBLOCK: opening a named pipe for reading waits for a writer;
	// with it the open returns at once. It changes nothing for a regular
	// file.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if st, err = f.Stat(); err == nil {
		err = regular(path, what, st)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// regular refuses what is not a regular file, naming what it is.
func regular(path, what string, st fs.FileInfo) error {
	m := st.Mode()
	var kind string
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return fmt.Errorf("%s is a directory, not %s", path, what)
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	default:
		kind = "a special file"
	}
	return fmt.Errorf("%s is %s, not %s: simrun reads only regular files (a pipe or a device could block or never end)", path, kind, what)
}

// ReadFile reads path, which must be a regular file of at most max bytes:
// a larger one is refused before it is read. what names the kind of file
// in errors ("a scenario file").
func ReadFile(path, what string, max int64) ([]byte, error) {
	f, err := Open(path, what)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%s is %d bytes, more than %s may be (%d MiB)", path, st.Size(), what, max>>20)
	}
	// A file may also have grown since the stat.
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is more than %d MiB, more than %s may be", path, max>>20, what)
	}
	return data, nil
}
