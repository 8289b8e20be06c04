package scenarios

import (
	"fmt"
	"io"
	"os"
)

// MaxFileBytes bounds a scenario file. The largest catalogue scenario is a
// few KB; a file of megabytes is a mistake (a trace, a binary), and reading
// it whole then echoing its values in errors made a 300 MB file print 300
// MB of error (outsider3).
const MaxFileBytes = 16 << 20

// ReadFile reads a scenario file of at most MaxFileBytes. A device or a
// pipe is read up to the bound (simrun run /dev/zero read for ever; a
// pipe, /dev/stdin, still works).
func ReadFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a scenario file", path)
	}
	if st.Mode().IsRegular() && st.Size() > MaxFileBytes {
		return nil, fmt.Errorf("%s is %d bytes, more than a scenario file may be (%d MiB)", path, st.Size(), MaxFileBytes>>20)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A device or a pipe has no size; a file may have grown since.
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s is more than %d MiB, more than a scenario file may be", path, MaxFileBytes>>20)
	}
	return data, nil
}

// maxQuoted bounds a value quoted in an error message.
const maxQuoted = 80

// quoted is %q of v, cut to maxQuoted bytes with the length said.
func quoted(v string) string {
	if len(v) <= maxQuoted {
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprintf("%q... (%d bytes)", v[:maxQuoted], len(v))
}
