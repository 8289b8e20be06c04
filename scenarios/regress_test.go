package scenarios

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
)

// TestFuzzFindingNamesTheHoldersPause is issue 14's explanation bug, as a
// fuzz finding (simrun fuzz redlock-clock-jump --seed 42, run 102, found
// again under TCP connections): c1 is paused for 28.174s while it holds
// the lock, and a second pause of c1 that the kernel ignored (c1 was
// already paused for longer) came later. The explanation must name c1's
// own pause, never the ignored one ("c1 was not paused ...").
func TestFuzzFindingNamesTheHoldersPause(t *testing.T) {
	const file = "testdata/fuzz-redlock-clock-jump-42-run102.yaml"
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	s, err := Parse(file, data)
	require.NoError(t, err)
	o, err := Run(s, s.Seed, Options{})
	require.NoError(t, err)
	require.Equal(t, checker.Violated, o.Verdicts.Of(checker.LockSafety))
	require.NotEmpty(t, o.Violations)
	text := o.Violations[0].Explanation
	assert.Contains(t, text, "the overlap began 10.015s after c1 paused for 28.174s at 0.112s", text)
	assert.NotContains(t, text, "was not paused", "a pause the kernel ignored explains nothing")
}

// TestLivenessEndToEnd runs the adversarial cases of issue 14 through the
// whole pipeline (scenario, simulation, checker), so that the runner's
// wiring (the settling time, the network loss) is tested too.
func TestLivenessEndToEnd(t *testing.T) {
	withFault := func(name, fault string) string {
		src, err := BuiltinSource(name)
		require.NoError(t, err)
		text := strings.Replace(string(src), "faults: []\n", "faults:\n", 1)
		text = strings.Replace(text, "faults:\n", "faults:\n"+fault, 1)
		require.NotEqual(t, string(src), text)
		return text
	}
	tests := []struct {
		name string
		yaml string
		want checker.Verdict
		note string
	}{
		{"the SETNX-then-EXPIRE deadlock plus a late 1ms delay",
			withFault("setnx-expire-crash", "  - {at: 55s, kind: delay, from: c2, to: A, by: 1ms, for: 1ms}\n"),
			checker.Violated, ""},
		{"the Redlock livelock plus a late +0s clock jump",
			withFault("redlock-retry-livelock", "  - {at: 22s, kind: clock-jump, node: A, by: +0s}\n"),
			checker.Violated, ""},
		{"nothing is ever delivered",
			"name: t\nduration: 10s\nnetwork: {loss: 1}\nredis:\n  - name: A\nclients:\n  - name: c1\n    lock: {algorithm: redis-single, node: A, ttl: 1s}\n    workload: {start: 0s, cycles: 1, hold: 1s}\nexpect: {liveness: holds, max_wait: 2s}\n",
			checker.NotJudged, "a fault acted during the whole run"},
		{"a partition that never heals and a restart of another client",
			"name: t\nduration: 60s\nredis:\n  - name: A\nclients:\n  - name: c1\n    lock: {algorithm: redis-single, node: A, ttl: 2s}\n    workload: {start: 1s, cycles: 0, hold: 100ms, think: 100ms}\n  - name: c2\n    lock: {algorithm: redis-single, node: A, ttl: 2s}\n    workload: {start: 1s, cycles: 0, hold: 100ms, think: 100ms}\nfaults:\n  - {at: 2s, kind: partition, groups: [[c1], [A, c2, storage]]}\n  - {at: 3s, kind: crash, node: c2, restart_after: 1s}\n",
			checker.NotJudged, "no fault-free window was longer than the bound"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("t.yaml", []byte(tt.yaml))
			require.NoError(t, err)
			o, err := Run(s, s.Seed, Options{})
			require.NoError(t, err)
			assert.Equal(t, tt.want, o.Verdicts.Of(checker.Liveness), o.LivenessNote)
			assert.Contains(t, o.LivenessNote, tt.note)
		})
	}
}
