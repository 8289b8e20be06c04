package clients

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// counterWorld is Redis A with the stock loaded by "stock" and the given
// counter clients.
func counterWorld(t *testing.T, stock int64, cfgs ...CounterConfig) *world {
	w := newWorld(t)
	w.redis("A")
	w.Add("stock", NewCounterLoader(CounterLoaderConfig{Name: "stock", Node: "A", Key: "stock", Stock: stock}), sim.ClockSpec{})
	for _, c := range cfgs {
		c = c.WithDefaults()
		if c.Start == 0 {
			c.Start = DefaultCounterStart
		}
		require.NoError(t, c.Validate())
		w.Add(c.Name, func() sim.Process { return NewCounterClient(c) }, sim.ClockSpec{})
	}
	return w
}

func counterOps(h *sim.History, client string) []sim.CounterOp {
	var out []sim.CounterOp
	for _, op := range h.Counter {
		if op.Client == client {
			out = append(out, op)
		}
	}
	return out
}

func TestCounterMethods(t *testing.T) {
	tests := []struct {
		method string
		// observed are the values the single client sees on a stock of 2,
		// three purchases and the final read.
		observed []int64
		sold     []bool
	}{
		{CounterGetSet, []int64{2, 1, 0, 0}, []bool{true, true, false, false}},
		{CounterDecr, []int64{1, 0, -1, -1}, []bool{true, true, false, false}},
		{CounterWatch, []int64{2, 1, 0, 0}, []bool{true, true, false, false}},
		{CounterScript, []int64{1, 0, -1, 0}, []bool{true, true, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			w := counterWorld(t, 2, CounterConfig{Name: "b1", Node: "A", Key: "stock", Method: tt.method, Purchases: 3})
			h := w.run(2 * time.Second)
			require.Len(t, h.Counter, 5)
			load := h.Counter[0]
			assert.Equal(t, sim.CounterLoad, load.Kind)
			assert.True(t, load.Known)
			assert.Equal(t, int64(2), load.Observed)
			ops := counterOps(h, "b1")
			require.Len(t, ops, 4)
			for i, op := range ops {
				assert.Equal(t, tt.observed[i], op.Observed, "op %d", i)
				assert.Equal(t, tt.sold[i], op.Sold, "op %d", i)
				assert.False(t, op.Open)
				assert.LessOrEqual(t, op.Call, op.Return)
			}
			assert.Equal(t, sim.CounterRead, ops[3].Kind)
		})
	}
}

// A purchase whose write gets no reply (the node is cut off) is recorded
// with an unknown outcome after the read timeout, and the next purchase
// dials anew.
func TestCounterUnknownOutcome(t *testing.T) {
	w := counterWorld(t, 5, CounterConfig{Name: "b1", Node: "A", Key: "stock", Method: CounterDecr, Purchases: 2, Think: 100 * time.Millisecond, Timeout: time.Second})
	w.On(sim.KindSend, "b1", func() {
		w.K.Partition([][]sim.ProcID{{w.ID("b1")}, {w.ID("A")}})
	})
	w.At(1500*time.Millisecond, func() { w.K.Heal() })
	h := w.run(5 * time.Second)
	ops := counterOps(h, "b1")
	require.Len(t, ops, 3)
	first := ops[0]
	assert.True(t, first.Wrote)
	assert.False(t, first.Known, "no reply: the DECR may or may not have taken effect")
	assert.Equal(t, time.Second, first.Return.Sub(first.Call))
	assert.Contains(t, first.Why, "DECR failed")
	assert.True(t, ops[1].Known)
	assert.Contains(t, []int64{3, 4}, ops[1].Observed)
}

// Two watch clients conflict; the loser's EXEC answers null and it retries.
func TestCounterWatchConflicts(t *testing.T) {
	var cfgs []CounterConfig
	for _, n := range []string{"b1", "b2", "b3"} {
		cfgs = append(cfgs, CounterConfig{Name: n, Node: "A", Key: "stock", Method: CounterWatch, Purchases: 3})
	}
	w := counterWorld(t, 20, cfgs...)
	h := w.run(3 * time.Second)
	conflicts, sold := 0, 0
	for _, op := range h.Counter {
		conflicts += op.Conflicts
		if op.Sold {
			sold++
		}
		if op.Conflicts > 0 {
			assert.Equal(t, op.Conflicts+1, op.Attempts)
		}
	}
	assert.Equal(t, 9, sold)
	assert.Positive(t, conflicts, "clients that start together conflict")
	// Every sale decremented the value it read: 20 down to 11.
	var last sim.CounterOp
	for _, op := range h.Counter {
		if op.Kind == sim.CounterRead && op.Return >= last.Return {
			last = op
		}
	}
	assert.Equal(t, int64(11), last.Observed)

	// With one attempt, a conflict gives up.
	for i := range cfgs {
		cfgs[i].Retries = 1
	}
	h = counterWorld(t, 20, cfgs...).run(3 * time.Second)
	gaveUp := 0
	for _, op := range h.Counter {
		if op.Kind == sim.CounterPurchase && !op.Sold {
			assert.Contains(t, op.Why, "gave up after 1 attempts")
			gaveUp++
		}
	}
	assert.Positive(t, gaveUp)
}

func TestCounterConfigValidate(t *testing.T) {
	ok := CounterConfig{Name: "b1", Node: "A", Key: "stock", Method: CounterDecr}.WithDefaults()
	require.NoError(t, ok.Validate())
	tests := []struct {
		name string
		f    func(*CounterConfig)
		want string
	}{
		{"method", func(c *CounterConfig) { c.Method = "cas" }, `method: unknown counter method "cas" (known: get-set, decr, watch, script)`},
		{"purchases", func(c *CounterConfig) { c.Purchases = 0 }, "purchases: must be at least 1"},
		{"timeout", func(c *CounterConfig) { c.Timeout = -1 }, "timeout: must be > 0"},
		{"retries", func(c *CounterConfig) { c.Retries = 0 }, "retries: must be at least 1"},
		{"node", func(c *CounterConfig) { c.Node = "" }, "node: must name the Redis server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.f(&c)
			err := c.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
