package clients

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/nodes/storage"
	"github.com/locksim/locksim/sim"
)

// scriptedNode is a cluster node that answers from a script: CLUSTER SLOTS
// with the next entry of slots (every slot to the node named; the last
// entry repeats), every other command with the next entry of replies (an
// error when it is an error message, OK when the script is spent).
type scriptedNode struct {
	slots   []string
	replies []string
}

func (n *scriptedNode) Init(*sim.Env)      {}
func (n *scriptedNode) Fire(*sim.Env, any) {}
func (n *scriptedNode) next(l *[]string) string {
	s := (*l)[0]
	if len(*l) > 1 {
		*l = (*l)[1:]
	}
	return s
}

func (n *scriptedNode) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	req, ok := msg.(*redis.Request)
	if !ok {
		return
	}
	var v redis.Value
	switch {
	case len(req.Args) == 2 && req.Args[0] == "CLUSTER" && req.Args[1] == "SLOTS":
		owner := n.next(&n.slots)
		v = redis.Array(redis.Array(redis.Int(0), redis.Int(redis.ClusterSlots-1), redis.Array(redis.Bulk(owner), redis.Int(6379))))
	case len(n.replies) == 0:
		v = redis.OK()
	default:
		r := n.replies[0]
		n.replies = n.replies[1:]
		switch r {
		case "DROP": // no reply: the client's read times out
			return
		case "CLOSE": // the node closes the connection: EOF
			env.Close(from)
			return
		}
		if r == "OK" {
			v = redis.OK()
		} else {
			v = redis.Err(r)
		}
	}
	env.Send(from, redis.Reply{ID: req.ID, Value: v})
}

// TestClusterRetries runs testdata/cluster-retries: a redis-single client
// (one try, so the algorithm's own retries do not hide the client's) on a
// two-node cluster of scripted nodes n1 and n2. Each case is
//
//	run [wait]
//	n1 slots=OWNER[,OWNER...] replies=REPLY[;REPLY...]
//	n2 ...
//
// (replies separated by ';'; DROP answers nothing, CLOSE closes the
// connection; wait: the lock sends WAIT 1 after its SET); the output is every command the client sent
// (time, node, command) and what the algorithm saw: go-redis v9.23.0's
// ClusterClient.process loop (clients/cluster.go clusterRedirect).
func TestClusterRetries(t *testing.T) {
	datadriven.RunTest(t, "testdata/cluster-retries", func(t *testing.T, td *datadriven.TestData) string {
		require.Equal(t, "run", td.Cmd, "%s: unknown command", td.Pos)
		w := newWorld(t)
		nodes := map[string]*scriptedNode{"n1": {slots: []string{"n1"}}, "n2": {slots: []string{"n1"}}}
		for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
			f := strings.Fields(line)
			require.NotEmpty(t, f, "%s: empty line", td.Pos)
			n, ok := nodes[f[0]]
			require.True(t, ok, "%s: unknown node %q", td.Pos, f[0])
			for _, kv := range f[1:] {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "slots":
					n.slots = strings.Split(v, ",")
				case "replies":
					n.replies = strings.Split(strings.ReplaceAll(v, "_", " "), ";")
				default:
					t.Fatalf("%s: unknown field %q", td.Pos, k)
				}
			}
		}
		for _, name := range []string{"n1", "n2"} {
			n := nodes[name]
			w.Add(name, func() sim.Process { return n }, sim.ClockSpec{})
		}
		w.storage(storage.FencingNone)
		lc := lockConfig(t, RedisSingle, func(c *LockConfig) {
			c.Node, c.Tries = "n1", 1
			if td.HasArg("wait") {
				c.WaitReplicas = 1
			}
		})
		cfg := clientConfig("c1", lc, Workload{Start: time.Second, Cycles: 1, Hold: 100 * time.Millisecond, Think: time.Minute})
		cfg.Clusters = []*Cluster{{Nodes: []string{"n1", "n2"}}}
		w.client(cfg)
		w.run(30 * time.Second)
		var b strings.Builder
		for _, e := range w.K.Trace() {
			switch {
			case e.Kind == sim.KindSend && e.Proc == "c1" && e.Peer != "S":
				fmt.Fprintf(&b, "%s send %s %s\n", e.At, e.Peer, e.Text)
			case e.Kind == KindClient && e.Proc == "c1" && strings.HasPrefix(e.Text, "cluster:"):
				fmt.Fprintf(&b, "%s %s\n", e.At, e.Text)
			case e.Proc == "c1" && (e.Kind == sim.KindAcquired || e.Kind == sim.KindAcquireFailed):
				fmt.Fprintf(&b, "%s %s %s\n", e.At, e.Kind, e.Text)
			}
		}
		return b.String()
	})
}

// go-redis's RetryBackoff: attempt 1 draws from [10ms, 30ms), 2 from
// [10ms, 50ms), 3 from [10ms, 90ms); a shift past the maximum is capped
// at 1 s.
func TestClusterRetryBackoff(t *testing.T) {
	r := sim.NewRand(1, "backoff")
	for attempt, hi := range map[int]time.Duration{1: 30 * time.Millisecond, 2: 50 * time.Millisecond, 3: 90 * time.Millisecond} {
		for i := 0; i < 200; i++ {
			d := retryBackoff(attempt, r)
			assert.GreaterOrEqual(t, d, 10*time.Millisecond)
			assert.Less(t, d, hi)
		}
	}
	assert.Equal(t, time.Second, retryBackoff(20, r))
	assert.Equal(t, time.Second, retryBackoff(70, r), "an overflowing shift is the maximum")
}
