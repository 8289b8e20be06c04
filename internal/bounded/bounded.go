// Package bounded reads the files a user names (scenarios, results) up to a
// size bound: a file of the wrong kind (a trace, a binary, /dev/zero) is
// refused with its size instead of read for ever or echoed in errors.
package bounded

import (
	"fmt"
	"io"
	"os"
)

// ReadFile reads path, which must be at most max bytes. A device or a pipe
// has no size and is read up to the bound (a pipe, /dev/stdin, still
// works); a regular file larger than max is refused before it is read.
// what names the kind of file in errors ("a scenario file").
func ReadFile(path, what string, max int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not %s", path, what)
	}
	if st.Mode().IsRegular() && st.Size() > max {
		return nil, fmt.Errorf("%s is %d bytes, more than %s may be (%d MiB)", path, st.Size(), what, max>>20)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
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
