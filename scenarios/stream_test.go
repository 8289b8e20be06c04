package scenarios_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// outcomeJSON is what a run's judging produced, as the JSON of simrun run
// --json and the checker's full result (liveness windows, token order).
func outcomeJSON(t *testing.T, o *scenarios.Outcome) string {
	t.Helper()
	a, err := json.Marshal(o)
	require.NoError(t, err)
	b, err := json.Marshal(o.Result)
	require.NoError(t, err)
	return string(a) + "\n" + string(b)
}

// streamed runs s both ways: judged whole after the run, and handed to the
// checker in pieces as small as quiet points allow, every piece forgotten
// at once (the most demanding setting of Options.Stream).
func streamed(t *testing.T, s *scenarios.Scenario, seed uint64) (whole, stream *scenarios.Outcome) {
	t.Helper()
	var err error
	whole, err = scenarios.Run(s, seed, scenarios.Options{})
	require.NoError(t, err)
	restore := scenarios.SetStreamSizes(1, 0)
	defer restore()
	stream, err = scenarios.Run(s, seed, scenarios.Options{Stream: true})
	require.NoError(t, err)
	return whole, stream
}

// tally counts how the streamed runs were judged: from forgotten pieces
// alone, or again whole after a violation; the test needs both kinds.
type tally struct{ pieces, reruns, runs int }

func (c *tally) add(o *scenarios.Outcome) {
	c.runs++
	if o.Rerun {
		c.reruns++
	} else if o.Pieces > 1 {
		c.pieces++
	}
}

// TestStreamedJudgingMatchesWhole is the equivalence of issue 15: judging
// the history piece by piece as the run goes gives byte for byte the
// verdicts, violations, explanations, liveness note and longest wait of
// judging the whole history after the run, and the same trace hash, on
// every catalogue scenario.
func TestStreamedJudgingMatchesWhole(t *testing.T) {
	cat, err := scenarios.Catalogue()
	require.NoError(t, err)
	var c tally
	for _, s := range cat {
		t.Run(s.Name, func(t *testing.T) {
			whole, stream := streamed(t, s, s.Seed)
			assert.Equal(t, outcomeJSON(t, whole), outcomeJSON(t, stream))
			c.add(stream)
		})
	}
	t.Logf("%d runs: %d judged from forgotten pieces, %d again whole", c.runs, c.pieces, c.reruns)
	assert.GreaterOrEqual(t, c.pieces, 8, "too few runs were judged from pieces: the test would not see a difference")
	assert.GreaterOrEqual(t, c.reruns, 3, "too few runs violated a property after forgetting pieces")
}

// The fuzz-generated schedules of the tests: fuzzPerBase runs of simrun
// fuzz's generator (campaign seed 7, every applicable kind, up to 6
// faults) on each base.
var fuzzBases = []string{"fenced-baseline", "redlock-clock-jump", "single-gc-pause", "redlock-pause-in-flight-no-check", "zk-session-expiry-pause"}

const fuzzPerBase = 40

// TestStreamedJudgingMatchesWholeFuzzed is the same equivalence on
// fuzz-generated fault schedules (the schedules of simrun fuzz's runs).
func TestStreamedJudgingMatchesWholeFuzzed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 200 fuzzed schedules twice")
	}
	var c tally
	for i, x := range fuzzed(t) {
		t.Run(fmt.Sprintf("%s/%d", x.s.Name, i%fuzzPerBase), func(t *testing.T) {
			whole, stream := streamed(t, x.s, x.seed)
			assert.Equal(t, outcomeJSON(t, whole), outcomeJSON(t, stream),
				"fuzz base %s, campaign seed 7, run %d", x.s.Name, i%fuzzPerBase)
			c.add(stream)
		})
	}
	t.Logf("%d runs: %d judged from forgotten pieces, %d again whole", c.runs, c.pieces, c.reruns)
	assert.Equal(t, len(fuzzBases)*fuzzPerBase, c.runs)
	assert.Greater(t, c.pieces, 20)
	t.Logf("(violations come early in these short runs, mostly before a piece was forgotten: the catalogue test covers the reruns)")
}

// collector is a sim.HistorySink that keeps every piece.
type collector struct{ pieces []*sim.History }

func (c *collector) Piece(p *sim.History) { c.pieces = append(c.pieces, p) }
func (c *collector) Held() int            { return 0 }

