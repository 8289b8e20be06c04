package locksim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim"
	"github.com/locksim/locksim/usercode"
)

// quotedUnlock is a team's compare-and-delete in its own spelling (single
// quotes): not the stock text the simulated Redis runs.
var quotedUnlock = redis.NewScript(`if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`)

type quotedLock struct{ *myLock }

func (l quotedLock) Release(ctx context.Context, h *locksim.Held) error {
	for _, n := range l.nodes {
		if err := quotedUnlock.Run(ctx, n, []string{l.key}, h.Value).Err(); err != nil {
			return err
		}
	}
	return nil
}

// TestUnknownScriptIsInconclusive: a release script the simulated Redis
// does not run got "ERR locksim: unknown script" in the trace only, and
// the verdicts read "holds" on code that never released. The run is now
// inconclusive: an error from RunUser, and a result whose verdicts are all
// unknown, whose summary and JSON name the client, the command and the
// time.
func TestUnknownScriptIsInconclusive(t *testing.T) {
	s, err := locksim.Builtin("single-gc-pause")
	require.NoError(t, err)
	bind := func(p *locksim.Proc) locksim.UserLock { return quotedLock{newMyLock(p).(*myLock)} }
	r, err := locksim.RunUser(t, s, locksim.UserOptions{Clients: map[string]func(*locksim.Proc) locksim.UserLock{"c1": bind, "c2": newMyLock}})
	var ue *usercode.UnsupportedError
	require.True(t, errors.As(err, &ue), "%v", err)
	require.NotEmpty(t, ue.Replies)
	u := ue.Replies[0]
	assert.Equal(t, "c1", u.Client)
	assert.Contains(t, u.Command, "EVAL")
	assert.Contains(t, u.Command, "redis.call('get'")
	assert.Contains(t, u.Reply, "ERR locksim: unknown script")
	assert.Positive(t, u.At)
	assert.Contains(t, err.Error(), "client c1 at ")

	require.NotNil(t, r)
	assert.True(t, r.Inconclusive)
	assert.False(t, r.Matched)
	for _, v := range []locksim.Verdict{r.LockSafety, r.ResourceSafety} {
		assert.Equal(t, locksim.Verdict("unknown"), v)
	}
	assert.Empty(t, r.Violations)

	var sum bytes.Buffer
	r.WriteSummary(&sum, "")
	assert.Contains(t, sum.String(), "INCONCLUSIVE: locksim could not run what the code sent")
	assert.Contains(t, sum.String(), "client c1 at ")
	assert.NotRegexp(t, `safety +(holds|violated)`, sum.String())

	var js bytes.Buffer
	require.NoError(t, r.WriteJSON(&js))
	var doc map[string]any
	require.NoError(t, json.Unmarshal(js.Bytes(), &doc))
	assert.Equal(t, true, doc["inconclusive"])
	assert.Equal(t, "unknown", doc["lock_safety"])
	us := doc["unsupported"].([]any)
	require.NotEmpty(t, us)
	assert.Equal(t, "c1", us[0].(map[string]any)["client"])
}
