package scenarios

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExtends: a scenario extending a built-in or a file is the base with
// its own fields merged in (mappings key by key, lists whole), validated as
// a whole; errors name the file that set the field; a missing base or a
// cycle is refused.
func TestExtends(t *testing.T) {
	files := map[string]string{
		"base.yaml":     "name: base\nduration: 10s\nnetwork: {latency: 1ms}\nredis:\n  - name: A\nclients:\n  - name: c1\n    lock: {algorithm: redis-single, node: A, ttl: 5s}\n",
		"bad-base.yaml": "name: bad\nduration: 10s\nredis:\n  - name: A\nclients:\n  - name: c1\n    lock: {algorithm: redis-single, node: A, ttl: abc}\n",
		"partial.yaml":  "duration: 20s\n",
		"loop-a.yaml":   "extends: loop-b.yaml\nname: a\n",
		"loop-b.yaml":   "extends: loop-a.yaml\nname: b\n",
		"self.yaml":     "extends: self.yaml\nname: s\n",
	}
	dir := t.TempDir()
	for n, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte(text), 0o644))
	}
	tests := []struct {
		name, text string
		check      func(t *testing.T, s *Scenario)
		errs       []string
	}{
		{name: "built-in with a scalar override", text: "extends: redlock-clock-jump\nname: longer\nseed: 5\n", check: func(t *testing.T, s *Scenario) {
			assert.Equal(t, "longer", s.Name)
			assert.Equal(t, uint64(5), s.Seed)
			assert.Len(t, s.Clients, 2, "the base's clients")
			assert.Len(t, s.Faults, 3, "the base's faults")
		}},
		{name: "mappings merge key by key", text: "extends: base.yaml\nnetwork: {loss: 0.1}\n", check: func(t *testing.T, s *Scenario) {
			assert.Equal(t, "base", s.Name)
			assert.Equal(t, time.Millisecond, s.Network.Latency.Lo, "kept from the base")
			assert.InDelta(t, 0.1, s.Network.Loss, 1e-9)
		}},
		{name: "lists are replaced whole", text: "extends: base.yaml\nclients:\n  - name: c2\n    lock: {algorithm: redis-single, node: A, ttl: 7s}\n", check: func(t *testing.T, s *Scenario) {
			require.Len(t, s.Clients, 1)
			assert.Equal(t, "c2", s.Clients[0].Name)
			assert.Equal(t, 7*time.Second, s.Clients[0].Lock.TTL)
		}},
		{name: "chain of bases", text: "extends: chain.yaml\n", check: func(t *testing.T, s *Scenario) {
			assert.Equal(t, 20*time.Second, s.Duration)
			assert.Equal(t, "base", s.Name)
		}},
		{name: "missing base", text: "extends: redlock-clok-jump\n", errs: []string{"x.yaml:1: extends:", "neither a built-in scenario nor a file", "did you mean redlock-clock-jump"}},
		{name: "not a name", text: "extends: [a]\n", errs: []string{"x.yaml:1: extends: want a built-in scenario's name"}},
		{name: "cycle", text: "extends: loop-a.yaml\n", errs: []string{"extends cycle:", "loop-a.yaml -> ", "loop-b.yaml -> "}},
		{name: "self", text: "extends: self.yaml\n", errs: []string{"self.yaml:1: extends: extends cycle"}},
		{name: "an error in the base names the base", text: "extends: bad-base.yaml\n", errs: []string{"bad-base.yaml:7: clients[0].lock.ttl:", `"abc" is not a duration`}},
		{name: "an error in the override names the override", text: "extends: base.yaml\nclients:\n  - name: c1\n    lock: {algorithm: redis-single, node: Z, ttl: 5s}\n", errs: []string{"x.yaml:4: clients[0].lock.node:"}},
		{name: "an unknown field in the override", text: "extends: base.yaml\nduraton: 5s\n", errs: []string{"x.yaml:2:", "did you mean duration?"}},
		{name: "validated as a whole", text: "extends: base.yaml\nredis:\n  - name: B\n", errs: []string{"clients[0].lock.node:", `"A"`}},
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "chain.yaml"), []byte("extends: base.yaml\nduration: 20s\n"), 0o644))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, "x.yaml")
			s, err := Parse(file, []byte(tc.text))
			if tc.errs != nil {
				require.Error(t, err)
				for _, e := range tc.errs {
					assert.Contains(t, err.Error(), e)
				}
				return
			}
			require.NoError(t, err)
			tc.check(t, s)
			// The recorded text stands alone: no extends, same scenario.
			text, err := s.Marshal()
			require.NoError(t, err)
			assert.NotContains(t, string(text), "extends")
			again, err := Parse("elsewhere.yaml", text)
			require.NoError(t, err)
			tc.check(t, again)
		})
	}
}
