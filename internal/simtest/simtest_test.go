package simtest

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

type ping struct{ ID uint64 }
type pong struct {
	ID   uint64
	Life int
}

// echo answers every ping with a pong naming how many times it started.
type echo struct{ starts *int }

func (e *echo) Init(env *sim.Env)          { *e.starts++; env.Log(sim.KindStart, "echo up") }
func (e *echo) Fire(env *sim.Env, tag any) {}
func (e *echo) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	if p, ok := msg.(ping); ok {
		env.Send(from, pong{ID: p.ID, Life: *e.starts})
	}
}

func TestProbeRepliesAndResendAfterRestart(t *testing.T) {
	tests := []struct {
		name     string
		crash    bool
		wantLife int
		wantAt   sim.Time
	}{
		{name: "plain round trip", wantLife: 1, wantAt: sim.At(2 * time.Millisecond)},
		// The server crashes with the ping in flight: the ping is lost with
		// the process, the probe sees the connection end and sends it again
		// to the restarted server.
		{name: "resent after a crash", crash: true, wantLife: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWorld(t, time.Millisecond)
			starts := 0
			s := w.Add("S", func() sim.Process { return &echo{starts: &starts} }, sim.ClockSpec{})
			p := NewProbe(func(r pong) uint64 { return r.ID })
			AddProbe(w, "c", p)
			w.Start()
			id := p.Send(w.ID("S"), func(id uint64) sim.Message { return ping{ID: id} })
			if tt.crash {
				w.K.Crash(s, sim.CrashProcess)
				w.Advance(10 * time.Millisecond)
				assert.False(t, p.Answered(id), "no reply from a crashed server")
				w.K.Restart(s)
			}
			a, ok := Wait(w, p, id, time.Second)
			require.True(t, ok)
			assert.Equal(t, tt.wantLife, a.Reply.Life)
			if tt.wantAt != 0 {
				assert.Equal(t, tt.wantAt, a.At)
			}
			if tt.crash {
				assert.Positive(t, p.Ends[s], "the probe saw the connection end")
			}
			assert.Empty(t, p.Pending(s))
		})
	}
}

func TestWorldNamesEventsAndSince(t *testing.T) {
	w := NewWorld(t, time.Millisecond)
	starts := 0
	mark := w.Mark()
	w.Add("S", func() sim.Process { return &echo{starts: &starts} }, sim.ClockSpec{})
	w.Start()
	assert.Equal(t, []string{"S"}, w.Names())
	assert.True(t, w.Has("S"))
	assert.False(t, w.Has("T"))
	assert.True(t, w.TraceHas(sim.KindStart, "S", "echo up"))
	assert.Contains(t, w.Since(mark, sim.KindStart), "0.000s S start echo up\n")
	assert.Empty(t, w.Since(w.Mark()))
	ok := w.RunUntil(5*time.Millisecond, func() bool { return false })
	assert.False(t, ok)
	assert.Equal(t, sim.At(5*time.Millisecond), w.K.Now())
}

// TestNeedBinaries: a program on PATH is found; a missing one fails under
// CI=true and skips elsewhere.
func TestNeedBinaries(t *testing.T) {
	paths := NeedBinaries(t, "the test", "it is everywhere", "sh")
	require.Len(t, paths, 1)
	assert.Contains(t, paths[0], "sh")
	for _, ci := range []string{"true", ""} {
		t.Run("missing CI="+ci, func(t *testing.T) {
			t.Setenv("CI", ci)
			ft := &fakeT{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				NeedBinaries(ft, "the suite", "apt-get install -y nothing", "sh", "no-such-program-locksim")
			}()
			<-done
			if ci == "true" {
				assert.True(t, ft.failed)
				assert.Contains(t, ft.msg, "no-such-program-locksim not found: the suite must run under CI=true (apt-get install -y nothing)")
			} else {
				assert.True(t, ft.skipped)
				assert.Contains(t, ft.msg, "the suite is SKIPPED")
			}
		})
	}
}

// fakeT records Fatalf and Skipf and stops the goroutine, as testing does.
type fakeT struct {
	testing.TB
	failed, skipped bool
	msg             string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed, f.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fakeT) Skipf(format string, args ...any) {
	f.skipped, f.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// echoModel is a Model with one setup step (latency), one step of its own
// (starts) and a conversation with the echo server S.
type echoModel struct {
	latency time.Duration
	w       *World
	starts  int
	p       *Probe[pong]
}

func (m *echoModel) SetupSteps() []string { return []string{"latency"} }
func (m *echoModel) Steps() []string      { return []string{"starts"} }
func (m *echoModel) Setup(a *Args, td *datadriven.TestData) {
	m.latency = a.ParseDuration("latency", a.Pos("duration"))
	a.Done()
}
func (m *echoModel) Start(t testing.TB) (*Steps, *Conversation) {
	m.w = NewWorld(t, m.latency)
	m.w.Add("S", func() sim.Process { return &echo{starts: &m.starts} }, sim.ClockSpec{})
	m.p = NewProbe(func(r pong) uint64 { return r.ID })
	AddProbe(m.w, "c", m.p)
	m.w.Start()
	return &Steps{W: m.w}, &Conversation{W: m.w,
		Send: func(a *Args, target string, words []string) uint64 {
			return m.p.Send(m.w.ID(target), func(id uint64) sim.Message { return ping{ID: id} })
		},
		Reply: ProbeReply(m.p, func(r pong) string { return fmt.Sprintf("pong life %d", r.Life) }),
	}
}
func (m *echoModel) Step(a *Args, td *datadriven.TestData) string {
	a.Done()
	return fmt.Sprintf("%d\n", m.starts)
}

// TestInteractionSteps: setup steps until the world starts, then the
// conversation, the shared steps and the model's own; a setup step too
// late, or an unknown command, fails at its file:line.
func TestInteractionSteps(t *testing.T) {
	r := &interaction{m: &echoModel{}}
	step := func(line, input string) (out, fail string) {
		cmd, args, err := datadriven.ParseLine(line)
		require.NoError(t, err)
		td := &datadriven.TestData{Pos: "f.txt:1", Cmd: cmd, CmdArgs: args, Input: input}
		fail = Failure(t, func(tb testing.TB) { out = r.step(tb, td) })
		return out, fail
	}
	tests := []struct{ line, input, want, fail string }{
		{line: "latency 2ms"},
		{line: "do S", input: "ping\nping", want: "ping -> pong life 1 (0.004s)\nping -> pong life 1 (0.008s)\n"},
		{line: "crash S"},
		{line: "restart S"},
		{line: "starts", want: "2\n"},
		{line: "latency 1ms", fail: "f.txt:1: latency: a setup step (latency) must come before every other step"},
		{line: "bogus", fail: `f.txt:1: unknown command "bogus" (known: advance, crash, cut, do, events, heal, jump, latency, losses, partition, pause, restart, send, starts, wait)`},
		{line: "starts extra", fail: "f.txt:1: starts: unexpected arguments: extra"},
	}
	for _, tt := range tests {
		out, fail := step(tt.line, tt.input)
		assert.Equal(t, tt.fail, fail, tt.line)
		assert.Equal(t, tt.want, out, tt.line)
	}
}
