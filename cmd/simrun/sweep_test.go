package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/scenarios"
)

func TestParseSweepParam(t *testing.T) {
	tests := []struct {
		name   string
		spec   string
		path   string
		values []string
		x      []float64
		unit   string
		err    string
	}{
		{name: "duration range", spec: "faults[1].by=0s..40s/9", path: "faults[1].by",
			values: []string{"0s", "5s", "10s", "15s", "20s", "25s", "30s", "35s", "40s"}, x: []float64{0, 5, 10, 15, 20, 25, 30, 35, 40}, unit: "s"},
		{name: "signed duration range keeps the sign", spec: "faults[1].by=-10s..+10s/3", path: "faults[1].by",
			values: []string{"-10s", "0s", "+10s"}, x: []float64{-10, 0, 10}, unit: "s"},
		{name: "uneven duration steps", spec: "clients[0].lock.ttl=1s..2s/4", path: "clients[0].lock.ttl",
			values: []string{"1s", "1.333333333s", "1.666666667s", "2s"}, x: []float64{1, 1.333333333, 1.666666667, 2}, unit: "s"},
		{name: "number range", spec: "redis[2].clock.drift=0..0.1/11", path: "redis[2].clock.drift",
			values: []string{"0", "0.01", "0.02", "0.03", "0.04", "0.05", "0.06", "0.07", "0.08", "0.09", "0.1"},
			x:      []float64{0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1}},
		{name: "single value range", spec: "network.loss=0.2..0.4/1", path: "network.loss", values: []string{"0.2"}, x: []float64{0.2}},
		{name: "duration list", spec: "clients[0].lock.ttl=2s, 5s,10s,30s", path: "clients[0].lock.ttl",
			values: []string{"2s", "5s", "10s", "30s"}, x: []float64{2, 5, 10, 30}, unit: "s"},
		{name: "categories", spec: "clients[0].lock.fanout=sequential,parallel", path: "clients[0].lock.fanout",
			values: []string{"sequential", "parallel"}},
		{name: "a range value without a count is one value", spec: "network.latency=1ms..3ms", path: "network.latency", values: []string{"1ms..3ms"}},
		{name: "no equals", spec: "faults[1].by", err: "want PATH=VALUES"},
		{name: "no values", spec: "faults[1].by=", err: "want PATH=VALUES"},
		{name: "zero count", spec: "faults[1].by=0s..4s/0", err: "count after / must be from 1 to 1000"},
		{name: "bad range end", spec: "faults[1].by=0s..soon/3", err: `"soon" is neither a duration`},
		{name: "mixed range", spec: "faults[1].by=1s..0.5/3", err: "mix a duration with a number"},
		{name: "empty list item", spec: "clients[0].lock.ttl=2s,,3s", err: "empty value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := reports.ParseSweepParam(tt.spec)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				assert.Contains(t, err.Error(), "--param")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.path, p.Path)
			assert.Equal(t, tt.values, p.Values)
			require.Len(t, p.X, len(tt.x))
			for i := range tt.x {
				assert.InDelta(t, tt.x[i], p.X[i], 1e-9)
			}
			assert.Equal(t, tt.unit, p.Unit)
		})
	}
}

// TestSweepRemovesStalePoints (issue 18): a second sweep into the same
// folder with fewer points left point-NNN.yaml of the first.
func TestSweepRemovesStalePoints(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	r := simrun("sweep", "redlock-clock-jump", "--param", "faults[1].by=0s,+10s,+30s", "--seeds", "1", "--out", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.FileExists(t, filepath.Join(dir, "points", "point-002.yaml"))
	r = simrun("sweep", "redlock-clock-jump", "--param", "faults[1].by=0s,+30s", "--seeds", "1", "--out", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.FileExists(t, filepath.Join(dir, "points", "point-001.yaml"))
	assert.NoFileExists(t, filepath.Join(dir, "points", "point-002.yaml"), "a stale point of the first sweep")
}

// TestSweep runs a small sweep with one and with two workers: the files
// must be identical, every point's scenario must load, and its replay
// command must reproduce a violation.
func TestSweep(t *testing.T) {
	outs := map[string]string{}
	for _, workers := range []string{"1", "2"} {
		dir := filepath.Join(t.TempDir(), "sweep")
		r := simrun("sweep", "redlock-clock-jump", "--param", "faults[1].by=0s,+30s", "--seeds", "3", "--workers", workers, "--out", dir)
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Empty(t, r.stderr, "no progress bar when stderr is not a terminal")
		assert.Contains(t, r.stdout, "faults[1].by=+30s")
		outs[workers] = dir
	}
	for _, f := range []string{"sweep.csv", "sweep.png", "sweep.svg", "points/point-000.yaml", "points/point-001.yaml"} {
		a, err := os.ReadFile(filepath.Join(outs["1"], f))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(outs["2"], f))
		require.NoError(t, err)
		if f == "sweep.csv" {
			// The replay commands name each sweep's own folder.
			a = bytes.ReplaceAll(a, []byte(outs["1"]), []byte("DIR"))
			b = bytes.ReplaceAll(b, []byte(outs["2"]), []byte("DIR"))
		}
		assert.Equal(t, a, b, "%s depends on the number of workers", f)
	}
	rows, err := csv.NewReader(bytes.NewReader(mustRead(t, filepath.Join(outs["1"], "sweep.csv")))).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3)
	assert.Equal(t, []string{"0", "0s", "3", "0", "0"}, rows[1][:5], "no jump: no lock violation")
	assert.Equal(t, []string{"1", "+30s", "3", "3", "0"}, rows[2][:5], "a 30s jump: always")
	// Replay point 1's first violating run from its file.
	replay := csvColumn(t, filepath.Join(outs["1"], "sweep.csv"), "replay")[1]
	f := strings.Fields(replay)
	require.Len(t, f, 5, replay)
	s, err := scenarios.Load(f[2])
	require.NoError(t, err)
	assert.Equal(t, 30*time.Second, s.Faults[1].By)
	r := simrun("run", f[2], "--seed", f[4])
	assert.Equal(t, exitOK, r.code, "the point expects a lock violation:\n%s", r.stdout)
	assert.Contains(t, r.stdout, "lock safety      violated")
	svg := string(mustRead(t, filepath.Join(outs["1"], "sweep.svg")))
	assert.Contains(t, svg, "P(lock safety violated)")
}

