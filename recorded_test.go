package locksim

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/scenarios"
)

// TestRecordedTextParsesBack: the text a record carries is the scenario
// itself, for every built-in: it parses back to a scenario whose text is
// the same bytes (so its SHA-256 is stable, and a replay runs the same
// world).
func TestRecordedTextParsesBack(t *testing.T) {
	for _, name := range BuiltinNames() {
		s, err := scenarios.Builtin(name)
		require.NoError(t, err)
		text, err := s.Marshal()
		require.NoError(t, err)
		back, err := scenarios.Parse(s.File, text)
		require.NoError(t, err, name)
		again, err := back.Marshal()
		require.NoError(t, err)
		assert.Equal(t, string(text), string(again), name)
	}
}

// TestARecordIsEnough: a run's record, read back from its JSON, replays the
// run, checks its trace and draws its report without the scenario.
func TestARecordIsEnough(t *testing.T) {
	s, err := Builtin("redlock-clock-jump")
	require.NoError(t, err)
	res, err := Run(s, Options{KeepTrace: true, Seed: 3})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, res.WriteJSON(&buf))
	data := buf.String()
	rec, err := record.Read("result.json", []byte(data))
	require.NoError(t, err)
	require.True(t, rec.Described())

	again, err := Replay(rec, nil, Options{})
	require.NoError(t, err)
	assert.Equal(t, res.TraceHash, again.TraceHash)
	require.NoError(t, CheckTrace(rec, res.Record().Trace))
	// Nothing is read from the scenario it names: a file that does not
	// exist.
	gone := *rec
	gone.Scenario, gone.File = "gone", "no/such/dir/gone.yaml"
	again, err = Replay(&gone, nil, Options{})
	require.NoError(t, err)
	assert.Equal(t, res.TraceHash, again.TraceHash)
	require.NoError(t, CheckTrace(&gone, res.Record().Trace))
	_, err = RenderReport(&gone, res.Record().Trace, nil)
	require.NoError(t, err)
	var tm *TraceMismatchError
	assert.ErrorAs(t, CheckTrace(rec, res.Record().Trace[:10]), &tm)

	files, err := RenderReport(rec, res.Record().Trace, res.Record().Pages)
	require.NoError(t, err)
	want, err := res.ReportFiles()
	require.NoError(t, err)
	require.Len(t, files, len(want)-1) // all but result.json
	for i, f := range files {
		assert.Equal(t, want[i+1].Name, f.Name)
		assert.True(t, bytes.Equal(want[i+1].Data, f.Data), f.Name)
	}

	assert.NoError(t, SameScenario(rec, s))
	other, err := Builtin("redlock-clock-slew")
	require.NoError(t, err)
	var changed *ScenarioChangedError
	assert.ErrorAs(t, SameScenario(rec, other), &changed)
	assert.ErrorContains(t, SameScenario(rec, other), "the scenario changed: redlock-clock-slew")

	require.Contains(t, data, `\nduration: 30s`)
	tampered := strings.Replace(data, `\nduration: 30s`, `\nduration: 61s`, 1)
	_, err = record.Read("result.json", []byte(tampered))
	assert.ErrorContains(t, err, "does not match its scenario_sha256")
}
