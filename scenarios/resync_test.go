package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withDelay is a master and its replica; the replica restarts at 2s and
// resyncs in full (its replication id is not reloaded).
const withDelay = `name: t
duration: 12s
redis:
  - name: A
    repl_diskless_sync_delay: 3s
  - name: R
    replicaof: A
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 5s}
    workload: {start: 0s, cycles: 1, hold: 1s}
faults:
  - at: 2s
    kind: crash
    node: R
    mode: process
    restart_after: 500ms
`

// TestReplDisklessSyncDelayOption: redis[].repl_diskless_sync_delay
// defaults to 5s (Redis 7.0.15), reaches the node (the restarted replica's
// full sync starts 2-3s after its PSYNC with 3s, not 4-6s), and a negative
// or fractional value names the field.
func TestReplDisklessSyncDelayOption(t *testing.T) {
	s, err := Parse("t.yaml", []byte(strings.Replace(withDelay, "    repl_diskless_sync_delay: 3s\n", "", 1)))
	require.NoError(t, err)
	assert.Equal(t, "5s", s.Redis()[0].ReplDisklessSyncDelay.String())

	s, err = Parse("t.yaml", []byte(withDelay))
	require.NoError(t, err)
	assert.Equal(t, "3s", s.Redis()[0].ReplDisklessSyncDelay.String())
	o, err := Run(s, 1, Options{KeepTrace: true})
	require.NoError(t, err)
	var psync, full string
	for _, e := range o.Trace {
		if e.Proc == "R" && strings.Contains(e.Text, " PSYNC ") && e.At > 2e9 && psync == "" {
			psync = e.At.String()
		}
		if e.Proc == "A" && e.Peer == "R" && strings.Contains(e.Text, " FULLRESYNC ") && e.At > 2e9 {
			full = e.At.String()
		}
	}
	// R restarts at 2.5s: PSYNC in second 2, A's replicationCron of second
	// 5 starts the transfer.
	assert.Equal(t, "2.500s", psync)
	assert.True(t, strings.HasPrefix(full, "5."), "full sync at %s", full)

	for _, bad := range []string{"-1s", "1500ms"} {
		_, err := Parse("t.yaml", []byte(strings.Replace(withDelay, "repl_diskless_sync_delay: 3s", "repl_diskless_sync_delay: "+bad, 1)))
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "t.yaml:5: redis[0].repl_diskless_sync_delay: must be 0s")
	}
}
