package checker

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// kleppmann is the article's story: c1 pauses while holding the lock, its
// lease expires, c2 acquires and writes with a newer token, and c1 writes on
// resuming. Fencing rejects c1's write (and c2 waits 22s for the lock).
func kleppmann() *sim.History {
	h := history(s(60), []sim.Belief{
		withToken(bel("c1", s(0), s(1), s(31)), 33),
		withToken(bel("c2", s(2), s(24), s(27)), 34),
	}, []sim.Section{
		sect("c1", 33, s(2), s(30), 0, sim.WriteRejected),
		sect("c2", 34, s(25), s(26), 0, sim.WriteAccepted),
	})
	h.Wants = []sim.Want{want("c1", s(0), s(1), true, ""), want("c2", s(2), s(24), true, "")}
	h.Faults = []sim.FaultRecord{fault(s(3), s(29), "pause", "c1 was paused for 26s (GC)", "c1")}
	return h
}

func TestCheckAllViolated(t *testing.T) {
	h := history(s(100), []sim.Belief{
		withToken(bel("c1", s(26), s(27), s(62)), 2),
		withToken(bel("c0", s(40), s(43), s(81)), 3),
	}, counterexample())
	h.Wants = []sim.Want{want("c0", s(0), s(43), true, ""), want("c1", s(0), s(27), true, ""), openWant("c2", s(50))}
	// c0 and c1 wait 27s for a free lock; c2 waits behind the holders and
	// then 19s for a free lock, within the bound.
	r := Check(h, Options{DefaultMaxWait: 20 * time.Second})
	assert.Equal(t, Violated, r.Verdicts.Of(LockSafety))
	assert.Equal(t, Violated, r.Verdicts.Of(ResourceSafety))
	assert.Equal(t, Violated, r.Verdicts.Of(Liveness))
	assert.Empty(t, r.Fencing, "no fencing story when the resource was not kept safe")
	assert.Equal(t, 27*time.Second, r.LongestWait)
	assert.Equal(t, "c0", r.LongestWaitClient)
	var kinds []string
	for _, v := range r.Violations {
		kinds = append(kinds, v.Kind)
	}
	assert.Equal(t, []string{KindLockSafety, KindResourceSafety, KindLiveness, KindLiveness}, kinds)
}

func TestCheckNilHistory(t *testing.T) {
	// Nothing to judge: not used, never a vacuous holds (issue 25).
	r := Check(nil, Options{})
	assert.Equal(t, NotUsed, r.Verdicts.Of(LockSafety))
	assert.Equal(t, NotUsed, r.Verdicts.Of(ResourceSafety))
	assert.Equal(t, NotJudged, r.Verdicts.Of(Liveness))
	assert.Empty(t, r.Violations)
}

func TestVerdictOf(t *testing.T) {
	assert.Equal(t, Holds, verdictOf(porcupine.Ok))
	assert.Equal(t, Violated, verdictOf(porcupine.Illegal))
	assert.Equal(t, Unknown, verdictOf(porcupine.Unknown))
	assert.Equal(t, Unknown, verdictOf(porcupine.CheckResult("something new")))
}

// fakeLinearize replaces porcupine for one test, recording the timeouts and
// answering res.
func fakeLinearize(t *testing.T, res porcupine.CheckResult) *[]time.Duration {
	t.Helper()
	var timeouts []time.Duration
	saved := linearize
	linearize = func(_ porcupine.Model, _ []porcupine.Operation, timeout time.Duration, _ bool) (porcupine.CheckResult, porcupine.LinearizationInfo) {
		timeouts = append(timeouts, timeout)
		return res, porcupine.LinearizationInfo{}
	}
	t.Cleanup(func() { linearize = saved })
	return &timeouts
}

