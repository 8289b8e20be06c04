package checker

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// load is the load of stock on key "stock" at 0, acknowledged at 1ms.
func load(stock int64) sim.CounterOp {
	return sim.CounterOp{Client: "stock", Node: "A", Key: "stock", Kind: sim.CounterLoad, Call: 0, Return: ms(1),
		Observed: stock, HasObserved: true, Wrote: true, Known: true, Attempts: 1}
}

// buy is a known get-set (or watch) purchase that read v in [call, ret]
// and sold iff v > 0.
func buy(client, method string, call, ret sim.Time, v int64) sim.CounterOp {
	return sim.CounterOp{Client: client, Node: "A", Key: "stock", Kind: sim.CounterPurchase, Method: method, Call: call, Return: ret,
		Observed: v, HasObserved: true, Wrote: v > 0, Known: v > 0, Sold: v > 0, Attempts: 1}
}

// decr is a known DECR purchase that answered r.
func decr(client string, call, ret sim.Time, r int64) sim.CounterOp {
	return sim.CounterOp{Client: client, Node: "A", Key: "stock", Kind: sim.CounterPurchase, Method: "decr", Call: call, Return: ret,
		Observed: r, HasObserved: true, Wrote: true, Known: true, Sold: r >= 0, Attempts: 1}
}

// script is a known stock-script purchase that answered r (-1: sold out).
func script(client string, call, ret sim.Time, r int64) sim.CounterOp {
	op := decr(client, call, ret, r)
	op.Method = "script"
	return op
}

// read is a GET of the stock that saw v.
func read(client string, call, ret sim.Time, v int64) sim.CounterOp {
	return sim.CounterOp{Client: client, Node: "A", Key: "stock", Kind: sim.CounterRead, Call: call, Return: ret, Observed: v, HasObserved: true, Attempts: 1}
}

// unknown makes op's write outcome unknown (no reply came).
func unknown(op sim.CounterOp) sim.CounterOp {
	op.Known, op.Sold, op.Wrote = false, false, true
	if op.Method == "decr" || op.Method == "script" {
		op.HasObserved, op.Observed = false, 0
	}
	return op
}

// on returns op as answered by node.
func on(node string, op sim.CounterOp) sim.CounterOp {
	op.Node = node
	return op
}

func counterHistory(ops ...sim.CounterOp) *sim.History {
	h := &sim.History{End: s(60)}
	for i, op := range ops {
		op.ID = i
		h.Counter = append(h.Counter, op)
	}
	return h
}

