package clients

import (
	"strings"
	"time"

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
// Redisson does not subscribe: its SentinelConnectionManager asks a
// sentinel for the master once, when the client is made (its
// constructor), then every scanInterval (SentinelServersConfig.scanInterval,
// 1000 ms by default) after the previous check ended (scheduleChangeCheck,
// checkState, updateState: get-master-addr-by-name on the first sentinel
// that connects); a different answer is changeMaster
// (MasterSlaveEntry.changeMaster): the new master entry takes the commands,
// the old master's pools are dropped and its client shut down
// (oldMaster.shutdownAsync), which closes its connections. It does not ask
// before an attempt or after an error.
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

// Simplifications (Redisson): the sentinels are asked in their order, not
// shuffled (Collections.shuffle); a command waiting on the old master when
// the scan finds a new one fails at once, where Redisson's retry
// (retryAttempts, retryInterval) would send it again to the new master:
// locksim's Redisson model retries no command (redisson.go).

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
	c.dropOld(old, "switch-master")
}

// dropOld closes the connection to the old master and fails what waits on
// it, without a retry.
func (c *client) dropOld(old sim.ProcID, why string) {
	c.env.Close(old)
	c.failPending(old, func(pending) bool { return false }, func(n int) {
		c.env.Logf(KindClient, "%s: %d request(s) to %s failed (connection closed)", why, n, c.env.NameOf(old))
	})
}

// polls reports whether the client polls the sentinels instead of
// subscribing: Redisson's, of the discovered master.
func (c *client) polls() bool {
	return c.usesDiscovery() && c.cfg.Lock.Algorithm == Redisson
}

// redissonSentinelScan is SentinelServersConfig.scanInterval's default
// ("private int scanInterval = 1000").
const redissonSentinelScan = 1000 * time.Millisecond

// firstScan is the Redisson constructor's question to the sentinels: the
// first attempt waits for it, and the scan runs from then on; later
// attempts go at once.
func (c *client) firstScan(then func()) {
	if c.scanning {
		then()
		return
	}
	c.discover(func() {
		if !c.scanning {
			c.scanning = true
			c.armSentinelScan()
		}
		then()
	})
}

// armSentinelScan schedules the next check scanInterval after the last one ended.
func (c *client) armSentinelScan() {
	c.after(redissonSentinelScan, whatSentinelScan, c.sentinelScan)
}

// sentinelScan is checkState/updateState: ask the sentinels; a new master
// is changeMaster's: later commands go to it (discover sets it), the old
// master's connection is closed and what waits on it fails.
func (c *client) sentinelScan() {
	was := c.master
	oldID := c.addr(c.cfg.Discovery.Master)
	c.discover(func() {
		if c.master != was {
			c.env.Logf(KindClient, "sentinel scan: master %s has changed to %s; connection to %s closed", was, c.master, was)
			c.dropOld(oldID, "sentinel scan")
		}
		c.armSentinelScan()
	})
}
