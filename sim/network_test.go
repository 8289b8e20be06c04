package sim

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reach builds a world of processes a, b, c, d, applies faults at 5ms, has
// every process send one message to every other at 10ms, and returns the
// links that delivered ("a>b") sorted.
func reach(t *testing.T, faults func(k *Kernel, id map[string]ProcID)) []string {
	t.Helper()
	w := newWorld(Config{Seed: 1})
	names := []string{"a", "b", "c", "d"}
	ids := map[string]ProcID{}
	var got []string
	for _, n := range names {
		ids[n] = w.add(n, hooks{
			init: func(env *Env) { env.After(Mono, 10*ms, "go") },
			fire: func(env *Env, _ any) {
				for _, to := range names {
					if to != env.Name() {
						send(env, to, "hi")
					}
				}
			},
			recv: func(env *Env, from ProcID, _ Message) { got = append(got, env.NameOf(from)+">"+env.Name()) },
		})
	}
	if faults != nil {
		w.at(5*ms, func() { faults(w.k, ids) })
	}
	w.run(time.Second)
	sort.Strings(got)
	return got
}

// allLinks returns every directed link among a..d except those listed.
func allLinks(except ...string) []string {
	skip := map[string]bool{}
	for _, e := range except {
		skip[e] = true
	}
	var out []string
	for _, a := range "abcd" {
		for _, b := range "abcd" {
			l := string(a) + ">" + string(b)
			if a != b && !skip[l] {
				out = append(out, l)
			}
		}
	}
	return out
}

func TestPartitions(t *testing.T) {
	ids := func(id map[string]ProcID, names string) []ProcID {
		var out []ProcID
		for _, n := range strings.Fields(names) {
			out = append(out, id[n])
		}
		return out
	}
	tests := []struct {
		name   string
		faults func(k *Kernel, id map[string]ProcID)
		links  []string
	}{
		{"no fault", nil, allLinks()},
		{
			"groups; unlisted d keeps its links",
			func(k *Kernel, id map[string]ProcID) { k.Partition([][]ProcID{ids(id, "a b"), ids(id, "c")}) },
			allLinks("a>c", "c>a", "b>c", "c>b"),
		},
		{
			"three groups",
			func(k *Kernel, id map[string]ProcID) {
				k.Partition([][]ProcID{ids(id, "a"), ids(id, "b"), ids(id, "c d")})
			},
			[]string{"c>d", "d>c"},
		},
		{
			"unpartition removes it",
			func(k *Kernel, id map[string]ProcID) {
				k.Unpartition(k.Partition([][]ProcID{ids(id, "a b"), ids(id, "c d")}))
			},
			allLinks(),
		},
		{
			"partitions stack; unpartition removes only one",
			func(k *Kernel, id map[string]ProcID) {
				p1 := k.Partition([][]ProcID{ids(id, "a b"), ids(id, "c d")})
				k.Partition([][]ProcID{ids(id, "a"), ids(id, "b")})
				k.Unpartition(p1)
			},
			allLinks("a>b", "b>a"),
		},
		{
			"one-way cut",
			func(k *Kernel, id map[string]ProcID) { k.CutOneWay(ids(id, "a"), ids(id, "b c")) },
			allLinks("a>b", "a>c"),
		},
		{
			"two cuts of one link need two unpartitions",
			func(k *Kernel, id map[string]ProcID) {
				c1 := k.CutOneWay(ids(id, "a"), ids(id, "b"))
				k.CutOneWay(ids(id, "a b"), ids(id, "b"))
				k.Unpartition(c1)
			},
			allLinks("a>b"),
		},
		{
			"cut lists may be reused by the caller",
			func(k *Kernel, id map[string]ProcID) {
				from, to := ids(id, "a"), ids(id, "b")
				c := k.CutOneWay(from, to)
				from[0], to[0] = id["c"], id["d"]
				k.Unpartition(c)
			},
			allLinks(),
		},
		{
			"heal removes everything",
			func(k *Kernel, id map[string]ProcID) {
				k.Partition([][]ProcID{ids(id, "a b"), ids(id, "c d")})
				k.CutOneWay(ids(id, "a"), ids(id, "b"))
				k.DropNext(id["b"], id["a"], 3)
				k.Delay(id["c"], id["d"], time.Hour, time.Hour)
				k.Heal()
			},
			allLinks(),
		},
		{
			"unpartition after heal is a no-op",
			func(k *Kernel, id map[string]ProcID) {
				c1 := k.CutOneWay(ids(id, "a"), ids(id, "b"))
				k.Heal()
				k.Unpartition(c1)
				k.CutOneWay(ids(id, "a"), ids(id, "b"))
			},
			allLinks("a>b"),
		},
		{
			"drop next",
			func(k *Kernel, id map[string]ProcID) { k.DropNext(id["a"], id["b"], 1) },
			allLinks("a>b"),
		},
		{
			"drop next with a negative count adds nothing",
			func(k *Kernel, id map[string]ProcID) {
				k.DropNext(id["a"], id["b"], -1)
				k.DropNext(id["a"], id["b"], 1)
			},
			allLinks("a>b"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.links, reach(t, tt.faults))
		})
	}
}

