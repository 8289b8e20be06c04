package usercode

import (
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
