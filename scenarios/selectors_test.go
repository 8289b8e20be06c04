package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const selectorBase = `name: sel
duration: 10s
redis:
  - name: M
  - name: R
    replicaof: M
  - name: X
clients:
  - name: c1
    lock: {algorithm: redis-single, node: X, ttl: 5s}
    workload: {start: 0s, cycles: 1, hold: 1s}
faults:
  - at: 1s
    kind: %KIND%
    node: %NODE%
`

// TestFaultSelectors checks that a fault's node may be a selector, that
// a bad one is refused at its file:line, and that the world applies the
// fault to the process the seed chose, naming it.
func TestFaultSelectors(t *testing.T) {
	src := func(kind, node string) []byte {
		return []byte(strings.NewReplacer("%KIND%", kind, "%NODE%", node).Replace(selectorBase))
	}
	for _, tt := range []struct{ kind, node, want string }{
		{"crash", "any redis", ""},
		{"crash", "majority servers", ""},
		{"crash", "all clients", ""},
		{"promote", "all replicas", ""},
		{"crash", "any pets", `sel.yaml:15: faults[0].node: unknown set "pets" in selector "any pets" (known: clients, redis, replicas, resource, servers)`},
		{"crash", "every redis", `sel.yaml:15: faults[0].node: unknown selector mode "every"`},
		{"promote", "any redis", `sel.yaml:15: faults[0].node: selector "any redis" may choose "M", which is not a replica`},
	} {
		t.Run(tt.kind+" "+tt.node, func(t *testing.T) {
			_, err := Parse("sel.yaml", src(tt.kind, tt.node))
			if tt.want != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.want)
				return
			}
			require.NoError(t, err)
		})
	}
	s, err := Parse("sel.yaml", src("crash", "any redis"))
	require.NoError(t, err)
	seen := map[string]bool{}
	for seed := uint64(1); seed <= 12; seed++ {
		w, err := Build(s, seed, false)
		require.NoError(t, err)
		require.NoError(t, w.Kernel.Run(2e9))
		hist := w.Kernel.Finish()
		require.Len(t, hist.Faults, 1)
		r := hist.Faults[0]
		assert.Contains(t, r.Text, `chosen by selector "any redis"`)
		seen[r.Targets[0]] = true
	}
	assert.Len(t, seen, 3, "over 12 seeds, any redis chose each of M, R, X")
}
