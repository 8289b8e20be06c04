package faults

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// redlockWorld is Kleppmann's five masters and two clients.
var redlockWorld = GenWorld{
	Clients:  []string{"c1", "c2"},
	Masters:  []string{"A", "B", "C", "D", "E"},
	Others:   []string{"storage"},
	Duration: 30 * time.Second,
	TTL:      10 * time.Second,
}

// failoverWorld has a replica and sentinels.
var failoverWorld = GenWorld{
	Clients:  []string{"c1", "c2"},
	Masters:  []string{"A"},
	Replicas: []string{"R"},
	Others:   []string{"s1", "s2", "s3", "storage"},
	Duration: 60 * time.Second,
	TTL:      2 * time.Second,
}

func TestGenerateDeterministic(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		a := Generate(sim.NewRand(seed, "t"), redlockWorld, GenOptions{})
		b := Generate(sim.NewRand(seed, "t"), redlockWorld, GenOptions{})
		require.NotEmpty(t, a, "seed %d", seed)
		assert.Equal(t, fmt.Sprint(a), fmt.Sprint(b), "seed %d", seed)
	}
	// Different seeds give different schedules (nearly always).
	seen := map[string]bool{}
	for seed := uint64(0); seed < 50; seed++ {
		seen[fmt.Sprint(Generate(sim.NewRand(seed, "t"), redlockWorld, GenOptions{}))] = true
	}
	assert.Greater(t, len(seen), 45)
}

// TestGenerateBounds checks every generated fault against issue 7's
// bounds, the kinds allowed, and the targets each kind may have.
func TestGenerateBounds(t *testing.T) {
	tests := []struct {
		name  string
		world GenWorld
		opts  GenOptions
	}{
		{name: "redlock, every kind", world: redlockWorld},
		{name: "redlock, clock jumps only", world: redlockWorld, opts: GenOptions{Kinds: []string{"clock-jump"}}},
		{name: "failover, every kind", world: failoverWorld},
		{name: "failover, network only, 3 faults", world: failoverWorld, opts: GenOptions{Kinds: []string{"partition", "drop", "delay", "heal"}, MaxFaults: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := tt.world
			allowed := tt.opts.Kinds
			if allowed == nil {
				allowed = Applicable(w)
			}
			max := tt.opts.MaxFaults
			if max == 0 {
				max = DefaultMaxFaults
			}
			names := map[string]bool{}
			for _, n := range w.Names() {
				names[n] = true
			}
			kinds := map[string]int{}
			for seed := uint64(0); seed < 400; seed++ {
				specs := Generate(sim.NewRand(seed, "t"), w, tt.opts)
				require.NotEmpty(t, specs)
				require.LessOrEqual(t, len(specs), max)
				for _, s := range specs {
					kinds[s.Kind]++
					assert.Contains(t, allowed, s.Kind)
					checkSpec(t, w, s, names)
				}
			}
			for _, k := range allowed {
				assert.Positive(t, kinds[k], "kind %s never generated", k)
			}
		})
	}
}

