package fuzz

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/scenarios"
)

// TestMatrixWorlds checks that every base world parses, and that the
// generated schedules of every family validate in every world where the
// family applies, for many seeds.
func TestMatrixWorlds(t *testing.T) {
	algos := MatrixRows()
	require.Len(t, algos, 13+11)
	for i, a := range algos {
		s, err := scenarios.Parse("worlds/"+Slug(a.Name)+".yaml", []byte(a.YAML))
		require.NoError(t, err, "%s:\n%s", a.Name, a.YAML)
		assert.Len(t, s.Clients, 3)
		if a.Fenced {
			assert.Equal(t, "mark", s.Resource.Fencing, a.Name)
		}
		for j, fam := range MatrixFamilies {
			if !fam.Applies(s) {
				continue
			}
			targets := fam.Targets(s)
			for r := 0; r < 40; r++ {
				seed := RunSeed(1, MatrixRun(i, j, r, 40))
				specs := MatrixSchedule(s, fam, seed)
				require.NotEmpty(t, specs)
				for _, sp := range specs {
					assert.Equal(t, fam.Kind, sp.Kind)
					if fam.Node {
						assert.Contains(t, targets, sp.Node, "%s under %s", a.Name, fam.Name)
					}
				}
				_, err := s.WithFaults(specs)
				require.NoError(t, err, "%s under %s, run %d", a.Name, fam.Name, r)
			}
		}
	}
}

// TestMatrixSharedSchedules (issue 18, "+fencing rows differ from their
// base rows"): a row and its +fencing row face the same schedules with the
// same seeds; other rows and other runs face others.
func TestMatrixSharedSchedules(t *testing.T) {
	algos := MatrixRows()
	worlds := make([]*scenarios.Scenario, len(algos))
	for i, a := range algos {
		s, err := scenarios.Parse("w.yaml", []byte(a.YAML))
		require.NoError(t, err)
		worlds[i] = s
	}
	for i := 0; i+1 < len(algos); i++ {
		if !algos[i+1].Fenced {
			// A row without a +fencing row (an algorithm with no token):
			// the next row starts the next group.
			require.Equal(t, algos[i].Group+1, algos[i+1].Group, algos[i+1].Name)
			continue
		}
		require.Equal(t, algos[i].Group, algos[i+1].Group, algos[i+1].Name)
		require.Equal(t, algos[i].Name+" +fencing", algos[i+1].Name)
		for j, fam := range MatrixFamilies {
			if !fam.Applies(worlds[i]) {
				continue
			}
			for r := 0; r < 5; r++ {
				n, nf := MatrixRun(i, j, r, 5), MatrixRun(i+1, j, r, 5)
				require.Equal(t, n, nf, "%s: the same run number", algos[i+1].Name)
				seed := RunSeed(1, n)
				assert.Equal(t, fmt.Sprint(MatrixSchedule(worlds[i], fam, seed)), fmt.Sprint(MatrixSchedule(worlds[i+1], fam, seed)), "%s under %s run %d", algos[i].Name, fam.Name, r)
			}
		}
	}
	assert.NotEqual(t, MatrixRun(0, 0, 0, 5), MatrixRun(2, 0, 0, 5), "different algorithms, different runs")
	seed, other := RunSeed(1, MatrixRun(2, 0, 5, 10)), RunSeed(1, MatrixRun(2, 0, 6, 10))
	assert.NotEqual(t, fmt.Sprint(MatrixSchedule(worlds[2], MatrixFamilies[0], seed)), fmt.Sprint(MatrixSchedule(worlds[2], MatrixFamilies[0], other)))
}

func TestSlugOf(t *testing.T) {
	assert.Equal(t, "redis-single-wait-1-fencing", Slug("redis-single WAIT 1 +fencing"))
	assert.Equal(t, "crash-no-fsync", Slug("crash (no fsync)"))
}

// TestMatrixTargets pins each family's targets in each base world: the lock
// servers come from the process kinds (not sentinels, not the storage
// service; ZooKeeper's ensemble is not crashed) and then the clients.
func TestMatrixTargets(t *testing.T) {
	byName := map[string]MatrixFamily{}
	for _, f := range MatrixFamilies {
		byName[f.Name] = f
	}
	worlds := map[string]string{}
	for _, r := range MatrixRows() {
		worlds[r.Name] = r.YAML
	}
	tests := []struct {
		world, family string
		applies       bool
		want          []string
	}{
		{"redis-single", "pause", true, []string{"M", "R", "c1", "c2", "c3"}},
		{"redis-single", "crash (no fsync)", true, []string{"M", "R"}},
		{"redis-single", "failover", true, []string{"M"}},
		{"redis-single", "partition", true, nil},
		{"redlock", "clock jump", true, []string{"A", "B", "C", "D", "E", "c1", "c2", "c3"}},
		{"redlock", "failover", false, nil},
		{"zookeeper", "pause", true, []string{"zk", "c1", "c2", "c3"}},
		{"zookeeper", "crash (no fsync)", false, nil},
		{"zookeeper +fencing", "failover", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.world+"/"+tt.family, func(t *testing.T) {
			s, err := scenarios.Parse("w.yaml", []byte(worlds[tt.world]))
			require.NoError(t, err)
			f, ok := byName[tt.family]
			require.True(t, ok)
			require.Equal(t, tt.applies, f.Applies(s))
			if tt.applies {
				assert.Equal(t, tt.want, f.Targets(s))
			}
		})
	}
}

// TestMatrixClusterRow (issue 26): the cluster row's failover family
// crashes the master of the lock key's slot, and its crash family any
// cluster node.
func TestMatrixClusterRow(t *testing.T) {
	var row MatrixRow
	for _, r := range MatrixRows() {
		if r.Name == "redis-single cluster" {
			row = r
		}
	}
	require.NotEmpty(t, row.YAML)
	s, err := scenarios.Parse("w.yaml", []byte(row.YAML))
	require.NoError(t, err)
	for _, fam := range MatrixFamilies {
		switch fam.Name {
		case "failover":
			require.True(t, fam.Applies(s))
			assert.Equal(t, []string{"C2"}, fam.Targets(s), "the master of slot 8718 (\"lock\")")
		case "crash (no fsync)":
			assert.Equal(t, []string{"C1", "C2", "C3", "C4", "C5", "C6"}, fam.Targets(s))
		}
	}
	w := WorldOf(s)
	assert.Empty(t, w.Replicas, "cluster replicas are not promote targets")
}
