package scenarios

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// manyClients returns a scenario with five Redis masters, the resource and
// n clients (n+6 processes): Redlock clients, or with lean the smallest
// client the format allows (so that 10,000 of them stay within the YAML
// loader's own bound of 100,000 nodes).
func manyClients(n int, lean bool) []byte {
	var b strings.Builder
	b.WriteString("name: many-clients\nseed: 1\nduration: 1s\nredis:\n")
	for _, r := range "ABCDE" {
		fmt.Fprintf(&b, "  - name: %c\n", r)
	}
	b.WriteString("clients:\n")
	for i := 1; i <= n; i++ {
		if lean {
			fmt.Fprintf(&b, "  - {name: c%d, lock: {algorithm: redis-single, node: A}}\n", i)
			continue
		}
		fmt.Fprintf(&b, "  - {name: c%d, lock: {algorithm: redlock, nodes: [A, B, C, D, E]}, workload: {start: 0s, cycles: 1}}\n", i)
	}
	return []byte(b.String())
}

// TestWorldSizeLimit: a world of more than MaxProcesses processes is
// refused with an error naming the count and the limit; one at the limit
// is accepted.
func TestWorldSizeLimit(t *testing.T) {
	tests := []struct {
		name    string
		clients int
		wantErr string
	}{
		{"at the limit", MaxProcesses - 6, ""},
		{"one over", MaxProcesses - 5, fmt.Sprintf("the world has %d processes (servers, resource and clients), more than the limit of %d", MaxProcesses+1, MaxProcesses)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("many.yaml", manyClients(tt.clients, true))
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "many.yaml:")
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

// BenchmarkBuild2000Clients builds (without running) a world of 2,000
// Redlock clients on five masters: issue 15 measured 45 s when every Add
// copied the whole link matrix; the target is well under a second.
//
//	go test ./scenarios -run '^$' -bench Build2000Clients -benchtime 3x -cpu 1
func BenchmarkBuild2000Clients(b *testing.B) {
	s, err := Parse("many.yaml", manyClients(2000, false))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w, err := Build(s, uint64(i+1), false)
		if err != nil {
			b.Fatal(err)
		}
		if n := w.Kernel.NumProcs(); n < 2006 {
			b.Fatalf("%d processes", n)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/build")
}
