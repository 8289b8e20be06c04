package sentinel

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// fakeRedis is a minimal stand-in for a Redis node: it answers PING, INFO
// (role, replication offset, priority, run id, master link) and REPLICAOF,
// and it comes back from a crash with its configured role, as a master
// without persistence of its replication state does.
type fakeRedis struct {
	cfg    fakeNode
	master string // "" when master
}

type fakeNode struct {
	name      string
	replicaOf string
	priority  int
	offset    int64
	runID     string
	replicas  []string // listed in INFO while master
}

func (f *fakeRedis) Init(env *sim.Env) { f.master = f.cfg.replicaOf }

func (f *fakeRedis) Fire(env *sim.Env, tag any) {}

func (f *fakeRedis) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	req, ok := msg.(redis.Request)
	if !ok {
		return
	}
	var v redis.Value
	switch strings.ToUpper(req.Args[0]) {
	case "PING":
		v = redis.Status("PONG")
	case "INFO":
		v = redis.Bulk(f.info())
	case "REPLICAOF":
		if strings.EqualFold(req.Args[1], "NO") {
			if f.master != "" {
				env.Log("promoted", "fake promoted")
			}
			f.master = ""
		} else {
			f.master = req.Args[1]
			env.Logf("replicaof", "fake replicaof %s", f.master)
		}
		v = redis.OK()
	case "CONFIG":
		v = redis.OK()
	default:
		v = redis.Err("ERR unknown command")
	}
	env.Send(from, redis.Reply{ID: req.ID, Value: v})
}

func (f *fakeRedis) info() string {
	var b strings.Builder
	b.WriteString("# Server\r\n")
	if f.cfg.runID != "" {
		fmt.Fprintf(&b, "run_id:%s\r\n", f.cfg.runID)
	}
	b.WriteString("\r\n# Replication\r\n")
	if f.master == "" {
		b.WriteString("role:master\r\n")
		fmt.Fprintf(&b, "connected_slaves:%d\r\n", len(f.cfg.replicas))
		for i, r := range f.cfg.replicas {
			fmt.Fprintf(&b, "slave%d:ip=%s,port=6379,state=online,offset=%d,lag=0\r\n", i, r, f.cfg.offset)
		}
	} else {
		b.WriteString("role:slave\r\n")
		fmt.Fprintf(&b, "master_host:%s\r\nmaster_port:6379\r\nmaster_link_status:up\r\n", f.master)
		fmt.Fprintf(&b, "slave_repl_offset:%d\r\n", f.cfg.offset)
		prio := f.cfg.priority
		if prio < 0 {
			prio = 0
		}
		fmt.Fprintf(&b, "slave_priority:%d\r\n", prio)
		b.WriteString("connected_slaves:0\r\n")
	}
	fmt.Fprintf(&b, "master_repl_offset:%d\r\n", f.cfg.offset)
	return b.String()
}

// world is a test deployment on the shared harness (internal/simtest):
// Redis nodes (fake or real) and sentinels.
type world struct {
	*simtest.World
	sentinels []string
}

// newWorld returns an empty deployment whose messages take 1 to 3 ms.
func newWorld(t testing.TB, seed uint64) *world {
	sw := simtest.NewWorld(t, 0, simtest.Options{Seed: seed, Latency: &sim.Range{Lo: time.Millisecond, Hi: 3 * time.Millisecond}})
	return &world{World: sw}
}

func (w *world) sentinel(t testing.TB, name string) *Sentinel {
	p := w.K.Process(w.ID(name))
	require.NotNil(t, p, "sentinel %s is not running", name)
	return p.(*Sentinel)
}

// first returns the time of the first event of a kind (and process), or -1.
func (w *world) first(kind sim.Kind, proc string) sim.Time {
	if ev := w.Events(kind, proc); len(ev) > 0 {
		return ev[0].At
	}
	return -1
}

// sentinelNames returns S1..Sn.
func sentinelNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("S%d", i+1)
	}
	return out
}

// worldOption adjusts the sentinels' config after the builder filled it in.
type worldOption func(*Config)

// withoutReplicaList leaves Config.Replicas empty: the sentinels must learn
// the replicas from the master's INFO.
func withoutReplicaList(c *Config) { c.Replicas = nil }

// newFakeWorld builds fake Redis nodes and n sentinels monitoring
// nodes[0] with cfg (Master, Replicas and Sentinels are filled in).
func newFakeWorld(t testing.TB, seed uint64, cfg Config, nodes []fakeNode, n int, opts ...worldOption) *world {
	w := newWorld(t, seed)
	w.sentinels = sentinelNames(n)
	cfg.Master = nodes[0].name
	cfg.Replicas = nil
	for _, nd := range nodes {
		nd := nd
		w.Add(nd.name, func() sim.Process { return &fakeRedis{cfg: nd} }, sim.ClockSpec{})
		if nd.name != cfg.Master {
			cfg.Replicas = append(cfg.Replicas, nd.name)
		}
	}
	cfg.Sentinels = w.sentinels
	for _, o := range opts {
		o(&cfg)
	}
	for _, s := range w.sentinels {
		w.Add(s, func() sim.Process { return New(cfg) }, sim.ClockSpec{})
	}
	return w
}

// standardFakes is a master A with replicas B (offset 100) and C (offset 90).
func standardFakes() []fakeNode {
	return []fakeNode{
		{name: "A", offset: 100, replicas: []string{"B", "C"}},
		{name: "B", replicaOf: "A", priority: 100, offset: 100},
		{name: "C", replicaOf: "A", priority: 100, offset: 90},
	}
}

// querier asks a sentinel for the master's address every 100 ms and keeps
// the last answer, as a Sentinel-aware lock client does.
type querier struct {
	sentinel string
	master   string
	last     redis.Value
	answers  int
	id       uint64
}

func (q *querier) Init(env *sim.Env) { env.After(sim.Mono, 100*time.Millisecond, "ask") }

func (q *querier) Fire(env *sim.Env, tag any) {
	id, _ := env.Lookup(q.sentinel)
	q.id++
	env.Send(id, redis.Request{ID: q.id, Args: []string{"SENTINEL", "get-master-addr-by-name", q.master}})
	env.After(sim.Mono, 100*time.Millisecond, "ask")
}

func (q *querier) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	if r, ok := msg.(redis.Reply); ok {
		q.last = r.Value
		q.answers++
	}
}