// TestHistoryPieces: the pieces the kernel hands over, joined, are the
// history it records without a sink, record for record; every piece but
// the last ends at a quiet point (nothing open, every section decided or
// never written), and each piece's records are numbered on from the last.
func TestHistoryPieces(t *testing.T) {
	cat, err := scenarios.Catalogue()
	require.NoError(t, err)
	split := 0
	for _, s := range cat {
		t.Run(s.Name, func(t *testing.T) {
			if checkPieces(t, s, s.Seed) > 1 {
				split++
			}
		})
	}
	assert.Greater(t, split, 20, "too few scenarios came to a quiet point")
	for _, s := range fuzzed(t) {
		t.Run(s.s.Name, func(t *testing.T) { checkPieces(t, s.s, s.seed) })
	}
}

type seeded struct {
	s    *scenarios.Scenario
	seed uint64
}

// fuzzed returns the fuzz-generated schedules of the equivalence test.
func fuzzed(t *testing.T) []seeded {
	var out []seeded
	for _, name := range fuzzBases {
		base, err := scenarios.Builtin(name)
		require.NoError(t, err)
		w := fuzz.WorldOf(base)
		for run := 0; run < fuzzPerBase; run++ {
			seed := fuzz.RunSeed(7, run)
			_, specs := fuzz.Schedule(w, seed, faults.Applicable(w), 6)
			s, err := base.WithFaults(specs)
			require.NoError(t, err)
			out = append(out, seeded{s, seed})
		}
	}
	return out
}

// checkPieces runs s with and without a history sink and compares; it
// returns the number of pieces.
func checkPieces(t *testing.T, s *scenarios.Scenario, seed uint64) int {
	w, err := scenarios.Build(s, seed, false)
	require.NoError(t, err)
	require.NoError(t, w.Kernel.Run(sim.At(s.Duration)))
	whole := w.Kernel.Finish()

	w2, err := scenarios.Build(s, seed, false)
	require.NoError(t, err)
	var c collector
	w2.Kernel.SetHistorySink(&c, 1)
	require.NoError(t, w2.Kernel.Run(sim.At(s.Duration)))
	w2.Kernel.Finish()
	require.NotEmpty(t, c.pieces)

	last := c.pieces[len(c.pieces)-1]
	joined := &sim.History{Faults: last.Faults, KeyActs: last.KeyActs, Roles: last.Roles, Clocks: last.Clocks, End: last.End}
	for i, p := range c.pieces {
		assert.Equal(t, whole.Clocks, p.Clocks, "piece %d: every piece carries the initial clocks", i)
		// A piece begins at the cut the one before it ended at, with the
		// waits that ran across it (issue 28: a cut under contention).
		if i == 0 {
			assert.Zero(t, p.Since, "the first piece begins at 0")
			assert.Empty(t, p.WaitsIn)
		} else {
			assert.Equal(t, c.pieces[i-1].End, p.Since, "piece %d begins where %d ended", i, i-1)
			assert.Equal(t, c.pieces[i-1].WaitsOut, p.WaitsIn, "piece %d: the waits across its start", i)
		}
		for _, w := range p.WaitsOut {
			assert.LessOrEqual(t, w.Start, p.End, "piece %d: a wait across its end starts after it", i)
		}
		if i < len(c.pieces)-1 {
			for _, x := range p.Wants {
				assert.False(t, x.Open, "piece %d holds an open want", i)
			}
			// An attempt cut short by a crash stays Open (it never
			// finished) but changes no more: the join below sees it.
			for _, x := range p.Beliefs {
				assert.False(t, x.Open, "piece %d holds an open belief", i)
			}
			for _, x := range p.Sections {
				assert.True(t, x.Read || x.ReadRejected, "piece %d: section %d not served", i, x.ID)
				assert.True(t, !x.Written || x.Outcome != sim.WriteNone, "piece %d: section %d in flight", i, x.ID)
			}
			assert.LessOrEqual(t, p.End, c.pieces[i+1].End)
			assert.Empty(t, p.Counter, "piece %d: stock counter records are kept whole for the last piece", i)
		}
		for k, b := range p.Beliefs {
			assert.Equal(t, len(joined.Beliefs)+k, b.ID)
		}
		joined.Wants = append(joined.Wants, p.Wants...)
		joined.Attempts = append(joined.Attempts, p.Attempts...)
		joined.Beliefs = append(joined.Beliefs, p.Beliefs...)
		joined.Sections = append(joined.Sections, p.Sections...)
		// A key loss goes with the piece in progress when it happens.
		for _, l := range p.KeyLosses {
			assert.LessOrEqual(t, l.At, p.End, "piece %d: a key loss after its end", i)
			if i > 0 {
				assert.GreaterOrEqual(t, l.At, c.pieces[i-1].End, "piece %d: a key loss before the piece began", i)
			}
		}
		joined.KeyLosses = append(joined.KeyLosses, p.KeyLosses...)
	}
	joined.Counter = last.Counter
	norm := func(h *sim.History) {
		if len(h.Faults) == 0 {
			h.Faults = nil
		}
		if len(h.KeyLosses) == 0 {
			h.KeyLosses = nil
		}
		if len(h.Roles) == 0 {
			h.Roles = nil // role changes are kept whole, as faults are
		}
		if len(h.KeyActs) == 0 {
			h.KeyActs = nil // commands on another's key are kept whole, as faults are
		}
	}
	norm(whole)
	norm(joined)
	// The wants open at a cut go into the next piece (issue 28), after
	// wants that began later and closed before it: the same wants, in
	// another order. The whole history's are in start order.
	wantOrder := func(ws []sim.Want) {
		sort.SliceStable(ws, func(i, j int) bool {
			a, b := ws[i], ws[j]
			if a.Start != b.Start {
				return a.Start < b.Start
			}
			if a.Client != b.Client {
				return a.Client < b.Client
			}
			return a.End < b.End
		})
	}
	wantOrder(whole.Wants)
	wantOrder(joined.Wants)
	// Compared field by field: testify's diff of two long histories takes
	// minutes.
	for _, f := range []struct {
		name       string
		want, have any
	}{
		{"wants", whole.Wants, joined.Wants}, {"attempts", whole.Attempts, joined.Attempts},
		{"beliefs", whole.Beliefs, joined.Beliefs}, {"sections", whole.Sections, joined.Sections},
	} {
		if !assert.True(t, reflect.DeepEqual(f.want, f.have), "the joined pieces' %s differ from the whole history's", f.name) {
			return len(c.pieces)
		}
	}
	assert.Equal(t, *whole, *joined)
	assert.Equal(t, w.Kernel.TraceHash(), w2.Kernel.TraceHash())
	return len(c.pieces)
}

