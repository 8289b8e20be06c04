package usercode

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
)

// Through go-redis' failover client, the team's lock follows Sentinel to
// the promoted replica, where the lock that asynchronous replication lost
// is taken again: the failover of single-failover.
func TestFailoverClientFollowsSentinel(t *testing.T) {
	s := builtin(t, "single-failover")
	failover := func(p *Proc) Lock {
		o := newOwnLock(p).(*ownLock)
		o.rdb = p.Failover()
		return o
	}
	o, err := Run(t, s, Options{KeepTrace: true, Clients: map[string]func(*Proc) Lock{"c1": failover, "c2": failover}})
	require.NoError(t, err)
	var asked bool
	for _, e := range o.Trace {
		if e.Kind == "send" && e.Proc == "c2" && len(e.Text) > 0 {
			if assert.ObjectsAreEqual(true, containsAll(e.Text, "sentinel", "get-master-addr-by-name")) {
				asked = true
			}
		}
	}
	assert.True(t, asked, "c2 asked a sentinel for the master")
	assert.Equal(t, checker.Violated, o.Verdicts.Of(checker.LockSafety))
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !contains(s, x) {
			return false
		}
	}
	return true
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
