package clients

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/nodes/storage"
	"github.com/locksim/locksim/sim"
)

// switchSentinel is a sentinel reduced to what a client sees of it: it
// answers get-master-addr-by-name with master, confirms SUBSCRIBE and, at
// switchAt, answers R from then on and publishes +switch-master for name
// to its subscribers (as nodes/sentinel does, sentinel.c:5324-5328).
type switchSentinel struct {
	env      *sim.Env
	master   string
	name     string
	switchAt time.Duration
	subs     []redis.Push // Sub: the SUBSCRIBE's id; Value.Int: the subscriber
}

func (s *switchSentinel) Init(env *sim.Env) {
	s.env = env
	env.After(sim.Mono, s.switchAt, "switch")
}

func (s *switchSentinel) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	var r redis.Request
	switch m := msg.(type) {
	case *redis.Request:
		r = *m
	case redis.Request:
		r = m
	default:
		return
	}
	switch strings.ToUpper(r.Args[0]) {
	case "SUBSCRIBE":
		s.subs = append(s.subs, redis.Push{Sub: r.ID, Value: redis.Int(int64(from))})
		env.Send(from, redis.Reply{ID: r.ID, Value: redis.Array(redis.Bulk("subscribe"), redis.Bulk(r.Args[1]), redis.Int(1))})
	case "SENTINEL":
		env.Send(from, redis.Reply{ID: r.ID, Value: redis.Array(redis.Bulk(s.master), redis.Bulk("6379"))})
	}
}

func (s *switchSentinel) Fire(env *sim.Env, _ any) {
	s.master = "R"
	for _, sub := range s.subs {
		env.Send(sim.ProcID(sub.Value.Int), redis.Push{Sub: sub.Sub, Value: redis.Array(redis.Bulk("message"), redis.Bulk("+switch-master"), redis.Bulk(s.name+" M 6379 R 6379"))})
	}
}

// After +switch-master (go-redis v9.23.0 sentinel.go:1292-1316, 660-676)
// the holder's release goes to the new master; a command waiting on the
// old master's connection fails at once and is not sent again; a message
// for another master name leaves the release on the old master. Redisson
// does not subscribe: its scan, every second, finds the new master and its
// unlock goes there (SentinelConnectionManager.scheduleChangeCheck).
func TestReleaseFollowsSwitchMaster(t *testing.T) {
	tests := []struct {
		name      string
		alg       string
		msgName   string // the master name in the message
		pauseM    bool   // M is paused from 500ms: the release waits on its connection at the switch
		releaseTo string // where the release (the compare-and-delete) is sent; "" nowhere
		failed    bool   // the switch failed a request waiting on M
		scan      bool   // the client scans (Redisson) instead of subscribing
	}{
		{name: "release goes to the new master", alg: RedisSingle, msgName: "mymaster", releaseTo: "R"},
		{name: "redsync's release too", alg: Redsync, msgName: "mymaster", releaseTo: "R"},
		{name: "another master's switch is ignored", alg: RedisSingle, msgName: "othermaster", releaseTo: "M"},
		{name: "redisson scans instead", alg: Redisson, msgName: "mymaster", releaseTo: "R", scan: true},
		{name: "a release in flight fails and is not resent", alg: RedisSingle, msgName: "mymaster", pauseM: true, releaseTo: "M", failed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.redis("M", "R")
			w.storage(storage.FencingNone)
			w.Add("s1", func() sim.Process {
				return &switchSentinel{master: "M", name: tt.msgName, switchAt: 2 * time.Second}
			}, sim.ClockSpec{})
			lc := lockConfig(t, tt.alg, func(c *LockConfig) {
				c.TTL = 30 * time.Second
				if tt.alg == Redsync {
					c.Nodes = []string{"M"}
				} else {
					c.Node = "M"
				}
			})
			// The release at 3s comes after the switch at 2s; with M
			// paused, it is sent at 1s and waits on M's connection.
			hold := 3 * time.Second
			if tt.pauseM {
				hold = time.Second
			}
			cfg := clientConfig("c1", lc, Workload{Cycles: 1, Hold: hold})
			cfg.Discovery = &Discovery{Master: "M", Sentinels: []string{"s1"}}
			w.client(cfg)
			if tt.pauseM {
				w.At(500*time.Millisecond, func() { w.K.Pause(w.ID("M"), 10*time.Second) })
			}
			w.run(15 * time.Second)

			require.Len(t, beliefs(w.K.Finish(), "c1"), 1, w.dumpTrace())
			sentTo := map[string]int{}
			for _, e := range w.Events(sim.KindSend, "c1") {
				if strings.Contains(e.Text, "EVAL") && e.At > sim.At(500*time.Millisecond) {
					sentTo[e.Peer]++
				}
			}
			if tt.releaseTo == "R" {
				assert.Positive(t, sentTo["R"], "the release went to R\n%s", w.dumpTrace())
				assert.Zero(t, sentTo["M"], "nothing went to M after the switch\n%s", w.dumpTrace())
			} else {
				assert.Positive(t, sentTo["M"], "the release went to M\n%s", w.dumpTrace())
				assert.Zero(t, sentTo["R"], "nothing went to R\n%s", w.dumpTrace())
			}
			assert.Equal(t, tt.failed, w.TraceHas(KindClient, "c1", "switch-master: 1 request(s) to M failed"), w.dumpTrace())
			assert.Equal(t, !tt.scan, w.TraceHas(sim.KindSend, "c1", "SUBSCRIBE +switch-master"), w.dumpTrace())
			assert.Equal(t, tt.scan, w.TraceHas(KindClient, "c1", "sentinel scan: master M has changed to R"), w.dumpTrace())
		})
	}
}
