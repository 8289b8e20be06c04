package realmode

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/realmode/lazyfs"
)

// TestCleanStaleRemovesWhatAKilledRunLeft: a run folder whose owner is
// dead loses its lazyfs mount, the processes working in it and the folder,
// each named in the lines returned, as does one whose owner's PID another
// process took; a folder whose owner runs, and one
// without an owner file (not locksim's), are left alone.
func TestCleanStaleRemovesWhatAKilledRunLeft(t *testing.T) {
	tmp := t.TempDir()
	mk := func(name, ownerText string) string {
		d := filepath.Join(tmp, name)
		require.NoError(t, os.Mkdir(d, 0o755))
		if ownerText != "" {
			require.NoError(t, os.WriteFile(filepath.Join(d, OwnerFile), []byte(ownerText), 0o644))
		}
		return d
	}
	// A dead owner: a process that has exited (and been reaped).
	p := exec.Command("true")
	require.NoError(t, p.Run())
	stale := mk(RunDirPrefix+"stale", owner(p.Process.Pid, 12345))
	self, err := processStart(os.Getpid())
	require.NoError(t, err)
	live := mk(RunDirPrefix+"live", owner(os.Getpid(), self))
	foreign := mk(RunDirPrefix+"foreign", "")
	// A PID reused by another process (ours, with another start time):
	// its owner is dead.
	reused := mk(RunDirPrefix+"reused", owner(os.Getpid(), self+1))

	// A process working in the stale folder, as a server that outlived its
	// run would.
	srvDir := filepath.Join(stale, "A")
	require.NoError(t, os.Mkdir(srvDir, 0o755))
	srv := exec.Command("sleep", "600")
	srv.Dir = srvDir
	require.NoError(t, srv.Start())
	waited := make(chan struct{})
	go func() { _ = srv.Wait(); close(waited) }()
	t.Cleanup(func() { _ = srv.Process.Kill(); <-waited })
	lines := []string{"process " + strconv.Itoa(srv.Process.Pid)}

	if lazyfs.Available() == nil {
		mnt := filepath.Join(stale, "B")
		require.NoError(t, os.MkdirAll(mnt, 0o755))
		require.NoError(t, os.MkdirAll(mnt+".disk", 0o755))
		_, err := lazyfs.Mount(mnt, mnt+".disk")
		require.NoError(t, err)
		t.Cleanup(func() { _ = unmountAny(mnt) })
		lines = append([]string{"mount " + mnt}, lines...)
	}
	lines = append([]string{"folder " + reused}, append(lines, "folder "+stale)...)

	done, err := cleanStale(tmp)
	require.NoError(t, err)
	assert.Equal(t, lines, done)
	assert.NoDirExists(t, stale)
	assert.NoDirExists(t, reused)
	for _, d := range []string{live, foreign} {
		assert.DirExists(t, d)
	}
	select {
	case <-waited:
	case <-time.After(30 * time.Second):
		t.Fatal("the process in the stale folder was not killed")
	}
	m, err := mountsUnder(tmp)
	require.NoError(t, err)
	assert.Empty(t, m)
}

func unmountAny(mnt string) error {
	ms, err := mountsUnder(mnt)
	if err != nil || len(ms) == 0 {
		return err
	}
	return exec.Command("umount", "-l", mnt).Run()
}
