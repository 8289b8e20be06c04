package redis

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// syncAnswer is a master's answer to a replica's PSYNC, from the trace:
// when the master handled the PSYNC and when it sent +FULLRESYNC or
// +CONTINUE.
type syncAnswer struct {
	psync, answer time.Duration
	full          bool
}

// syncAnswers lists the answers master gave replica's PSYNCs after from.
func syncAnswers(w *world, master, replica string, from time.Duration) []syncAnswer {
	var out []syncAnswer
	psyncs := map[string]bool{} // message numbers of the replica's PSYNCs
	var pending time.Duration = -1
	for _, e := range w.K.Trace() {
		at := time.Duration(e.At)
		switch {
		case e.Kind == sim.KindSend && e.Proc == replica && e.Peer == master && strings.Contains(e.Text, " PSYNC "):
			psyncs[strings.Fields(e.Text)[0]] = true
		case e.Kind == sim.KindDeliver && e.Proc == master && e.Peer == replica && psyncs[e.Text] && at >= from:
			pending = at
		case e.Kind == sim.KindSend && e.Proc == master && e.Peer == replica && pending >= 0 &&
			(strings.Contains(e.Text, " FULLRESYNC ") || strings.Contains(e.Text, " CONTINUE ")):
			out = append(out, syncAnswer{psync: pending, answer: at, full: strings.Contains(e.Text, " FULLRESYNC ")})
			pending = -1
		}
	}
	return out
}

// TestDelayedFullSync: with repl-diskless-sync yes, 7.0's default, a master
// starts a full sync from its once-a-second replicationCron once the
// longest-waiting replica has waited repl-diskless-sync-delay in whole
// seconds (R 7.0.15 src/replication.c:1092-1099, :3762-3824), one transfer
// for every replica then waiting; meanwhile the replica's link is down and
// neither WAIT nor min-replicas-to-write counts it. A partial resync never
// waits. The master's replicationCron runs at 0.1s, 1.1s, 2.1s, ... (its
// first serverCron tick is at 100ms, cronLoops 0).
func TestDelayedFullSync(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name    string
		delay   time.Duration
		restart []time.Duration // when R1 (and R2) restart: a full sync (PSYNC ? -1)
		// answers: when the master answered each restarted replica
		answers []time.Duration
	}{
		// PSYNC at 2.501s (second 2): the cron of second 7 (7.1s) starts it.
		{"default delay 5s", 5 * time.Second, []time.Duration{2500 * ms}, []time.Duration{7100 * ms}},
		// PSYNC at 2.951s: still second 2, so 4.15s later.
		{"late in its second", 5 * time.Second, []time.Duration{2950 * ms}, []time.Duration{7100 * ms}},
		{"delay 2s", 2 * time.Second, []time.Duration{2500 * ms}, []time.Duration{4100 * ms}},
		{"delay 0: at once", 0, []time.Duration{2500 * ms}, []time.Duration{2501 * ms}},
		// R2 arrives 2.8s later and shares R1's transfer.
		{"two replicas share one transfer", 5 * time.Second, []time.Duration{2500 * ms, 5300 * ms}, []time.Duration{7100 * ms, 7100 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := master()
			m.Save = nil
			m.ReplDisklessSyncDelay = tt.delay
			m.MinReplicasToWrite = 1
			specs := []nodeSpec{{name: "A", cfg: m}, {name: "R1", cfg: replicaOf("A")}, {name: "R2", cfg: replicaOf("A")}}
			w := newWorld(t, time.Millisecond, specs...)
			w.Advance(100 * ms)
			// The replicas of the run's start are in sync at once.
			require.Equal(t, "up", infoLine(w.do("R1", "INFO", "replication"), "master_link_status"))
			require.Equal(t, "up", infoLine(w.do("R2", "INFO", "replication"), "master_link_status"))
			names := []string{"R1", "R2"}
			for i, at := range tt.restart {
				w.Advance(at - ms - time.Duration(w.K.Now()))
				w.K.Crash(w.ID(names[i]), sim.CrashProcess)
				w.Advance(ms)
				w.K.Restart(w.ID(names[i]))
			}
			last := tt.answers[len(tt.answers)-1]
			if tt.delay > 0 {
				// Shortly before the transfer: R1 waits, uncounted.
				w.Advance(last - 50*ms - time.Duration(w.K.Now()))
				info := w.do("A", "INFO", "replication")
				assert.Equal(t, "down", infoLine(w.do("R1", "INFO", "replication"), "master_link_status"))
				assert.Equal(t, Bulk("handshake"), w.do("R1", "ROLE").Array[3])
				assert.Len(t, w.do("A", "ROLE").Array[2].Array, 2-len(tt.restart), "ROLE lists online replicas only")
				assert.Contains(t, info.Str, "state=wait_bgsave")
				if len(tt.restart) == 1 {
					assert.Equal(t, "1", infoLine(info, "min_slaves_good_slaves"), "R2 only")
					require.True(t, w.do("A", "SET", "k", "v").IsOK())
					assert.Equal(t, Int(1), w.do("A", "WAIT", "2", "10"), "R1 does not count")
				}
			}
			w.Advance(time.Second)
			for i := range tt.restart {
				got := syncAnswers(w, "A", names[i], tt.restart[i])
				require.Len(t, got, 1, names[i])
				assert.True(t, got[0].full, names[i])
				assert.Equal(t, tt.answers[i], got[0].answer, "%s: PSYNC handled at %v", names[i], got[0].psync)
				assert.Equal(t, "up", infoLine(w.do(names[i], "INFO", "replication"), "master_link_status"))
			}
			require.True(t, w.do("A", "SET", "k", "v2").IsOK())
			assert.Equal(t, Int(2), w.do("A", "WAIT", "2", "100"))
			assert.Equal(t, "2", infoLine(w.do("A", "INFO", "replication"), "min_slaves_good_slaves"))
		})
	}
}

