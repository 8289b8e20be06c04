package fuzz

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

func TestWorldOf(t *testing.T) {
	tests := []struct {
		name string
		want faults.GenWorld
	}{
		{name: "redlock-clock-jump", want: faults.GenWorld{
			Clients: []string{"c1", "c2"}, Masters: []string{"A", "B", "C", "D", "E"}, Others: []string{"storage"},
			Duration: 30 * time.Second, TTL: 10 * time.Second,
		}},
		{name: "single-failover", want: faults.GenWorld{
			Clients: []string{"c1", "c2"}, Masters: []string{"M"}, Replicas: []string{"R"}, Others: []string{"s1", "s2", "s3", "storage"},
			Events: map[string][]string{"M": {"key-set", "promoted"}, "R": {"key-set", "promoted"}},
		}},
		{name: "memcached-add-restart", want: faults.GenWorld{
			Clients: []string{"c1", "c2"}, Masters: []string{"M"}, Others: []string{"storage"},
			Events: map[string][]string{"M": {"key-set", "key-evicted"}},
		}},
		{name: "mysql-for-update-pause", want: faults.GenWorld{
			Clients: []string{"c1", "c2"}, Masters: []string{"D"}, Others: []string{"storage"},
			Events: map[string][]string{"D": {"row-locked", "committed", "conn-closed"}},
		}},
		{name: "redis-eviction-volatile-lru", want: faults.GenWorld{
			Clients: []string{"c1", "c2"}, Masters: []string{"A"}, Others: []string{"F", "storage"},
		}},
		{name: "cluster-minority-master", want: faults.GenWorld{
			Clients: []string{"c1", "c2"}, Masters: []string{"C1", "C2", "C3"}, Others: []string{"C4", "C5", "C6", "storage"},
			Reshards: []faults.ReshardTarget{{Key: "lock", From: "C2", Masters: []string{"C1", "C2", "C3"}}},
		}},
		{name: "zk-session-expiry-pause", want: faults.GenWorld{
			Clients: []string{"c1", "c2"}, Others: []string{"zk", "storage"}, Events: map[string][]string{},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenarios.Builtin(tt.name)
			require.NoError(t, err)
			w := WorldOf(s)
			assert.Equal(t, tt.want.Clients, w.Clients)
			assert.Equal(t, tt.want.Masters, w.Masters)
			assert.Equal(t, tt.want.Replicas, w.Replicas)
			assert.Equal(t, tt.want.Others, w.Others)
			assert.Equal(t, tt.want.Reshards, w.Reshards)
			if tt.want.Events != nil {
				assert.Equal(t, tt.want.Events, w.Events)
			}
			assert.Equal(t, s.Duration, w.Duration)
			assert.Positive(t, w.TTL)
			if tt.want.TTL > 0 {
				assert.Equal(t, tt.want.TTL, w.TTL)
			}
		})
	}
}

// TestGeneratedSchedulesValidate is the generator's contract with the
// scenario format: for every built-in scenario, every schedule drawn (from
// seeded streams and from random bytes) passes the scenario validation.
// A failure here is a generator bug, and so is a draw of no fault at all
// (which would validate vacuously).
func TestGeneratedSchedulesValidate(t *testing.T) {
	cat, err := scenarios.Catalogue()
	require.NoError(t, err)
	require.NotEmpty(t, cat)
	r := sim.NewRand(11, "bytes")
	for _, s := range cat {
		t.Run(s.Name, func(t *testing.T) {
			w := WorldOf(s)
			for seed := uint64(0); seed < 60; seed++ {
				_, specs := Schedule(w, seed, nil, 0)
				require.NotEmpty(t, specs, "seed %d drew no fault: nothing was validated", seed)
				_, err := s.WithFaults(specs)
				require.NoError(t, err, "seed %d: %v", seed, specStrings(specs))
				data := make([]byte, r.Intn(100))
				for i := range data {
					data[i] = byte(r.Uint64())
				}
				specs = faults.Generate(faults.NewByteSource(data), w, faults.GenOptions{})
				require.NotEmpty(t, specs, "bytes %q drew no fault: nothing was validated", data)
				_, err = s.WithFaults(specs)
				require.NoError(t, err, "bytes %q: %v", data, specStrings(specs))
			}
		})
	}
}
