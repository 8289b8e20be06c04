package faults_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
)

// links snapshots which directed links among names are cut, as "a>c"
// pairs in name order.
func links(names ...string) func(w *world) string {
	return func(w *world) string {
		var out []string
		for _, a := range names {
			for _, b := range names {
				if a != b && w.K.Partitioned(w.ID(a), w.ID(b)) {
					out = append(out, a+">"+b)
				}
			}
		}
		return strings.Join(out, " ")
	}
}

// TestJepsenFaults checks the faults taken from Jepsen and Chaos Mesh
// (issues 23 and 25): the majorities ring's cuts (jepsen.nemesis
// majorities-ring-perfect), the clock strobe's settings (strobe-time.c),
// a clock jump that reverts, and partitions that stack.
func TestJepsenFaults(t *testing.T) {
	s := time.Second
	five := []string{"a", "b", "c", "d", "e"}
	tests := []struct {
		name    string
		procs   []string
		specs   []faults.Spec
		looks   []lookAt
		want    []string
		records []sim.FaultRecord
	}{
		{
			name:  "a ring of five: each position talks to its two neighbours only, both ways",
			procs: five,
			specs: []faults.Spec{{At: at(s), Kind: "partition-ring", Ring: [][]string{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}}, HealAfter: rng(2*s, 2*s)}},
			looks: []lookAt{{999 * ms, links(five...)}, {1001 * ms, links(five...)}, {3001 * ms, links(five...)}},
			want: []string{
				"999ms ",
				"1.001s a>c a>d b>d b>e c>a c>e d>a d>b e>b e>c",
				"3.001s ",
			},
			records: []sim.FaultRecord{
				rec(s, "partition-ring", five, "the network became a majorities ring: [b] hears [a] [c]; [c] hears [b] [d]; [d] hears [c] [e]; [e] hears [d] [a]; [a] hears [e] [b] for 2s", sim.At(3*s)),
			},
		},
		{
			name:  "a position is a group: a client beside its node shares the node's view; unlisted processes keep their links",
			procs: []string{"a", "b", "c", "d", "e", "x", "y", "z"},
			specs: []faults.Spec{{At: at(s), Kind: "partition-ring", Ring: [][]string{{"x", "a"}, {"b"}, {"c"}, {"y", "d"}, {"e"}}}},
			looks: []lookAt{{2 * s, links("x", "a", "b", "c", "d", "e")}, {2 * s, links("y", "a", "b", "c", "d", "e")}, {2 * s, links("z", "a", "b", "c", "d", "e", "x", "y")}},
			want: []string{
				"2s x>c x>d a>c a>d b>d b>e c>x c>a c>e d>x d>a d>b e>b e>c",
				"2s y>a y>b a>y a>c a>d b>y b>d b>e c>a c>e d>a d>b e>b e>c",
				// x and y are two positions apart: cut both ways.
				"2s a>c a>d a>y b>d b>e b>y c>a c>e c>x d>a d>b d>x e>b e>c x>c x>d x>y y>a y>b y>x",
			},
		},
		{
			name:  "a ring of six: the same construction, one-way where Jepsen's grudge is (each still hears a majority)",
			procs: []string{"a", "b", "c", "d", "e", "f"},
			specs: []faults.Spec{{At: at(s), Kind: "partition-ring", Ring: [][]string{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}, {"f"}}}},
			looks: []lookAt{{2 * s, links("a", "b", "c", "d", "e", "f")}},
			// Position i hears i-2..i+1: i drops from i+2 and i+3.
			want: []string{"2s a>d a>e b>e b>f c>a c>f d>a d>b e>b e>c f>c f>d"},
		},
		{
			name:  "clock-strobe flips the wall clock every period, then leaves it at its offset",
			procs: []string{"a", "b"},
			specs: []faults.Spec{{At: at(s), Kind: "clock-strobe", Node: "a", By: s, Period: 100 * ms, For: sim.Fixed(250 * ms)}},
			looks: []lookAt{{999 * ms, clocks("a")}, {1050 * ms, clocks("a")}, {1150 * ms, clocks("a")}, {1250 * ms, clocks("a")}, {1250 * ms, clocks("b")}, {1301 * ms, clocks("a")}, {5 * s, clocks("a")}},
			want: []string{
				"999ms wall +0s mono +0s", "1.05s wall +1s mono +0s", "1.15s wall +0s mono +0s", "1.25s wall +1s mono +0s",
				"1.25s wall +0s mono +0s", "1.301s wall +0s mono +0s", "5s wall +0s mono +0s",
			},
			records: []sim.FaultRecord{
				rec(s, "clock-strobe", []string{"a"}, "a's wall clock strobed by +1s every 100ms for 250ms (3 settings)", sim.At(1300*ms)),
			},
		},
		{
			name:  "clock-strobe that ends on its normal setting needs no reset",
			procs: []string{"a", "b"},
			specs: []faults.Spec{{At: at(s), Kind: "clock-strobe", Node: "a", By: -2 * s, Period: 100 * ms, For: sim.Fixed(200 * ms)}},
			looks: []lookAt{{1050 * ms, clocks("a")}, {1150 * ms, clocks("a")}, {1250 * ms, clocks("a")}},
			want:  []string{"1.05s wall -2s mono +0s", "1.15s wall +0s mono +0s", "1.25s wall +0s mono +0s"},
			records: []sim.FaultRecord{
				rec(s, "clock-strobe", []string{"a"}, "a's wall clock strobed by -2s every 100ms for 200ms (2 settings)", sim.At(1200*ms)),
			},
		},
		{
			name:  "clock-jump with revert_after steps back then, as a fault of its own",
			procs: []string{"a", "b"},
			specs: []faults.Spec{{At: at(s), Kind: "clock-jump", Node: "a", By: 30 * s, RevertAfter: rng(2*s, 2*s)}},
			looks: []lookAt{{1001 * ms, clocks("a")}, {2999 * ms, clocks("a")}, {3001 * ms, clocks("a")}},
			want:  []string{"1.001s wall +30s mono +0s", "2.999s wall +30s mono +0s", "3.001s wall +0s mono +0s"},
			records: []sim.FaultRecord{
				rec(s, "clock-jump", []string{"a"}, "a's wall clock jumped +30s (reverting 2s later)", 0),
				rec(3*s, "clock-jump", []string{"a"}, "a's wall clock jumped back -30s, 2s after its jump of +30s", 0),
			},
		},
		{
			// Jepsen's partitioner replaces its grudge on each :start
			// (net/drop-all! after no heal); locksim's partitions stack:
			// a later one adds its cuts, and healing it leaves the
			// earlier one's (docs/guide/scenarios.md, "Faults").
			name:  "partitions stack: a later partition neither replaces nor heals an earlier one",
			procs: []string{"a", "b", "c"},
			specs: []faults.Spec{
				{At: at(s), Kind: "partition", Groups: [][]string{{"a"}, {"b"}}, HealAfter: rng(10*s, 10*s)},
				{At: at(2 * s), Kind: "partition", Groups: [][]string{{"a"}, {"c"}}, HealAfter: rng(2*s, 2*s)},
				{At: at(3 * s), Kind: "partition-ring", Ring: [][]string{{"a"}, {"b"}, {"c"}}, HealAfter: rng(s, s)},
			},
			looks: []lookAt{{1500 * ms, links("a", "b", "c")}, {2500 * ms, links("a", "b", "c")}, {3500 * ms, links("a", "b", "c")}, {4500 * ms, links("a", "b", "c")}, {11500 * ms, links("a", "b", "c")}},
			want: []string{
				"1.5s a>b b>a",
				"2.5s a>b a>c b>a c>a",
				// The ring of three (m = 2): each position hears its
				// predecessor only, so c>b and b>a are cut too (a>c
				// already was).
				"3.5s a>b a>c b>a c>a c>b",
				"4.5s a>b b>a",
				"11.5s ",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, 1, tt.procs, nil)
			require.NoError(t, faults.Install(w.K, tt.specs, w.hooks()))
			for _, l := range tt.looks {
				w.look(l.at, l.what)
			}
			h := w.run(100 * time.Second)
			assert.Equal(t, tt.want, w.looks)
			if tt.records != nil {
				assert.Equal(t, tt.records, withoutLiveness(h.Faults))
			}
		})
	}
}

// TestRingEachHearsADistinctMajority checks Jepsen's property of the ring
// for rings of 3 to 9 positions: every position hears from a majority
// (itself included), and no two positions hear from the same set.
func TestRingEachHearsADistinctMajority(t *testing.T) {
	for n := 3; n <= 9; n++ {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var names []string
			var ring [][]string
			for i := 0; i < n; i++ {
				names = append(names, fmt.Sprintf("p%d", i))
				ring = append(ring, []string{names[i]})
			}
			w := newWorld(t, 1, names, nil)
			require.NoError(t, faults.Install(w.K, []faults.Spec{{At: at(0), Kind: "partition-ring", Ring: ring}}, w.hooks()))
			w.run(time.Second)
			seen := map[string]string{}
			for _, b := range names {
				var hears []string
				for _, a := range names {
					if a == b || !w.K.Partitioned(w.ID(a), w.ID(b)) {
						hears = append(hears, a)
					}
				}
				assert.Greater(t, len(hears), n/2, "%s hears %v: not a majority", b, hears)
				key := strings.Join(hears, " ")
				assert.NotContains(t, seen, key, "%s and %s hear the same majority", b, seen[key])
				seen[key] = b
			}
		})
	}
}
