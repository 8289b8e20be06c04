package clients

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/nodes/storage"
)

// TestSlabsOutliveManyLockValues: lock values and argvs are carved out of
// slabs (uniqueValue, argv); over more lock values than a slab holds, every
// value stays distinct and intact (each release finds its own value on
// every node) and each SET carries the value its acquire drew.
func TestSlabsOutliveManyLockValues(t *testing.T) {
	const cycles = 3 * slabStrings / 12 // three argv slabs' worth
	for _, alg := range []string{Redlock, RedisSingle} {
		t.Run(alg, func(t *testing.T) {
			w := newWorld(t)
			lc := lockConfig(t, alg, nil)
			servers(w, &lc)
			w.storage(storage.FencingNone)
			w.client(clientConfig("c1", lc, Workload{Cycles: cycles}))
			h := w.run(time.Hour)
			require.Len(t, beliefs(h, "c1"), cycles, w.dumpTrace())
			assert.False(t, w.TraceHas(KindClient, "c1", "not ours"))
			assert.False(t, w.TraceHas(KindClient, "c1", "no longer held our value"))
			seen := map[string]bool{}
			for _, e := range w.K.Trace() {
				if e.Kind != redis.EventKeySet || e.Proc != "A" {
					continue
				}
				v, _ := e.Fields.String("value")
				require.True(t, strings.HasPrefix(v, "c1:"), e.Text)
				assert.False(t, seen[v], "value %s set twice", v)
				seen[v] = true
			}
			assert.Len(t, seen, cycles)
		})
	}
}
