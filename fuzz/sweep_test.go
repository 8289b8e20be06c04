package fuzz

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSweepSeeds pins the documented derivation: run n = p*seeds + r has
// the run seed of n, and runs point n/seeds.
func TestSweepSeeds(t *testing.T) {
	base := builtin(t, "redlock-clock-jump")
	sw, err := NewSweep(base, [][][2]string{{{"faults[1].by", "0s"}}, {{"faults[1].by", "+30s"}}}, 3, 9)
	require.NoError(t, err)
	assert.Equal(t, 6, sw.Total())
	assert.Equal(t, RunSeed(9, 4), sw.RunSeed(4))
	assert.Equal(t, 30*time.Second, sw.Points[1].Faults[1].By)
	v, err := sw.Run(4)
	require.NoError(t, err)
	assert.Equal(t, "violated", string(v.Lock), "a 30 s jump on C")

	_, err = NewSweep(base, [][][2]string{{{"faults[1].by", "1s"}}, {{"clients[0].lock.ttl", "-1s"}}}, 3, 9)
	var pe *PointError
	require.True(t, errors.As(err, &pe), "%v", err)
	assert.Equal(t, 1, pe.Point)
}
