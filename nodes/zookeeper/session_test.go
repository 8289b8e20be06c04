package zookeeper

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/sim"
)

// action is something a sessClient does at a true time (its clocks run
// true unless the test changes them).
type action struct {
	at time.Duration
	do func(c *sessClient, env *sim.Env)
}

type actTag int

// sessClient embeds a Session, runs scripted actions and logs every
// SessionEvent as "time event [details]"; it keeps the replies by request
// id with their arrival times, and the other events as TestInteractions
// prints them. A test may also drive its Session between kernel steps
// (with env).
type sessClient struct {
	k       *sim.Kernel
	name    string
	env     *sim.Env
	zk      Session
	server  sim.ProcID
	actions []action
	log     []string
	replies map[uint64]simtest.Arrival[Reply]
	events  []string // "TIME NAME EVENT [details]\n", replies left out
}

func addSess(k *sim.Kernel, name string, actions ...action) (*sessClient, sim.ProcID) {
	c := newSess(k, name, actions...)
	id := k.Add(name, func() sim.Process { return c }, sim.ClockSpec{})
	return c, id
}

func newSess(k *sim.Kernel, name string, actions ...action) *sessClient {
	return &sessClient{k: k, name: name, actions: actions, replies: map[uint64]simtest.Arrival[Reply]{}}
}

func (c *sessClient) Init(env *sim.Env) {
	c.env = env
	c.server, _ = env.Lookup("zk")
	for i, a := range c.actions {
		env.SetTimer(sim.Mono, int64(a.at), actTag(i))
	}
}

func (c *sessClient) Fire(env *sim.Env, tag any) {
	if ok, ev := c.zk.Fire(env, tag); ok {
		c.record(ev)
		return
	}
	c.actions[tag.(actTag)].do(c, env)
}

func (c *sessClient) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	ok, ev := c.zk.Handle(env, from, msg)
	if !ok {
		panic(fmt.Sprintf("unexpected message %v", msg))
	}
	c.record(ev)
}

// ConnEnded forwards the end of a connection to the session.
func (c *sessClient) ConnEnded(env *sim.Env, peer sim.ProcID, why sim.ConnEnd) {
	c.record(c.zk.ConnEnded(env, peer))
}

func (c *sessClient) record(evs []SessionEvent) {
	for _, e := range evs {
		now := c.k.Now()
		s := now.String() + " " + e.Kind.String()
		switch e.Kind {
		case EventReply:
			c.replies[e.Reply.ID] = simtest.Arrival[Reply]{Reply: e.Reply, At: now}
			s += " " + e.Reply.Op.String()
			if e.Reply.Err != "" {
				s += " " + e.Reply.Err
			}
			if e.Reply.Path != "" {
				s += " " + e.Reply.Path
			}
		case EventWatch:
			s += " " + e.Path
		}
		c.log = append(c.log, s)
		switch e.Kind {
		case EventReply:
		case EventConnected:
			c.events = append(c.events, fmt.Sprintf("%s %s connected session %d timeout %s\n", now, c.name, c.zk.ID(), c.zk.Timeout()))
		default:
			c.events = append(c.events, fmt.Sprintf("%s %s %s\n", now, c.name, strings.TrimPrefix(s, now.String()+" ")))
		}
	}
}

func connectAt(t time.Duration, timeout time.Duration, clientExpiry bool) action {
	return action{at: t, do: func(c *sessClient, env *sim.Env) {
		c.zk.ClientExpiry = clientExpiry
		c.zk.Connect(env, c.server, timeout, 0)
	}}
}

func callAt(t time.Duration, req Request) action {
	return action{at: t, do: func(c *sessClient, env *sim.Env) { c.zk.Call(env, req) }}
}

// isolate partitions proc from everything else during [from, to).
func isolate(k *sim.Kernel, proc sim.ProcID, from, to time.Duration) {
	var others []sim.ProcID
	for i := 0; i < k.NumProcs(); i++ {
		if sim.ProcID(i) != proc {
			others = append(others, sim.ProcID(i))
		}
	}
	var id int
	k.At(sim.At(from), func() { id = k.Partition([][]sim.ProcID{{proc}, others}) })
	k.At(sim.At(to), func() { k.Unpartition(id) })
}

