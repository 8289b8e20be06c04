package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestBothEndsClosed: both ends close a connection across a partition, each
// on its own timeout (a Redis master timing out its replica while the
// replica times out its master), and one end opens a new connection. After
// the heal, what the other end sent on the old connection and its FIN find
// no socket (the end closed it): they are discarded, and neither revives the
// old connection nor ends the new one (found by the exact replication
// suite: the model's replica lost its fresh PSYNC link to the old FIN and
// resynced twice where real Redis resyncs once).
func TestBothEndsClosed(t *testing.T) {
	w := newWorld(Config{Seed: 1, KeepTrace: true})
	var connected bool
	w.add("a", hooks{
		init: func(env *Env) {
			send(env, "b", "m1")
			env.After(Mono, 200*ms, "old")
			env.After(Mono, 300*ms, "close")
		},
		fire: func(env *Env, tag any) {
			b, _ := env.Lookup("b")
			switch tag {
			case "old":
				send(env, "b", "old")
			case "close":
				env.Close(b)
			}
		},
		recv: func(env *Env, from ProcID, m Message) {
			if m == "new" {
				env.Send(from, "reply")
			}
		},
	})
	w.add("b", hooks{
		init: func(env *Env) {
			env.After(Mono, 400*ms, "close")
			env.After(Mono, 500*ms, "new")
			env.After(Mono, 4*time.Second, "check")
		},
		fire: func(env *Env, tag any) {
			a, _ := env.Lookup("a")
			switch tag {
			case "close":
				env.Close(a)
			case "new":
				send(env, "a", "new")
			case "check":
				connected = env.Connected(a)
			}
		},
	})
	a, _ := w.k.Lookup("a")
	b, _ := w.k.Lookup("b")
	w.at(100*ms, func() { w.k.Partition([][]ProcID{{a}, {b}}) })
	w.at(time.Second, func() { w.k.Heal() })
	w.run(5 * time.Second)
	for _, l := range w.lines("b") {
		assert.NotContains(t, l, "got old", "data of the connection b closed reached b")
		assert.NotContains(t, l, "conn-end", "the old connection's FIN ended b's new one")
	}
	assert.Contains(t, w.lines("b"), "1.302s b got reply from a")
	assert.True(t, connected, "b's new connection did not survive the heal")
}
