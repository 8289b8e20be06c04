package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRetransmitGiveUp checks tcp_model_timeout(15, TCP_RTO_MIN) = 924.6 s
// (Documentation/networking/ip-sysctl.rst, tcp_retries2) and smaller counts.
func TestRetransmitGiveUp(t *testing.T) {
	tests := []struct {
		retries int
		want    time.Duration
	}{
		{0, 200 * ms},
		{3, 3 * time.Second},
		{9, 204600 * ms},
		{10, 324600 * ms},
		{15, 924600 * ms},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.retries), func(t *testing.T) {
			assert.Equal(t, tt.want, modelTimeout(tt.retries, RTOMin))
		})
	}
	assert.Equal(t, 924600*ms, RetransmitGiveUp)
}

// TestOrderedAcrossHeal: what is sent during a partition is delivered after
// the heal, in order, behind nothing and overtaken by nothing.
func TestOrderedAcrossHeal(t *testing.T) {
	w := newWorld(Config{Seed: 1, KeepTrace: true})
	a := w.add("a", hooks{
		init: func(env *Env) {
			for i := 1; i <= 5; i++ {
				env.After(Mono, time.Duration(i)*100*ms, i)
			}
		},
		fire: func(env *Env, tag any) { send(env, "b", fmt.Sprint("m", tag)) },
	})
	b := w.add("b", hooks{})
	var id int
	w.at(150*ms, func() { id = w.k.Partition([][]ProcID{{a}, {b}}) })
	w.at(time.Second, func() { w.k.Unpartition(id) })
	w.run(5 * time.Second)
	// m2 stalls at 200ms: retransmitted at 400ms and 800ms (cut), then at
	// 1.6s (healed): m2..m5 arrive in order one latency later.
	assert.Equal(t, []string{
		"0s b init",
		"101ms b got m1 from a",
		"1.601s b got m2 from a",
		"1.601s b got m3 from a",
		"1.601s b got m4 from a",
		"1.601s b got m5 from a",
	}, w.lines("b"))
	assert.Empty(t, kinds(w.k, KindDrop))
}

// TestRetransmissionTiming: the RTO starts at TCP_RTO_MIN and doubles up to
// TCP_RTO_MAX; at 924.6 s the sender gets ETIMEDOUT.
// TestCrashDuringPartition: a process that dies on a running host leaves
// what it sent to its host's kernel, which still retransmits it (and then
// its FIN) after the heal; a power loss takes those bytes with the host
// (found by twin runs: real Redis delivered a killed master's stalled
// replication stream to its replica after the heal).
func TestCrashDuringPartition(t *testing.T) {
	tests := []struct {
		mode CrashMode
		want []string
	}{
		{CrashProcess, []string{"0s b init", "1.601s b got m2 from a", "1.601s b conn-end a closed"}},
		{CrashPower, []string{"0s b init"}},
	}
	for _, tt := range tests {
		t.Run(tt.mode.String(), func(t *testing.T) {
			w := newWorld(Config{Seed: 1, KeepTrace: true})
			a := w.add("a", hooks{
				init: func(env *Env) { env.After(Mono, 200*ms, "send") },
				fire: func(env *Env, tag any) { send(env, "b", "m2") },
			})
			b := w.add("b", hooks{})
			var id int
			w.at(150*ms, func() { id = w.k.Partition([][]ProcID{{a}, {b}}) })
			w.at(300*ms, func() { w.k.Crash(a, tt.mode) })
			w.at(time.Second, func() { w.k.Unpartition(id) })
			w.run(5 * time.Second)
			assert.Equal(t, tt.want, w.lines("b"))
		})
	}
}