// TestSessionDisconnected: with a 6 s session the client pings every 2 s and
// reports Disconnected 4 s (2/3 of the timeout, ClientCnxn's readTimeout)
// after it last heard from the server; what follows depends on whether the
// server expired the session meanwhile.
//
// Timeline: connected at 0.002 (heartbeats from then on); pings at 2.002
// and 4.002 answered at 2.004 and 4.004; the partition starts at 5 s. The
// server last heard the session at 4.003, so it expires it at the bucket
// after 10.003: 12 s. Disconnected at 4.004 + 4 = 8.004; the client closes
// the connection and sends a reconnect attempt on a new one, which TCP
// retransmits at 8.204, 8.604, 9.404, 11.004, 14.204, 20.604, 33.404 s (the
// attempts of later heartbeats queue behind it): the first retransmission
// after the heal gets through.
func TestSessionDisconnected(t *testing.T) {
	tests := []struct {
		name         string
		heal         time.Duration
		clientExpiry bool
		want         []string
	}{
		{"healed before expiry", 9 * time.Second, false, []string{"0.002s connected", "8.004s disconnected", "9.406s reconnected"}},
		{"healed after expiry", 30 * time.Second, false, []string{"0.002s connected", "8.004s disconnected", "33.406s expired"}},
		// ZooKeeper 3.9.3+: the client expires on its own 4/3 of the timeout
		// after it last heard from the server.
		{"client-side expiry", 30 * time.Second, true, []string{"0.002s connected", "8.004s disconnected", "12.004s expired"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, _ := newWorld(t, DefaultConfig())
			c, id := addSess(k, "c", connectAt(0, 6*time.Second, tt.clientExpiry))
			isolate(k, id, 5*time.Second, tt.heal)
			require.NoError(t, k.Run(sim.At(40*time.Second)))
			assert.Equal(t, tt.want, c.log)
			assert.Equal(t, 6*time.Second, c.zk.Timeout())
			assert.Equal(t, 2*time.Second, c.zk.Heartbeat())
			assert.Equal(t, 4*time.Second, c.zk.ReadTimeout())
			if tt.heal > 12*time.Second {
				assert.Equal(t, []string{"12.000s s1 timeout 6s"}, traceOf(k, KindSessionExpired))
				assert.Equal(t, StateExpired, c.zk.State())
			} else {
				assert.Empty(t, traceOf(k, KindSessionExpired))
				assert.Equal(t, StateConnected, c.zk.State())
			}
		})
	}
}

// TestSessionPause: a client paused (GC, SIGSTOP) past its session timeout
// learns on resuming that the session is gone. Its timers and the server's
// SessionExpired waited in its inbox and run in order at 25 s.
func TestSessionPause(t *testing.T) {
	tests := []struct {
		name string
		acts []action
		want []string
	}{
		{
			name: "idle",
			acts: []action{connectAt(0, 6*time.Second, false)},
			// The read-timeout check runs first (Disconnected), then the
			// expiry notice that arrived at 12.001.
			want: []string{"0.002s connected", "25.000s disconnected", "25.000s expired"},
		},
		{
			name: "a reply waiting in the inbox",
			// The reply arrived at 5.001 during the pause: handled at 25 s it
			// counts as hearing from the server now, so the read timeout does
			// not fire (stale data looks fresh, Kleppmann's S5).
			acts: []action{connectAt(0, 6*time.Second, false), callAt(4999*ms, Request{Op: OpExists, Path: "/"})},
			want: []string{"0.002s connected", "25.000s reply exists", "25.000s expired"},
		},
		{
			name: "expiry notice lost",
			acts: []action{connectAt(0, 6*time.Second, false), {at: 4 * time.Second, do: func(c *sessClient, env *sim.Env) {
				c.k.DropNext(c.server, env.ID(), 2) // from the server: the pong at 4.004 and the notice
			}}},
			// Each drop resets the connection: the client is disconnected
			// when the pong is lost (4.004), its reconnect reply is lost
			// too, and on resume it finds the session expired.
			want: []string{"0.002s connected", "4.004s disconnected", "25.000s expired"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, _ := newWorld(t, DefaultConfig())
			c, id := addSess(k, "c", tt.acts...)
			k.At(sim.At(5*time.Second), func() { k.Pause(id, 20*time.Second) })
			require.NoError(t, k.Run(sim.At(30*time.Second)))
			assert.Equal(t, tt.want, c.log)
			assert.Equal(t, StateExpired, c.zk.State())
		})
	}
}

