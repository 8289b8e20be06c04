package sim_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

func TestHashEventsRecomputesTheTraceHash(t *testing.T) {
	for _, name := range []string{"redlock-clock-jump", "single-failover"} {
		t.Run(name, func(t *testing.T) {
			s, err := scenarios.Builtin(name)
			require.NoError(t, err)
			o, err := scenarios.Run(s, s.Seed, scenarios.Options{KeepTrace: true})
			require.NoError(t, err)
			w, err := scenarios.Build(s, s.Seed, false)
			require.NoError(t, err)
			h, err := sim.HashEvents(o.Trace, w.Kernel.Lookup)
			require.NoError(t, err)
			assert.Equal(t, o.TraceHash, sim.HashString(h))

			altered := append([]sim.Event(nil), o.Trace...)
			altered[len(altered)/2].Text += "x"
			h, err = sim.HashEvents(altered, w.Kernel.Lookup)
			require.NoError(t, err)
			assert.NotEqual(t, o.TraceHash, sim.HashString(h), "an altered event changes the hash")

			h, err = sim.HashEvents(o.Trace[:len(o.Trace)-1], w.Kernel.Lookup)
			require.NoError(t, err)
			assert.NotEqual(t, o.TraceHash, sim.HashString(h), "a cut trace hashes differently")
		})
	}
	t.Run("unknown process", func(t *testing.T) {
		_, err := sim.HashEvents([]sim.Event{{Seq: 1, Kind: "start", Proc: "Z"}}, func(string) (sim.ProcID, bool) { return 0, false })
		assert.ErrorContains(t, err, `process "Z"`)
	})
}

// TestTraceHashKeptOrNot runs every built-in scenario with and without
// keeping its trace: the hash must not depend on keeping (a model that
// renders or gives typed fields only when the trace is kept must not change
// what is hashed), and the kept trace, written as JSON Lines and read back,
// must hash to it again (what replay, report and diff check).
func TestTraceHashKeptOrNot(t *testing.T) {
	cat, err := scenarios.Catalogue()
	require.NoError(t, err)
	for _, s := range cat {
		t.Run(s.Name, func(t *testing.T) {
			bare, err := scenarios.Run(s, s.Seed, scenarios.Options{})
			require.NoError(t, err)
			kept, err := scenarios.Run(s, s.Seed, scenarios.Options{KeepTrace: true})
			require.NoError(t, err)
			require.Equal(t, bare.TraceHash, kept.TraceHash, "the hash depends on keeping the trace")
			var buf bytes.Buffer
			require.NoError(t, sim.WriteJSONL(&buf, kept.Trace))
			back, err := sim.ReadJSONL(&buf)
			require.NoError(t, err)
			w, err := scenarios.Build(s, s.Seed, false)
			require.NoError(t, err)
			h, err := sim.HashEvents(back, w.Kernel.Lookup)
			require.NoError(t, err)
			assert.Equal(t, bare.TraceHash, sim.HashString(h), "the trace file does not hash back to the run's hash")
		})
	}
}
