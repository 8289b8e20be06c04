package zookeeper

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/sim"
)

const ms = time.Millisecond

// at renders a true time as the tests compare it: seconds with millisecond
// precision ("6.001s").
func at(d time.Duration) string { return sim.At(d).String() }

// newWorld returns the kernel of a shared simtest world with a 1 ms
// network, keeping its trace, and the ZooKeeper service "zk" registered
// first.
func newWorld(t testing.TB, cfg Config) (*sim.Kernel, sim.ProcID) {
	w := simtest.NewWorld(t, ms)
	zk := w.Add("zk", func() sim.Process { return New(cfg) }, sim.ClockSpec{})
	return w.K, zk
}

// traceOf returns "time text" for every trace event of kind.
func traceOf(k *sim.Kernel, kind sim.Kind) []string {
	var out []string
	for _, e := range k.Trace() {
		if e.Kind == kind {
			out = append(out, e.At.String()+" "+e.Text)
		}
	}
	return out
}

// rawStep is a request a rawClient sends at a given true time (its clocks
// run true). A request with Session 0 other than OpConnect is sent on the
// session the client's first OpConnect opened.
type rawStep struct {
	at  time.Duration
	req Request
}

type stepAt int

// rawClient speaks the wire protocol directly and logs what it receives as
// "time what" lines.
type rawClient struct {
	k       *sim.Kernel
	steps   []rawStep
	server  sim.ProcID
	session int64
	log     []string
	replies []Reply
}

func addRaw(k *sim.Kernel, name string, steps ...rawStep) *rawClient {
	c := &rawClient{k: k, steps: steps}
	k.Add(name, func() sim.Process { return c }, sim.ClockSpec{})
	return c
}

func (c *rawClient) Init(env *sim.Env) {
	c.server, _ = env.Lookup("zk")
	for i, s := range c.steps {
		env.SetTimer(sim.Mono, int64(s.at), stepAt(i))
	}
}

func (c *rawClient) Fire(env *sim.Env, tag any) {
	req := c.steps[tag.(stepAt)].req
	req.ID = uint64(tag.(stepAt)) + 1
	if req.Op != OpConnect && req.Session == 0 {
		req.Session = c.session
	}
	env.Send(c.server, req)
}

func (c *rawClient) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	now := c.k.Now().String()
	switch m := msg.(type) {
	case Reply:
		if m.Op == OpConnect && c.session == 0 && m.Err == "" {
			c.session = m.Session
		}
		c.replies = append(c.replies, m)
		s := fmt.Sprintf("%s %s", now, m.Op)
		if m.Err != "" {
			s += " " + m.Err
		}
		if m.Path != "" {
			s += " " + m.Path
		}
		if m.Op == OpGetChildren && m.Err == "" {
			s += fmt.Sprint(" ", m.Children)
		}
		if m.Op == OpExists {
			s += fmt.Sprint(" ", m.Exists)
		}
		c.log = append(c.log, s)
	case WatchEvent:
		c.log = append(c.log, now+" watch "+m.Path)
	case SessionExpired:
		c.log = append(c.log, now+" session-expired")
	}
}

// ConnEnded logs that the connection with the service ended.
func (c *rawClient) ConnEnded(env *sim.Env, peer sim.ProcID, why sim.ConnEnd) {
	c.log = append(c.log, c.k.Now().String()+" conn-end "+why.String())
}

// reply returns the reply to the i-th step (0-based).
func (c *rawClient) reply(t *testing.T, i int) Reply {
	t.Helper()
	for _, r := range c.replies {
		if r.ID == uint64(i)+1 {
			return r
		}
	}
	require.FailNow(t, "no reply", "step %d got no reply; log: %v", i, c.log)
	return Reply{}
}

func connect(at, timeout time.Duration) rawStep {
	return rawStep{at: at, req: Request{Op: OpConnect, Timeout: timeout}}
}

func ping(at time.Duration) rawStep { return rawStep{at: at, req: Request{Op: OpPing}} }

// pings returns pings every period in [from, to].
func pings(from, to, period time.Duration) []rawStep {
	var out []rawStep
	for t := from; t <= to; t += period {
		out = append(out, ping(t))
	}
	return out
}

func create(at time.Duration, path string, ephemeral, sequential bool) rawStep {
	return rawStep{at: at, req: Request{Op: OpCreate, Path: path, Ephemeral: ephemeral, Sequential: sequential}}
}

func op(at time.Duration, o Op, path string) rawStep {
	return rawStep{at: at, req: Request{Op: o, Path: path}}
}

func watch(at time.Duration, path string) rawStep {
	return rawStep{at: at, req: Request{Op: OpExists, Path: path, Watch: true}}
}

func steps(groups ...[]rawStep) []rawStep {
	var out []rawStep
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func one(s ...rawStep) []rawStep { return s }
