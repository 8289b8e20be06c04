package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/outdir"
)

// haltAfterRenames makes a child simrun stop for ever after its n-th file
// is put in place, saying "halted after PATH" on stderr, for the parent to
// kill it there (TestKilledBetweenRenames).
func haltAfterRenames(n string) {
	k, err := strconv.Atoi(n)
	if err != nil || k <= 0 {
		return
	}
	count := 0
	outdir.AfterRename = func(path string) {
		if count++; count == k {
			fmt.Fprintf(os.Stderr, "halted after %s\n", path)
			select {}
		}
	}
}

// TestKilledBetweenRenames: each folder writer, killed with SIGKILL after
// its first, second, ... file of a second set is in place (over a complete
// first set of another run), leaves the folder marked incomplete, which
// readers refuse, and never an unmarked mix (issue 33, item 3: an old
// result.json beside a new trace.jsonl replayed as "matches"). A later
// whole run removes the mark and the killed writer's temporary files.
func TestKilledBetweenRenames(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	writers := []struct {
		name        string
		first, next []string // --out DIR is appended
		read        func(dir string) []string
	}{
		{"run", []string{"run", "redlock-clock-jump"}, []string{"run", "redlock-clock-jump", "--seed", "9"},
			func(dir string) []string { return []string{"replay", filepath.Join(dir, "result.json")} }},
		{"fuzz", []string{"fuzz", "redlock-clock-jump", "--runs", "30", "--seed", "1"}, []string{"fuzz", "redlock-clock-jump", "--runs", "30", "--seed", "2", "--force"},
			func(dir string) []string { return []string{"merge", dir, "--out", dir + ".merged"} }},
		{"sweep", []string{"sweep", "redlock-clock-jump", "--param", "faults[1].by=0s,+30s", "--seeds", "1"},
			[]string{"sweep", "redlock-clock-jump", "--param", "faults[1].by=0s,+10s,+20s", "--seeds", "1"},
			func(dir string) []string { return []string{"merge", dir, "--out", dir + ".merged"} }},
	}
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			for k := 1; ; k++ {
				dir := filepath.Join(t.TempDir(), "out")
				r := simrun(append(w.first, "--out", dir)...)
				require.Contains(t, []int{exitOK, exitMismatch}, r.code, r.stderr)
				cmd := exec.Command(exe, append(w.next, "--out", dir)...)
				cmd.Env = append(os.Environ(), "SIMRUN_AS_MAIN=1", "SIMRUN_HALT_AFTER_RENAMES="+strconv.Itoa(k))
				stderr, err := cmd.StderrPipe()
				require.NoError(t, err)
				cmd.Stdout = io.Discard
				require.NoError(t, cmd.Start())
				halted := make(chan string, 1)
				go func() {
					sc := bufio.NewScanner(stderr)
					for sc.Scan() {
						if strings.HasPrefix(sc.Text(), "halted after ") {
							halted <- sc.Text()
						}
					}
					close(halted)
				}()
				var line string
				select {
				case line = <-halted:
				case <-time.After(2 * time.Minute):
					t.Fatal("the writer neither halted nor ended")
				}
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				if line == "" { // it ended: fewer than k files in its set
					require.Greater(t, k, 1, "the writer put no file in place")
					return
				}
				t.Logf("killed %s", line)
				if filepath.Dir(strings.TrimPrefix(line, "halted after ")) != dir &&
					!strings.HasPrefix(strings.TrimPrefix(line, "halted after "), dir+"/") {
					continue // a file outside the folder (none yet)
				}
				_, marked := outdir.Incomplete(dir)
				assert.True(t, marked, "k=%d: killed after %s with no mark", k, line)
				rr := simrun(w.read(dir)...)
				assert.Equal(t, exitBadInput, rr.code, "k=%d: %s", k, rr.stdout)
				assert.Contains(t, rr.stderr, "is incomplete", "k=%d", k)

				// The same writer, run whole, leaves a complete folder and
				// none of the killed one's temporary files.
				r = simrun(append(w.next, "--out", dir)...)
				require.Contains(t, []int{exitOK, exitMismatch}, r.code, r.stderr)
				_, marked = outdir.Incomplete(dir)
				assert.False(t, marked)
				tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
				assert.Empty(t, tmps, "k=%d", k)
				if k > 12 {
					return
				}
			}
		})
	}
}