func TestCheckCounters(t *testing.T) {
	tests := []struct {
		name string
		ops  []sim.CounterOp
		want Verdict
		// explain is a fragment of the first violation's explanation.
		explain string
	}{
		{"sequential get-set sales", []sim.CounterOp{load(3), buy("c1", "get-set", ms(10), ms(12), 3), buy("c2", "get-set", ms(13), ms(15), 2),
			buy("c1", "get-set", ms(16), ms(18), 1), buy("c2", "get-set", ms(20), ms(21), 0), read("c1", ms(30), ms(31), 0)}, Holds, ""},
		{"overlapping sales that read in turn", []sim.CounterOp{load(5), buy("c1", "watch", ms(10), ms(20), 5), buy("c2", "watch", ms(11), ms(21), 4)}, Holds, ""},
		{"lost update: both read 7", []sim.CounterOp{load(7), buy("c1", "get-set", ms(1200), ms(1250), 7), buy("c2", "get-set", ms(1300), ms(1350), 7)},
			Violated, "c1 and c2 both read 7 of \"stock\" (c1 at 1.200s and c2 at 1.300s) and both wrote 6: one sale was lost (lost update)"},
		{"lost update, overlapping", []sim.CounterOp{load(7), buy("c1", "get-set", ms(10), ms(20), 7), buy("c2", "get-set", ms(11), ms(21), 7)}, Violated, "lost update"},
		{"decr to zero and below", []sim.CounterOp{load(2), decr("c1", ms(10), ms(12), 1), decr("c2", ms(11), ms(13), 0), decr("c1", ms(20), ms(22), -1), read("c2", ms(30), ms(31), -1)}, Holds, ""},
		{"decr replies out of order within overlap", []sim.CounterOp{load(2), decr("c1", ms(10), ms(20), 0), decr("c2", ms(11), ms(21), 1)}, Holds, ""},
		{"decr answered the same twice", []sim.CounterOp{load(4), decr("c1", ms(10), ms(12), 3), decr("c2", ms(20), ms(22), 3)}, Violated, "2 acknowledged DECRs of \"stock\" both answered 3"},
		{"a read of a value that never existed", []sim.CounterOp{load(4), decr("c1", ms(10), ms(12), 3), read("c2", ms(20), ms(22), 7)}, Violated, "c2's read 7"},
		{"a read of the stock before the sale", []sim.CounterOp{load(4), decr("c1", ms(10), ms(12), 3), read("c2", ms(20), ms(22), 4)}, Violated, "between 3 and 3"},
		{"script sales, then sold out", []sim.CounterOp{load(2), script("c1", ms(10), ms(12), 1), script("c2", ms(11), ms(13), 0), script("c1", ms(20), ms(22), -1), read("c2", ms(30), ms(31), 0)}, Holds, ""},
		{"script sold out while stock remains", []sim.CounterOp{load(2), script("c1", ms(10), ms(12), 1), script("c2", ms(20), ms(22), -1)}, Violated, ""},
		{"script answered the same twice", []sim.CounterOp{load(4), script("c1", ms(10), ms(12), 3), script("c2", ms(20), ms(22), 3)}, Violated, "2 acknowledged stock scripts of \"stock\" both answered 3"},
		{"unknown script, either way", []sim.CounterOp{load(3), unknown(script("c1", ms(10), ms(12), 0)), read("c2", ms(20), ms(22), 2), script("c2", ms(30), ms(32), 1)}, Holds, ""},
		{"unknown script on an empty stock changes nothing", []sim.CounterOp{load(0), unknown(script("c1", ms(10), ms(12), 0)), read("c2", ms(20), ms(22), -1)}, Violated, ""},
		{"oversold", []sim.CounterOp{load(1), buy("c1", "get-set", ms(10), ms(12), 1), buy("c2", "get-set", ms(11), ms(13), 1)}, Violated, "2 sales acknowledged of 1 items of \"stock\": oversold"},
		{"unknown decr applied", []sim.CounterOp{load(5), unknown(decr("c1", ms(10), ms(12), 0)), decr("c2", ms(20), ms(22), 3)}, Holds, ""},
		{"unknown decr not applied", []sim.CounterOp{load(5), unknown(decr("c1", ms(10), ms(12), 0)), decr("c2", ms(20), ms(22), 4)}, Holds, ""},
		{"unknown decr cannot explain two", []sim.CounterOp{load(5), unknown(decr("c1", ms(10), ms(12), 0)), decr("c2", ms(20), ms(22), 2)}, Violated, ""},
		{"unknown get-set, then a read either way", []sim.CounterOp{load(5), unknown(buy("c1", "get-set", ms(10), ms(12), 5)), read("c2", ms(20), ms(22), 5), read("c2", ms(30), ms(32), 4)}, Holds, ""},
		{"unknown get-set that read a wrong value", []sim.CounterOp{load(5), unknown(buy("c1", "get-set", ms(10), ms(12), 9))}, Violated, ""},
		{"unknown load", []sim.CounterOp{unknown(load(5)), read("c1", ms(20), ms(22), 0)}, Holds, ""},
		{"refused write changes nothing", []sim.CounterOp{load(3), func() sim.CounterOp {
			op := buy("c1", "get-set", ms(10), ms(12), 3)
			op.Sold, op.Why = false, "SET answered -READONLY"
			return op
		}(), read("c2", ms(20), ms(22), 3)}, Holds, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := counterHistory(tt.ops...)
			require.NoError(t, ValidateHistory(h))
			v, vs := CheckCounters(h, 0)
			assert.Equal(t, tt.want, v)
			if tt.want == Violated {
				require.NotEmpty(t, vs)
				var all string
				for _, x := range vs {
					all += x.Explanation + "\n"
				}
				assert.Contains(t, all, tt.explain)
				for _, x := range vs {
					assert.Equal(t, KindResourceSafety, x.Kind)
					assert.Equal(t, "stock", x.Lock)
				}
			} else {
				assert.Empty(t, vs)
			}
			r := Check(h, Options{})
			assert.Equal(t, tt.want, r.Verdicts.Of(ResourceSafety))
			assert.Equal(t, NotUsed, r.Verdicts.Of(LockSafety), "a history with no lock client has no lock to judge")
			assert.Equal(t, NotJudged, r.Verdicts.Of(Liveness))
			assert.Equal(t, NotUsed, r.Verdicts.Of(TokenOrder))
		})
	}
}

