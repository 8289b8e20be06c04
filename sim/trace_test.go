package sim

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type plainMsg struct {
	Key string
	N   int
}

type stringerTag struct{}

func (stringerTag) String() string { return "stringer" }

func TestAppendValue(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"nil", nil, ""},
		{"tracer", pingMsg{n: 3}, "ping 3"},
		{"string", "hello", "hello"},
		{"int", -4, "-4"},
		{"int64", int64(5), "5"},
		{"uint64", uint64(6), "6"},
		{"stringer", stringerTag{}, "stringer"},
		{"struct", plainMsg{Key: "k", N: 2}, "sim.plainMsg{Key:k N:2}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, string(appendValue([]byte("x"), tt.v))[1:])
		})
	}
}

// traceWorld runs a small world with messages, timers, faults and model
// events, and returns its kernel.
func traceWorld(keep bool, seed uint64) *Kernel {
	w := newWorld(Config{Seed: seed, KeepTrace: keep, Network: NetConfig{Latency: Range{Lo: ms, Hi: 5 * ms}}})
	w.add("a", hooks{
		init: func(env *Env) { env.After(Wall, 10*ms, "tick"); send(env, "b", plainMsg{Key: "k", N: 1}) },
		fire: func(env *Env, _ any) {
			env.Logf("key-set", "k=%d", env.Rand().Intn(100))
			env.After(Mono, 10*ms, "tick")
			send(env, "b", pingMsg{n: 9})
		},
	})
	b := w.add("b", hooks{recv: func(env *Env, from ProcID, _ Message) { env.Send(from, "ack") }})
	w.at(35*ms, func() { w.k.JumpWall(b, time.Second) })
	w.at(45*ms, func() { w.k.Pause(b, 20*ms) })
	w.at(60*ms, func() { w.k.JumpWall(b, -2*time.Second) })
	w.at(70*ms, func() { w.k.SetDrift(b, -10_000_000) })
	w.at(50*ms, func() { w.k.Tracef(KindFault, b, "custom %d", 1) })
	w.run(100 * ms)
	return w.k
}

func TestTraceHash(t *testing.T) {
	kept, plain := traceWorld(true, 1), traceWorld(false, 1)
	assert.Equal(t, kept.TraceHash(), plain.TraceHash(), "keeping events does not change the hash")
	assert.Nil(t, plain.Trace())
	assert.NotEqual(t, kept.TraceHash(), traceWorld(false, 2).TraceHash(), "another seed, another trace")
	h := kept.TraceHash()
	assert.Len(t, HashString(h), 64)
	assert.Equal(t, h, kept.TraceHash(), "reading the hash does not change it")
}

func TestTraceEvents(t *testing.T) {
	k := traceWorld(true, 1)
	ev := k.Trace()
	require.NotEmpty(t, ev)
	for i, e := range ev {
		assert.Equal(t, uint64(i+1), e.Seq)
		if i > 0 {
			assert.GreaterOrEqual(t, e.At, ev[i-1].At)
		}
	}
	assert.Equal(t, Event{Seq: 1, At: 0, Kind: KindStart, Proc: "a"}, ev[0])
	assert.Equal(t, Event{Seq: 2, At: 0, Kind: KindSend, Proc: "a", Peer: "b", Text: "#1 sim.plainMsg{Key:k N:1}"}, ev[1])
	var deliver Event
	for _, e := range ev {
		if e.Kind == KindDeliver {
			deliver = e
			break
		}
	}
	assert.Equal(t, "#1", deliver.Text)
	assert.Equal(t, "b", deliver.Proc)
	assert.Equal(t, "a", deliver.Peer)
	assert.Contains(t, kinds(k, "key-set"), "10ms a k=29")
	assert.Equal(t, []string{"35ms b +1s", "60ms b -2s"}, kinds(k, KindClockJump))
	assert.Equal(t, []string{"70ms b -10000000 ppb"}, kinds(k, KindClockDrift))
	assert.Equal(t, []string{"45ms b for 20ms"}, kinds(k, KindPause))
	assert.Contains(t, kinds(k, KindFault), "50ms b custom 1")
}

