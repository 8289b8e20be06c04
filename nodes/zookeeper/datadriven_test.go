package zookeeper

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/assert"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/sim"
)

// TestInteractions runs the step files in testdata/interactions: each step
// drives the ZooKeeper service "zk" and client processes (a and b unless
// told; 1 ms latency), each with a Session of this package (the client
// library's model: it pings, notices a silent server, reconnects), and
// prints what happened; the file holds the expected output under "----".
// After a model change, rewrite the files and review the diff:
//
//	go test ./nodes/zookeeper -run TestInteractions -rewrite
//
// The grammar (an unknown command or a leftover argument fails at its
// file:line):
//
//	server [clients=(a, ...)] [tick=DUR] [min-session-timeout=DUR]
//	       [max-session-timeout=DUR] [lock-delay=DUR]
//	    configure zk (before any other step; DefaultConfig otherwise) and
//	    name the client processes. The first other step starts the world.
//	connect CLIENT [timeout=DUR] [heartbeat=DUR] [client-expiry]
//	    start a session (10s asked for by default; heartbeat 0 is the
//	    library's default) and wait for it (up to a minute); print its
//	    session events.
//	close CLIENT         close CLIENT's session (OpClose).
//	sessions             print the session events other than replies
//	                     (connected, disconnected, reconnected, expired,
//	                     watch) since the previous sessions step, or
//	                     "(none)".
//
// the steps of simtest.ConversationSteps (do, send, wait) with a client
// as the target and a call on its session as the request:
//
//	create PATH [ephemeral] [sequential]
//	delete PATH | get-children PATH | exists PATH [watch] | ping
//
// (a reply prints as "ok" with the created path, the children or whether
// the node exists, and the zxid; or as the error code); and the shared
// steps of simtest.SharedSteps (advance, jump, pause, crash, restart,
// partition, heal, events, losses ...); events prints by default the
// service's session and znode events, the faults and the connection ends.
func TestInteractions(t *testing.T) {
	simtest.RunInteractions(t, "testdata/interactions", func(*testing.T) simtest.Model {
		return &zkDD{cfg: DefaultConfig(), clients: []string{"a", "b"}}
	})
}

var zkDDKinds = []sim.Kind{
	KindSessionOpen, KindSessionExpired, KindSessionClosed, KindZnodeCreated, KindZnodeDeleted,
	KindWatchFired, KindLockDelay,
	sim.KindCrash, sim.KindRestart, sim.KindPause, sim.KindResume, sim.KindClockJump,
	sim.KindPartition, sim.KindHeal, sim.KindConnEnd,
}

type zkDD struct {
	cfg     Config
	clients []string
	w       *simtest.World
	zk      sim.ProcID
	by      map[string]*sessClient
	shown   map[string]int // session events printed, per client
}

func (h *zkDD) SetupSteps() []string { return []string{"server"} }
func (h *zkDD) Steps() []string      { return []string{"connect", "close", "sessions"} }

func (h *zkDD) Step(a *simtest.Args, td *datadriven.TestData) string {
	switch td.Cmd {
	case "connect":
		c := h.client(a, a.Pos("client"))
		timeout := a.Duration("timeout", 10*time.Second)
		heartbeat := a.Duration("heartbeat", 0)
		c.zk.ClientExpiry = a.Bool("client-expiry")
		a.Done()
		c.zk.Connect(c.env, h.zk, timeout, heartbeat)
		h.w.RunUntil(time.Minute, func() bool { return c.zk.State() != StateConnecting })
		return h.sessionEvents()
	case "close":
		c := h.client(a, a.Pos("client"))
		a.Done()
		c.zk.Close(c.env)
		return ""
	case "sessions":
		a.Done()
		return h.sessionEvents()
	}
	return ""
}

func (h *zkDD) Setup(a *simtest.Args, td *datadriven.TestData) {
	if cs := a.Vals("clients"); cs != nil {
		h.clients = cs
	}
	h.cfg.TickTime = a.Duration("tick", h.cfg.TickTime)
	h.cfg.MinSessionTimeout = a.Duration("min-session-timeout", h.cfg.MinSessionTimeout)
	h.cfg.MaxSessionTimeout = a.Duration("max-session-timeout", h.cfg.MaxSessionTimeout)
	h.cfg.LockDelay = a.Duration("lock-delay", h.cfg.LockDelay)
	a.Done()
	if err := h.cfg.Validate(); err != nil {
		a.Fatalf("%v", err)
	}
}

