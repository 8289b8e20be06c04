package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestPreferNow checks the same-instant order rule: the chosen event goes
// first, every other event due at the instant keeps its order (their
// queueing order, as without the rule), events queued later at the instant
// run after them, and the rule acts once (the tie at 20ms keeps the
// kernel's order). The timers are due 10ms on, beyond the first slot of
// the timer wheel: they wait there until the run reaches their slot.
func TestPreferNow(t *testing.T) {
	const lat = 10 * time.Millisecond
	base := []string{
		"10ms a fire a-timer",
		"10ms a got from b from b",
		"10ms b fire b-timer",
		"10ms a got from c from c",
		"10ms - call at 10ms",
		"10ms - queued at 10ms",
	}
	tests := []struct {
		name   string
		want   func(a, b, c ProcID) Prefer
		first  []string // the 10ms lines, in order
		ahead  int
		picked bool
	}{
		{"delivery from c", func(a, b, c ProcID) Prefer { return Prefer{Proc: a, From: c} },
			[]string{"10ms a got from c from c", "10ms a fire a-timer", "10ms a got from b from b", "10ms b fire b-timer", "10ms - call at 10ms", "10ms - queued at 10ms"}, 3, true},
		{"b's timer", func(a, b, c ProcID) Prefer { return Prefer{Proc: b, From: NoProc, Timer: true} },
			[]string{"10ms b fire b-timer", "10ms a fire a-timer", "10ms a got from b from b", "10ms a got from c from c", "10ms - call at 10ms", "10ms - queued at 10ms"}, 2, true},
		{"a delivery to a", func(a, b, c ProcID) Prefer { return Prefer{Proc: a, From: b} },
			[]string{"10ms a got from b from b", "10ms a fire a-timer", "10ms b fire b-timer", "10ms a got from c from c", "10ms - call at 10ms", "10ms - queued at 10ms"}, 1, true},
		{"a's first event, already first", func(a, b, c ProcID) Prefer { return Prefer{Proc: a, From: NoProc} }, base, 0, true},
		{"nothing of c", func(a, b, c ProcID) Prefer { return Prefer{Proc: c, From: NoProc} }, base, -1, false},
		{"no timer from a peer", func(a, b, c ProcID) Prefer { return Prefer{Proc: a, From: b, Timer: true} }, base, -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(Config{Seed: 1, Network: NetConfig{Latency: Fixed(lat)}})
			ahead, picked := -2, false
			var a, b, c ProcID
			// Scheduled before the processes start: it pops first at 10ms.
			w.at(lat, func() { ahead, picked = w.k.PreferNow(tt.want(a, b, c)) })
			a = w.add("a", hooks{
				init: func(env *Env) { env.After(Mono, lat, "a-timer") },
				fire: func(env *Env, tag any) {
					// A tie at 20ms: the rule does not act again.
					send(env, "b", "again from a")
					env.After(Mono, lat, "a-timer-2")
				},
			})
			b = w.add("b", hooks{init: func(env *Env) {
				send(env, "a", "from b")
				env.After(Mono, lat, "b-timer")
			}})
			c = w.add("c", hooks{init: func(env *Env) {
				send(env, "a", "from c")
				w.k.At(At(lat), func() {
					w.logf("-", "call at 10ms")
					w.k.At(At(lat), func() { w.logf("-", "queued at 10ms") })
				})
			}})
			w.run(time.Second)
			assert.Equal(t, tt.ahead, ahead)
			assert.Equal(t, tt.picked, picked)
			assert.Equal(t, tt.first, filter(w.log, "10ms "))
			// Later ties in the kernel's order: a's message to b was
			// queued before a's next timer.
			assert.Equal(t, []string{"20ms b got again from a from a", "20ms a fire a-timer-2"}, filter(w.log, "20ms "))
		})
	}
}

func filter(log []string, prefix string) []string {
	var out []string
	for _, l := range log {
		if len(l) >= len(prefix) && l[:len(prefix)] == prefix {
			out = append(out, l)
		}
	}
	return out
}