func TestJSONLRoundTrip(t *testing.T) {
	ev := traceWorld(true, 1).Trace()
	var buf bytes.Buffer
	require.NoError(t, WriteJSONL(&buf, ev))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, len(ev))
	assert.Equal(t, `{"seq":1,"t":0,"kind":"start","proc":"a"}`, lines[0])
	back, err := ReadJSONL(&buf)
	require.NoError(t, err)
	assert.Equal(t, ev, back)

	_, err = ReadJSONL(strings.NewReader(lines[0] + "\n{\"seq\":\"x\"}\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "trace line 2")
}

func TestFirstDivergence(t *testing.T) {
	a := traceWorld(true, 1).Trace()
	b := traceWorld(true, 1).Trace()
	other := traceWorld(true, 2).Trace()
	changed := append([]Event(nil), a...)
	changed[7].Text += "!"
	tests := []struct {
		name string
		x, y []Event
		want int
	}{
		{"identical", a, b, -1},
		{"both empty", nil, nil, -1},
		{"one event differs", a, changed, 7},
		{"prefix", a, a[:10], 10},
		{"longer", a[:3], a, 3},
		{"empty and not", nil, a, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, FirstDivergence(tt.x, tt.y))
		})
	}
	d := FirstDivergence(a, other)
	require.GreaterOrEqual(t, d, 0)
	assert.NotEqual(t, a[d], other[d])
	assert.Equal(t, a[:d], other[:d])
}

// TestTraceLongText records texts around the one-byte length limit of the
// canonical encoding and checks the kept text and the hash.
func TestTraceLongText(t *testing.T) {
	lengths := []int{0, 1, 127, 128, 129, 300, 16383, 16384, 20000}
	run := func(keep bool, extra int) *Kernel {
		w := newWorld(Config{Seed: 1, KeepTrace: keep})
		w.add("a", hooks{init: func(env *Env) {
			for _, n := range lengths {
				env.Log("long", strings.Repeat("x", n+extra))
				env.Log(Kind(strings.Repeat("k", n+extra)), "y")
			}
		}})
		w.run(time.Second)
		return w.k
	}
	k := run(true, 0)
	var texts []int
	for _, e := range k.Trace() {
		if e.Kind == "long" {
			texts = append(texts, len(e.Text))
			assert.Equal(t, strings.Repeat("x", len(e.Text)), e.Text)
		}
	}
	assert.Equal(t, lengths, texts)
	assert.Equal(t, k.TraceHash(), run(false, 0).TraceHash())
	assert.NotEqual(t, k.TraceHash(), run(false, 1).TraceHash())
}

// TestTraceHashDistinguishes checks pairs of single events that differ in
// one field, or only in how their bytes would be split between fields, get
// different hashes.
func TestTraceHashDistinguishes(t *testing.T) {
	hashOf := func(f func(env *Env)) [32]byte {
		w := newWorld(Config{Seed: 1})
		w.add("a", hooks{init: f})
		w.add("b", hooks{init: func(env *Env) { env.Log("b-init", "") }})
		w.run(time.Second)
		return w.k.TraceHash()
	}
	tests := []struct {
		name string
		x, y func(env *Env)
	}{
		{"kind/text split", func(env *Env) { env.Log("ab", "c") }, func(env *Env) { env.Log("a", "bc") }},
		{"coded kind vs spelled", func(env *Env) { env.Log(KindAcquired, "L") }, func(env *Env) { env.Log("acquired ", "L") }},
		{"text", func(env *Env) { env.Log("k", "1") }, func(env *Env) { env.Log("k", "2") }},
		{"empty text vs none", func(env *Env) { env.Log("k", "") }, func(env *Env) {}},
		{"peer", func(env *Env) { send(env, "a", "m") }, func(env *Env) { send(env, "b", "m") }},
		{"message", func(env *Env) { send(env, "b", "m") }, func(env *Env) { send(env, "b", "n") }},
		{"time", func(env *Env) { env.After(Mono, ms, "t") }, func(env *Env) { env.After(Mono, 2*ms, "t") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.NotEqual(t, hashOf(tt.x), hashOf(tt.y))
			assert.Equal(t, hashOf(tt.x), hashOf(tt.x))
		})
	}
}

// TestKindCodes checks that the one-byte codes are distinct and agree with
// the hot-path constants.
func TestKindCodes(t *testing.T) {
	kinds := []Kind{KindStart, KindSend, KindDeliver, KindDrop, KindTimer, KindPause, KindResume, KindCrash, KindRestart,
		KindClockJump, KindClockDrift, KindPartition, KindHeal, KindLinkFault, KindFault, KindAcquireStart, KindAcquired,
		KindAcquireFailed, KindReleased, KindLockLost, KindResourceRead, KindResourceWrite}
	seen := map[byte]Kind{}
	for _, k := range kinds {
		c := kindCode(k)
		require.NotZero(t, c, "kind %s", k)
		_, dup := seen[c]
		require.False(t, dup, "code %d of %s already used by %s", c, k, seen[c])
		seen[c] = k
	}
	assert.Equal(t, []byte{codeStart, codeSend, codeDeliver, codeDrop, codeTimer},
		[]byte{kindCode(KindStart), kindCode(KindSend), kindCode(KindDeliver), kindCode(KindDrop), kindCode(KindTimer)})
	assert.Zero(t, kindCode("key-set"))
}