func TestRetransmissionTiming(t *testing.T) {
	w := newWorld(Config{Seed: 1, KeepTrace: true})
	a := w.add("a", hooks{init: func(env *Env) { send(env, "b", "m") }})
	b := w.add("b", hooks{})
	w.at(0, func() { w.k.CutOneWay([]ProcID{a}, []ProcID{b}) })
	w.run(2000 * time.Second)
	var at []string
	for _, e := range w.k.Trace() {
		if e.Kind == KindRetransmit {
			at = append(at, e.At.Duration().String())
		}
	}
	assert.Equal(t, []string{"1ms", // lost in flight (the cut came after the send)
		"200ms", "600ms", "1.4s", "3s", "6.2s", "12.6s", "25.4s", "51s", "1m42.2s", "3m24.6s",
		"5m24.6s", "7m24.6s", "9m24.6s", "11m24.6s", "13m24.6s", "15m24.6s"}, at, "a reset is not retransmitted")
	assert.Equal(t, []string{"0s a init", "15m24.6s a conn-end b timed out"}, w.lines("a"))
	assert.Equal(t, []string{"0s b init"}, w.lines("b"), "the reset to b is lost in the cut")
}

// TestResetOnCrash: a crashed process's host answers the next segment with a
// reset; the sender learns one round trip after its send. After a power
// loss the host answers nothing until it is back.
func TestResetOnCrash(t *testing.T) {
	tests := []struct {
		name    string
		mode    CrashMode
		restart time.Duration
		want    []string
	}{
		// A process that dies on a running host: its host closes the
		// socket with a FIN (a learns one way later, 1.001s); a's next
		// connection is refused by the host with no listener (a reset one
		// round trip after the send at 2s).
		{"process", CrashProcess, 0, []string{"0s a init", "1.001s a conn-end b closed", "2.002s a conn-end b reset"}},
		{"clean", CrashClean, 0, []string{"0s a init", "1.001s a conn-end b closed", "2.002s a conn-end b reset"}},
		{"power, never back", CrashPower, 0, []string{"0s a init", "15m26.6s a conn-end b timed out"}},
		// retransmissions at 2.2s, 2.6s (down), 3.4s: reset at 3.401s.
		{"power, back at 3s", CrashPower, 3 * time.Second, []string{"0s a init", "3.402s a conn-end b reset"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(Config{Seed: 1, KeepTrace: true})
			w.add("a", hooks{
				init: func(env *Env) {
					send(env, "b", "hello")
					env.After(Mono, 2*time.Second, "x")
				},
				fire: func(env *Env, tag any) { send(env, "b", "after") },
			})
			b := w.add("b", hooks{})
			w.at(time.Second, func() { w.k.Crash(b, tt.mode) })
			if tt.restart > 0 {
				w.at(tt.restart, func() { w.k.Restart(b) })
			}
			w.run(2000 * time.Second)
			var a []string
			for _, l := range w.lines("a") {
				if l != "2s a fire x" {
					a = append(a, l)
				}
			}
			assert.Equal(t, tt.want, a)
			for _, l := range w.lines("b") {
				assert.NotContains(t, l, "after", "nothing sent to the crashed incarnation is handled")
			}
		})
	}
}

// TestNoDeliveryToNewIncarnation: a reply to a request of a restarted
// process does not reach the new incarnation; the new incarnation's first
// send tells the peer the old connection was reset, before its data.
func TestNoDeliveryToNewIncarnation(t *testing.T) {
	w := newWorld(Config{Seed: 1, KeepTrace: true, Network: NetConfig{Latency: Fixed(10 * ms)}})
	boots := 0
	a := w.add("a", hooks{init: func(env *Env) {
		boots++
		send(env, "b", fmt.Sprint("req", boots))
	}})
	w.add("b", hooks{recv: func(env *Env, from ProcID, m Message) {
		env.Send(from, fmt.Sprint("reply to ", m))
	}})
	w.at(12*ms, func() { w.k.Crash(a, CrashProcess) })
	w.at(15*ms, func() { w.k.Restart(a) })
	w.run(time.Second)
	assert.Equal(t, []string{
		"0s a init",
		"15ms a init",
		"35ms a got reply to req2 from b",
	}, w.lines("a"), "reply to req1 (arriving at 20ms) is not delivered")
	assert.Equal(t, []string{
		"0s b init",
		"10ms b got req1 from a",
		"22ms b conn-end a closed", // a's host closed its socket when a crashed at 12ms
		"25ms b got req2 from a",
	}, w.lines("b"))
	assert.Contains(t, kinds(w.k, KindDrop), "20ms b #2 connection ended")
}

