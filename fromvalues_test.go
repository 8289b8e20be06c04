package locksim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFromValuesTakesDurations: a time.Duration value reads as the
// duration it is (yaml.v3 encodes it as "10s"), as FromValues' godoc says.
func TestFromValuesTakesDurations(t *testing.T) {
	s, err := FromValues("values", map[string]any{
		"name": "d", "duration": 10 * time.Second,
		"redis": []any{map[string]any{"name": "A"}},
		"clients": []any{map[string]any{"name": "c1",
			"lock":     map[string]any{"algorithm": "redis-single", "node": "A", "ttl": 5 * time.Second},
			"workload": map[string]any{"cycles": 1, "hold": 1500 * time.Millisecond}}},
	})
	require.NoError(t, err)
	assert.Equal(t, 10*time.Second, s.Duration())
}
