package outdir

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClaimMarksTheSetIncompleteWhileWriting: a claimed folder carries
// IncompleteFile from Begin to Complete, and readers are told so
// (CheckComplete names the writer).
func TestClaimMarksTheSetIncompleteWhileWriting(t *testing.T) {
	dir := t.TempDir()
	d, err := Claim(dir, "simrun test seed 1")
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, CheckComplete(dir))
	require.NoError(t, d.Begin())
	require.NoError(t, d.WriteFile("result.json", []byte("{}")))
	err = CheckComplete(dir)
	var ie *IncompleteError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "simrun test seed 1", ie.Writer)
	assert.Contains(t, err.Error(), dir+" is incomplete")
	require.NoError(t, d.Complete())
	assert.NoError(t, CheckComplete(dir))
	assert.NoFileExists(t, filepath.Join(dir, IncompleteFile))
}

// TestGuardCommitMarksClaimedFolders: a guard's commit marks a claimed
// folder incomplete first and unmarks it last, so a commit that fails
// half way (here its stale-file removal) leaves it marked; a folder that
// was only prepared (a --trace file's) is never marked.
func TestGuardCommitMarksClaimedFolders(t *testing.T) {
	claimed, plain := t.TempDir(), t.TempDir()
	cd, err := Claim(claimed, "simrun run x")
	require.NoError(t, err)
	defer cd.Close()
	pd, err := Prepare(plain)
	require.NoError(t, err)
	defer pd.Close()
	g := &Guard{}
	require.NoError(t, g.StageBytes(cd, "result.json", []byte("{}")))
	require.NoError(t, g.StageBytes(pd, "trace.jsonl", []byte("")))
	var during error
	require.NoError(t, g.Commit(func() error {
		during = CheckComplete(claimed)
		return nil
	}))
	assert.Error(t, during, "not marked while committing")
	assert.NoError(t, CheckComplete(claimed))
	assert.NoFileExists(t, filepath.Join(plain, IncompleteFile))

	require.NoError(t, g.StageBytes(cd, "result.json", []byte("{}")))
	require.Error(t, g.Commit(func() error { return errors.New("cut") }))
	assert.Error(t, CheckComplete(claimed), "a commit cut half way must leave the folder marked")
}

// TestPrepareRemovesTheTemporaryFilesOfKilledWriters: Prepare removes
// the temporary files of processes no longer running, and keeps a live
// one's (issue 33: .tmp files were never cleaned).
func TestPrepareRemovesTheTemporaryFilesOfKilledWriters(t *testing.T) {
	dir := t.TempDir()
	p := exec.Command("true")
	require.NoError(t, p.Run())
	dead := fmt.Sprintf(".result.json.simrun-%d-3.tmp", p.Process.Pid)
	live := fmt.Sprintf(".result.json.simrun-%d-1.tmp", os.Getppid())
	other := ".not-ours.tmp"
	user := fmt.Sprintf(".notes.%d-3.tmp", p.Process.Pid) // not simrun's
	for _, n := range []string{dead, live, other, user} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644))
	}
	d, err := Prepare(dir)
	require.NoError(t, err)
	defer d.Close()
	assert.Equal(t, []string{dead}, d.Cleaned)
	assert.NoFileExists(t, filepath.Join(dir, dead))
	assert.FileExists(t, filepath.Join(dir, live))
	assert.FileExists(t, filepath.Join(dir, other))
	assert.FileExists(t, filepath.Join(dir, user))
}