// TestPartialResyncDoesNotWait: a replica whose offset is still in the
// backlog gets +CONTINUE when its PSYNC arrives, whatever
// repl-diskless-sync-delay (masterTryPartialResynchronization returns
// before the full-sync path, R 7.0.15 src/replication.c:995-998).
func TestPartialResyncDoesNotWait(t *testing.T) {
	for _, delay := range []time.Duration{0, 5 * time.Second, 30 * time.Second} {
		t.Run(delay.String(), func(t *testing.T) {
			m := master()
			m.ReplDisklessSyncDelay = delay
			w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: m}, nodeSpec{name: "R", cfg: replicaOf("A")})
			w.Advance(10 * time.Millisecond)
			w.K.Partition([][]sim.ProcID{{w.ID("A")}, {w.ID("R")}})
			require.True(t, w.do("A", "SET", "k", "v").IsOK())
			w.Advance(70 * time.Second) // both ends time out (repl-timeout 60 s)
			w.K.Heal()
			w.Advance(10 * time.Second)
			got := syncAnswers(w, "A", "R", 60*time.Second)
			require.Len(t, got, 1)
			assert.False(t, got[0].full)
			assert.Equal(t, got[0].psync, got[0].answer)
			assert.Equal(t, Bulk("v"), w.do("R", "GET", "k"))
		})
	}
}

// TestConformanceDelayedFullSync: a real master with
// repl-diskless-sync-delay 2 starts a new replica's full sync no sooner
// than 1 s after its PSYNC (replicationCron compares whole seconds,
// R 7.0.15 src/replication.c:3790-3801), the replica's link down until
// then; the model's replica, given the same REPLICAOF, comes up 1-3 s
// later. Only the real lower bound is asserted: load can only delay a
// real server.
func TestConformanceDelayedFullSync(t *testing.T) {
	path := redisServerPath(t)
	m := startReal(t, path, "--repl-diskless-sync-delay", "2")
	r := startReal(t, path)
	require.Equal(t, Array(Bulk("repl-diskless-sync-delay"), Bulk("2")), m.do(t, []string{"CONFIG", "GET", "repl-diskless-sync-delay"}))
	start := time.Now()
	require.Equal(t, "OK", r.do(t, []string{"REPLICAOF", "127.0.0.1", strconv.Itoa(m.port)}).Str)
	var realUp time.Duration
	for {
		if infoLine(r.do(t, []string{"INFO", "replication"}), "master_link_status") == "up" {
			realUp = time.Since(start)
			break
		}
		require.Less(t, time.Since(start), 60*time.Second, "the real replica's link did not come up")
		time.Sleep(50 * time.Millisecond)
	}
	assert.GreaterOrEqual(t, realUp, time.Second, "a real full sync waits repl-diskless-sync-delay")

	mc := master()
	mc.ReplDisklessSyncDelay = 2 * time.Second
	w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: mc}, nodeSpec{name: "B", cfg: master()})
	w.Advance(1234 * time.Millisecond)
	t0 := time.Duration(w.K.Now())
	require.True(t, w.do("B", "REPLICAOF", "A", "6379").IsOK())
	var modelUp time.Duration
	for modelUp == 0 {
		if infoLine(w.do("B", "INFO", "replication"), "master_link_status") == "up" {
			modelUp = time.Duration(w.K.Now()) - t0
		}
		require.Less(t, time.Duration(w.K.Now())-t0, 10*time.Second)
		w.Advance(50 * time.Millisecond)
	}
	assert.GreaterOrEqual(t, modelUp, time.Second)
	assert.LessOrEqual(t, modelUp, 3*time.Second)
	t.Logf("link up after REPLICAOF: real %v, model %v", realUp, modelUp)
}
