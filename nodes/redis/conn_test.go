package redis

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

func syncTexts(w *world, proc string) []string {
	var out []string
	for _, e := range w.Events(EventReplicaSync, proc) {
		out = append(out, strings.Fields(e.Text)[0])
	}
	return out
}

// TestShortPartitionRetransmits: a write made while the replication link is
// cut reaches the replica after the heal by retransmission, on the same
// connection: no resync at all.
func TestShortPartitionRetransmits(t *testing.T) {
	w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()}, nodeSpec{name: "R", cfg: replicaOf("A")})
	w.Advance(10 * time.Millisecond)
	id := w.K.Partition([][]sim.ProcID{{w.ID("A")}, {w.ID("R")}})
	require.True(t, w.do("A", "SET", "k", "v").IsOK())
	w.Advance(500 * time.Millisecond)
	assert.Equal(t, Nil(), w.do("R", "GET", "k"))
	w.K.Unpartition(id)
	w.Advance(2 * time.Second)
	assert.Equal(t, Bulk("v"), w.do("R", "GET", "k"))
	assert.Equal(t, []string{"from"}, syncTexts(w, "R"), "only the initial full sync")
	assert.Empty(t, w.Events(EventReplicaLink, "R"))
}

// TestPartialVersusFullResync: after a partition longer than repl-timeout
// the replica reconnects with PSYNC; the master continues from its backlog
// while the replica's offset is still there, and sends a full sync when the
// backlog has moved past it.
func TestPartialVersusFullResync(t *testing.T) {
	tests := []struct {
		name    string
		backlog int64
		want    string
	}{
		{"offset in the backlog", 0, "partial"},
		{"backlog overrun", 200, "from"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := master()
			m.ReplBacklogSize = tt.backlog
			w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: m}, nodeSpec{name: "R", cfg: replicaOf("A")})
			w.Advance(10 * time.Millisecond)
			w.K.Partition([][]sim.ProcID{{w.ID("A")}, {w.ID("R")}})
			for i := 0; i < 10; i++ {
				require.True(t, w.do("A", "SET", "k"+itoa(int64(i)), strings.Repeat("x", 20)).IsOK())
			}
			w.Advance(70 * time.Second) // both ends time out (repl-timeout 60 s)
			assert.Equal(t, "0", infoLine(w.do("A", "INFO", "replication"), "connected_slaves"))
			w.K.Heal()
			w.Advance(10 * time.Second) // the PSYNC arrives at the next retransmission (3.7s); a full sync then waits repl-diskless-sync-delay (5s)
			assert.Equal(t, Bulk(strings.Repeat("x", 20)), w.do("R", "GET", "k9"))
			assert.Equal(t, []string{"from", tt.want}, syncTexts(w, "R"))
			assert.Equal(t, infoLine(w.do("A", "INFO", "replication"), "master_repl_offset"),
				infoLine(w.do("R", "INFO", "replication"), "master_repl_offset"))
		})
	}
}

// TestReplicaLearnsMasterCrash: a killed master's host closes its sockets
// (a FIN), so the replica marks its link down one way later; after a power
// loss it hears nothing and repl-timeout (60 s) decides.
func TestReplicaLearnsMasterCrash(t *testing.T) {
	tests := []struct {
		mode         sim.CrashMode
		upAt, downAt time.Duration // after the crash
	}{
		{sim.CrashProcess, 0, 10 * time.Millisecond},
		{sim.CrashPower, 58 * time.Second, 62 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.mode.String(), func(t *testing.T) {
			w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()}, nodeSpec{name: "R", cfg: replicaOf("A")})
			w.Advance(10 * time.Millisecond)
			if tt.upAt > 0 {
				w.K.Crash(w.ID("A"), tt.mode)
				w.Advance(tt.upAt)
				assert.Equal(t, "up", infoLine(w.do("R", "INFO", "replication"), "master_link_status"), "not yet")
				w.Advance(tt.downAt - tt.upAt)
			} else {
				assert.Equal(t, "up", infoLine(w.do("R", "INFO", "replication"), "master_link_status"), "before the crash")
				w.K.Crash(w.ID("A"), tt.mode)
				w.Advance(tt.downAt)
			}
			assert.Equal(t, "down", infoLine(w.do("R", "INFO", "replication"), "master_link_status"))
		})
	}
}