// TestSessionCalls: every call completes with exactly one EventReply.
func TestSessionCalls(t *testing.T) {
	k, _ := newWorld(t, DefaultConfig())
	create := Request{Op: OpCreate, Path: "/a", Ephemeral: true}
	exists := Request{Op: OpExists, Path: "/a"}
	c, id := addSess(k, "c",
		connectAt(0, 6*time.Second, false),
		callAt(0, create),              // queued until connected
		callAt(6*time.Second, exists),  // sent into the partition: unanswered
		callAt(9*time.Second, exists),  // while disconnected: fails at once
		callAt(34*time.Second, exists), // after expiry: fails at once
	)
	isolate(k, id, 5*time.Second, 30*time.Second)
	require.NoError(t, k.Run(sim.At(35*time.Second)))
	assert.Equal(t, []string{
		"0.002s connected",
		"0.004s reply create /a",
		// The call sent at 6 s is older than the last pong (4.004), so the
		// read timeout still counts from 4.004.
		"8.004s disconnected",
		"8.004s reply exists CONNECTIONLOSS",
		"9.000s reply exists CONNECTIONLOSS",
		// The reconnect attempts go on one connection retransmitted at
		// 8.204, 8.604, 9.404, 11.004, 14.204, 20.604 and 33.404 s: the
		// first retransmission after the heal at 30 s.
		"33.406s expired",
		"34.000s reply exists SESSIONEXPIRED",
	}, c.log)
	assert.Panics(t, func() { (&Session{}).Call(nil, exists) })
}

// TestSessionLostReply: a reply lost on the way (a drop, which resets the
// connection) breaks the connection: the call fails with CONNECTIONLOSS and
// the session reconnects at once.
func TestSessionLostReply(t *testing.T) {
	k, zk := newWorld(t, DefaultConfig())
	c, id := addSess(k, "c",
		connectAt(0, 6*time.Second, false),
		callAt(3*time.Second, Request{Op: OpCreate, Path: "/a"}),
		callAt(5*time.Second, Request{Op: OpExists, Path: "/a"}),
	)
	k.At(sim.At(3*time.Second+ms), func() { k.DropNext(zk, id, 1) })
	require.NoError(t, k.Run(sim.At(6*time.Second)))
	assert.Equal(t, []string{
		"0.002s connected",
		"3.002s disconnected", // the drop reset the connection: the client learns at once
		"3.002s reply create CONNECTIONLOSS",
		"3.004s reconnected",
		"5.002s reply exists", // the create was applied all the same
	}, c.log)
}

// TestWatchAcrossDisconnect: a watch notification stalled by a short
// partition arrives by retransmission; one lost with a connection the
// client closed is recovered when the session reconnects (SetWatches).
func TestWatchAcrossDisconnect(t *testing.T) {
	tests := []struct {
		name string
		heal time.Duration
		want []string
	}{
		// The event (4.001) stalls in the partition and is retransmitted
		// at 4.201, 4.601 and 5.401 s, after the heal: no disconnection.
		{"short partition", 5 * time.Second, []string{"5.402s watch /lock/a"}},
		// Read timeout at 2.004 + 4: the client closes the connection; its
		// reconnect attempt (6.004) is retransmitted at 6.204, 6.604 and
		// 7.404 s, after the heal; the lost event is recovered by
		// SetWatches.
		{"long partition", 7 * time.Second, []string{"6.004s disconnected", "7.406s reconnected", "7.406s watch /lock/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, _ := newWorld(t, DefaultConfig())
			addRaw(k, "holder", steps(
				one(connect(0, 10*time.Second), create(10*ms, "/lock/a", true, false)),
				pings(time.Second, 3*time.Second, time.Second),
				one(op(4*time.Second, OpDelete, "/lock/a")),
			)...)
			c, id := addSess(k, "c",
				connectAt(0, 6*time.Second, false),
				callAt(100*ms, Request{Op: OpExists, Path: "/lock/a", Watch: true}),
			)
			isolate(k, id, 3*time.Second, tt.heal)
			require.NoError(t, k.Run(sim.At(10*time.Second)))
			require.GreaterOrEqual(t, len(c.log), 2)
			assert.Equal(t, []string{"0.002s connected", "0.102s reply exists"}, c.log[:2])
			assert.Equal(t, tt.want, c.log[2:])
		})
	}
}

