package realmode

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/nodes/sentinel"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// TestParseClusterLog reads lines captured from a real Redis 7.0.15
// cluster (cluster-failover-unreplicated in real mode: C2 loses power, C6
// wins the election) into the model's events.
func TestParseClusterLog(t *testing.T) {
	ids := map[string]string{
		"8106dc1b66c6a0c51620e7940479ba7e3380e7df": "C2",
		"9d1c81d33854358c3462a15d1893f7ae89105bb8": "C4",
		"00f8378e46533941416318949de2943153a55ee7": "C6",
	}
	name := func(id string) string {
		if n, ok := ids[id]; ok {
			return n
		}
		return id
	}
	tests := []struct {
		line  string
		kind  sim.Kind
		text  string
		attrs map[string]string // string fields
		ints  map[string]int64
	}{
		{"3850:S 07 Dec 2026 16:28:35.682 * Marking node 8106dc1b66c6a0c51620e7940479ba7e3380e7df as failing (quorum reached).",
			redis.EventClusterFail, "C2 marked FAIL (quorum reached)", map[string]string{"node": "C2"}, nil},
		{"3832:M 07 Dec 2026 16:28:35.709 * FAIL message received from 9d1c81d33854358c3462a15d1893f7ae89105bb8 about 8106dc1b66c6a0c51620e7940479ba7e3380e7df",
			redis.EventClusterFail, "C2 marked FAIL (FAIL message from C4)", map[string]string{"node": "C2", "from": "C4"}, nil},
		{"3832:M 07 Dec 2026 16:28:35.709 # Cluster state changed: fail",
			redis.EventClusterState, "cluster state changed: fail", map[string]string{"state": "fail"}, nil},
		{"3862:S 07 Dec 2026 16:28:35.753 # Start of election delayed for 510 milliseconds (rank #0, offset 0).",
			redis.EventClusterElection, "start of election delayed for 510ms (rank #0, offset 0)", nil, map[string]int64{"delay_ms": 510, "rank": 0}},
		{"3862:S 07 Dec 2026 16:28:36.344 # Starting a failover election for epoch 7.",
			redis.EventClusterElection, "starting a failover election for epoch 7", nil, map[string]int64{"epoch": 7}},
		{"3832:M 07 Dec 2026 16:28:36.349 # Failover auth granted to 00f8378e46533941416318949de2943153a55ee7 for epoch 7",
			redis.EventClusterElection, "failover auth granted to C6 for epoch 7", map[string]string{"vote": "C6"}, map[string]int64{"epoch": 7}},
		{"3862:S 07 Dec 2026 16:28:36.351 # configEpoch set to 7 after successful failover",
			redis.EventClusterFailover, "won the election: took its master's slots with configEpoch 7", nil, map[string]int64{"config_epoch": 7}},
		{"3862:M 07 Dec 2026 16:28:36.351 # Cluster state changed: ok",
			redis.EventClusterState, "cluster state changed: ok", map[string]string{"state": "ok"}, nil},
		// The lines below follow cluster.c 7.0.15's formats (1545, 1561,
		// 1968, 5835); the first one's id is unknown and stays an id.
		{"3850:M 07 Dec 2026 16:28:40.001 * Clear FAIL state for node 1111111111111111111111111111111111111111: replica is reachable again.",
			redis.EventClusterFail, "clear FAIL of 1111111111111111111111111111111111111111: replica is reachable again.", map[string]string{"node": "1111111111111111111111111111111111111111", "cleared": "reachable"}, nil},
		{"3850:M 07 Dec 2026 16:28:40.001 * Clear FAIL state for node 8106dc1b66c6a0c51620e7940479ba7e3380e7df: is reachable again and nobody is serving its slots after some time.",
			redis.EventClusterFail, "clear FAIL of C2: is reachable again and nobody is serving its slots after some time.", map[string]string{"node": "C2", "cleared": "undo"}, nil},
		{"3844:M 07 Dec 2026 16:28:41.002 # Configuration change detected. Reconfiguring myself as a replica of 00f8378e46533941416318949de2943153a55ee7",
			redis.EventClusterFailover, "configuration change detected: now a replica of C6", map[string]string{"new_master": "C6"}, nil},
		{"3844:S 07 Dec 2026 16:28:42.002 # Manual failover user request accepted.",
			redis.EventClusterFailover, "manual failover user request accepted", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			e, ok := parseClusterLog(tt.line, name)
			require.True(t, ok)
			assert.Equal(t, tt.kind, e.kind)
			assert.Equal(t, tt.text, e.text)
			fields := sim.Attrs(e.attrs)
			for k, v := range tt.attrs {
				got, _ := fields.String(k)
				assert.Equal(t, v, got, k)
			}
			for k, v := range tt.ints {
				got, ok := fields.Int(k)
				assert.True(t, ok, k)
				assert.Equal(t, v, got, k)
			}
			src, _ := fields.String("source")
			assert.Equal(t, "log", src)
			assert.Equal(t, time.Local, e.at.Location())
			assert.Equal(t, 2026, e.at.Year())
		})
	}
	for _, line := range []string{
		"3862:M 07 Dec 2026 16:28:36.351 # Connection with master lost.",
		"3832:M 07 Dec 2026 16:28:24.313 # configEpoch set to 1 via CLUSTER SET-CONFIG-EPOCH",
		"not a log line",
		"3862:S 07 Dec 2026 16:28:36.344 # Starting a failover election for epoch",
	} {
		_, ok := parseClusterLog(line, name)
		assert.False(t, ok, line)
	}
	at, _, ok := splitLogLine("3862:S 07 Dec 2026 16:28:36.344 # Starting a failover election for epoch 7.")
	require.True(t, ok)
	assert.Equal(t, time.Date(2026, time.December, 7, 16, 28, 36, 344e6, time.Local), at)
}

