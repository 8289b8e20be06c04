package scenarios

import (
	"fmt"
	"github.com/locksim/locksim/internal/bounded"
)

// MaxFileBytes bounds a scenario file. The largest catalogue scenario is a
// few KB; a file of megabytes is a mistake (a trace, a binary), and reading
// it whole then echoing its values in errors made a 300 MB file print 300
// MB of error (outsider3).
const MaxFileBytes = 16 << 20

// ReadFile reads a scenario file of at most MaxFileBytes. Anything but a
// regular file is refused (simrun run /dev/zero read for ever; a named
// pipe blocked for ever).
func ReadFile(path string) ([]byte, error) {
	return bounded.ReadFile(path, "a scenario file", MaxFileBytes)
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