func TestCheckPassesTheTimeout(t *testing.T) {
	tests := []struct {
		name string
		opts time.Duration
		want time.Duration
	}{
		{"given", 1234 * time.Millisecond, 1234 * time.Millisecond},
		{"default", 0, DefaultTimeout},
		{"negative means default, never unlimited", -time.Second, DefaultTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timeouts := fakeLinearize(t, porcupine.Ok)
			Check(kleppmann(), Options{Timeout: tt.opts})
			assert.Equal(t, []time.Duration{tt.want, tt.want}, *timeouts, "one lock check, one resource check")

			*timeouts = nil
			CheckLock(kleppmann(), tt.opts)
			CheckResource(kleppmann(), tt.opts)
			assert.Equal(t, []time.Duration{tt.want, tt.want}, *timeouts)
		})
	}
}

func TestCheckUnknown(t *testing.T) {
	fakeLinearize(t, porcupine.Unknown)
	r := Check(kleppmann(), Options{DefaultMaxWait: 30 * time.Second})
	assert.Equal(t, Unknown, r.Verdicts.Of(LockSafety))
	assert.Equal(t, Unknown, r.Verdicts.Of(ResourceSafety))
	assert.Equal(t, Holds, r.Verdicts.Of(Liveness), "liveness does not depend on porcupine")
	assert.Empty(t, r.Violations, "an unknown verdict explains nothing")
	assert.Empty(t, r.Fencing)
}

func TestVisualization(t *testing.T) {
	t.Run("illegal histories are drawn", func(t *testing.T) {
		h := history(s(100), []sim.Belief{
			withToken(bel("c1", s(26), s(27), s(62)), 2),
			withToken(bel("c0", s(40), s(43), s(81)), 3),
		}, counterexample())
		h.Faults = []sim.FaultRecord{
			fault(s(30), s(50), "pause", "c1 was paused for 20s", "c1"),
			fault(s(35), sim.Never, "crash", "r1 crashed", "r1"),
		}
		r := Check(h, Options{Visualize: true})
		require.NoError(t, r.VisualizationErr)
		require.Equal(t, Violated, r.Verdicts.Of(LockSafety))
		require.Equal(t, Violated, r.Verdicts.Of(ResourceSafety))
		require.Len(t, r.Pages, 2)
		for i, name := range PageNames {
			assert.Equal(t, name, r.Pages[i].Name)
			assert.True(t, bytes.Contains(PageOf(r.Pages, name), []byte("const data = ")), "%s is a page of porcupine", name)
		}
	})
	t.Run("legal histories are not", func(t *testing.T) {
		r := Check(history(s(10), []sim.Belief{bel("c1", 0, s(1), s(2))}, nil), Options{Visualize: true})
		assert.Empty(t, r.Pages)
	})
	t.Run("nothing is drawn unless asked", func(t *testing.T) {
		r := Check(history(s(100), nil, counterexample()), Options{})
		assert.Equal(t, Violated, r.Verdicts.Of(ResourceSafety))
		assert.Empty(t, r.Pages)
	})
}

// TestCheckIsDeterministic runs the same history many times: porcupine checks
// partitions in parallel, which must not reach the result.
func TestCheckIsDeterministic(t *testing.T) {
	h := genHistory(300, 4, true)
	first := Check(h, Options{DefaultMaxWait: time.Minute})
	require.Equal(t, Violated, first.Verdicts.Of(LockSafety))
	for i := 0; i < 10; i++ {
		assert.Equal(t, first, Check(h, Options{DefaultMaxWait: time.Minute}))
	}
}