// TestParseSentinelLog reads lines captured from real Sentinels
// (single-failover in real mode: M's host is killed, R promoted).
func TestParseSentinelLog(t *testing.T) {
	addrs := map[string]string{"127.94.32.3:36907": "M", "127.94.32.4:45783": "R"}
	addr := func(a string) (string, bool) { n, ok := addrs[a]; return n, ok }
	tests := []struct {
		line string
		kind sim.Kind
		text string
	}{
		{"5849:X 07 Dec 2026 16:29:32.462 # +sdown master mymaster 127.94.32.3 36907", sentinel.KindSDown, "+sdown master M"},
		{"5849:X 07 Dec 2026 16:29:32.529 # +odown master mymaster 127.94.32.3 36907 #quorum 2/2", sentinel.KindODown, "+odown master M #quorum 2/2"},
		{"5849:X 07 Dec 2026 16:29:32.529 # +try-failover master mymaster 127.94.32.3 36907", sentinel.KindFailoverStart, "+try-failover master M"},
		{"5849:X 07 Dec 2026 16:29:32.611 # +elected-leader master mymaster 127.94.32.3 36907", sentinel.KindElected, "+elected-leader master M"},
		{"5849:X 07 Dec 2026 16:29:33.713 # +switch-master mymaster 127.94.32.3 36907 127.94.32.4 45783", sentinel.KindSwitchMaster, "+switch-master mymaster M -> R"},
		{"5849:X 07 Dec 2026 16:29:38.733 # +sdown slave 127.94.32.3:36907 127.94.32.3 36907 @ mymaster 127.94.32.4 45783", sentinel.KindSDown, "+sdown slave M"},
	}
	for _, tt := range tests {
		e, ok := parseSentinelLog(tt.line, addr)
		require.True(t, ok, tt.line)
		assert.Equal(t, tt.kind, e.kind, tt.line)
		assert.Equal(t, tt.text, e.text, tt.line)
		assert.Equal(t, tt.text[:strings.IndexByte(tt.text, ' ')]+" "+instanceOf(tt.text), eventWhat(sim.Event{Kind: e.kind, Text: e.text, Fields: e.attrs}), tt.line)
	}
	for _, line := range []string{
		"5849:X 07 Dec 2026 16:29:31.002 # +monitor master mymaster 127.94.32.3 36907 quorum 2",
		"5849:X 07 Dec 2026 16:29:33.713 # +switch-master mymaster 127.94.32.3",
	} {
		_, ok := parseSentinelLog(line, addr)
		assert.False(t, ok, line)
	}
}

// instanceOf is the process a sentinel event's text is about.
func instanceOf(text string) string {
	if strings.HasPrefix(text, "+switch-master") {
		return text[strings.LastIndexByte(text, ' ')+1:]
	}
	return strings.Fields(text)[2]
}

// TestPFailOf reads the PFAIL flags of CLUSTER NODES.
func TestPFailOf(t *testing.T) {
	nodes := "8106dc1b66c6a0c51620e7940479ba7e3380e7df 127.0.0.2:7001@17001 master,fail? - 1 2 2 connected 5461-10922\n" +
		"9d1c81d33854358c3462a15d1893f7ae89105bb8 127.0.0.4:7001@17001 myself,slave 8106dc1b66c6a0c51620e7940479ba7e3380e7df 0 0 4 connected\n" +
		"00f8378e46533941416318949de2943153a55ee7 127.0.0.6:7001@17001 master,fail - 1 2 6 disconnected\n"
	assert.Equal(t, map[string]bool{"8106dc1b66c6a0c51620e7940479ba7e3380e7df": true}, pfailOf(nodes))
}

// TestTwinShowsClusterEvents: a twin run of a Redis Cluster failover shows
// the real cluster's failure detection and election (read from its nodes'
// logs and CLUSTER NODES) beside the model's, in the result and in the
// table simrun twin prints. About 30 s of real servers.
func TestTwinShowsClusterEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("a real Redis Cluster twin run; skipped with -short")
	}
	needServers(t)
	s, err := scenarios.Builtin("cluster-failover-unreplicated")
	require.NoError(t, err)
	res, err := Twin(context.Background(), s, 1, t.TempDir(), nil)
	require.NoError(t, err)
	has := func(evs []TwinEvent, proc, what string) bool {
		for _, e := range evs {
			if (proc == "" || e.Proc == proc) && e.What == what {
				return true
			}
		}
		return false
	}
	for _, run := range []struct {
		name string
		evs  []TwinEvent
	}{{"simulator", res.Simulator.Events}, {"real", res.Real[0].Events}} {
		assert.True(t, has(run.evs, "", "PFAIL C2"), "%s: some node flags C2 PFAIL: %v", run.name, run.evs)
		assert.True(t, has(run.evs, "", "FAIL C2"), "%s: some node marks C2 FAIL", run.name)
		assert.True(t, has(run.evs, "C6", "election started"), "%s: C6 starts an election", run.name)
		assert.True(t, has(run.evs, "", "vote for C6"), "%s: a master votes for C6", run.name)
		assert.True(t, has(run.evs, "C6", "promoted"), "%s: C6 wins", run.name)
	}
	for _, e := range res.Real[0].Events {
		assert.True(t, e.At > 0 && e.At <= sim.At(s.Duration), "real event %v within the run", e)
	}
	var out bytes.Buffer
	WriteTwin(&out, s, res)
	assert.Contains(t, out.String(), "cluster and sentinel events")
	assert.Regexp(t, `(?m)^  C6 +promoted +\d+\.\d+s +\d+\.\d+s$`, out.String(), "C6's promotion, with its time in both runs:\n%s", out.String())
	t.Logf("\n%s", out.String())
}
