package record

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/sim"
)

func TestRead(t *testing.T) {
	text := "name: x\nduration: 1s\n"
	for _, tt := range []struct {
		name, json, err string
	}{
		{"not json", "{", "r.json:1: not a simrun result"},
		{"syntax error on a later line", "{\n\"scenario\": \"x\",\n oops\n}", "r.json:3: not a simrun result"},
		{"a scenario file", "name: x\nduration: 1s\n", "r.json:1: not a simrun result: this looks like a scenario file; give the result.json a run wrote"},
		{"no scenario", `{"trace_hash": "ab"}`, "no scenario or trace_hash"},
		{"no hash", `{"scenario": "x"}`, "no scenario or trace_hash"},
		{"older result", `{"scenario": "x", "trace_hash": "ab", "lock_safety": "holds"}`, ""},
		{"text and its hash", `{"scenario": "x", "trace_hash": "ab", "scenario_text": "name: x\nduration: 1s\n", "scenario_sha256": "` + SHA256(text) + `"}`, ""},
		{"edited text", `{"scenario": "x", "trace_hash": "ab", "scenario_text": "name: y\nduration: 1s\n", "scenario_sha256": "` + SHA256(text) + `"}`, "does not match its scenario_sha256"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Read("r.json", []byte(tt.json))
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "x", r.Scenario)
		})
	}
}

// TestRoundTrip: a record reads back what it wrote, verdicts and
// description included, and describes itself only when it has all of it.
func TestRoundTrip(t *testing.T) {
	text := "name: x\nduration: 2s\n"
	r := &Run{
		Scenario: "x", File: "x.yaml", Seed: 3, TraceHash: "ab", VirtualTime: "2s",
		Verdicts:       checker.Verdicts{{Property: checker.LockSafety, Verdict: checker.Violated}},
		Violations:     []checker.Violation{},
		Setup:          &Setup{Title: "t", Clients: []string{"c1"}, Servers: []Server{{Name: "r1", Role: "redis", Lane: LaneKeyspace}}, Clocks: []Clock{{Proc: "r1", Offset: 1500 * time.Millisecond, DriftPPB: 10}}},
		Processes:      []Process{{ID: 0, Name: "r1", Kind: "redis"}, {ID: 1, Name: "c1", Kind: "client"}},
		ScenarioText:   text,
		ScenarioSHA256: SHA256(text),
	}
	data, err := r.JSON()
	require.NoError(t, err)
	assert.Contains(t, string(data), `"offset": "1.5s"`)
	back, err := Read("r.json", data)
	require.NoError(t, err)
	assert.Equal(t, r, back)
	require.True(t, back.Described())
	st, err := back.ReportSetup()
	require.NoError(t, err)
	assert.Equal(t, "x", st.Name)
	assert.Equal(t, 2*time.Second, st.Duration)
	assert.Equal(t, text, st.YAML)

	back.Processes = nil
	assert.False(t, back.Described())
	_, err = back.ReportSetup()
	assert.ErrorIs(t, err, ErrNotDescribed)
	_, err = back.HashTrace([]sim.Event{{Seq: 1, Kind: sim.KindStart, Proc: "r1"}})
	assert.ErrorIs(t, err, ErrNotDescribed)
}

func TestHashTraceNamesAnUnknownProcess(t *testing.T) {
	r := &Run{Processes: []Process{{ID: 0, Name: "r1"}}}
	_, err := r.HashTrace([]sim.Event{{Seq: 1, Kind: sim.KindStart, Proc: "zz"}})
	assert.ErrorContains(t, err, `"zz"`)
}

func TestScenarioArg(t *testing.T) {
	assert.Equal(t, "n", ScenarioArg("", "n"))
	assert.Equal(t, "n", ScenarioArg("catalogue/n.yaml", "n"))
	assert.Equal(t, "dir/n.yaml", ScenarioArg("dir/n.yaml", "n"))
}

// TestReadFileBounds: a result file is read up to MaxFileBytes (outsider3:
// simrun replay /dev/zero read for ever).
func TestReadFileBounds(t *testing.T) {
	big := filepath.Join(t.TempDir(), "result.json")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(MaxFileBytes+1)) // sparse
	require.NoError(t, f.Close())
	_, err = ReadFile(big)
	assert.ErrorContains(t, err, "result.json is 67108865 bytes, more than a result file may be (64 MiB)")
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err = ReadFile("/dev/zero")
		assert.ErrorContains(t, err, "/dev/zero is a device, not a result file")
	}
}
