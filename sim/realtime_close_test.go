package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// endWatcher records the connection ends it learns.
type endWatcher struct {
	recorder
	ends []string
}

func (w *endWatcher) ConnEnded(env *Env, peer ProcID, why ConnEnd) {
	w.ends = append(w.ends, env.NameOf(peer)+" "+why.String())
}

// TestInjectClose: a driver closes the gateway's connection with a client
// (the real server closed the real one); the client learns it as a FIN,
// and a connection that was never opened is left alone.
func TestInjectClose(t *testing.T) {
	tests := []struct {
		name      string
		connected bool
		want      []string
	}{
		{name: "open connection", connected: true, want: []string{"gw closed"}},
		{name: "no connection", connected: false, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := New(Config{Seed: 1, KeepTrace: true})
			w := &endWatcher{}
			c := k.Add("c", func() Process { return w }, ClockSpec{})
			gw := k.Add("gw", func() Process { return &recorder{} }, ClockSpec{})
			require.NoError(t, k.Run(1_000))
			if tt.connected {
				k.Inject(gw, c, "hello")
				require.NoError(t, k.Run(2_000))
			}
			k.InjectClose(gw, c)
			require.NoError(t, k.Run(3_000))
			assert.Equal(t, tt.want, w.ends)
		})
	}
}