func TestPartitionStallsInFlight(t *testing.T) {
	w := newWorld(Config{Seed: 1, KeepTrace: true, Network: NetConfig{Latency: Fixed(10 * ms)}})
	a := w.add("a", hooks{init: func(env *Env) { send(env, "b", "m") }})
	b := w.add("b", hooks{})
	var id int
	w.at(5*ms, func() {
		id = w.k.Partition([][]ProcID{{a}, {b}})
		assert.True(t, w.k.Partitioned(a, b))
		assert.True(t, w.k.Partitioned(b, a))
	})
	w.at(500*ms, func() { w.k.Unpartition(id) })
	w.run(time.Second)
	// Lost in flight at 10ms, retransmitted at 200ms (still cut) and at
	// 600ms (through): delivered at 610ms.
	assert.Equal(t, []string{"0s b init", "610ms b got m from a"}, w.lines("b"))
	assert.Empty(t, kinds(w.k, KindDrop))
	assert.Equal(t, []string{"10ms a #1 stall: partition", "200ms a #1 partition", "600ms a #1 delivered"}, kinds(w.k, KindRetransmit))
	assert.Equal(t, []string{"5ms  #1 [a] [b]"}, kinds(w.k, KindPartition))
}

func TestDropNextAndDelay(t *testing.T) {
	w := newWorld(Config{Seed: 1, KeepTrace: true, Network: NetConfig{Latency: Fixed(ms)}})
	a := w.add("a", hooks{
		init: func(env *Env) {
			for i := 1; i <= 6; i++ {
				env.After(Mono, time.Duration(i)*10*ms, i)
			}
		},
		fire: func(env *Env, tag any) { send(env, "b", fmt.Sprint("m", tag)) },
	})
	b := w.add("b", hooks{})
	w.at(5*ms, func() { w.k.DropNext(a, b, 2) })
	w.at(35*ms, func() { w.k.Delay(a, b, 100*ms, 20*ms) }) // messages sent in [35ms, 55ms) wait 100ms more
	w.run(time.Second)
	assert.Equal(t, []string{
		"0s b init", // b never had the connections the drops reset: it learns nothing
		"31ms b got m3 from a",
		"141ms b got m4 from a",
		"151ms b got m5 from a",
		"151ms b got m6 from a", // sent at 60ms: normal latency, but FIFO behind m5
	}, w.lines("b"))
	assert.Equal(t, []string{"10ms a #1 link drop", "20ms a #2 link drop"}, kinds(w.k, KindDrop))
}

// TestLossProbability sends messages spaced far apart over a lossy network
// and checks that none is lost, that the share delayed by at least one RTO
// is near the loss probability (a fixed seed; the bound is five standard
// deviations), and that every delay is the latency plus a sum of doubling
// RTOs.
func TestLossProbability(t *testing.T) {
	tests := []struct {
		name string
		loss float64
	}{
		{"none", 0},
		{"10%", 0.1},
		{"30%", 0.3},
	}
	const n = 4000
	allowed := map[time.Duration]bool{}
	for i, d := 0, time.Duration(0); i < 12; i++ {
		allowed[ms+d] = true
		d += RTOMin << i
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(Config{Seed: 42, Network: NetConfig{Latency: Fixed(ms), Loss: tt.loss}})
			var delays []time.Duration
			next := 0
			w.add("a", hooks{
				init: func(env *Env) { env.After(Mono, 0, 0) },
				fire: func(env *Env, tag any) {
					send(env, "b", env.Mono())
					if i := tag.(int) + 1; i < n {
						env.After(Mono, 30*time.Second, i)
					}
				},
			})
			w.add("b", hooks{recv: func(env *Env, _ ProcID, m Message) {
				delays = append(delays, time.Duration(env.Mono()-m.(int64)))
				next++
			}})
			w.log = nil
			w.run(time.Duration(n+1) * 30 * time.Second)
			require.Len(t, delays, n, "nothing is lost")
			late := 0
			for _, d := range delays {
				require.True(t, allowed[d], "delay %v", d)
				if d > ms {
					late++
				}
			}
			share := float64(late) / n
			sd := 5 * sqrt(tt.loss*(1-tt.loss)/n)
			assert.InDelta(t, tt.loss, share, sd+1e-12, "delayed %d of %d", late, n)
		})
	}
}