func (h *zkDD) Start(t testing.TB) (*simtest.Steps, *simtest.Conversation) {
	h.w = simtest.NewWorld(t, ms)
	cfg := h.cfg
	h.zk = h.w.Add("zk", func() sim.Process { return New(cfg) }, sim.ClockSpec{})
	h.by, h.shown = map[string]*sessClient{}, map[string]int{}
	for _, n := range h.clients {
		h.by[n] = newSess(h.w.K, n)
		h.w.AddProcess(n, h.by[n], sim.ClockSpec{})
	}
	h.w.Start()
	return &simtest.Steps{W: h.w, Kinds: zkDDKinds}, &simtest.Conversation{W: h.w, Send: h.send, Reply: h.reply}
}

func (h *zkDD) client(a *simtest.Args, name string) *sessClient {
	c, ok := h.by[name]
	if !ok {
		a.Fatalf("unknown client %q (known: %s)", name, strings.Join(h.clients, ", "))
	}
	return c
}

// sessionEvents prints the session events not printed yet, client by
// client in the order the clients were named.
func (h *zkDD) sessionEvents() string {
	var b strings.Builder
	for _, n := range h.clients {
		c := h.by[n]
		for _, e := range c.events[h.shown[n]:] {
			b.WriteString(e)
		}
		h.shown[n] = len(c.events)
	}
	if b.Len() == 0 {
		return "(none)\n"
	}
	return b.String()
}

// Request ids are per session; the conversation's ids are the client's
// index in the high bits and the session's id in the low ones.
const idShift = 32

func (h *zkDD) send(a *simtest.Args, target string, words []string) uint64 {
	c := h.client(a, target)
	if c.zk.State() == StateIdle {
		a.Fatalf("%s has no session: connect it first", target)
	}
	req := parseRequest(a, words)
	id := c.zk.Call(c.env, req)
	for i, n := range h.clients {
		if n == target {
			return uint64(i)<<idShift | id
		}
	}
	return 0
}

func (h *zkDD) reply(id uint64) (string, sim.Time, bool) {
	c := h.by[h.clients[id>>idShift]]
	r, ok := c.replies[id&(1<<idShift-1)]
	if !ok {
		return "", 0, false
	}
	return renderReply(r.Reply), r.At, true
}

// parseRequest reads a call as the grammar of TestInteractions writes it.
func parseRequest(a *simtest.Args, words []string) Request {
	line := strings.Join(words, " ")
	var r Request
	for o := OpConnect; o <= OpClose; o++ {
		if o.String() == words[0] && o != OpConnect && o != OpClose {
			r.Op = o
		}
	}
	args := words[1:]
	if r.Op != OpPing {
		if len(args) == 0 {
			a.Fatalf("%s: missing the path", line)
		}
		r.Path, args = args[0], args[1:]
	}
	for _, f := range args {
		switch {
		case f == "ephemeral" && r.Op == OpCreate:
			r.Ephemeral = true
		case f == "sequential" && r.Op == OpCreate:
			r.Sequential = true
		case f == "watch" && r.Op == OpExists:
			r.Watch = true
		default:
			a.Fatalf("%s: unexpected %q", line, f)
		}
	}
	if r.Op == 0 {
		a.Fatalf("unknown call %q (create, delete, get-children, exists, ping)", words[0])
	}
	return r
}

// renderReply prints a reply on one line.
func renderReply(r Reply) string {
	if r.Err != "" {
		return r.Err
	}
	s := "ok"
	switch r.Op {
	case OpCreate:
		s += " " + r.Path
	case OpGetChildren:
		s += fmt.Sprint(" ", r.Children)
	case OpExists:
		s += fmt.Sprint(" exists=", r.Exists)
	}
	return fmt.Sprintf("%s zxid %d", s, r.Zxid)
}

// TestRequestLineMistakes: a call the grammar does not know fails at its
// file:line and says why.
func TestRequestLineMistakes(t *testing.T) {
	for line, want := range map[string]string{
		"create":                  "f.txt:1: do: create: missing the path",
		"create /a ephemral":      `f.txt:1: do: create /a ephemral: unexpected "ephemral"`,
		"exists /a ephemeral":     `f.txt:1: do: exists /a ephemeral: unexpected "ephemeral"`,
		"set /a":                  `f.txt:1: do: unknown call "set" (create, delete, get-children, exists, ping)`,
		"connect /a":              `f.txt:1: do: unknown call "connect" (create, delete, get-children, exists, ping)`,
		"create /a/n- sequential": "",
	} {
		assert.Equal(t, want, simtest.LineFailure(t, line, func(a *simtest.Args, w []string) { parseRequest(a, w) }), line)
	}
}