// TestVisualizationEscapesNames builds, by hand, a history whose client
// names contain markup (the scenario rules reject such names, other callers
// of the checker may not) and checks that porcupine's page can never parse
// them as HTML: what its script puts into innerHTML (state descriptions and
// metadata) is escaped, and the rows are labelled with the names through
// textContent.
func TestVisualizationEscapesNames(t *testing.T) {
	const evil = `<img src=x onerror=alert(1)>`
	h := history(s(100), []sim.Belief{bel(evil, 0, s(1), s(10)), bel("c2", s(2), s(5), s(12))}, nil)
	r := Check(h, Options{Visualize: true})
	require.NoError(t, r.VisualizationErr)
	require.Equal(t, Violated, r.Verdicts.Of(LockSafety))
	text := string(PageOf(r.Pages, PageLock))
	// (assert.True rather than Contains: the page is too long to print)
	assert.False(t, strings.Contains(text, evil), "the raw name never appears in the page")
	assert.True(t, strings.Contains(text, `const LOCKSIM_ROWS = ["\u003cimg src=x onerror=alert(1)\u003e","c2"]`), "rows are labelled by client name")
	assert.True(t, strings.Contains(text, "(LOCKSIM_ROWS[i] ?? i)"), "row labels look the names up")

	// The data as the browser decodes it.
	start := strings.Index(text, "const data = ")
	require.GreaterOrEqual(t, start, 0)
	rest := text[start+len("const data = "):]
	var data any
	require.NoError(t, json.NewDecoder(strings.NewReader(rest)).Decode(&data))
	var innerHTML []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "StateDescription" || k == "Metadata") {
					innerHTML = append(innerHTML, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(data)
	require.NotEmpty(t, innerHTML)
	var escaped bool
	for _, s := range innerHTML {
		assert.NotContains(t, s, "<img", "%q reaches innerHTML", s)
		escaped = escaped || strings.Contains(s, "held by &lt;img src=x onerror=alert(1)&gt;")
	}
	assert.True(t, escaped, "the holder's name is shown, escaped: %q", innerHTML)
}

func TestLabelRowsLeavesUnknownPagesAlone(t *testing.T) {
	page := []byte("<html>no porcupine script</html>")
	assert.Equal(t, page, labelRows(page, []string{"c1"}))
}

// TestCanonicalData: porcupine lists partial linearizations in map order;
// two pages that differ only in that order come out the same bytes, with
// each operation's Largest pointing at its longest linearization.
func TestCanonicalData(t *testing.T) {
	page := func(lins, largest string) []byte {
		return []byte("<script>\n      const data = {\"Partitions\":[{\"History\":[],\"PartialLinearizations\":" + lins +
			",\"Largest\":" + largest + "}],\"Annotations\":[]}\n</script>\n")
	}
	a := canonicalData(page(`[[{"Index":1,"StateDescription":"1"}],[{"Index":0,"StateDescription":"1"},{"Index":2,"StateDescription":"2"}]]`, `{"0":1,"1":0,"2":1}`))
	b := canonicalData(page(`[[{"Index":0,"StateDescription":"1"},{"Index":2,"StateDescription":"2"}],[{"Index":1,"StateDescription":"1"}]]`, `{"0":0,"1":1,"2":0}`))
	assert.Equal(t, string(a), string(b))
	assert.Contains(t, string(a), `"Largest":{"0":0,"1":1,"2":0}`)
	assert.True(t, strings.HasSuffix(string(a), "}\n</script>\n"))
	odd := []byte("<p>no data here</p>")
	assert.Equal(t, odd, canonicalData(odd), "a page of another shape is left alone")
}

// TestWindowJSON: windows are written as exact durations since the start,
// as the result's other times are, and read back; integers from older
// results are still read.
func TestWindowJSON(t *testing.T) {
	w := Window{Start: 1109368638, End: 5120785990}
	b, err := json.Marshal(w)
	require.NoError(t, err)
	assert.Equal(t, `{"start":"1.109368638s","end":"5.12078599s"}`, string(b))
	var back Window
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, w, back)
	require.NoError(t, json.Unmarshal([]byte(`{"start":1109368638,"end":5120785990}`), &back))
	assert.Equal(t, w, back)
	assert.Error(t, json.Unmarshal([]byte(`{"start":"soon","end":"5s"}`), &back))
	assert.Error(t, json.Unmarshal([]byte(`{"start":true,"end":"5s"}`), &back))
}
