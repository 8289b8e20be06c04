package libs

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim"
	"github.com/locksim/locksim/checker"
)

// redsyncWorld is redlock-clock-jump's world (five nodes, two clients)
// with redsync's model, for fuzzing: its schedule is replaced by the
// fuzzer's.
func redsyncWorld(t testing.TB) *locksim.Scenario {
	return scenarioFor(t, timeline{scenario: "redlock-clock-jump", model: "redsync"})
}

// TestFuzzFindsRedsyncClockJump: fuzzing clock jumps against unmodified
// redsync on five Redlock nodes finds Kleppmann's violation (a forward jump
// expires the holder's key on enough nodes for a second majority) and
// shrinks it to a scenario file.
func TestFuzzFindsRedsyncClockJump(t *testing.T) {
	s := redsyncWorld(t)
	dir := t.TempDir()
	f, err := locksim.FuzzUser(t, s, locksim.FuzzUserOptions{
		Clients:   bindAll(t, s, Redsync),
		Kinds:     []string{"clock-jump"},
		MaxFaults: 16,
		Checks:    []string{"lock_safety"},
		Runs:      100,
		OutDir:    dir,
	})
	require.NoError(t, err)
	require.NotNil(t, f, "no violation in 100 schedules")
	t.Log(f)
	assert.Equal(t, checker.KindLockSafety, f.Kind)
	require.NotEmpty(t, f.Faults)
	// Forward jumps on a majority of the nodes expire c1's key there.
	assert.GreaterOrEqual(t, len(f.Faults), 3)
	for _, fault := range f.Faults {
		assert.Contains(t, fault, "clock-jump")
	}
	data, err := os.ReadFile(f.ShrunkFile)
	require.NoError(t, err)
	assert.Contains(t, string(data), "lock_safety: violated")
	// The shrunk file replays: the library violates lock safety again.
	again, err := locksim.Load(f.ShrunkFile)
	require.NoError(t, err)
	r, err := locksim.RunUser(t, again, locksim.UserOptions{Seed: f.Seed, Clients: bindAll(t, again, Redsync)})
	require.NoError(t, err)
	assert.Equal(t, locksim.Violated, r.LockSafety)
	assert.True(t, strings.Contains(f.Summary, "shrunk from"), f.Summary)
}

// FuzzRedsync is the native fuzz target a team's CI runs on every change:
// go test -fuzz FuzzRedsync ./usercode/libs (its seed corpus runs in plain
// go test, where redsync keeps the lock under partitions and crashes).
func FuzzRedsync(f *testing.F) {
	f.Add(uint64(1), []byte{})
	f.Add(uint64(2), []byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, seed uint64, data []byte) {
		s := redsyncWorld(t)
		fd, err := locksim.CheckUserSchedule(t, s, seed, data, locksim.FuzzUserOptions{
			Clients: bindAll(t, s, Redsync),
			Kinds:   []string{"partition", "heal", "crash", "restart"},
			Checks:  []string{"lock_safety"},
			OutDir:  t.TempDir(),
		})
		if err != nil {
			t.Fatal(err)
		}
		if fd != nil {
			t.Fatal(fd)
		}
	})
}