// TestClose: what the closer sent still arrives, ahead of the FIN; what the
// peer sent is discarded; the next send opens a new connection.
func TestClose(t *testing.T) {
	w := newWorld(Config{Seed: 1, KeepTrace: true, Network: NetConfig{Latency: Fixed(10 * ms)}})
	a := w.add("a", hooks{
		init: func(env *Env) {
			send(env, "b", "m1")
			env.After(Mono, 5*ms, "close")
			env.After(Mono, 50*ms, "again")
		},
		fire: func(env *Env, tag any) {
			b, _ := env.Lookup("b")
			if tag == "close" {
				require.True(t, env.Connected(b))
				env.Close(b)
				assert.False(t, env.Connected(b))
				return
			}
			send(env, "b", "m2")
		},
	})
	w.add("b", hooks{init: func(env *Env) { send(env, "a", "hello") }})
	w.run(time.Second)
	assert.Equal(t, []string{"0s b init", "10ms b got m1 from a", "15ms b conn-end a closed", "60ms b got m2 from a"}, w.lines("b"))
	assert.Equal(t, []string{"0s a init", "5ms a fire close", "50ms a fire again"}, w.lines("a"))
	assert.Equal(t, []string{"10ms b #2 connection ended"}, kinds(w.k, KindDrop))
	assert.Equal(t, []string{"5ms a close", "15ms b closed"}, kinds(w.k, KindConnEnd))
	_ = a
}

// TestDropResetsAndReconnects: a drop fault loses the segment and resets
// the connection (both ends learn); what was sent on it is gone; the next
// send opens a new connection.
func TestDropResetsAndReconnects(t *testing.T) {
	w := newWorld(Config{Seed: 1, KeepTrace: true})
	a := w.add("a", hooks{
		init: func(env *Env) {
			env.After(Mono, 5*ms, "x")
			env.After(Mono, 10*ms, "y")
		},
		fire: func(env *Env, tag any) {
			if tag == "x" {
				send(env, "b", "m1")
				send(env, "b", "m2")
				return
			}
			send(env, "b", "m3")
		},
	})
	b := w.add("b", hooks{})
	w.at(0, func() { w.k.DropNext(a, b, 1) })
	w.run(time.Second)
	// m1 is lost and resets the connection; m2 was sent on it and is
	// discarded; m3 goes on a new connection.
	assert.Equal(t, []string{"0s b init", "11ms b got m3 from a"}, w.lines("b"), "b never had the connection")
	assert.Equal(t, []string{"0s a init", "5ms a fire x", "6ms a conn-end b reset", "10ms a fire y"}, w.lines("a"))
	assert.Equal(t, []string{"5ms a #1 link drop", "6ms a #2 connection ended"}, kinds(w.k, KindDrop))
}

// TestGiveUpAcrossPartition: the sender's ETIMEDOUT is local, so it comes
// at 924.6 s even when the partition cuts both directions.
func TestGiveUpAcrossPartition(t *testing.T) {
	w := newWorld(Config{Seed: 1, KeepTrace: true})
	a := w.add("a", hooks{init: func(env *Env) { env.After(Mono, time.Second, "x") }, fire: func(env *Env, tag any) { send(env, "b", "m") }})
	b := w.add("b", hooks{})
	w.at(0, func() { w.k.Partition([][]ProcID{{a}, {b}}) })
	w.run(2000 * time.Second)
	assert.Equal(t, []string{"0s a init", "1s a fire x", "15m25.6s a conn-end b timed out"}, w.lines("a"))
	assert.Equal(t, []string{"0s b init"}, w.lines("b"))
}