// TestSessionForeignMessages: a Session leaves other messages and tags to
// its process.
func TestSessionForeignMessages(t *testing.T) {
	var s Session
	ok, ev := s.Fire(nil, actTag(1))
	assert.False(t, ok)
	assert.Nil(t, ev)
	ok, _ = s.Handle(nil, 0, "hello")
	assert.False(t, ok)
	ok, _ = s.Handle(nil, 0, Reply{}) // not connected: not ours either
	assert.False(t, ok)
}

// lockClient is the ZooKeeper lock recipe (recipes.md, "Locks") on a
// Session: create an ephemeral-sequential node under /lock, list the
// children, hold the lock if the node is the lowest, else watch only the
// next lower node and re-check when it goes. It logs "acquired", "released",
// "disconnected", "expired".
type lockClient struct {
	k       *sim.Kernel
	name    string
	zk      Session
	server  sim.ProcID
	start   time.Duration
	hold    time.Duration
	timeout time.Duration
	node    string
	token   int64
	log     *[]string
}

type lockTag uint8

const (
	lockStart lockTag = iota + 1
	lockRelease
)

func (l *lockClient) Init(env *sim.Env) {
	l.server, _ = env.Lookup("zk")
	env.After(sim.Mono, l.start, lockStart)
}

func (l *lockClient) Fire(env *sim.Env, tag any) {
	if ok, ev := l.zk.Fire(env, tag); ok {
		l.on(env, ev)
		return
	}
	switch tag.(lockTag) {
	case lockStart:
		l.zk.Connect(env, l.server, l.timeout, 0)
	case lockRelease:
		l.zk.Call(env, Request{Op: OpDelete, Path: l.node})
		l.logf("released")
	}
}

func (l *lockClient) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	if ok, ev := l.zk.Handle(env, from, msg); ok {
		l.on(env, ev)
	}
}

func (l *lockClient) on(env *sim.Env, evs []SessionEvent) {
	for _, e := range evs {
		switch e.Kind {
		case EventConnected:
			l.zk.Call(env, Request{Op: OpCreate, Path: "/lock/n-", Ephemeral: true, Sequential: true})
		case EventReply:
			r := e.Reply
			if r.Err != "" {
				continue // a real client would retry; the tests need not
			}
			switch r.Op {
			case OpCreate:
				l.node, l.token = r.Path, r.Zxid
				l.zk.Call(env, Request{Op: OpGetChildren, Path: "/lock"})
			case OpGetChildren:
				me := nameOf(l.node)
				i := 0
				for i < len(r.Children) && r.Children[i] != me {
					i++
				}
				if i == 0 {
					l.logf("acquired token %d", l.token)
					env.After(sim.Mono, l.hold, lockRelease)
				} else {
					prev := "/lock/" + r.Children[i-1]
					l.logf("watches %s", prev)
					l.zk.Call(env, Request{Op: OpExists, Path: prev, Watch: true})
				}
			case OpExists:
				if !r.Exists {
					l.zk.Call(env, Request{Op: OpGetChildren, Path: "/lock"})
				}
			}
		case EventWatch:
			l.zk.Call(env, Request{Op: OpGetChildren, Path: "/lock"})
		case EventDisconnected, EventExpired:
			l.logf("%s", e.Kind)
		}
	}
}

func (l *lockClient) logf(format string, args ...any) {
	*l.log = append(*l.log, l.k.Now().String()+" "+l.name+" "+fmt.Sprintf(format, args...))
}

func addLock(k *sim.Kernel, log *[]string, name string, start, hold, timeout time.Duration) sim.ProcID {
	l := &lockClient{k: k, name: name, start: start, hold: hold, timeout: timeout, log: log}
	return k.Add(name, func() sim.Process { return l }, sim.ClockSpec{})
}

