package realmode

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// TestRealPowerLossIsSilentToPeers: issue 32. A power loss of the master A
// must look like one to its replica B: B hears nothing (no FIN, no RST),
// so its replication link stays up, however long A is off, until B's own
// repl-timeout (60 s here) or until A is back and answers B's next
// acknowledgement with a reset. Real mode used to reset A's connections
// through the proxy, and B saw its link go down at the power loss.
func TestRealPowerLossIsSilentToPeers(t *testing.T) {
	needServers(t)
	src := `
name: power-silent
duration: 5s
redis:
  - name: A
  - name: B
    replicaof: A
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 5s}
    workload: {start: 0s, cycles: 1, hold: 100ms}
faults:
  - {at: 500ms, kind: crash, node: A, mode: power, restart_after: 3s}
`
	s, err := scenarios.Parse("power-silent.yaml", []byte(src))
	require.NoError(t, err)
	var (
		mu   sync.Mutex
		down []time.Time // when B reported its link down
		rt   *runtime
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	_, err = run(context.Background(), s, 1, Options{Dir: t.TempDir()}, func(r *runtime) {
		rt = r
		addr := r.servers["B"].ls.Addr()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				v, err := command(addr, "INFO", "replication")
				if err == nil && strings.Contains(v.Str, "master_link_status:down") {
					mu.Lock()
					down = append(down, time.Now())
					mu.Unlock()
				}
			}
		}()
	})
	close(stop)
	wg.Wait()
	require.NoError(t, err)
	var crashed, restarted sim.Time
	for _, e := range rt.k.Trace() {
		switch {
		case e.Kind == sim.KindCrash && e.Proc == "A":
			crashed = e.At
		case e.Kind == sim.KindRestart && e.Proc == "A":
			restarted = e.At
		}
	}
	require.NotZero(t, crashed)
	require.NotZero(t, restarted)
	for _, d := range down {
		at := sim.Time(d.Sub(rt.start))
		assert.False(t, at >= crashed && at < restarted,
			"B saw its link to A down at %v, while A was powered off (%v to %v): a powered-off master sends no FIN or RST", at, crashed, restarted)
	}
}