func checkSpec(t *testing.T, w GenWorld, s Spec, names map[string]bool) {
	t.Helper()
	ttl := w.TTL
	msg := s.String()
	require.True(t, (s.At == nil) != (s.On == nil), "exactly one trigger: %s", msg)
	if s.At != nil {
		assert.GreaterOrEqual(t, s.At.Lo, time.Duration(0), msg)
		assert.Less(t, s.At.Lo, w.Duration, msg)
		assert.Equal(t, s.At.Lo, s.At.Hi, msg)
	}
	if s.On != nil {
		assert.True(t, names[s.On.Proc], msg)
		assert.GreaterOrEqual(t, s.On.Count, 1, msg)
		assert.LessOrEqual(t, s.After.Hi, ttl, msg)
		if s.On.Event == "key-set" {
			assert.NotContains(t, w.Clients, s.On.Proc, msg)
		} else {
			assert.Contains(t, w.Clients, s.On.Proc, msg)
		}
	}
	switch s.Kind {
	case "clock-jump":
		assert.NotZero(t, s.By, msg)
		assert.LessOrEqual(t, abs(s.By), 3*ttl, msg)
	case "clock-drift":
		assert.NotZero(t, s.Rate, msg)
		assert.LessOrEqual(t, math.Abs(s.Rate), 0.2, msg)
	case "pause":
		assert.Positive(t, s.For.Lo, msg)
		assert.LessOrEqual(t, s.For.Hi, 3*ttl, msg)
	case "crash":
		assert.Contains(t, []string{"", "power"}, s.Mode, msg)
		if s.RestartAfter != nil {
			assert.LessOrEqual(t, s.RestartAfter.Hi, 2*ttl, msg)
		}
	case "partition":
		require.GreaterOrEqual(t, len(s.Groups), 2, msg)
		seen := map[string]bool{}
		for _, g := range s.Groups {
			assert.NotEmpty(t, g, msg)
			for _, n := range g {
				assert.True(t, names[n], msg)
				assert.False(t, seen[n], "%s twice in %s", n, msg)
				seen[n] = true
			}
		}
		if s.HealAfter != nil {
			assert.Positive(t, s.HealAfter.Lo, msg)
			assert.LessOrEqual(t, s.HealAfter.Hi, 2*ttl, msg)
		}
	case "drop":
		assert.NotEqual(t, s.From, s.To, msg)
		assert.True(t, names[s.From] && names[s.To], msg)
		assert.GreaterOrEqual(t, s.Count, 1, msg)
		assert.LessOrEqual(t, s.Count, maxDropCount, msg)
	case "delay":
		assert.NotEqual(t, s.From, s.To, msg)
		assert.Positive(t, s.By, msg)
		assert.LessOrEqual(t, s.By, ttl, msg)
		assert.Positive(t, s.For.Lo, msg)
		assert.LessOrEqual(t, s.For.Hi, 2*ttl, msg)
	case "promote":
		assert.Contains(t, w.Replicas, s.Node, msg)
	}
	switch s.Kind {
	case "clock-jump", "clock-drift", "pause", "crash", "restart", "promote", "clock-strobe":
		if sel, ok := ParseSelector(s.Node); ok {
			// A selector over a set the world has.
			assert.Contains(t, []string{"any servers", "majority servers", "any clients", "all replicas"}, sel.String(), msg)
			assert.NotEqual(t, "promote", s.Kind, msg)
			return
		}
		assert.True(t, names[s.Node], msg)
	}
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// TestSwarm checks the per-run feature flags: at least one kind on, each
// kind sometimes off, every fault count from 1 to the maximum, every
// focus and trigger share.
func TestSwarm(t *testing.T) {
	kindsOn := map[string]int{}
	counts := map[int]bool{}
	focus := map[string]bool{}
	trig := map[int]bool{}
	const n = 500
	for seed := uint64(0); seed < n; seed++ {
		sw := DrawSwarm(sim.NewRand(seed, "t"), failoverWorld, GenOptions{})
		require.NotEmpty(t, sw.Kinds)
		require.Len(t, sw.Weights, len(sw.Kinds))
		for i, k := range sw.Kinds {
			kindsOn[k]++
			assert.GreaterOrEqual(t, sw.Weights[i], 1)
			assert.LessOrEqual(t, sw.Weights[i], 4)
		}
		counts[sw.Faults] = true
		focus[sw.Focus] = true
		trig[sw.Triggered] = true
		assert.Len(t, sw.Generate(sim.NewRand(seed, "u"), failoverWorld), sw.Faults)
	}
	for _, k := range Applicable(failoverWorld) {
		assert.Greater(t, kindsOn[k], n/4, k)
		assert.Less(t, kindsOn[k], 3*n/4, k)
	}
	for c := 1; c <= DefaultMaxFaults; c++ {
		assert.True(t, counts[c], "fault count %d never drawn", c)
	}
	assert.Len(t, focus, 3)
	assert.Len(t, trig, 5)
	assert.Contains(t, DrawSwarm(sim.NewRand(1, "t"), failoverWorld, GenOptions{}).String(), "faults")
}

// TestSwarmFocus: under a servers focus every node fault hits a Redis
// server; under a clients focus, a client.
func TestSwarmFocus(t *testing.T) {
	for _, focus := range []string{"servers", "clients"} {
		t.Run(focus, func(t *testing.T) {
			sw := Swarm{Kinds: []string{"clock-jump", "pause", "crash"}, Weights: []int{1, 1, 1}, Faults: 8, Focus: focus}
			want := redlockWorld.Masters
			if focus == "clients" {
				want = redlockWorld.Clients
			}
			for seed := uint64(0); seed < 50; seed++ {
				for _, s := range sw.Generate(sim.NewRand(seed, "t"), redlockWorld) {
					if sel, ok := ParseSelector(s.Node); ok {
						// A selector of the focus's set.
						assert.Equal(t, focus, sel.Set, s.String())
						continue
					}
					assert.Contains(t, want, s.Node, s.String())
				}
			}
		})
	}
}

func TestApplicableAndCheckKinds(t *testing.T) {
	assert.NotContains(t, Applicable(redlockWorld), "promote")
	assert.Contains(t, Applicable(failoverWorld), "promote")
	assert.NotContains(t, Applicable(failoverWorld), "reshard")
	tests := []struct {
		name  string
		kinds []string
		world GenWorld
		err   string
	}{
		{name: "all core kinds with a replica", kinds: Kinds[:len(Kinds)-3], world: failoverWorld},
		{name: "order is never drawn", kinds: []string{"pause", "order"}, world: failoverWorld, err: "order is never drawn at random"},
		{name: "manual-failover is never drawn", kinds: []string{"manual-failover"}, world: failoverWorld, err: "manual-failover is never drawn at random: an operator's CLUSTER FAILOVER is staged in a scenario"},
		{name: "reshard without a cluster", kinds: []string{"reshard"}, world: failoverWorld, err: "reshard needs a Redis Cluster"},
		{name: "unknown kind", kinds: []string{"clock-jump", "meteor"}, world: redlockWorld, err: `unknown fault kind "meteor" (allowed: clock-jump,`},
		{name: "promote without replicas", kinds: []string{"promote"}, world: redlockWorld, err: "promote needs a Redis replica"},
		{name: "empty", kinds: []string{}, world: redlockWorld, err: "no fault kinds given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckKinds(tt.kinds, tt.world)
			if tt.err == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
			assert.Nil(t, Generate(sim.NewRand(1, "t"), tt.world, GenOptions{Kinds: tt.kinds}))
		})
	}
}

