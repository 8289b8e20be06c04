package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const clusterHead = `name: t
duration: 10s
clients:
  - name: c1
    lock: {algorithm: redis-single, node: C1, ttl: 5s}
    workload: {start: 0s, cycles: 1, hold: 1s}
`

// TestParseCluster: a cluster: section lays its nodes out as redis-cli
// --cluster create does, and the nodes are Redis servers that locks and
// faults name.
func TestParseCluster(t *testing.T) {
	s, err := Parse("t.yaml", []byte(clusterHead+"cluster: {masters: 3, replicas: 1, node_timeout: 5s}\nfaults:\n  - {at: 1s, kind: crash, node: C2}\n"))
	require.NoError(t, err)
	cs := s.Cluster()
	require.NotNil(t, cs)
	require.Len(t, cs.Nodes, 6)
	assert.Equal(t, "C2", cs.Nodes[5].ReplicaOf)
	assert.Equal(t, 5461, cs.Nodes[1].Slots[0].From)
	w, err := Build(s, 1, false)
	require.NoError(t, err)
	_, ok := w.Kernel.Lookup("C6")
	assert.True(t, ok)
}

// TestParseClusterErrors: a cluster that cannot form is refused, naming the
// field.
func TestParseClusterErrors(t *testing.T) {
	for _, tt := range []struct {
		name, cluster string
		want          []string
	}{
		{"one master", "cluster: {masters: 1}\n", []string{"t.yaml:7: cluster.masters: a Redis Cluster needs at least 3 masters", "got 1"}},
		{"no layout", "cluster: {replicas: 1}\n", []string{"cluster.masters: missing"}},
		{"both layouts", "cluster:\n  masters: 3\n  nodes: [{name: C1, slots: 0-16383}]\n", []string{"cluster.masters: give either"}},
		{"unassigned slots", "cluster:\n  nodes:\n    - {name: C1, slots: 0-8000}\n    - {name: C2, slots: 8001-16000}\n", []string{"cluster.nodes: slots 16001-16383 are not assigned"}},
		{"replica of a missing master", "cluster:\n  nodes:\n    - {name: C1, slots: 0-8000}\n    - {name: C2, slots: 8001-16383}\n    - {name: C3, replicaof: C9}\n", []string{"cluster.nodes[2].replicaof: \"C9\" is not a node of the cluster"}},
		{"single explicit master", "cluster:\n  nodes:\n    - {name: C1, slots: 0-16383}\n    - {name: C2, replicaof: C1}\n", []string{"cluster.nodes: a Redis Cluster needs at least 2 masters"}},
		{"slot twice", "cluster:\n  nodes:\n    - {name: C1, slots: 0-9000}\n    - {name: C2, slots: 8001-16383}\n", []string{"cluster.nodes[1].slots: slot 8001 is already served by C1"}},
		{"bad slot range", "cluster:\n  nodes:\n    - {name: C1, slots: 9-2}\n    - {name: C2, slots: 0-16383}\n", []string{"cluster.nodes[0].slots: bad slot range \"9-2\""}},
		{"replica of a replica", "cluster:\n  nodes:\n    - {name: C1, slots: 0-8000}\n    - {name: C2, slots: 8001-16383}\n    - {name: C3, replicaof: C1}\n    - {name: C4, replicaof: C3}\n", []string{"cluster.nodes[3].replicaof: \"C3\" is a replica itself"}},
		{"unknown field", "cluster: {masters: 3, colour: red}\n", []string{"cluster.colour: unknown field"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(clusterHead+tt.cluster))
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}