// TestLockRecipePredecessorWatch: three clients queue for the lock; each
// waiter watches only its predecessor, so every release wakes exactly one
// client (no herd effect).
func TestLockRecipePredecessorWatch(t *testing.T) {
	k, _ := newWorld(t, DefaultConfig())
	var log []string
	addLock(k, &log, "c1", 0, time.Second, 10*time.Second)
	addLock(k, &log, "c2", 10*ms, time.Second, 10*time.Second)
	addLock(k, &log, "c3", 20*ms, time.Second, 10*time.Second)
	require.NoError(t, k.Run(sim.At(5*time.Second)))
	assert.Equal(t, []string{
		"0.006s c1 acquired token 2", // zxid 1 is c1's session
		"0.016s c2 watches /lock/n-0000000000",
		"0.026s c3 watches /lock/n-0000000001",
		"1.006s c1 released",
		"1.010s c2 acquired token 4",
		"2.010s c2 released",
		"2.014s c3 acquired token 6",
		"3.014s c3 released",
	}, log)
	assert.Equal(t, []string{"1.007s /lock/n-0000000000 to s2", "2.011s /lock/n-0000000001 to s3"}, traceOf(k, KindWatchFired))
}

// TestLockRecipePausedHolder is reference section 6.4's failure: the holder
// pauses, its session expires, its node is deleted and the next client
// takes the lock while the holder, paused, still believes it holds it. A
// lock-delay postpones the takeover by its length.
func TestLockRecipePausedHolder(t *testing.T) {
	tests := []struct {
		name      string
		lockDelay time.Duration
		want      []string
	}{
		{"no lock-delay", 0, []string{
			"0.006s c1 acquired token 2",
			"0.016s c2 watches /lock/n-0000000000",
			// The server last heard c1 at 0.005: expiry at the bucket after
			// 4.005, 6 s; c2 hears of it at 6.001 and re-lists the children.
			"6.003s c2 acquired token 4",
			"21.000s c1 disconnected",
			"21.000s c1 expired",
		}},
		{"lock-delay 10s", 10 * time.Second, []string{
			"0.006s c1 acquired token 2",
			"0.016s c2 watches /lock/n-0000000000",
			"16.003s c2 acquired token 4",
			"21.000s c1 disconnected",
			"21.000s c1 expired",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.LockDelay = tt.lockDelay
			k, _ := newWorld(t, cfg)
			var log []string
			c1 := addLock(k, &log, "c1", 0, time.Minute, 4*time.Second)
			addLock(k, &log, "c2", 10*ms, time.Minute, 40*time.Second)
			k.At(sim.At(time.Second), func() { k.Pause(c1, 20*time.Second) })
			require.NoError(t, k.Run(sim.At(30*time.Second)))
			assert.Equal(t, tt.want, log)
			// The paused holder's belief and c2's overlap: the lock failed.
			assert.True(t, strings.HasSuffix(log[len(log)-1], "c1 expired"))
		})
	}
}

// TestDeterministic: the same run gives the same trace, bit for bit.
func TestDeterministic(t *testing.T) {
	run := func() [32]byte {
		cfg := DefaultConfig()
		cfg.LockDelay = 5 * time.Second
		k := sim.New(sim.Config{Seed: 7, Network: sim.NetConfig{Latency: sim.Range{Lo: ms, Hi: 5 * ms}}})
		k.Add("zk", func() sim.Process { return New(cfg) }, sim.ClockSpec{})
		var log []string
		ids := make([]sim.ProcID, 0, 4)
		for i := 0; i < 4; i++ {
			ids = append(ids, addLock(k, &log, fmt.Sprintf("c%d", i+1), time.Duration(i)*ms, 2*time.Second, 4*time.Second))
		}
		k.At(sim.At(time.Second), func() { k.Pause(ids[0], 10*time.Second) })
		isolate(k, ids[2], 3*time.Second, 9*time.Second)
		require.NoError(t, k.Run(sim.At(30*time.Second)))
		require.NotEmpty(t, log)
		return k.TraceHash()
	}
	assert.Equal(t, run(), run())
}
