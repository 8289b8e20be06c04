package lazyfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mount mounts a lazy file system for the test (skipped loudly without
// FUSE, failed under CI=true).
func mount(t *testing.T) (*FS, string, string) {
	t.Helper()
	if err := Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("lazyfs needs FUSE under CI=true: %v", err)
		}
		t.Skipf("SKIPPED: %v", err)
	}
	dir := t.TempDir()
	mnt, backing := filepath.Join(dir, "mnt"), filepath.Join(dir, "backing")
	require.NoError(t, os.Mkdir(mnt, 0o755))
	require.NoError(t, os.Mkdir(backing, 0o755))
	l, err := Mount(mnt, backing)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, l.Unmount()) })
	return l, mnt, backing
}

// TestPowerLossDropsUnsyncedWrites: what was fsynced survives a power
// loss; appends, overwrites and a truncation since the last fsync do not;
// a file never fsynced is empty; without a power loss every write stays.
func TestPowerLossDropsUnsyncedWrites(t *testing.T) {
	l, mnt, backing := mount(t)
	p := filepath.Join(mnt, "aof")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString("SET a 1\n")
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	_, err = f.WriteString("SET b 2\n")
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("X"), 0) // overwrite synced data
	if err != nil {
		// O_APPEND forbids WriteAt in Go: overwrite through another descriptor.
		g, err := os.OpenFile(p, os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = g.WriteAt([]byte("X"), 0)
		require.NoError(t, err)
		require.NoError(t, g.Close())
	}
	require.NoError(t, os.WriteFile(filepath.Join(mnt, "never-synced"), []byte("lost"), 0o644))
	require.NoError(t, f.Close())
	got, err := os.ReadFile(filepath.Join(backing, "aof"))
	require.NoError(t, err)
	assert.Equal(t, "XET a 1\nSET b 2\n", string(got), "every write reaches the backing file at once")

	require.NoError(t, l.PowerLoss())
	got, err = os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "SET a 1\n", string(got), "only the fsynced bytes survive")
	got, err = os.ReadFile(filepath.Join(mnt, "never-synced"))
	require.NoError(t, err)
	assert.Empty(t, string(got))

	// A truncation since the last fsync is undone too.
	require.NoError(t, os.Truncate(p, 3))
	require.NoError(t, l.PowerLoss())
	got, err = os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "SET a 1\n", string(got))
}

// TestSyncMakesEverythingDurable: Sync is an fsync of every file (real mode
// calls it when the run starts: the model's servers start with their disks
// synced).
func TestSyncMakesEverythingDurable(t *testing.T) {
	l, mnt, _ := mount(t)
	p := filepath.Join(mnt, "redis.conf")
	require.NoError(t, os.WriteFile(p, []byte("port 1\n"), 0o644))
	require.NoError(t, l.Sync())
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString("appendonly yes\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, l.PowerLoss())
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "port 1\n", string(got))
}
