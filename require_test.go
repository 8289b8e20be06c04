package locksim

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fatalTB records a Fatalf instead of stopping the test.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
}

// TestRequireSafe: a safe run passes; a violated one fails naming the
// property and the explanation; a vacuous one (no grant) fails too.
func TestRequireSafe(t *testing.T) {
	for _, tc := range []struct {
		name string
		want string // "" when RequireSafe passes
	}{
		{"fenced-baseline", ""},
		{"redlock-clock-jump", "lock_safety violated"},
		{"redlock-retry-livelock", "lock_safety not-used: nothing was granted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Builtin(tc.name)
			require.NoError(t, err)
			res, err := Run(s, Options{})
			require.NoError(t, err)
			f := &fatalTB{TB: t}
			RequireSafe(f, res)
			if tc.want == "" {
				assert.Empty(t, f.msg)
				return
			}
			assert.Contains(t, f.msg, "is not safe: ")
			assert.Contains(t, f.msg, tc.want)
		})
	}
}