// TestSweepLabels: --label names an axis and --reference draws the line the
// story predicts; both are part of the campaign, so a merge draws them too.
func TestSweepLabels(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	r := simrun("sweep", "redlock-clock-jump", "--param", "faults[1].by=0s,+10s", "--seeds", "1", "--out", dir,
		"--label", "faults[1].by=clock jump of C", "--reference", "5s=ttl - hold")
	require.Equal(t, exitOK, r.code, r.stderr)
	svg := string(mustRead(t, filepath.Join(dir, "sweep.svg")))
	assert.Contains(t, svg, "clock jump of C")
	assert.Contains(t, svg, "ttl - hold")
	assert.Contains(t, string(mustRead(t, filepath.Join(dir, "campaign.json"))), "reference=5s=ttl - hold")
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}

func TestSweepErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		errs []string
	}{
		{"no out", []string{"sweep", "redlock-clock-jump", "--param", "faults[1].by=0s,1s"}, []string{"--out: required"}},
		{"no param", []string{"sweep", "redlock-clock-jump", "--out", dir}, []string{"--param", "one or two"}},
		{"three params", []string{"sweep", "redlock-clock-jump", "--out", dir, "--param", "a=1", "--param", "b=1", "--param", "c=1"}, []string{"one or two", "got 3"}},
		{"bad syntax", []string{"sweep", "redlock-clock-jump", "--out", dir, "--param", "faults[1].by"}, []string{`--param "faults[1].by"`, "PATH=VALUES"}},
		{"unknown path", []string{"sweep", "redlock-clock-jump", "--out", dir, "--param", "clients[0].lock.frobnicate=1,2"}, []string{"--param clients[0].lock.frobnicate=1,2", "frobnicate"}},
		{"index out of range", []string{"sweep", "redlock-clock-jump", "--out", dir, "--param", "faults[9].by=1s,2s"}, []string{"--param faults[9].by=1s,2s", "no item 9"}},
		{"invalid value", []string{"sweep", "redlock-clock-jump", "--out", dir, "--param", "clients[0].lock.ttl=5s,-1s"}, []string{"--param clients[0].lock.ttl=5s,-1s", `value "-1s"`}},
		{"same path twice", []string{"sweep", "redlock-clock-jump", "--out", dir, "--param", "faults[1].by=1s", "--param", "faults[1].by=2s"}, []string{"already swept"}},
		{"bad seeds", []string{"sweep", "redlock-clock-jump", "--out", dir, "--param", "faults[1].by=1s", "--seeds", "0"}, []string{"--seeds"}},
		// Issue 33: a makeslice panic, and 17.6 GB allocated up front.
		{"seeds past int64", []string{"sweep", "redlock-clock-jump", "--out", dir, "--param", "faults[1].by=1s,2s", "--seeds", "9223372036854775807"}, []string{"2 points × --seeds 9223372036854775807 is more than 1000000 runs"}},
		{"seeds 1e8", []string{"sweep", "redlock-clock-jump", "--out", dir, "--param", "faults[1].by=1s", "--seeds", "100000000"}, []string{"1 points × --seeds 100000000 is more than 1000000 runs"}},
		{"bad workers", []string{"sweep", "redlock-clock-jump", "--out", dir, "--param", "faults[1].by=1s", "--workers", "0"}, []string{"--workers"}},
		{"unknown scenario", []string{"sweep", "no-such-scenario", "--out", dir, "--param", "faults[1].by=1s"}, []string{"no-such-scenario"}},
		{"label of an unswept path", []string{"sweep", "redlock-clock-jump", "--out", dir, "--param", "faults[1].by=1s", "--label", "clients[0].lock.ttl=ttl"}, []string{"--label", "clients[0].lock.ttl is not swept (swept: faults[1].by)"}},
		{"label without text", []string{"sweep", "redlock-clock-jump", "--out", dir, "--param", "faults[1].by=1s", "--label", "faults[1].by="}, []string{"want PATH=TEXT"}},
		{"reference of a bad value", []string{"sweep", "redlock-clock-jump", "--out", dir, "--param", "faults[1].by=1s,2s", "--reference", "soon=ttl - hold"}, []string{`--reference "soon=ttl - hold"`, "not a value of faults[1].by"}},
		{"reference on two parameters", []string{"sweep", "redlock-clock-jump", "--out", dir, "--param", "faults[1].by=1s,2s", "--param", "clients[0].lock.ttl=5s,10s", "--reference", "5s=x"}, []string{"one numeric or duration parameter"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := simrun(tt.args...)
			assert.Equal(t, exitBadInput, r.code, "stderr: %s", r.stderr)
			for _, e := range tt.errs {
				assert.Contains(t, r.stderr, e)
			}
		})
	}
}