func sqrt(x float64) float64 {
	z := x
	if z == 0 {
		return 0
	}
	for i := 0; i < 60; i++ {
		z = (z + x/z) / 2
	}
	return z
}

// TestFIFOUnderRandomLatency checks that messages on one link arrive in the
// order they were sent although each draws its own latency, and that the
// latency really varies.
func TestFIFOUnderRandomLatency(t *testing.T) {
	w := newWorld(Config{Seed: 3, KeepTrace: true, Network: NetConfig{Latency: Range{Lo: ms, Hi: 50 * ms}}})
	var got []int
	var arrivals []Time
	w.add("a", hooks{
		init: func(env *Env) { env.After(Mono, 0, 0) },
		fire: func(env *Env, tag any) {
			i := tag.(int)
			// Bursts of three at one instant, then a gap of 0..20ms.
			for j := 0; j < 3; j++ {
				send(env, "b", 3*i+j)
			}
			if i < 300 {
				env.After(Mono, env.Rand().Between(0, 20*ms), i+1)
			}
		},
	})
	w.add("b", hooks{recv: func(env *Env, _ ProcID, m Message) {
		got = append(got, m.(int))
		arrivals = append(arrivals, env.k.Now())
	}})
	w.run(time.Minute)
	require.Len(t, got, 903)
	for i, v := range got {
		require.Equal(t, i, v, "message %d arrived out of order", i)
	}
	// Arrival gaps differ from send gaps: the latencies varied.
	distinct := map[Time]bool{}
	sends := map[uint64]Time{}
	for _, e := range w.k.Trace() {
		var id uint64
		fmt.Sscanf(e.Text, "#%d", &id)
		switch e.Kind {
		case KindSend:
			sends[id] = e.At
		case KindDeliver:
			distinct[e.At-sends[id]] = true
		}
	}
	assert.Greater(t, len(distinct), 100, "latencies should vary")
}

// TestSendToUnknownPanics: a process sending to a ProcID that does not
// exist is a programming error.
func TestSendToUnknownPanics(t *testing.T) {
	w := newWorld(Config{Seed: 1})
	w.add("a", hooks{init: func(env *Env) { env.Send(7, "x") }})
	assert.PanicsWithValue(t, "sim: a sent to unknown process 7", func() { w.run(time.Second) })
}

// TestNetworkFaultsBeforeRun: faults may be set while building the world,
// before any Run and between Adds.
func TestNetworkFaultsBeforeRun(t *testing.T) {
	w := newWorld(Config{Seed: 1})
	var got []string
	rec := hooks{recv: func(env *Env, _ ProcID, m Message) { got = append(got, env.Name()+" "+m.(string)) }}
	a := w.add("a", hooks{init: func(env *Env) { send(env, "b", "1"); send(env, "c", "2"); send(env, "b", "3") }})
	b := w.add("b", rec)
	w.k.DropNext(a, b, 1)
	w.k.Partition([][]ProcID{{a}, {b}})
	c := w.add("c", rec) // unlisted: keeps its links
	w.k.CutOneWay([]ProcID{a}, []ProcID{c})
	w.k.Heal()
	w.k.DropNext(a, b, 1)
	w.run(time.Second)
	// "1" is dropped and resets the connection; "3", sent on it before a
	// learnt of the reset, is lost with it.
	assert.Equal(t, []string{"c 2"}, got)
}

