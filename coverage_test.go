package locksim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/scenarios"
)

// notInMatrix are the registered algorithms the algorithm x fault matrix
// leaves out, each with its reason: the matrix compares the locks people
// use; these are the broken variants whose one failure a catalogue story
// shows.
var notInMatrix = map[string]string{
	clients.RedisSetNXExpire: "SETNX then EXPIRE: broken by a crash between the two (catalogue story)",
	clients.RedisFixedValue:  "one value for all clients: broken by design (fixed-value-release)",
	clients.RedisGetDel:      "GET then DEL release: broken by a pause between them (get-del-release)",
}

// TestEveryKindAndAlgorithmIsCovered fails when a registered lock
// algorithm or process kind has no doc text of its own, no entry in the
// generated reference (docs/reference, written from the registries by
// go run ./cmd/simrun docs), no row of the algorithm x fault matrix, no
// catalogue scenario or no report lane: registering one is a line, and
// this test lists what else it takes.
func TestEveryKindAndAlgorithmIsCovered(t *testing.T) {
	reference := func(file string) string {
		data, err := os.ReadFile(filepath.Join("docs", "reference", file))
		require.NoError(t, err)
		return string(data)
	}
	algorithms, kinds := reference("algorithms.md"), reference("process-kinds.md")
	cat, err := scenarios.Catalogue()
	require.NoError(t, err)
	rows := fuzz.MatrixRows()

	for _, name := range clients.Algorithms {
		t.Run("algorithm "+name, func(t *testing.T) {
			assert.NotEmpty(t, clients.Lookup(name).Doc, "no Doc of its own (clients/algorithms.go)")
			assert.Contains(t, algorithms, "\n## `"+name+"`\n", "no entry in docs/reference/algorithms.md: run go run ./cmd/simrun docs")
			inMatrix := false
			for _, r := range rows {
				inMatrix = inMatrix || strings.Contains(r.YAML, "algorithm: "+name+",")
			}
			if reason, ok := notInMatrix[name]; ok {
				assert.False(t, inMatrix, "in the matrix: drop it from notInMatrix (%s)", reason)
			} else {
				assert.True(t, inMatrix, "no row of the matrix (fuzz.MatrixRows), and no reason in notInMatrix")
			}
			used := false
			for _, s := range cat {
				for _, c := range s.Clients {
					used = used || c.Lock.Algorithm == name
				}
			}
			assert.True(t, used, "no catalogue scenario uses it (the golden file and the reports never see it)")
		})
	}

	for _, k := range scenarios.Kinds() {
		t.Run("kind "+k.Name, func(t *testing.T) {
			assert.NotEmpty(t, k.Doc, "no Doc of its own (scenarios/kind_*.go)")
			assert.Contains(t, kinds, "\n## `"+k.Section+"`\n", "no entry in docs/reference/process-kinds.md: run go run ./cmd/simrun docs")
			// The matrix aims at the kinds that some algorithm locks on.
			locked := false
			for _, name := range clients.Algorithms {
				locked = locked || clients.Lookup(name).NodeKind == k.Name
			}
			if locked {
				inMatrix := false
				for _, r := range rows {
					inMatrix = inMatrix || strings.Contains(r.YAML, k.Section+":")
				}
				assert.True(t, inMatrix, "an algorithm locks on it, but no matrix world has it")
			}
			// The reports: a lane for each of its processes, in a catalogue
			// scenario that has some, whose lane the reports can draw.
			seen := false
			for _, s := range cat {
				procs := s.ServersOf(k)
				if len(procs) == 0 {
					continue
				}
				seen = true
				st, err := scenarios.SetupOf(s)
				require.NoError(t, err)
				lanes := map[string]record.Server{}
				for _, sv := range st.Servers {
					lanes[sv.Name] = sv
				}
				for _, p := range procs {
					sv, ok := lanes[p.Name]
					if p.Lane == record.LaneResource && len(s.Clients) == 0 {
						continue // an idle resource has no lane
					}
					if assert.True(t, ok, "%s: %s has no lane in the report", s.Name, p.Name) {
						assert.NotEmpty(t, sv.Role, "%s: %s's lane has no role", s.Name, p.Name)
						assert.Contains(t, record.Lanes, sv.Lane, "%s: %s's lane draws %q, which the reports do not know", s.Name, p.Name, sv.Lane)
					}
				}
			}
			assert.True(t, seen, "no catalogue scenario has a process of this kind")
		})
	}
}