// Flipping one observed value of a legal history is caught.
func TestCheckCountersMutations(t *testing.T) {
	base := []sim.CounterOp{load(4), buy("c1", "watch", ms(10), ms(14), 4), decr("c2", ms(20), ms(24), 2),
		buy("c1", "get-set", ms(30), ms(34), 2), decr("c2", ms(40), ms(44), 0), read("c1", ms(50), ms(52), 0)}
	v, _ := CheckCounters(counterHistory(base...), 0)
	require.Equal(t, Holds, v)
	for i := 1; i < len(base); i++ {
		for _, delta := range []int64{-1, 1} {
			ops := append([]sim.CounterOp(nil), base...)
			ops[i].Observed += delta
			if ops[i].Sold && ops[i].Method != "decr" && ops[i].Observed <= 0 {
				continue // not a sale any more: ValidateHistory's business
			}
			if ops[i].Method == "decr" {
				ops[i].Sold = ops[i].Observed >= 0
			}
			h := counterHistory(ops...)
			require.NoError(t, ValidateHistory(h))
			v, vs := CheckCounters(h, 0)
			assert.Equal(t, Violated, v, "op %d observed %+d", i, delta)
			assert.NotEmpty(t, vs)
		}
	}
}

// A failover: sales acknowledged by M that R, promoted, never had.
func TestCheckCountersFailover(t *testing.T) {
	h := counterHistory(load(3), on("M", decr("c1", ms(300), ms(302), 2)), on("M", decr("c2", ms(310), ms(312), 1)),
		on("R", decr("c3", s(12), s(12)+ms(2), 2)), on("R", decr("c3", s(13), s(13)+ms(2), 1)), on("R", decr("c4", s(14), s(14)+ms(2), 0)))
	h.Faults = []sim.FaultRecord{{At: s(1), Kind: "crash", Targets: []string{"M"}, Text: "M crashed (power)", Liveness: sim.LiveCrash}}
	v, vs := CheckCounters(h, 0)
	require.Equal(t, Violated, v)
	require.Len(t, vs, 2)
	assert.Equal(t, `2 acknowledged sales of "stock" on M (by c1 and c2, from 0.302s to 0.312s, leaving 2 and 1) were never on R: from 12.000s, R answered for the stock and sold the same items again to c3; the first repeated sale began 11s after M crashed (power) at 1.000s (lost in the failover).`, vs[0].Explanation)
	assert.Equal(t, []string{"c1", "c2", "c3"}, vs[0].Clients)
	assert.Contains(t, vs[1].Explanation, "5 sales acknowledged of 3 items of \"stock\": oversold")
}

func TestCounterKeysArePartitioned(t *testing.T) {
	other := func(op sim.CounterOp) sim.CounterOp { op.Key = "other"; return op }
	h := counterHistory(load(2), other(load(9)), buy("c1", "get-set", ms(10), ms(12), 2), other(buy("c2", "get-set", ms(11), ms(13), 9)),
		other(read("c2", ms(20), ms(21), 8)), read("c1", ms(20), ms(21), 1))
	v, vs := CheckCounters(h, 0)
	assert.Equal(t, Holds, v)
	assert.Empty(t, vs)
	h.Counter[4].Observed = 9 // the other key's read misses its sale
	v, vs = CheckCounters(h, 0)
	assert.Equal(t, Violated, v)
	require.NotEmpty(t, vs)
	assert.Equal(t, "other", vs[0].Lock)
}

