package usercode

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
)

func TestOwnLockSingleGCPause(t *testing.T) {
	s := builtin(t, "single-gc-pause")
	o, err := Run(t, s, Options{KeepTrace: true, Clients: map[string]func(*Proc) Lock{"c1": newOwnLock, "c2": newOwnLock}})
	require.NoError(t, err)
	for _, e := range o.Trace {
		t.Logf("%v %s %s %s %s", e.At, e.Kind, e.Proc, e.Peer, e.Text)
	}
	require.Equal(t, checker.Violated, o.Verdicts.Of(checker.LockSafety))
	require.Equal(t, checker.Violated, o.Verdicts.Of(checker.ResourceSafety))
}

// TestOwnLockWithoutTokenIsSaid: a user lock that returns no fencing
// token, run through a scenario whose lock asks for one and whose resource
// rejects tokenless writes, said nothing and reported "resource safety
// holds" over writes that were all rejected (found by outsider3). The
// trace now says what the code returned, and the result that the holds is
// vacuous.
func TestOwnLockWithoutTokenIsSaid(t *testing.T) {
	s := builtin(t, "single-gc-pause-fenced")
	o, err := Run(t, s, Options{KeepTrace: true, Clients: map[string]func(*Proc) Lock{"c1": newOwnLock, "c2": newOwnLock}})
	require.NoError(t, err)
	said := 0
	for _, e := range o.Trace {
		if strings.Contains(e.Text, "Obtain returned a lock without a fencing token") {
			said++
			require.Contains(t, e.Text, "fencing_token incr")
		}
	}
	require.Equal(t, 2, said, "once per client")
	require.Equal(t, checker.Holds, o.Verdicts.Of(checker.ResourceSafety))
	require.Zero(t, o.Stats.WritesAccepted)
	require.Contains(t, strings.Join(o.Vacuous, "\n"), "resource safety holds, but the resource accepted no write")
}
