package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/scenarios"
)

// TestMatrixWorlds checks that every base world parses, and that the
// generated schedules of every family validate in every world where the
// family applies, for many seeds.
func TestMatrixWorlds(t *testing.T) {
	algos := matrixAlgos()
	require.Len(t, algos, 12)
	for i, a := range algos {
		s, err := scenarios.Parse("worlds/"+slugOf(a.name)+".yaml", []byte(a.yaml))
		require.NoError(t, err, "%s:\n%s", a.name, a.yaml)
		assert.Len(t, s.Clients, 3)
		if a.fenced {
			assert.Equal(t, "mark", s.Resource.Fencing, a.name)
		}
		for j, fam := range matrixFamilies {
			if !fam.applies(s) {
				continue
			}
			targets := fam.targets(s)
			for r := 0; r < 40; r++ {
				seed := fuzz.RunSeed(1, matrixRun(i, j, r, 40))
				specs := matrixSchedule(s, fam, seed)
				require.NotEmpty(t, specs)
				for _, sp := range specs {
					assert.Equal(t, fam.kind, sp.Kind)
					if fam.node {
						assert.Contains(t, targets, sp.Node, "%s under %s", a.name, fam.name)
					}
				}
				_, err := s.WithFaults(specs)
				require.NoError(t, err, "%s under %s, run %d", a.name, fam.name, r)
			}
		}
	}
}

// TestMatrixSharedSchedules (issue 18, "+fencing rows differ from their
// base rows"): a row and its +fencing row face the same schedules with the
// same seeds; other rows and other runs face others.
func TestMatrixSharedSchedules(t *testing.T) {
	algos := matrixAlgos()
	worlds := make([]*scenarios.Scenario, len(algos))
	for i, a := range algos {
		s, err := scenarios.Parse("w.yaml", []byte(a.yaml))
		require.NoError(t, err)
		worlds[i] = s
	}
	for i := 0; i < len(algos); i += 2 {
		require.True(t, algos[i+1].fenced, algos[i+1].name)
		require.Equal(t, algos[i].name+" +fencing", algos[i+1].name)
		for j, fam := range matrixFamilies {
			if !fam.applies(worlds[i]) {
				continue
			}
			for r := 0; r < 5; r++ {
				n, nf := matrixRun(i, j, r, 5), matrixRun(i+1, j, r, 5)
				require.Equal(t, n, nf, "%s: the same run number", algos[i+1].name)
				seed := fuzz.RunSeed(1, n)
				assert.Equal(t, fmt.Sprint(matrixSchedule(worlds[i], fam, seed)), fmt.Sprint(matrixSchedule(worlds[i+1], fam, seed)), "%s under %s run %d", algos[i].name, fam.name, r)
			}
		}
	}
	assert.NotEqual(t, matrixRun(0, 0, 0, 5), matrixRun(2, 0, 0, 5), "different algorithms, different runs")
	seed, other := fuzz.RunSeed(1, matrixRun(2, 0, 5, 10)), fuzz.RunSeed(1, matrixRun(2, 0, 6, 10))
	assert.NotEqual(t, fmt.Sprint(matrixSchedule(worlds[2], matrixFamilies[0], seed)), fmt.Sprint(matrixSchedule(worlds[2], matrixFamilies[0], other)))
}

// TestMatrix runs the whole matrix with one schedule per cell, with one and
// two workers: the outputs must not depend on the number of workers.
func TestMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the matrix twice")
	}
	outs := map[string]string{}
	for _, workers := range []string{"1", "2"} {
		dir := filepath.Join(t.TempDir(), "m")
		r := simrun("matrix", "--runs", "1", "--workers", workers, "--out", dir)
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stdout, "redlock +fencing")
		outs[workers] = dir
	}
	for _, f := range []string{"matrix.csv", "matrix.md", "matrix.png", "matrix.svg", "worlds/redlock-fencing.yaml"} {
		a := bytes.ReplaceAll(mustRead(t, filepath.Join(outs["1"], f)), []byte(outs["1"]), []byte("DIR"))
		b := bytes.ReplaceAll(mustRead(t, filepath.Join(outs["2"], f)), []byte(outs["2"]), []byte("DIR"))
		assert.Equal(t, a, b, "%s depends on the number of workers", f)
	}
	page := string(mustRead(t, filepath.Join(outs["1"], "matrix.html")))
	assert.Contains(t, page, "<h1>Which lock should we use?</h1>")
	assert.Contains(t, page, "data:image/svg&#43;xml;base64,")
	md := string(mustRead(t, filepath.Join(outs["1"], "matrix.md")))
	assert.Contains(t, md, "| zookeeper | ")
	assert.Contains(t, md, "n/a")
	entries, err := os.ReadDir(filepath.Join(outs["1"], "worlds"))
	require.NoError(t, err)
	assert.Len(t, entries, 12)
}

func TestMatrixErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		err  string
	}{
		{"no out", []string{"matrix"}, "--out: required"},
		{"no runs", []string{"matrix", "--out", t.TempDir(), "--runs", "0"}, "--runs"},
		{"no workers", []string{"matrix", "--out", t.TempDir(), "--workers", "0"}, "--workers"},
		{"an argument", []string{"matrix", "extra"}, "extra"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := simrun(tt.args...)
			assert.Equal(t, exitBadInput, r.code)
			assert.Contains(t, r.stderr, tt.err)
		})
	}
}

func TestSlugOf(t *testing.T) {
	assert.Equal(t, "redis-single-wait-1-fencing", slugOf("redis-single WAIT 1 +fencing"))
	assert.Equal(t, "crash-no-fsync", slugOf("crash (no fsync)"))
}