// midContentionCuts counts the cuts of s's history (pieces as small as the
// kernel allows) at which a belief was open: it began at or before the cut
// and ended after it, and those at which a client waited (issue 28).
func midContentionCuts(t *testing.T, s *scenarios.Scenario, seed uint64) (held, waited int) {
	t.Helper()
	w, err := scenarios.Build(s, seed, false)
	require.NoError(t, err)
	var c collector
	w.Kernel.SetHistorySink(&c, 1)
	require.NoError(t, w.Kernel.Run(sim.At(s.Duration)))
	w.Kernel.Finish()
	for i, p := range c.pieces[:len(c.pieces)-1] {
		for _, b := range c.pieces[i+1].Beliefs {
			if b.Start <= p.End && (b.Open || b.End > p.End) {
				held++
				break
			}
		}
		if len(p.WaitsOut) > 0 {
			waited++
		}
	}
	return held, waited
}

// contended are worlds in which some client always holds or waits for the
// lock (issue 28): two clients taking turns (hold 1s, think 1s), with a
// fenced resource and without, and three that always contend.
var contended = []string{`
name: turns
title: two clients take turns
seed: 3
duration: 3m
network: {latency: 50us..150us}
redis: [{name: A}]
clients:
  - {name: c1, lock: {algorithm: redis-single, node: A, ttl: 5s}, workload: {start: 0s, cycles: 0, hold: 1s, think: 1s}}
  - {name: c2, lock: {algorithm: redis-single, node: A, ttl: 5s}, workload: {start: 0s, cycles: 0, hold: 1s, think: 1s}}
`, `
name: turns-fenced
title: two clients take turns on a fenced resource
seed: 5
duration: 3m
network: {latency: 1ms..3ms}
redis: [{name: A}]
clients:
  - {name: c1, lock: {algorithm: redis-single, node: A, ttl: 3s, fencing_token: incr}, workload: {start: 0s, cycles: 0, hold: 1s, think: 1s}}
  - {name: c2, lock: {algorithm: redis-single, node: A, ttl: 3s, fencing_token: incr}, workload: {start: 0s, cycles: 0, hold: 1s, think: 1s}}
resource: {fencing: monotonic}
`, `
name: turns-unfenced
title: two clients take turns on an unfenced resource
seed: 9
duration: 3m
network: {latency: 1ms..3ms}
redis: [{name: A}]
clients:
  - {name: c1, lock: {algorithm: redis-single, node: A, ttl: 3s}, workload: {start: 0s, cycles: 0, hold: 1s, think: 1s}}
  - {name: c2, lock: {algorithm: redis-single, node: A, ttl: 3s}, workload: {start: 0s, cycles: 0, hold: 1s, think: 1s}}
resource: {fencing: none}
`, `
name: three-contend
title: three clients always contend
seed: 1
duration: 20s
network: {latency: 50us..150us}
redis: [{name: A}]
clients:
  - {name: c1, lock: {algorithm: redis-single, node: A, ttl: 2s}, workload: {start: 0s, cycles: 0, hold: 0s, think: 0s}}
  - {name: c2, lock: {algorithm: redis-single, node: A, ttl: 2s}, workload: {start: 0s, cycles: 0, hold: 0s, think: 0s}}
  - {name: c3, lock: {algorithm: redis-single, node: A, ttl: 2s}, workload: {start: 0s, cycles: 0, hold: 0s, think: 0s}}
`, `
name: four-contend
title: four clients always contend for a fenced resource, with a liveness bound
seed: 4
duration: 40s
network: {latency: 1ms..3ms}
redis: [{name: A}]
clients:
  - {name: c1, lock: {algorithm: redis-single, node: A, ttl: 1s, fencing_token: incr}, workload: {start: 0s, cycles: 0, hold: 150ms, think: 0s}}
  - {name: c2, lock: {algorithm: redis-single, node: A, ttl: 1s, fencing_token: incr}, workload: {start: 0s, cycles: 0, hold: 150ms, think: 0s}}
  - {name: c3, lock: {algorithm: redis-single, node: A, ttl: 1s, fencing_token: incr}, workload: {start: 0s, cycles: 0, hold: 150ms, think: 0s}}
  - {name: c4, lock: {algorithm: redis-single, node: A, ttl: 1s, fencing_token: incr}, workload: {start: 0s, cycles: 0, hold: 150ms, think: 0s}}
resource: {fencing: monotonic}
expect: {liveness: holds, max_wait: 3s}
`, `
name: three-redlock
title: three clients always contend for a Redlock lock on three masters
seed: 6
duration: 30s
network: {latency: 1ms..3ms}
redis: [{name: A}, {name: B}, {name: C}]
clients:
  - {name: c1, lock: {algorithm: redlock, nodes: [A, B, C], ttl: 2s}, workload: {start: 0s, cycles: 0, hold: 100ms, think: 0s}}
  - {name: c2, lock: {algorithm: redlock, nodes: [A, B, C], ttl: 2s}, workload: {start: 0s, cycles: 0, hold: 100ms, think: 0s}}
  - {name: c3, lock: {algorithm: redlock, nodes: [A, B, C], ttl: 2s}, workload: {start: 0s, cycles: 0, hold: 100ms, think: 0s}}
expect: {liveness: holds, max_wait: 5s}
`}