func TestCheckWorld(t *testing.T) {
	tests := []struct {
		name string
		edit func(w *GenWorld)
		err  string
	}{
		{name: "ok", edit: func(w *GenWorld) {}},
		{name: "no duration", edit: func(w *GenWorld) { w.Duration = 0 }, err: "duration must be positive"},
		{name: "no ttl", edit: func(w *GenWorld) { w.TTL = 0 }, err: "ttl must be positive"},
		{name: "one process", edit: func(w *GenWorld) { *w = GenWorld{Clients: []string{"c1"}, Duration: time.Second, TTL: time.Second} }, err: "at least two processes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := redlockWorld
			tt.edit(&w)
			err := CheckWorld(w)
			if tt.err == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
			assert.Nil(t, Generate(sim.NewRand(1, "t"), w, GenOptions{}))
		})
	}
}

// TestSmallWorld: a world of two processes still gets valid partitions and
// links.
// TestSmallWorld: the smallest world (one client, one server) still gets
// a schedule from every seed, of more than one kind over the seeds, and
// each fault is valid. A generator that returns nothing fails here.
func TestSmallWorld(t *testing.T) {
	w := GenWorld{Clients: []string{"c1"}, Others: []string{"zk"}, Duration: 10 * time.Second, TTL: time.Second}
	require.NoError(t, CheckWorld(w))
	names := map[string]bool{"c1": true, "zk": true}
	kinds := map[string]bool{}
	for seed := uint64(0); seed < 200; seed++ {
		specs := Generate(sim.NewRand(seed, "t"), w, GenOptions{})
		require.NotEmpty(t, specs, "seed %d generated no fault", seed)
		for _, s := range specs {
			checkSpec(t, w, s, names)
			kinds[s.Kind] = true
		}
	}
	assert.Greater(t, len(kinds), 1, "200 seeds drew only the kinds %v", kinds)
}

func TestByteSource(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		n    []uint64
		want []uint64
	}{
		{name: "one byte per small draw", data: []byte{5, 7, 255}, n: []uint64{10, 10, 256}, want: []uint64{5, 7, 255}},
		{name: "two bytes big-endian for n > 256", data: []byte{1, 2}, n: []uint64{1000}, want: []uint64{258}},
		{name: "modulo n", data: []byte{13}, n: []uint64{4}, want: []uint64{1}},
		{name: "n = 1 reads nothing", data: []byte{9}, n: []uint64{1, 10}, want: []uint64{0, 9}},
		{name: "exhausted gives zeros", data: []byte{3}, n: []uint64{10, 10, 1 << 40}, want: []uint64{3, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewByteSource(tt.data)
			var got []uint64
			for _, n := range tt.n {
				got = append(got, b.Uint64n(n))
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestGenerateFromBytes: any byte string gives a valid schedule, and the
// empty one a single fault.
func TestGenerateFromBytes(t *testing.T) {
	names := map[string]bool{}
	for _, n := range failoverWorld.Names() {
		names[n] = true
	}
	empty := Generate(NewByteSource(nil), failoverWorld, GenOptions{})
	require.Len(t, empty, 1)
	r := sim.NewRand(3, "bytes")
	for i := 0; i < 300; i++ {
		data := make([]byte, r.Intn(120))
		for j := range data {
			data[j] = byte(r.Uint64())
		}
		for _, s := range Generate(NewByteSource(data), failoverWorld, GenOptions{}) {
			checkSpec(t, failoverWorld, s, names)
		}
	}
}
