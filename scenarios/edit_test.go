package scenarios

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
)

func TestWithSetsFields(t *testing.T) {
	s, err := Builtin("redlock-clock-jump")
	require.NoError(t, err)
	v, err := s.With([][2]string{{"faults[1].by", "+5s"}, {"clients[0].lock.ttl", "20s"}, {"redis[2].clock.drift", "0.05"}, {"seed", "9"}})
	require.NoError(t, err)
	assert.Equal(t, 5*time.Second, v.Faults[1].By)
	assert.Equal(t, 20*time.Second, v.Clients[0].Lock.TTL)
	assert.Equal(t, 0.05, v.Redis()[2].Clock.Drift)
	assert.Equal(t, uint64(9), v.Seed)
	// The original is untouched.
	assert.Equal(t, 30*time.Second, s.Faults[1].By)
	assert.Equal(t, 10*time.Second, s.Clients[0].Lock.TTL)
}

func TestWithRejectsBadPathsAndValues(t *testing.T) {
	s, err := Builtin("redlock-clock-jump")
	require.NoError(t, err)
	for _, tt := range []struct{ path, value, want string }{
		{"faults[9].by", "1s", "has no item 9"},
		{"clients[0].lock", "x", "not a single value"},
		{"faults[1].by", "soon", "faults[1].by"},
		{"clients[0].lock.colour", "red", "redlock takes no parameter \"colour\""},
		{"faults[x].by", "1s", "not a valid index"},
	} {
		_, err := s.With([][2]string{{tt.path, tt.value}})
		require.Error(t, err, tt.path)
		assert.Contains(t, err.Error(), tt.want, tt.path)
	}
}

func TestWithFaultsRoundTrip(t *testing.T) {
	s, err := Builtin("redlock-clock-jump")
	require.NoError(t, err)
	at := sim.Range{Lo: time.Second, Hi: 2 * time.Second}
	heal := sim.Fixed(3 * time.Second)
	rs := sim.Fixed(time.Second)
	one := sim.Fixed(time.Second)
	specs := []faults.Spec{
		{At: &at, Kind: "clock-jump", Node: "C", By: -5 * time.Second},
		{At: &at, Kind: "clock-jump", Node: "B", By: 5 * time.Second, RevertAfter: &heal},
		{At: &at, Kind: "clock-strobe", Node: "A", By: -2 * time.Second, Period: 10 * time.Millisecond, For: sim.Fixed(time.Second)},
		{At: &at, Kind: "partition-ring", Ring: [][]string{{"c1", "A"}, {"B"}, {"C"}, {"c2", "D"}, {"E"}}, HealAfter: &heal},
		{On: &faults.Trigger{Event: "acquired", Proc: "c1", Count: 2}, After: sim.Fixed(100 * time.Millisecond), Kind: "pause", Node: "c1", For: sim.Fixed(4 * time.Second)},
		{On: &faults.Trigger{Event: "key-set", Proc: "C", Count: 1}, Kind: "crash", Node: "C", Mode: "power", RestartAfter: &rs},
		{At: &at, Kind: "partition", Groups: [][]string{{"c1", "A"}, {"c2", "B"}}, HealAfter: &heal},
		{At: &at, Kind: "drop", From: "A", To: "c1", Count: 2},
		{At: &at, Kind: "delay", From: "c2", To: "D", By: 5 * time.Millisecond, For: sim.Fixed(time.Second)},
		{At: &at, Kind: "clock-drift", Node: "E", Rate: 0.02},
		{At: &one, Kind: "order", Node: "A", From: "c2"},
		{At: &one, Kind: "order", Node: "c1", Event: "timer"},
		{At: &at, Kind: "heal"},
		{At: &at, Kind: "restart", Node: "C"},
	}
	// Every kind of faults' table but promote (this world has no replica),
	// reshard and manual-failover (no cluster: TestWithReshardRoundTrip).
	covered := map[string]bool{"promote": true, "reshard": true, "manual-failover": true}
	for _, f := range specs {
		covered[f.Kind] = true
	}
	for _, k := range faults.Kinds {
		assert.True(t, covered[k], "kind %s is not round-tripped", k)
	}
	v, err := s.WithFaults(specs)
	require.NoError(t, err)
	assert.Equal(t, specs, v.Faults)
	data, err := v.Marshal()
	require.NoError(t, err)
	back, err := Parse("back.yaml", data)
	require.NoError(t, err, string(data))
	assert.Equal(t, specs, back.Faults)
	assert.Equal(t, v.Clients, back.Clients)
}

func TestWithReshardRoundTrip(t *testing.T) {
	s, err := Builtin("cluster-minority-master")
	require.NoError(t, err)
	at := sim.Fixed(time.Second)
	specs := []faults.Spec{
		{At: &at, Kind: "reshard", Key: "lock", From: "C2", To: "C1"},
		{At: &at, Kind: "reshard", Key: "{x}", From: "C3", To: "C1", Hold: sim.Range{Lo: time.Second, Hi: 2 * time.Second}},
		{At: &at, Kind: "manual-failover", Node: "C6"},
		{At: &at, Kind: "manual-failover", Node: "C5", Mode: "takeover"},
	}
	v, err := s.WithFaults(specs)
	require.NoError(t, err)
	data, err := v.Marshal()
	require.NoError(t, err)
	assert.Contains(t, string(data), "hold: 1s..2s")
	back, err := Parse("back.yaml", data)
	require.NoError(t, err, string(data))
	assert.Equal(t, specs, back.Faults)
}
