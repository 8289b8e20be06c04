package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
)

// TestVacuousVerdictsAreSaid: single-failover-wait as it was before issue
// 25 (one replica: nobody is ever granted the lock) reported "lock safety
// holds, MATCHED". Its lock safety is now not-used, the record says why, the
// catalogue's golden test refuses it undeclared, and expect.min_grants
// makes a run with fewer grants than the story needs a mismatch.
// (The attempt counts are those of the clients that follow +switch-master,
// clients/follow.go.)
func TestVacuousVerdictsAreSaid(t *testing.T) {
	file := filepath.Join("testdata", "vacuous", "single-failover-wait-one-replica.yaml")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	tests := []struct {
		name       string
		expect     string // replaces the file's expect block
		matched    bool
		undeclared string // what the golden test says, "" for nothing
		vacuous    []string
	}{
		{
			name: "claims holds", expect: "expect:\n  lock_safety: holds\n", matched: false,
			undeclared: "lock_safety is not used (no grant or no critical section in 761 acquire attempts)",
			vacuous: []string{
				"lock safety not used: no client was granted the lock (761 acquire attempts, 760 failed)",
				"resource safety not used: no critical section touched the resource",
			},
		},
		{
			name: "declared", expect: "expect:\n  lock_safety: not-used\n  resource_safety: not-used\n", matched: true,
			vacuous: []string{
				"lock safety not used: no client was granted the lock (761 acquire attempts, 760 failed)",
				"resource safety not used: no critical section touched the resource",
			},
		},
		{
			name: "min grants", expect: "expect:\n  lock_safety: not-used\n  resource_safety: not-used\n  min_grants: 2\n", matched: false,
			undeclared: "0 grants, fewer than expect.min_grants 2",
			vacuous: []string{
				"lock safety not used: no client was granted the lock (761 acquire attempts, 760 failed)",
				"resource safety not used: no critical section touched the resource",
				"0 grants, fewer than the 2 the story needs (expect.min_grants): its verdicts are vacuous",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := string(data)
			text = text[:strings.Index(text, "expect:\n")] + tc.expect
			s, err := Parse(file, []byte(text))
			require.NoError(t, err)
			o, err := Run(s, s.Seed, Options{})
			require.NoError(t, err)
			assert.Equal(t, checker.NotUsed, o.Verdicts.Of(checker.LockSafety))
			assert.Equal(t, tc.matched, o.Matched)
			assert.Equal(t, tc.vacuous, o.Vacuous)
			require.NotNil(t, o.Stats)
			assert.Equal(t, 0, o.Stats.Grants)
			if tc.undeclared == "" {
				assert.Empty(t, undeclaredVacuity(s, o))
			} else {
				assert.Contains(t, undeclaredVacuity(s, o), tc.undeclared)
			}
		})
	}
}

// TestMinGrantsIsRead: expect.min_grants must be a positive count.
func TestMinGrantsIsRead(t *testing.T) {
	base := "name: x\nduration: 10s\nredis: [{name: A}]\nclients:\n  - name: c1\n    lock: {algorithm: redis-single, node: A, ttl: 1s}\n    workload: {cycles: 1, hold: 1s}\n"
	s, err := Parse("x.yaml", []byte(base+"expect: {min_grants: 3}\n"))
	require.NoError(t, err)
	assert.Equal(t, 3, s.Expect.MinGrants)
	_, err = Parse("x.yaml", []byte(base+"expect: {min_grants: 0}\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "expect.min_grants")
}

// TestRedlockIncrFencingWarns: a Redlock client's fencing_token: incr takes
// its token from one of several independent masters; parsing warns, with
// file:line, and the run's record carries the warning.
func TestRedlockIncrFencingWarns(t *testing.T) {
	text := "name: x\nduration: 5s\nredis: [{name: A}, {name: B}, {name: C}]\nresource: {fencing: mark}\nclients:\n  - name: c1\n    lock: {algorithm: redlock, nodes: [A, B, C], ttl: 2s, fencing_token: incr}\n    workload: {cycles: 1, hold: 1s}\n"
	s, err := Parse("x.yaml", []byte(text))
	require.NoError(t, err)
	require.Len(t, s.Warnings, 1)
	assert.Contains(t, s.Warnings[0], "x.yaml:7: clients[0].lock.fencing_token: incr on redlock takes the token from the first node that granted")
	o, err := Run(s, 1, Options{})
	require.NoError(t, err)
	assert.Equal(t, s.Warnings, o.Warnings)

	single, err := Parse("y.yaml", []byte(strings.Replace(text, "algorithm: redlock, nodes: [A, B, C]", "algorithm: redis-single, node: A", 1)))
	require.NoError(t, err)
	assert.Empty(t, single.Warnings, "one node's INCR is a single counter")
}

// TestRefusedValueIsOneMessage: a required fault field given a value that
// is refused ("by: 30", no unit) is reported once, not also as missing.
func TestRefusedValueIsOneMessage(t *testing.T) {
	_, err := Parse("t.yaml", []byte(minimal+"faults:\n  - {at: 1s, kind: clock-jump, node: A, by: 30}\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `faults[0].by: "30" needs a unit`)
	assert.NotContains(t, err.Error(), "required for kind")
}

// TestDuplicateNodeReportedOnce: a node listed twice in a client's
// nodes is one message per client, with its index.
func TestDuplicateNodeReportedOnce(t *testing.T) {
	text := "name: t\nduration: 10s\nredis: [{name: A}, {name: B}, {name: C}]\nclients:\n" +
		"  - name: c1\n    lock: {algorithm: redlock, nodes: [A, A, B], ttl: 5s}\n    workload: {cycles: 1, hold: 1s}\n" +
		"  - name: c2\n    lock: {algorithm: redlock, nodes: [A, A, B], ttl: 5s}\n    workload: {cycles: 1, hold: 1s}\n"
	_, err := Parse("t.yaml", []byte(text))
	require.Error(t, err)
	assert.Equal(t, 2, strings.Count(err.Error(), "is listed twice"), err.Error())
	assert.Contains(t, err.Error(), `t.yaml:6: clients[0].lock.nodes[1]: "A" is listed twice`)
}

// TestDidYouMeanField: a misspelt field, top-level or a lock parameter,
// names the field it is close to.
func TestDidYouMeanField(t *testing.T) {
	_, err := Parse("t.yaml", []byte(strings.Replace(minimal, "duration: 10s\n", "duration: 10s\nexptme: 1\n", 1)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `exptme: unknown field "exptme"`)
	assert.Contains(t, err.Error(), "; did you mean expect?")
	_, err = Parse("t.yaml", []byte(strings.Replace(minimal, "ttl: 5s", "tll: 5s", 1)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "; did you mean ttl?")
}
