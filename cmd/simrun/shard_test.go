package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/fuzz"
)

// procResult is one simrun process's exit code and output.
type procResult struct {
	code           int
	stdout, stderr string
}

// runBin runs the simrun binary bin with args.
func runBin(t *testing.T, bin string, args ...string) procResult {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return procResult{code, out.String(), errb.String()}
}

// sameTree asserts that the files under a and b are the same, with each
// tree's own path replaced by DIR (replay commands name their folder).
func sameTree(t *testing.T, a, b string) {
	t.Helper()
	files := func(root string) map[string]string {
		out := map[string]string{}
		require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			require.NoError(t, err)
			if d.IsDir() {
				return nil
			}
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			rel, _ := filepath.Rel(root, p)
			out[rel] = strings.ReplaceAll(string(data), root, "DIR")
			return nil
		}))
		return out
	}
	fa, fb := files(a), files(b)
	require.Equal(t, keys(fa), keys(fb), "the same files")
	for name := range fa {
		assert.Equal(t, fa[name], fb[name], "%s differs between %s and %s", name, a, b)
	}
}

// csvColumn returns the values of the column named name in the CSV file
// path (one a row, the header left out).
func csvColumn(t *testing.T, path, name string) []string {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(mustRead(t, path))).ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	col := -1
	for i, h := range rows[0] {
		if h == name {
			col = i
		}
	}
	require.GreaterOrEqual(t, col, 0, "%s has no column %s: %v", path, name, rows[0])
	var out []string
	for _, r := range rows[1:] {
		out = append(out, r[col])
	}
	return out
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// TestShardsAsProcesses is issue 16's acceptance test: the simrun binary,
// built once, runs fuzz, sweep and a small matrix whole and as shards in
// separate processes (with different worker counts); simrun merge of the
// shards writes exactly what the whole campaign wrote; merge refuses
// missing, duplicated, mixed and interrupted shards with exit 2; Ctrl-C
// stops a campaign and writes what it found.
func TestShardsAsProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds simrun and runs campaigns in processes")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "simrun")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	shardDirs := func(prefix string, n int) []string {
		var dirs []string
		for k := 0; k < n; k++ {
			dirs = append(dirs, filepath.Join(tmp, prefix+"-shard"+string(rune('0'+k))))
		}
		return dirs
	}

	t.Run("fuzz", func(t *testing.T) {
		whole := filepath.Join(tmp, "fuzz-whole")
		common := []string{"fuzz", "redlock-clock-jump", "--runs", "90", "--seed", "4", "--keep", "2"}
		w := runBin(t, bin, append(common, "--workers", "2", "--out", whole, "--json", "--shrink", "--junit", filepath.Join(tmp, "whole.xml"))...)
		require.Equal(t, exitMismatch, w.code, w.stderr)
		dirs := shardDirs("fuzz", 3)
		for k, d := range dirs {
			r := runBin(t, bin, append(common, "--shard", string(rune('0'+k))+"/3", "--workers", string(rune('1'+k%2)), "--out", d)...)
			require.Equal(t, exitOK, r.code, "a shard exits 0 whatever it found: %s", r.stderr)
			assert.Contains(t, r.stdout, "join the shards with simrun merge")
		}
		merged := filepath.Join(tmp, "fuzz-merged")
		// Shards in any order.
		m := runBin(t, bin, "merge", dirs[2], dirs[0], dirs[1], "--out", merged, "--json", "--shrink", "--junit", filepath.Join(tmp, "merged.xml"))
		require.Equal(t, w.code, m.code, m.stderr)
		assert.Equal(t, strings.ReplaceAll(w.stdout, whole, "DIR"), strings.ReplaceAll(m.stdout, merged, "DIR"), "the JSON")
		var j fuzz.JSONResult
		require.NoError(t, json.Unmarshal([]byte(m.stdout), &j))
		assert.Equal(t, 90, j.Runs)
		require.NotEmpty(t, j.Findings)
		require.NotEmpty(t, j.Signatures, "shrunk findings grouped by signature")
		// Grouped up to the nodes the base's faults treat alike.
		assert.Equal(t, [][]string{{"A", "B"}, {"D", "E"}}, j.Interchangeable)
		assert.NotNil(t, j.Findings[0].Shrunk)
		for i, f := range j.Findings {
			assert.Equal(t, i+1, f.Number)
			if i > 0 {
				assert.Greater(t, f.Run, j.Findings[i-1].Run, "numbered by run")
			}
		}
		sameTree(t, whole, merged)
		// The time attributes are wall times (a merge has none of its own):
		// the rest must be the same.
		wallTime := regexp.MustCompile(`time="[0-9.]+"`)
		assert.Equal(t, wallTime.ReplaceAllString(strings.ReplaceAll(string(mustRead(t, filepath.Join(tmp, "whole.xml"))), whole, "DIR"), `time="T"`),
			wallTime.ReplaceAllString(strings.ReplaceAll(string(mustRead(t, filepath.Join(tmp, "merged.xml"))), merged, "DIR"), `time="T"`), "the JUnit report")

		// Refusals, exit 2, naming the problem.
		other := filepath.Join(tmp, "fuzz-other")
		r := runBin(t, bin, "fuzz", "redlock-clock-jump", "--runs", "90", "--seed", "1", "--keep", "2", "--shard", "1/3", "--out", other)
		require.Equal(t, exitOK, r.code, r.stderr)
		for _, tt := range []struct {
			name string
			dirs []string
			err  string
		}{
			{"missing", []string{dirs[0], dirs[2]}, "missing shards: 1/3 (runs 30..59)"},
			{"duplicated", []string{dirs[0], dirs[1], dirs[1], dirs[2]}, "shard 1/3 given 2 times"},
			{"mixed", []string{dirs[0], other, dirs[2]}, "mixed campaigns"},
			{"not a campaign", []string{dirs[0], tmp}, "no campaign.json"},
		} {
			r := runBin(t, bin, append([]string{"merge"}, tt.dirs...)...)
			assert.Equal(t, exitBadInput, r.code, "%s: %s", tt.name, r.stderr)
			assert.Contains(t, r.stderr, tt.err, tt.name)
		}
	})

	// Issue 27: explore shards merge into what the whole exploration
	// writes (summary or JSON, findings, shrunk findings, campaign.json,
	// JUnit), same-instant order choices included (--orders).
	t.Run("explore", func(t *testing.T) {
		common := []string{"explore", "single-gc-pause", "--faults", "pause,clock-jump", "--orders", "--quiet"}
		for _, mode := range [][]string{{"--json", "--shrink"}, {}} {
			whole := filepath.Join(tmp, "explore-whole"+strings.Join(mode, ""))
			w := runBin(t, bin, append(append(common, "--workers", "2", "--out", whole, "--junit", whole+".xml"), mode...)...)
			require.Equal(t, exitMismatch, w.code, w.stderr)
			dirs := shardDirs("explore"+strings.Join(mode, ""), 3)
			for k, d := range dirs {
				r := runBin(t, bin, append(common, "--shard", string(rune('0'+k))+"/3", "--workers", string(rune('1'+k%2)), "--out", d)...)
				require.Equal(t, exitOK, r.code, "a shard exits 0 whatever it found: %s", r.stderr)
				assert.Contains(t, r.stdout, "join the shards with simrun merge")
			}
			merged := filepath.Join(tmp, "explore-merged"+strings.Join(mode, ""))
			m := runBin(t, bin, append([]string{"merge", dirs[1], dirs[2], dirs[0], "--out", merged, "--junit", merged + ".xml"}, mode...)...)
			require.Equal(t, w.code, m.code, m.stderr)
			require.Contains(t, w.stdout, "violat")
			assert.Equal(t, strings.ReplaceAll(w.stdout, whole, "DIR"), strings.ReplaceAll(m.stdout, merged, "DIR"))
			sameTree(t, whole, merged)
			wallTime := regexp.MustCompile(`time="[0-9.]+"`)
			assert.Equal(t, wallTime.ReplaceAllString(strings.ReplaceAll(string(mustRead(t, whole+".xml")), whole, "DIR"), `time="T"`),
				wallTime.ReplaceAllString(strings.ReplaceAll(string(mustRead(t, merged+".xml")), merged, "DIR"), `time="T"`), "the JUnit report")
			r := runBin(t, bin, "merge", dirs[0], dirs[2])
			assert.Equal(t, exitBadInput, r.code, r.stderr)
			assert.Contains(t, r.stderr, "missing shards: 1/3")
		}
		r := runBin(t, bin, append(common, "--shard", "0/2", "--json")...)
		assert.Equal(t, exitBadInput, r.code, r.stderr)
		assert.Contains(t, r.stderr, "--shard with --json")
	})

	t.Run("sweep", func(t *testing.T) {
		whole := filepath.Join(tmp, "sweep-whole")
		common := []string{"sweep", "redlock-clock-jump", "--param", "faults[1].by=0s,+10s,+30s", "--seeds", "4"}
		w := runBin(t, bin, append(common, "--workers", "2", "--out", whole)...)
		require.Equal(t, exitOK, w.code, w.stderr)
		dirs := shardDirs("sweep", 3)
		for k, d := range dirs {
			r := runBin(t, bin, append(common, "--shard", string(rune('0'+k))+"/3", "--workers", string(rune('1'+k%2)), "--out", d)...)
			require.Equal(t, exitOK, r.code, r.stderr)
		}
		merged := filepath.Join(tmp, "sweep-merged")
		m := runBin(t, bin, "merge", dirs[1], dirs[2], dirs[0], "--out", merged)
		require.Equal(t, exitOK, m.code, m.stderr)
		assert.Equal(t, strings.ReplaceAll(w.stdout, whole, "DIR"), strings.ReplaceAll(m.stdout, merged, "DIR"))
		sameTree(t, whole, merged)
		// Issue 25: the points aggregate the runs' numbers, the merge the
		// same as the whole campaign (sameTree); each point's runs acquire.
		for _, g := range csvColumn(t, filepath.Join(merged, "sweep.csv"), "grants") {
			assert.NotEmpty(t, g, "grants")
			assert.NotEqual(t, "0", g, "grants")
		}
		for _, p := range csvColumn(t, filepath.Join(merged, "sweep.csv"), "latency_p50_median_s") {
			assert.NotEmpty(t, p, "latency")
		}
		r := runBin(t, bin, "merge", dirs[0], dirs[1])
		assert.Equal(t, exitBadInput, r.code, r.stderr)
		assert.Contains(t, r.stderr, "missing shards: 2/3")
		r = runBin(t, bin, "merge", dirs[0], dirs[1], filepath.Join(tmp, "fuzz-shard2"))
		assert.Equal(t, exitBadInput, r.code, r.stderr)
		assert.Contains(t, r.stderr, "mixed campaigns")
	})

	t.Run("matrix", func(t *testing.T) {
		whole := filepath.Join(tmp, "matrix-whole")
		w := runBin(t, bin, "matrix", "--runs", "1", "--workers", "2", "--out", whole, "--quiet")
		require.Equal(t, exitOK, w.code, w.stderr)
		dirs := shardDirs("matrix", 2)
		for k, d := range dirs {
			r := runBin(t, bin, "matrix", "--runs", "1", "--shard", string(rune('0'+k))+"/2", "--workers", string(rune('1'+k)), "--out", d)
			require.Equal(t, exitOK, r.code, r.stderr)
		}
		merged := filepath.Join(tmp, "matrix-merged")
		m := runBin(t, bin, "merge", dirs[0], dirs[1], "--out", merged)
		require.Equal(t, exitOK, m.code, m.stderr)
		assert.Equal(t, strings.ReplaceAll(w.stdout, whole, "DIR"), strings.ReplaceAll(m.stdout, merged, "DIR"))
		sameTree(t, whole, merged)
		grants := csvColumn(t, filepath.Join(merged, "matrix.csv"), "grants")
		require.NotEmpty(t, grants)
		counted := 0
		for _, g := range grants {
			if g != "" {
				counted++
			}
		}
		assert.Greater(t, counted, 0, "the cells count their runs' grants")
	})

	// Issue 18: Ctrl-C killed fuzz with nothing written.
	t.Run("ctrl-c", func(t *testing.T) {
		dir := filepath.Join(tmp, "interrupted")
		cmd := exec.Command(bin, "fuzz", "redlock-clock-jump", "--runs", "100000000", "--workers", "1", "--keep", "1", "--out", dir)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		// The folder appears just before the signal handler is installed
		// and the runs start. NB: conditions, not sleeps: a loaded machine
		// may take longer than any fixed sleep to get there; a second of
		// the child's CPU time is well into the runs whatever the load.
		for i := 0; !campaignFileExists(dir); i++ {
			require.Less(t, i, 2400, "the campaign folder did not appear in 2 minutes; stderr: %s", errb.String())
			time.Sleep(50 * time.Millisecond)
		}
		waitCPU(t, cmd.Process.Pid, time.Second)
		require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		err := cmd.Wait()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "stderr: %s", errb.String())
		assert.Equal(t, 130, ee.ExitCode(), errb.String())
		assert.Contains(t, errb.String(), "interrupted by SIGINT: stopped after ")
		m, err := fuzz.ReadManifest(dir)
		require.NoError(t, err)
		assert.True(t, m.Interrupted)
		assert.Positive(t, m.Done)
		if !strings.Contains(errb.String(), "(0 violating runs)") {
			assert.FileExists(t, filepath.Join(dir, "finding-1.yaml"))
			assert.Contains(t, out.String(), "finding 1: run ")
		}
		r := runBin(t, bin, "merge", dir)
		assert.Equal(t, exitBadInput, r.code, r.stderr)
		assert.Contains(t, r.stderr, "incomplete")
	})
}

func campaignFileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
