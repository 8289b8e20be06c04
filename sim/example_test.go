// This example builds a two-process world: a client asks a server for the
// time once a second, on its own monotonic clock, and prints the answers.
// The server's wall clock is stepped forward, then the server is paused.
package sim_test

import (
	"fmt"
	"time"

	"github.com/locksim/locksim/sim"
)

// ask and answer are the messages: pointer-free values.
type ask struct{ N int }

type answer struct {
	N    int
	Wall time.Duration // the server's wall clock, since sim.Epoch
}

// client sends an ask every second on its monotonic clock.
type client struct {
	server sim.ProcID
	n      int
}

func (c *client) Init(env *sim.Env) {
	c.server, _ = env.Lookup("server")
	env.After(sim.Mono, time.Second, "tick")
}

func (c *client) Fire(env *sim.Env, tag any) {
	c.n++
	env.Send(c.server, ask{N: c.n})
	env.After(sim.Mono, time.Second, "tick")
}

func (c *client) Receive(env *sim.Env, from sim.ProcID, m sim.Message) {
	a := m.(answer)
	at := time.Duration(env.Mono())
	fmt.Printf("client at %v: answer %d from %s, its wall clock says %v\n", at, a.N, env.NameOf(from), a.Wall)
}

// server answers each ask with its wall-clock reading.
type server struct{}

func (server) Init(env *sim.Env)          {}
func (server) Fire(env *sim.Env, tag any) {}
func (server) Receive(env *sim.Env, from sim.ProcID, m sim.Message) {
	env.Send(from, answer{N: m.(ask).N, Wall: time.Duration(env.Wall() - sim.Epoch)})
}

func Example() {
	k := sim.New(sim.Config{Seed: 1, Network: sim.NetConfig{Latency: sim.Fixed(10 * time.Millisecond)}})
	k.Add("client", func() sim.Process { return &client{} }, sim.ClockSpec{})
	srv := k.Add("server", func() sim.Process { return server{} }, sim.ClockSpec{Offset: 5 * time.Millisecond})

	// Faults are scheduled in true time.
	k.At(sim.At(2500*time.Millisecond), func() { k.JumpWall(srv, 30*time.Second) })
	k.At(sim.At(3500*time.Millisecond), func() { k.Pause(srv, 1200*time.Millisecond) })

	if err := k.Run(sim.At(5 * time.Second)); err != nil {
		fmt.Println(err)
	}
	fmt.Println("true time at the end:", k.Now())
	// Output:
	// client at 1.02s: answer 1 from server, its wall clock says 1.015s
	// client at 2.02s: answer 2 from server, its wall clock says 2.015s
	// client at 3.02s: answer 3 from server, its wall clock says 33.015s
	// client at 4.71s: answer 4 from server, its wall clock says 34.705s
	// true time at the end: 5.000s
}
