package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// chanProbe is a probe that uses two connections with its peer and learns
// which one ended (ConnsObserver).
type chanProbe struct{ probe }

func (p *chanProbe) ConnEndedOn(env *Env, peer ProcID, ch uint8, why ConnEnd) {
	p.w.logf(env.Name(), "conn-end %s #%d %v", env.NameOf(peer), ch, why)
}

func (w *world) addChan(name string, h hooks) ProcID {
	return w.k.Add(name, func() Process { return &chanProbe{probe{w: w, h: h}} }, ClockSpec{})
}

// TestTwoConnectionsPerPair: a pair's second connection (SendOn) has its
// own life: closing one, or a drop that resets it, leaves the other open
// and what is sent on it arrives; a crash ends both, each with its FIN.
func TestTwoConnectionsPerPair(t *testing.T) {
	w := newWorld(Config{Seed: 1, KeepTrace: true})
	var b ProcID
	a := w.addChan("a", hooks{fire: func(env *Env, tag any) {
		switch tag {
		case "both":
			env.Send(b, "on0")
			env.SendOn(1, b, "on1")
		case "close1":
			env.CloseOn(1, b)
			env.Send(b, "still0")
		case "drop":
			env.SendOn(1, b, "dropped1")
			env.Send(b, "after-drop0")
		}
	}, init: func(env *Env) {
		env.After(Mono, 100*ms, "both")
		env.After(Mono, 200*ms, "close1")
		env.After(Mono, 300*ms, "both")
		env.After(Mono, 400*ms, "drop")
	}})
	b = w.addChan("b", hooks{})
	w.at(350*ms, func() { w.k.DropNext(a, b, 1) })
	w.at(500*ms, func() { w.k.Crash(a, CrashProcess) })
	w.run(time.Second)
	assert.Equal(t, []string{
		"0s b init",
		"101ms b got on0 from a",
		"101ms b got on1 from a",
		"201ms b conn-end a #1 closed",
		"201ms b got still0 from a",
		"301ms b got on0 from a",
		"301ms b got on1 from a",
		"401ms b conn-end a #1 reset",
		"401ms b got after-drop0 from a",
		"501ms b conn-end a #0 closed",
	}, w.lines("b"))
	assert.Contains(t, w.lines("a"), "401ms a conn-end b #1 reset")
}

// TestPowerLossDropsDataBehindANotice: what a host that lost power had
// sent dies with it, also behind a FIN of its other connection that
// stands first in the retransmission queue.
func TestPowerLossDropsDataBehindANotice(t *testing.T) {
	w := newWorld(Config{Seed: 1, KeepTrace: true})
	var b ProcID
	a := w.addChan("a", hooks{fire: func(env *Env, tag any) {
		switch tag {
		case "open":
			env.Send(b, "m0")
			env.SendOn(1, b, "m1")
		case "close":
			env.CloseOn(1, b)
			env.Send(b, "late0")
		}
	}, init: func(env *Env) {
		env.After(Mono, 100*ms, "open")
		env.After(Mono, 300*ms, "close")
	}})
	b = w.addChan("b", hooks{})
	var id int
	w.at(200*ms, func() { id = w.k.Partition([][]ProcID{{a}, {b}}) })
	w.at(400*ms, func() { w.k.Crash(a, CrashPower) })
	w.at(time.Second, func() { w.k.Unpartition(id) })
	w.run(5 * time.Second)
	for _, l := range w.lines("b") {
		assert.NotContains(t, l, "late0", "data of a host that lost power is never retransmitted")
	}
}
