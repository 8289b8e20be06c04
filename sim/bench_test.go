package sim

import (
	"strconv"
	"testing"
	"time"
)

// pingMsg is the benchmark's message: a pointer-free value with a Tracer
// fast path, as hot model messages should have.
type pingMsg struct{ n uint64 }

func (m pingMsg) AppendTrace(b []byte) []byte {
	return strconv.AppendUint(append(b, "ping "...), m.n, 10)
}

type tick struct{}

func (tick) AppendTrace(b []byte) []byte { return append(b, "tick"...) }

// pinger sends a message to its peer on every message it receives and keeps
// a periodic timer on each clock.
type pinger struct {
	peer ProcID
	msg  Message
}

func (p *pinger) Init(env *Env) {
	env.After(Mono, time.Millisecond, tick{})
	env.After(Wall, 3*time.Millisecond, tick{})
	env.Send(p.peer, p.msg)
}
func (p *pinger) Receive(env *Env, from ProcID, m Message) { env.Send(from, p.msg) }
func (p *pinger) Fire(env *Env, tag any)                   { env.After(Mono, time.Millisecond, tick{}) }

// BenchmarkKernelEvents measures the kernel's hot loop: timers on both clocks
// and messages over FIFO links with random latency, with the trace hash on.
func BenchmarkKernelEvents(b *testing.B) {
	const procs = 8
	k := New(Config{Seed: 1, Network: NetConfig{Latency: Range{Lo: time.Millisecond, Hi: 3 * time.Millisecond}}, MaxEvents: 1 << 62})
	for i := 0; i < procs; i++ {
		peer := ProcID((i + 1) % procs)
		m := Message(pingMsg{n: uint64(i)})
		k.Add(string(rune('a'+i)), func() Process { return &pinger{peer: peer, msg: m} }, ClockSpec{})
	}
	// Warm up: grow the queue and the slabs to their steady-state size.
	if err := k.Run(At(time.Second)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := k.Events()
	t := k.Now()
	for k.Events()-start < int64(b.N) {
		t += At(10 * time.Millisecond)
		if err := k.Run(t); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	n := k.Events() - start
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(n)/float64(b.N), "events/op")
}
