package scenarios

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWithSets is simrun run --set: PATH=VALUE strings in sweep's path
// language, applied in order, recorded in the scenario's text and Sets, and
// every bad one refused naming the edit and the path, with a did-you-mean.
func TestWithSets(t *testing.T) {
	base, err := Builtin("redlock-clock-jump")
	require.NoError(t, err)
	tests := []struct {
		name  string
		sets  []string
		check func(t *testing.T, s *Scenario)
		errs  []string
	}{
		{name: "one field", sets: []string{"clients[0].lock.ttl=30s"}, check: func(t *testing.T, s *Scenario) {
			assert.Equal(t, 30*time.Second, s.Clients[0].Lock.TTL)
		}},
		{name: "later wins", sets: []string{"faults[1].by=+1s", "faults[1].by=-3s"}, check: func(t *testing.T, s *Scenario) {
			assert.Equal(t, -3*time.Second, s.Faults[1].By)
		}},
		{name: "spaces around", sets: []string{" seed = 7 "}, check: func(t *testing.T, s *Scenario) {
			assert.Equal(t, uint64(7), s.Seed)
		}},
		{name: "value with =", sets: []string{"title=a=b"}, check: func(t *testing.T, s *Scenario) {
			assert.Equal(t, "a=b", s.Title)
		}},
		{name: "no =", sets: []string{"ttl"}, errs: []string{`"ttl": want PATH=VALUE`}},
		{name: "no value", sets: []string{"seed="}, errs: []string{`"seed=": want PATH=VALUE`}},
		{name: "misspelt list", sets: []string{"clints[0].lock.ttl=1s"}, errs: []string{"clints[0].lock.ttl=1s:", `there is no list "clints"; did you mean clients?`}},
		{name: "misspelt field", sets: []string{"clients[0].lock.tl=1s"}, errs: []string{"clients[0].lock.tl=1s:", "clients[0].lock.tl:", "did you mean ttl?"}},
		{name: "misspelt top field", sets: []string{"durations=1m"}, errs: []string{"durations=1m:", `unknown field "durations"`, "did you mean duration?"}},
		{name: "index out of range", sets: []string{"clients[9].lock.ttl=1s"}, errs: []string{"clients has no item 9"}},
		{name: "not a single value", sets: []string{"clients=x"}, errs: []string{"not a single value"}},
		{name: "bad value", sets: []string{"clients[0].lock.ttl=abc"}, errs: []string{"redlock-clock-jump.yaml:", "clients[0].lock.ttl:", `"abc" is not a duration`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := base.WithSets(tc.sets)
			if tc.errs != nil {
				require.Error(t, err)
				for _, e := range tc.errs {
					assert.Contains(t, err.Error(), e)
				}
				return
			}
			require.NoError(t, err)
			tc.check(t, s)
			assert.Equal(t, tc.sets, s.Sets)
			text, err := s.Marshal()
			require.NoError(t, err)
			again, err := Parse(s.File, text)
			require.NoError(t, err, "the edited text the record carries parses")
			tc.check(t, again)
			assert.Empty(t, base.Sets, "the base is not modified")
		})
	}
}

// TestWithSetsReplayArgs: an edited scenario's runs name the edits in
// their replay command.
func TestWithSetsReplayArgs(t *testing.T) {
	base, err := Builtin("redlock-clock-jump")
	require.NoError(t, err)
	s, err := base.WithSets([]string{"clients[0].lock.ttl=30s", "title=two words"})
	require.NoError(t, err)
	o, err := Run(s, 1, Options{})
	require.NoError(t, err)
	assert.Equal(t, "redlock-clock-jump --set 'clients[0].lock.ttl=30s' --set 'title=two words'", o.ReplayArgs())
}
