package checker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestJoinAnd(t *testing.T) {
	assert.Equal(t, "", joinAnd(nil))
	assert.Equal(t, "a", joinAnd([]string{"a"}))
	assert.Equal(t, "a and b", joinAnd([]string{"a", "b"}))
	assert.Equal(t, "a, b and c", joinAnd([]string{"a", "b", "c"}))
}

func TestFmtDuration(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"}, {1200 * time.Millisecond, "1.2s"}, {1200*time.Millisecond + 300, "1.2s"},
		{300 * time.Microsecond, "300µs"}, {300*time.Microsecond + 4, "300µs"}, {1, "1ns"}, {-2, "-2ns"},
	} {
		assert.Equal(t, tt.want, fmtDuration(tt.d), "%d", tt.d)
	}
}
