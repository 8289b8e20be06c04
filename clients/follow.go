package clients

import (
	"strings"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// Following the master, as go-redis v9.23.0's failover client does
// (sentinel.go, cited by line below; the clients' plumbing is go-redis').
//
//   - Once a sentinel answered get-master-addr-by-name, the client
//     subscribes on it to +switch-master and +replica-reconf-done
//     (setSentinel, sentinel.go:1255-1264), and keeps the subscription while
//     it lives.
//   - A +switch-master message "<name> <old-ip> <old-port> <new-ip>
//     <new-port>" for another master name is ignored (listen,
//     sentinel.go:1301-1306); otherwise the new address goes to
//     trySwitchMaster (:1307-1308), which does nothing when it is the
//     address the client already uses (:1231-1241) and else records it and
//     calls onFailover (:1242-1252).
//   - onFailover (NewFailoverClient, sentinel.go:660-676) filters the pool:
//     every connection to another address is closed, idle or in use
//     (ConnPool.Filter, internal/pool/pool.go:1857-1890). A command waiting
//     on such a connection reads "use of closed network connection", which
//     go-redis does not retry (shouldRetry, error.go:84-175: neither EOF, a
//     dial error, a timeout nor a retryable server error): it fails at once.
//   - The next command dials a new connection, to the new master.
//
// Redisson does not follow this way: its SentinelConnectionManager polls the
// sentinels every scanInterval (1 s) with get-master-addr-by-name
// (scheduleChangeCheck); the redisson algorithm keeps discovery's asking.
//
// Simplifications: the new master is the message's host, where go-redis
// asks the sentinel again when it dials (masterReplicaDialer,
// sentinel.go:682-696) and the sentinel, having published the message in
// the event-loop step that changed its master (sentinel.c:5324-5328,
// 2949-2957), answers the same; the subscription shares the kernel's one
// connection with the sentinel (go-redis opens one of its own), so it ends
// when a command to that sentinel times out (go-redis then closes the
// subscription too, closeSentinel, sentinel.go:1028-1031); a subscription
// that ended is made again at the next answer of any sentinel, where
// go-redis' PubSub redials the same sentinel on its own (pubsub.go).

// subscription is the client's +switch-master subscription on a sentinel.
type subscription struct {
	to   sim.ProcID
	id   uint64 // the SUBSCRIBE request's id, echoed in redis.Push.Sub
	live bool
}

// follows reports whether the client follows +switch-master: a client of
// the discovered master over go-redis' plumbing (not Redisson's).
func (c *client) follows() bool {
	return c.usesDiscovery() && c.cfg.Lock.Algorithm != Redisson
}

// subscribe subscribes on sentinel to, unless a subscription is live.
// go-redis writes the SUBSCRIBE without waiting for its confirmations
// (PubSub.Subscribe): the reply and the pushes that confirm the channels
// are dropped (complete, push).
func (c *client) subscribe(to sim.ProcID) {
	if !c.follows() || c.sub.live {
		return
	}
	id := c.newID()
	c.sub = subscription{to: to, id: id, live: true}
	c.env.Send(to, redis.Request{ID: id, Args: subscribeArgs})
}

// subscribeArgs is go-redis' SUBSCRIBE of the failover client
// (sentinel.go:1262).
var subscribeArgs = []string{"SUBSCRIBE", "+switch-master", "+replica-reconf-done"}

// subscriptionEnded notes that the subscription's connection ended.
func (c *client) subscriptionEnded() {
	c.sub.live = false
	c.env.Logf(KindClient, "subscription to +switch-master on %s ended", c.env.NameOf(c.sub.to))
}

// push handles a message on the subscription.
func (c *client) push(from sim.ProcID, m redis.Push) {
	if !c.sub.live || from != c.sub.to || m.Sub != c.sub.id {
		return // a subscription the client no longer has
	}
	v := m.Value
	if v.Kind != redis.KindArray || len(v.Array) != 3 || v.Array[0].Str != "message" || v.Array[1].Str != "+switch-master" {
		return // a channel's confirmation, or +replica-reconf-done
	}
	parts := strings.Split(v.Array[2].Str, " ")
	if len(parts) < 5 {
		return
	}
	if parts[0] != c.masterName() {
		c.env.Logf(KindClient, "switch-master: ignored for master %q", parts[0])
		return
	}
	c.switchMaster(parts[3])
}

// switchMaster is trySwitchMaster and onFailover: commands go to the new
// master from now on; the connection to the old one is closed and what
// waits on it fails.
func (c *client) switchMaster(to string) {
	if to == c.master {
		return
	}
	if _, ok := c.env.Lookup(to); !ok {
		return // not a process of the scenario: nothing to dial
	}
	old := c.addr(c.cfg.Discovery.Master)
	c.env.Logf(KindClient, "switch-master: new master %s (was %s); connection to %s closed", to, c.master, c.master)
	c.master = to
	c.env.Close(old)
	c.failPending(old, func(pending) bool { return false }, func(n int) {
		c.env.Logf(KindClient, "switch-master: %d request(s) to %s failed (connection closed)", n, c.env.NameOf(old))
	})
}
