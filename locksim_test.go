package locksim

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/scenarios"
)

// TestFacadeAgreesWithScenarios: the facade's verdicts and trace hash are
// those of the implementation it wraps, for a built-in, its YAML and the
// same YAML decoded into Go values.
func TestFacadeAgreesWithScenarios(t *testing.T) {
	const name = "single-gc-pause"
	inner, err := scenarios.Builtin(name)
	require.NoError(t, err)
	want, err := scenarios.Run(inner, 5, scenarios.Options{})
	require.NoError(t, err)

	src, err := scenarios.BuiltinSource(name)
	require.NoError(t, err)
	var values map[string]any
	require.NoError(t, yamlUnmarshal(src, &values))

	fromName, err := Builtin(name)
	require.NoError(t, err)
	fromYAML, err := Parse("x.yaml", src)
	require.NoError(t, err)
	fromValues, err := FromValues("values", values)
	require.NoError(t, err)
	for label, s := range map[string]*Scenario{"builtin": fromName, "yaml": fromYAML, "values": fromValues} {
		t.Run(label, func(t *testing.T) {
			res, err := Run(s, Options{Seed: 5})
			require.NoError(t, err)
			assert.Equal(t, want.TraceHash, res.TraceHash)
			assert.Equal(t, want.Verdicts, res.Verdicts)
			assert.Equal(t, want.Verdicts.Of(checker.LockSafety), res.LockSafety, "the compatibility fields are copies of the list")
			assert.Equal(t, want.Verdicts.Of(checker.TokenOrder), res.TokenOrder)
			assert.Equal(t, want.Matched, res.Matched)
			assert.Len(t, res.Explanations, len(want.Violations))
			assert.Equal(t, uint64(5), res.Seed)
		})
	}
	res, err := Run(fromName, Options{})
	require.NoError(t, err)
	assert.Equal(t, fromName.Seed(), res.Seed, "0 means the scenario's seed")
}

func TestFacadeErrors(t *testing.T) {
	_, err := Builtin("no-such")
	assert.ErrorContains(t, err, "no-such")
	_, err = Parse("bad.yaml", []byte("name: x\nduration: 1s\ncolour: red\n"))
	assert.ErrorContains(t, err, `bad.yaml:3: colour: unknown field "colour"`)
	_, err = FromValues("v", map[string]any{"name": "x"})
	assert.ErrorContains(t, err, "v:1: duration: required field is missing")
	_, err = Load(filepath.Join(t.TempDir(), "none.yaml"))
	assert.Error(t, err)
	_, err = Run(nil, Options{})
	assert.Error(t, err)

	s, err := Builtin("single-gc-pause")
	require.NoError(t, err)
	res, err := Run(s, Options{})
	require.NoError(t, err)
	assert.ErrorIs(t, res.WriteReport(t.TempDir()), errNoTrace)
	assert.ErrorIs(t, res.WriteTrace(&bytes.Buffer{}), errNoTrace)
}

func TestFacadeWriteReport(t *testing.T) {
	s, err := Builtin("redlock-clock-jump")
	require.NoError(t, err)
	res, err := Run(s, Options{KeepTrace: true})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, res.WriteReport(dir))
	for _, f := range []string{"result.json", "trace.jsonl", "index.html", "timeline.png", "timeline.svg", "clocks.png", "clocks.svg", "lock.html", "resource.html"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	// The same bytes as simrun run --out (cmd/simrun's TestRunOutWritesReport
	// checks run --out against report): the index links porcupine's page.
	index0, err := os.ReadFile(filepath.Join(dir, "index.html"))
	require.NoError(t, err)
	assert.Contains(t, string(index0), `<a href="lock.html">lock.html</a>`)

	// A run without violation into the same folder drops the pages.
	calm, err := Builtin("redlock-clock-slew")
	require.NoError(t, err)
	calmRes, err := Run(calm, Options{KeepTrace: true})
	require.NoError(t, err)
	require.NoError(t, calmRes.WriteReport(dir))
	assert.NoFileExists(t, filepath.Join(dir, "lock.html"), "a stale page is removed")
	require.NoError(t, res.WriteReport(dir))
	var rec map[string]any
	data, err := os.ReadFile(filepath.Join(dir, "result.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &rec))
	assert.Equal(t, res.TraceHash, rec["trace_hash"])
	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	require.NoError(t, err)
	assert.Contains(t, string(index), "simrun run redlock-clock-jump --seed 1")

	var buf bytes.Buffer
	require.NoError(t, res.WriteTrace(&buf))
	assert.Equal(t, res.Events, int64(bytes.Count(buf.Bytes(), []byte("\n"))))
	buf.Reset()
	require.NoError(t, res.WriteJSON(&buf))
	assert.Equal(t, data, buf.Bytes())
}

func yamlUnmarshal(data []byte, v any) error { return yaml.Unmarshal(data, v) }

// A stock counter story through the facade: no lock to judge, the counter
// is the resource.
func TestFacadeCounter(t *testing.T) {
	s, err := Builtin("redis-counter-get-set")
	require.NoError(t, err)
	r, err := Run(s, Options{})
	require.NoError(t, err)
	assert.Equal(t, NotUsed, r.LockSafety)
	assert.Equal(t, Violated, r.ResourceSafety)
	assert.Equal(t, NotJudged, r.Liveness)
	require.NotEmpty(t, r.Explanations)
	assert.Contains(t, r.Explanations[0], "(lost update)")
	assert.True(t, r.Matched)
}

// TestFacadeSaysVacuity: the facade's Result carries the run's numbers and
// the notes on vacuous verdicts (issue 25): redlock-retry-livelock never
// grants the lock, so lock safety is not used and the note says why.
func TestFacadeSaysVacuity(t *testing.T) {
	s, err := Builtin("redlock-retry-livelock")
	require.NoError(t, err)
	res, err := Run(s, Options{})
	require.NoError(t, err)
	assert.Equal(t, NotUsed, res.LockSafety)
	assert.Equal(t, 0, res.Stats.Grants)
	assert.Positive(t, res.Stats.Attempts)
	assert.Positive(t, res.Stats.Failures, "every finished attempt failed")
	require.NotEmpty(t, res.Vacuous)
	assert.Contains(t, res.Vacuous[0], "no client was granted the lock")
	assert.True(t, res.Matched, "the scenario declares it")
}

// TestFacadeAvailability: Result.Stats says when the lock stood free
// while a client waited (the availability strip), and its bins add up to
// the unavailable time.
func TestFacadeAvailability(t *testing.T) {
	s, err := Builtin("redlock-clock-jump")
	require.NoError(t, err)
	res, err := Run(s, Options{})
	require.NoError(t, err)
	var av *Availability = res.Stats.Availability
	require.NotNil(t, av)
	require.Len(t, av.Locks, 1)
	assert.Positive(t, av.Bin)
	assert.Equal(t, res.Stats.Unavailable, av.Locks[0].Total())
	assert.LessOrEqual(t, len(av.Locks[0].Unavailable), checker.MaxAvailabilityBins)
}
