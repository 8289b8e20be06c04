package fuzz

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
)

// TestFuzzTargetsMemcachedAndMySQL checks that the generator treats a
// memcached or MySQL server as it treats a Redis master: its schedules
// crash, pause and shift the clock of the lock server, trigger faults on
// the server's own event (memcached's key-set, MySQL's row-locked), and a
// campaign finds lock violations by them. The bases' own faults are
// replaced by the generated ones.
func TestFuzzTargetsMemcachedAndMySQL(t *testing.T) {
	tests := []struct {
		base, server, event string
		// kinds bound the campaign to faults on processes (the stories'
		// server crash, client pause).
		kinds []string
	}{
		{base: "memcached-add-restart", server: "M", event: "key-set", kinds: []string{"crash", "restart"}},
		{base: "mysql-for-update-pause", server: "D", event: "row-locked", kinds: []string{"pause", "crash"}},
	}
	for _, tt := range tests {
		t.Run(tt.base, func(t *testing.T) {
			base := builtin(t, tt.base)
			w := WorldOf(base)
			// The schedules: server faults and server triggers on it.
			onServer := map[string]int{}
			triggers := 0
			for seed := uint64(0); seed < 300; seed++ {
				_, specs := Schedule(w, seed, nil, 0)
				for _, s := range specs {
					if s.Node == tt.server {
						onServer[s.Kind]++
					}
					if s.On != nil && s.On.Proc == tt.server {
						assert.Equal(t, tt.event, s.On.Event, "the server's trigger event")
						triggers++
					}
				}
			}
			for _, k := range []string{faults.KindCrash, faults.KindPause, faults.KindClockJump} {
				assert.Positive(t, onServer[k], "no %s of %s in 300 schedules: %v", k, tt.server, onServer)
			}
			assert.Positive(t, triggers, "no fault triggered on %s's %s in 300 schedules", tt.server, tt.event)

			// A campaign finds lock violations, and some finding's
			// schedule involves the server (as target or trigger).
			res, err := Run(context.Background(), Config{Base: base, Seed: 1, Runs: 150, Workers: 2, Kinds: tt.kinds, Keep: 1})
			require.NoError(t, err)
			require.Empty(t, res.Errors)
			require.NotEmpty(t, res.Findings, "150 runs found no violation")
			involved := 0
			for _, f := range res.Findings {
				if f.Kind() != checker.KindLockSafety {
					continue
				}
				for _, s := range f.Faults {
					if s.Node == tt.server || (s.On != nil && s.On.Proc == tt.server) {
						involved++
						break
					}
				}
			}
			assert.Positive(t, involved, "no lock-safety finding involves %s (%d findings)", tt.server, len(res.Findings))
		})
	}
}
