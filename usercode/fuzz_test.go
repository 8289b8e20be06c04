package usercode

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
)

// Fuzzing clock jumps against the team's own Redlock finds Kleppmann's
// violation, shrinks it, and writes both scenario files.
func TestFuzzFindsClockJumpInOwnRedlock(t *testing.T) {
	s := builtin(t, "redlock-clock-jump")
	dir := t.TempDir()
	f, err := Fuzz(t, s, FuzzOptions{
		Options:   Options{Clients: map[string]func(*Proc) Lock{"c1": newQuorumLock, "c2": newQuorumLock}},
		Kinds:     []string{"clock-jump"},
		Checks:    []string{checker.KindLockSafety},
		MaxFaults: 16,
		Runs:      100,
		OutDir:    dir,
	})
	require.NoError(t, err)
	require.NotNil(t, f)
	assert.Equal(t, checker.KindLockSafety, f.Kind)
	assert.GreaterOrEqual(t, len(f.Faults), 3)
	for _, p := range []string{f.File, f.ShrunkFile} {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Contains(t, string(data), "lock_safety: violated")
	}
}

// With crashes and partitions alone the team's Redlock keeps the lock on
// these schedules: Fuzz returns no finding.
func TestFuzzWithoutFinding(t *testing.T) {
	s := builtin(t, "redlock-clock-jump")
	f, err := Fuzz(t, s, FuzzOptions{
		Options: Options{Clients: map[string]func(*Proc) Lock{"c1": newQuorumLock, "c2": newQuorumLock}},
		Kinds:   []string{"crash"},
		Checks:  []string{checker.KindLockSafety},
		Runs:    10,
		OutDir:  t.TempDir(),
	})
	require.NoError(t, err)
	assert.Nil(t, f)
}

func TestCheckScheduleBytes(t *testing.T) {
	s := builtin(t, "redlock-clock-jump")
	f, err := CheckSchedule(t, s, 1, nil, FuzzOptions{
		Options: Options{Clients: map[string]func(*Proc) Lock{"c1": newQuorumLock}},
		Kinds:   []string{"crash"},
		OutDir:  t.TempDir(),
	})
	require.NoError(t, err)
	assert.Nil(t, f)
}
