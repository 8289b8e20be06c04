package faults_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
)

// selectWorld is a world of servers a..e and clients c1, c2 whose sets
// are servers, clients and replicas (none).
func selectWorld(t *testing.T, seed uint64) (*world, faults.Hooks) {
	w := newWorld(t, seed, []string{"a", "b", "c", "d", "e", "c1", "c2"}, nil)
	h := w.hooks()
	h.Select = func(set string) ([]string, []string) {
		sets := []string{"clients", "replicas", "servers"}
		switch set {
		case "servers":
			return []string{"a", "b", "c", "d", "e"}, sets
		case "clients":
			return []string{"c1", "c2"}, sets
		case "replicas":
			return []string{}, sets
		}
		return nil, sets
	}
	return w, h
}

// TestSelectors checks that a selector in a fault's node is resolved from
// the seed (the same seed, the same choice), applies the fault to each
// process it chose, and that each record names the choice.
func TestSelectors(t *testing.T) {
	s := time.Second
	pause := func(node string) faults.Spec {
		return faults.Spec{At: at(s), Kind: "pause", Node: node, For: sim.Fixed(s)}
	}
	chosen := func(seed uint64, node string) []string {
		w, h := selectWorld(t, seed)
		require.NoError(t, faults.Install(w.K, []faults.Spec{pause(node)}, h))
		hist := w.run(5 * s)
		var out []string
		for _, r := range hist.Faults {
			out = append(out, r.Text)
		}
		return out
	}
	t.Run("all", func(t *testing.T) {
		assert.Equal(t, []string{
			`c1 paused for 1s [c1 chosen by selector "all clients"]`,
			`c2 paused for 1s [c2 chosen by selector "all clients"]`,
		}, chosen(1, "all clients"))
	})
	t.Run("any and majority depend on the seed only", func(t *testing.T) {
		anys, majorities := map[string]bool{}, map[string]bool{}
		for seed := uint64(1); seed <= 20; seed++ {
			one := chosen(seed, "any servers")
			require.Len(t, one, 1)
			assert.Equal(t, one, chosen(seed, "any servers"), "seed %d", seed)
			anys[one[0]] = true
			maj := chosen(seed, "majority servers")
			require.Len(t, maj, 3, "a majority of five")
			assert.Equal(t, maj, chosen(seed, "majority servers"), "seed %d", seed)
			key := ""
			for _, m := range maj {
				assert.Contains(t, m, `chosen by selector "majority servers"`)
				key += m[:1]
			}
			majorities[key] = true
		}
		assert.Greater(t, len(anys), 2, "any picks different servers across seeds")
		assert.Greater(t, len(majorities), 2, "majority picks different majorities across seeds")
	})
	t.Run("a selector does not move the other faults' draws", func(t *testing.T) {
		// A range draw of the faults stream is the same with and without
		// a selector before it.
		ranged := faults.Spec{At: &sim.Range{Lo: s, Hi: 2 * s}, Kind: "pause", Node: "a", For: sim.Range{Lo: s, Hi: 3 * s}}
		text := func(specs ...faults.Spec) string {
			w, h := selectWorld(t, 7)
			require.NoError(t, faults.Install(w.K, specs, h))
			hist := w.run(10 * s)
			for _, r := range hist.Faults {
				if r.Targets[0] == "a" && r.Text[:1] == "a" && !containsSel(r.Text) {
					return r.At.Duration().String() + " " + r.Text
				}
			}
			return ""
		}
		assert.Equal(t, text(ranged), text(pause("any clients"), ranged))
	})
	for _, tt := range []struct{ node, want string }{
		{"some servers", `faults[0]: node: unknown selector mode "some"`},
		{"any pets", `faults[0]: node: unknown set "pets" in selector "any pets" (known: clients, replicas, servers)`},
		{"all replicas", `faults[0]: node: selector "all replicas" selects nothing: the scenario has no replicas`},
	} {
		t.Run(tt.node, func(t *testing.T) {
			w, h := selectWorld(t, 1)
			err := faults.Install(w.K, []faults.Spec{pause(tt.node)}, h)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	t.Run("no sets", func(t *testing.T) {
		w := newWorld(t, 1, []string{"a", "b"}, nil)
		err := faults.Install(w.K, []faults.Spec{pause("any servers")}, w.hooks())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "declares no process sets")
	})
}

func containsSel(s string) bool {
	for i := 0; i+8 <= len(s); i++ {
		if s[i:i+8] == "selector" {
			return true
		}
	}
	return false
}

// TestGeneratorSelectors: with GenOptions.Selectors the generator targets
// node faults at selectors now and then (sets the world has); without, never.
func TestGeneratorSelectors(t *testing.T) {
	w := faults.GenWorld{Clients: []string{"c1", "c2"}, Masters: []string{"A", "B", "C"}, Replicas: []string{"R"},
		Duration: 30 * time.Second, TTL: 2 * time.Second}
	count := func(on bool) map[string]int {
		seen := map[string]int{}
		for seed := uint64(0); seed < 300; seed++ {
			for _, s := range faults.Generate(sim.NewRand(seed, "t"), w, faults.GenOptions{Selectors: on}) {
				if sel, ok := faults.ParseSelector(s.Node); ok {
					seen[sel.String()]++
				}
			}
		}
		return seen
	}
	assert.Empty(t, count(false))
	on := count(true)
	for _, sel := range []string{"any servers", "majority servers", "any clients", "all replicas"} {
		assert.Positive(t, on[sel], "%s never drawn: %v", sel, on)
	}
	assert.Len(t, on, 4)
}