// TestStreamedJudgingMatchesWholeContended is the equivalence on contended
// worlds, each without faults and with 6 fuzz-generated fault schedules:
// the two-client worlds must actually be cut while a client holds the
// lock (else the test would not see the carried belief).
func TestStreamedJudgingMatchesWholeContended(t *testing.T) {
	var c tally
	for _, text := range contended {
		base, err := scenarios.Parse("contended.yaml", []byte(text))
		require.NoError(t, err)
		runs := []seeded{{base, base.Seed}}
		w := fuzz.WorldOf(base)
		for run := 0; run < 6; run++ {
			seed := fuzz.RunSeed(11, run)
			_, specs := fuzz.Schedule(w, seed, faults.Applicable(w), 4)
			s, err := base.WithFaults(specs)
			require.NoError(t, err)
			runs = append(runs, seeded{s, seed})
		}
		for i, x := range runs {
			t.Run(fmt.Sprintf("%s/%d", base.Name, i), func(t *testing.T) {
				if i == 0 {
					held, waited := midContentionCuts(t, x.s, x.seed)
					t.Logf("cuts while held %d, while waiting %d", held, waited)
					if base.Name == "three-contend" || base.Name == "four-contend" || base.Name == "three-redlock" {
						assert.Greater(t, waited, 20, "no cut while a client waited")
					} else {
						assert.Greater(t, held, 20, "no cut while a client held the lock")
					}
				}
				checkPieces(t, x.s, x.seed)
				whole, stream := streamed(t, x.s, x.seed)
				assert.Equal(t, outcomeJSON(t, whole), outcomeJSON(t, stream))
				c.add(stream)
			})
		}
	}
	t.Logf("%d runs: %d judged from forgotten pieces, %d again whole", c.runs, c.pieces, c.reruns)
	assert.GreaterOrEqual(t, c.pieces, 15)
}
