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

			// An event without fields is hashed by its text, one with
			// fields by its fields (its text is for people).
			textual, fielded := -1, -1
			for i, e := range o.Trace {
				if len(e.Fields) == 0 && e.Kind != sim.KindDeliver && textual < 0 {
					textual = i
				}
				if len(e.Fields) > 0 && fielded < 0 {
					fielded = i
				}
			}
			require.GreaterOrEqual(t, textual, 0)
			require.GreaterOrEqual(t, fielded, 0)
			alter := func(f func(e *sim.Event)) string {
				altered := append([]sim.Event(nil), o.Trace...)
				f(&altered[textual])
				f(&altered[fielded])
				h, err := sim.HashEvents(altered, w.Kernel.Lookup)
				require.NoError(t, err)
				return sim.HashString(h)
			}
			assert.NotEqual(t, o.TraceHash, alter(func(e *sim.Event) {
				if len(e.Fields) == 0 {
					e.Text += "x"
				}
			}), "an altered text changes the hash")
			assert.NotEqual(t, o.TraceHash, alter(func(e *sim.Event) {
				if len(e.Fields) > 0 {
					e.Fields = append(sim.Attrs{sim.Int64("x", 1)}, e.Fields...)
				}
			}), "an altered field changes the hash")
			assert.Equal(t, o.TraceHash, alter(func(e *sim.Event) {
				if len(e.Fields) > 0 {
					e.Text += "x"
				}
			}), "the text of an event with fields is not hashed")

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
// keeping its trace: models render the text of events with typed fields
// only when the trace is kept, and hash their fields either way, so the
// hash must not depend on keeping; and the kept trace, written to JSON
// Lines and read back, must hash to it again.
func TestTraceHashKeptOrNot(t *testing.T) {
	cat, err := scenarios.Catalogue()
	require.NoError(t, err)
	for _, s := range cat {
		t.Run(s.Name, func(t *testing.T) {
			bare, err := scenarios.Run(s, s.Seed, scenarios.Options{})
			require.NoError(t, err)
			kept, err := scenarios.Run(s, s.Seed, scenarios.Options{KeepTrace: true})
			require.NoError(t, err)
			require.Equal(t, bare.TraceHash, kept.TraceHash)
			var buf bytes.Buffer
			require.NoError(t, sim.WriteJSONL(&buf, kept.Trace))
			back, err := sim.ReadJSONL(&buf)
			require.NoError(t, err)
			w, err := scenarios.Build(s, s.Seed, false)
			require.NoError(t, err)
			h, err := sim.HashEvents(back, w.Kernel.Lookup)
			require.NoError(t, err)
			assert.Equal(t, bare.TraceHash, sim.HashString(h))
		})
	}
}
