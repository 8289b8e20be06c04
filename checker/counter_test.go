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

func counterHistory(ops ...sim.CounterOp) *sim.History {
	h := &sim.History{End: s(60)}
	for i, op := range ops {
		op.ID = i
		h.Counter = append(h.Counter, op)
	}
	return h
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
