package sim_test

import (
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