// TestDurationEdges: a pause or a delay "for ever" does not overflow into
// the past, and a negative latency (or delay) never delivers a message
// before it was sent.
func TestDurationEdges(t *testing.T) {
	const forever = time.Duration(math.MaxInt64)
	w := newWorld(Config{Seed: 1, KeepTrace: true, Network: NetConfig{Latency: Range{Lo: -5 * ms, Hi: -ms}}})
	a := w.add("a", hooks{
		init: func(env *Env) { env.After(Mono, time.Second, nil) },
		fire: func(env *Env, _ any) { send(env, "b", "m"); send(env, "c", "m") },
	})
	b := w.add("b", hooks{})
	c := w.add("c", hooks{})
	w.at(10*ms, func() { w.k.Pause(b, forever) })
	w.at(20*ms, func() { w.k.Delay(a, c, -time.Hour, forever) })
	w.run(time.Minute)
	assert.True(t, w.k.Paused(b))
	assert.Equal(t, []string{"0s c init", "1s c got m from a"}, w.lines("c"))
	assert.Equal(t, []string{"0s b init"}, w.lines("b"))
	assert.Equal(t, At(time.Minute), w.k.Now())
}

// TestPairStateSurvivesGrowth sets the state of a few pairs, grows the
// network past several strides and past the dense index, and checks that
// every pair kept its links and connection, and that unused pairs are
// still unallocated.
func TestPairStateSurvivesGrowth(t *testing.T) {
	var nw network
	nw.grow(5)
	set := func(a, b ProcID, v int) {
		nw.link(a, b).dropNext = v
		nw.link(b, a).dropNext = v + 1
		nw.conn(a, b, 0).epoch = uint32(v + 2)
	}
	check := func(a, b ProcID, v int) {
		assert.Equal(t, v, nw.link(a, b).dropNext, "%d->%d", a, b)
		assert.Equal(t, v+1, nw.link(b, a).dropNext, "%d->%d", b, a)
		assert.Equal(t, uint32(v+2), nw.conn(b, a, 0).epoch, "%d-%d", a, b)
	}
	set(1, 3, 10)
	set(4, 0, 20)
	set(2, 2, 30)
	for _, n := range []int{6, 9, 100, maxDenseStride, maxDenseStride + 1, 3 * maxDenseStride} {
		nw.grow(n)
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			check(1, 3, 10)
			check(4, 0, 20)
			assert.Equal(t, 31, nw.link(2, 2).dropNext, "a process's link to itself is one link")
			assert.Nil(t, nw.peekPair(0, ProcID(n-1)))
			last := ProcID(n - 1)
			set(last, 1, n)
			check(last, 1, n)
		})
	}
	assert.NotNil(t, nw.sparse, "the index went sparse past maxDenseStride")
	nw.grow(3*maxDenseStride + 1)
	check(ProcID(3*maxDenseStride-1), 1, 3*maxDenseStride)
}

// TestHubOfManyProcesses runs a hub that talks to every other process of
// worlds on both sides of the dense index's limit, then crashes it: every
// peer gets its reply and then the hub's FIN, and the peers that never
// talked to each other have no state.
func TestHubOfManyProcesses(t *testing.T) {
	for _, n := range []int{3, 300, maxDenseStride + 10} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			w := newWorld(Config{Seed: 1})
			replies, ends := 0, 0
			w.add("hub", hooks{
				init: func(env *Env) {
					for i := 1; i < n; i++ {
						env.Send(ProcID(i), "ping")
					}
				},
				recv: func(env *Env, from ProcID, m Message) { replies++ },
			})
			for i := 1; i < n; i++ {
				w.add(fmt.Sprintf("p%d", i), hooks{
					recv: func(env *Env, from ProcID, m Message) { env.Send(from, "pong") },
				})
			}
			w.k.Observe(func(e ObservedEvent) {
				if e.Kind == KindConnEnd && e.Peer == 0 {
					ends++
				}
			})
			w.at(time.Second, func() { w.k.Crash(0, CrashProcess) })
			require.NoError(t, w.k.Run(At(2*time.Second)))
			assert.Equal(t, n-1, replies)
			assert.Equal(t, n-1, ends, "every peer learns that its connection with the hub ended")
			assert.Equal(t, n-1, w.k.net.npairs)
			if n > 2 {
				assert.Nil(t, w.k.net.peekPair(1, 2))
			}
		})
	}
}
