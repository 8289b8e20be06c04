package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/scenarios"
)

// TestMatrixWorlds checks that every base world parses, and that the
// generated schedules of every family validate in every world where the
// family applies, for many seeds.
func TestMatrixWorlds(t *testing.T) {
	algos := matrixAlgos()
	require.Len(t, algos, 12)
	for _, a := range algos {
		s, err := scenarios.Parse("worlds/"+slugOf(a.name)+".yaml", []byte(a.yaml))
		require.NoError(t, err, "%s:\n%s", a.name, a.yaml)
		assert.Len(t, s.Clients, 3)
		if a.fenced {
			assert.Equal(t, "mark", s.Resource.Fencing, a.name)
		}
		for _, fam := range matrixFamilies {
			if !fam.applies(s) {
				continue
			}
			for r := 0; r < 40; r++ {
				seed := matrixSeed(1, a.world, fam.name, r)
				specs := matrixSchedule(s, fam, seed)
				require.NotEmpty(t, specs)
				for _, sp := range specs {
					assert.Equal(t, fam.kind, sp.Kind)
				}
				_, err := s.WithFaults(specs)
				require.NoError(t, err, "%s under %s, run %d", a.name, fam.name, r)
			}
		}
	}
}

// TestMatrixSharedSchedules checks that the rows of one world (with and
// without fencing) face the same schedules, and different runs different
// ones.
func TestMatrixSharedSchedules(t *testing.T) {
	algos := matrixAlgos()
	plain, err := scenarios.Parse("a.yaml", []byte(algos[2].yaml))
	require.NoError(t, err)
	fenced, err := scenarios.Parse("b.yaml", []byte(algos[3].yaml))
	require.NoError(t, err)
	require.Equal(t, algos[2].world, algos[3].world)
	fam := matrixFamilies[0]
	seed := matrixSeed(1, algos[2].world, fam.name, 5)
	assert.Equal(t, fmt.Sprint(matrixSchedule(plain, fam, seed)), fmt.Sprint(matrixSchedule(fenced, fam, seed)))
	other := matrixSeed(1, algos[2].world, fam.name, 6)
	assert.NotEqual(t, fmt.Sprint(matrixSchedule(plain, fam, seed)), fmt.Sprint(matrixSchedule(plain, fam, other)))
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