func TestValidateHistoryCounters(t *testing.T) {
	tests := []struct {
		name string
		op   func() sim.CounterOp
		want string
	}{
		{"unknown method", func() sim.CounterOp { op := buy("c1", "get-set", ms(10), ms(12), 3); op.Method = "cas"; return op }, `unknown counter method "cas"`},
		{"sale from a read of 0", func() sim.CounterOp { op := buy("c1", "get-set", ms(10), ms(12), 3); op.Observed = 0; return op }, "a get-set sale that did not read a positive stock"},
		{"decr sale below zero", func() sim.CounterOp { op := decr("c1", ms(10), ms(12), 3); op.Observed = -1; return op }, "a decr sale without a reply of 0 or more"},
		{"sale without a reply", func() sim.CounterOp { op := decr("c1", ms(10), ms(12), 3); op.Known = false; return op }, "sold without a write whose reply came"},
		{"returns before its call", func() sim.CounterOp { return read("c1", ms(12), ms(10), 3) }, "returns at 0.010s, before its call at 0.012s"},
		{"key without a stock", func() sim.CounterOp { op := read("c1", ms(10), ms(12), 3); op.Key = "nostock"; return op }, "no stock was declared"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := counterHistory(load(3), tt.op())
			err := ValidateHistory(h)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			r := Check(h, Options{})
			assert.Equal(t, Unknown, r.Verdicts.Of(ResourceSafety))
		})
	}
}

// A retried WATCH purchase sees its value at its last attempt: the
// explanation of a value no replay explains names the faults up to the
// purchase's return, not its call (found by simrun fuzz redis-counter-watch:
// the stock vanished in a power loss while the purchase retried).
func TestCounterStaleObservationNamesLaterFaults(t *testing.T) {
	long := buy("c2", "watch", ms(155), ms(3220), 0)
	long.Sold, long.Wrote, long.Known = false, false, false
	h := counterHistory(load(10), buy("c1", "watch", ms(100), ms(110), 10), long)
	h.Faults = []sim.FaultRecord{{At: ms(208), Kind: "crash", Targets: []string{"A"}, Text: "A crashed (power)", Until: ms(2570), Liveness: sim.LiveCrash}}
	v, vs := CheckCounters(h, 0)
	require.Equal(t, Violated, v)
	require.Len(t, vs, 1)
	assert.Contains(t, vs[0].Explanation, "c2's watch purchase saw 0 of \"stock\" between 0.155s and 3.220s")
	assert.Contains(t, vs[0].Explanation, "A crashed (power)")
}

// counterBenchHistory is n DECR sales of 3 ms each, called gap ms apart, by
// four clients from a stock of n, with the first k of them unknown (no
// reply).
func counterBenchHistory(n, k int, gap int64) *sim.History {
	ops := []sim.CounterOp{load(int64(n))}
	for i := 0; i < n; i++ {
		call := ms(int64(10) + gap*int64(i))
		op := decr(fmt.Sprintf("c%d", i%4), call, call+ms(3), int64(n-1-i))
		if i < k {
			op = unknown(op)
		}
		ops = append(ops, op)
	}
	return counterHistory(ops...)
}

func BenchmarkCheckCounters(b *testing.B) {
	// A gap of 2 ms between 3 ms sales makes them overlap (porcupine); 4 ms
	// leaves them in sequence (the fast path, sequential.go).
	for _, bc := range []struct {
		n, k int
		gap  int64
	}{{1000, 0, 2}, {1000, 4, 2}, {1000, 12, 2}, {1000, 0, 4}} {
		h := counterBenchHistory(bc.n, bc.k, bc.gap)
		b.Run(fmt.Sprintf("sales=%d/unknown=%d/gap=%dms", bc.n, bc.k, bc.gap), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if v, _ := CheckCounters(h, 0); v != Holds {
					b.Fatalf("verdict %s", v)
				}
			}
		})
	}
}
