package sim

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAttrsJSON checks that typed fields survive a JSON Lines round trip,
// in order and with their types, and that a bad field is an error.
func TestAttrsJSON(t *testing.T) {
	ev := Event{Seq: 1, At: 5, Kind: "key-set", Proc: "A", Text: `"lock" "c1:1" deadline=7`,
		Fields: Attrs{Str("key", "lock"), Str("value", "c1:1"), Int64("deadline", 7), Dur("ttl", -time.Second), Groups("groups", [][]string{{"a", "b"}, {"c"}})}}
	var buf bytes.Buffer
	require.NoError(t, WriteJSONL(&buf, []Event{ev, {Seq: 2, Kind: "heal"}}))
	assert.Equal(t, `{"seq":1,"t":5,"kind":"key-set","proc":"A","text":"\"lock\" \"c1:1\" deadline=7","fields":{"key":"lock","value":"c1:1","deadline":7,"ttl":-1000000000,"groups":[["a","b"],["c"]]}}`+"\n"+
		`{"seq":2,"t":0,"kind":"heal"}`+"\n", buf.String())
	got, err := ReadJSONL(&buf)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.True(t, got[0].Equal(&ev), "%+v", got[0])
	key, ok := got[0].Fields.String("key")
	assert.True(t, ok)
	assert.Equal(t, "lock", key)
	d, ok := got[0].Fields.Duration("ttl")
	assert.True(t, ok)
	assert.Equal(t, -time.Second, d)
	_, ok = got[0].Fields.Int("key")
	assert.False(t, ok, "a string is not an integer")
	_, ok = got[1].Fields.String("key")
	assert.False(t, ok)

	for _, bad := range []string{`{"seq":1,"fields":{"x":1.5}}`, `{"seq":1,"fields":[1]}`, `{"seq":1,"fields":{"g":[1]}}`} {
		_, err := ReadJSONL(bytes.NewBufferString(bad))
		assert.Error(t, err, bad)
	}
}

// TestFirstDivergenceSeesFields checks that two events differing only in a
// field are told apart.
func TestFirstDivergenceSeesFields(t *testing.T) {
	a := []Event{{Seq: 1, Kind: "k", Fields: Attrs{Int64("n", 1)}}}
	b := []Event{{Seq: 1, Kind: "k", Fields: Attrs{Int64("n", 2)}}}
	assert.Equal(t, 0, FirstDivergence(a, b))
	assert.Equal(t, -1, FirstDivergence(a, a))
}

// TestKernelEventFields checks the typed fields of the kernel's own
// events: what reports read instead of the text.
func TestKernelEventFields(t *testing.T) {
	w := newWorld(Config{Seed: 1, KeepTrace: true})
	a := w.add("a", hooks{})
	b := w.add("b", hooks{})
	w.at(ms, func() { w.k.JumpWall(a, -3*time.Second) })
	w.at(2*ms, func() { w.k.SetDrift(a, 5_000_000) })
	w.at(3*ms, func() { w.k.Pause(b, 4*ms) })
	w.at(4*ms, func() { w.k.Pause(b, ms) })
	w.at(10*ms, func() { w.k.Crash(b, CrashPower) })
	w.at(11*ms, func() { w.k.Partition([][]ProcID{{a}, {b}}) })
	w.at(12*ms, func() { w.k.DropNext(a, b, 2) })
	w.at(13*ms, func() { w.k.Delay(b, a, 5*ms, 6*ms) })
	w.at(14*ms, func() { w.k.Heal() })
	w.run(20 * ms)
	var got []string
	for _, e := range w.k.Trace() {
		if len(e.Fields) > 0 {
			js, err := e.Fields.MarshalJSON()
			require.NoError(t, err)
			got = append(got, string(e.Kind)+" "+e.Proc+" "+string(js))
		}
	}
	assert.Equal(t, []string{
		`clock-jump a {"step":-3000000000}`,
		`clock-drift a {"ppb":5000000}`,
		`pause b {"for":4000000}`,
		`pause b {"for":1000000,"ignored":"already paused","until":7000000}`,
		`crash b {"mode":"power"}`,
		`partition  {"partition":1,"groups":[["a"],["b"]]}`,
		`link-fault a {"op":"drop","to":"b","count":2}`,
		`link-fault b {"op":"delay","to":"a","by":5000000,"for":6000000}`,
		`heal  {"all":1}`,
	}, got)
}

// TestLogAttrsAllocatesNothingUnkept checks that typed fields cost no
// allocation when nothing keeps the trace (the hot path of fuzzing).
func TestLogAttrsAllocatesNothingUnkept(t *testing.T) {
	w := newWorld(Config{Seed: 1})
	var env *Env
	w.add("a", hooks{init: func(e *Env) { env = e }})
	w.run(ms)
	require.NotNil(t, env)
	key, val := "lock", "c1:1"
	allocs := testing.AllocsPerRun(200, func() {
		env.LogAttrs("key-set", "x", Str("key", key), Str("value", val), Int64("deadline", 7))
	})
	assert.Zero(t, allocs)
	w2 := newWorld(Config{Seed: 1, KeepTrace: true})
	w2.add("a", hooks{init: func(e *Env) { env = e }})
	w2.run(ms)
	env.LogAttrs("key-set", "x", Str("key", key))
	tr := w2.k.Trace()
	k, _ := tr[len(tr)-1].Fields.String("key")
	assert.Equal(t, "lock", k, "kept when the trace is")
}
