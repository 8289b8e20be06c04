package clients

import (
	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// defaultMasterName is the name sentinels know the master by when the
// scenario gives none: "sentinel monitor mymaster 127.0.0.1 6379 2"
// (sentinel.conf:92, reference §3.4).
const defaultMasterName = "mymaster"

// discovered reports whether node is the Sentinel-monitored master, whose
// address the client asks the sentinels for.
func (c *client) discovered(node string) bool {
	return c.cfg.Discovery != nil && node == c.cfg.Discovery.Master
}

// usesDiscovery reports whether any of the lock's servers is discovered.
func (c *client) usesDiscovery() bool {
	for _, n := range c.cfg.Lock.servers() {
		if c.discovered(n) {
			return true
		}
	}
	return false
}

// addr returns the process to send node's commands to: the current master
// as the sentinels last reported it for the monitored master, node itself
// otherwise.
func (c *client) addr(node string) sim.ProcID {
	if c.discovered(node) {
		node = c.master
	}
	// Names resolve to the same process for the whole run; a client talks
	// to a few nodes, so a small slice caches them (this runs per request).
	for _, a := range c.addrs {
		if a.name == node {
			return a.id
		}
	}
	id, ok := c.env.Lookup(node)
	if !ok {
		panic("clients: unknown process " + node + " (the scenario layer checks process names)")
	}
	c.addrs = append(c.addrs, addrEntry{name: node, id: id})
	return id
}

// addrEntry is a cached process name lookup.
type addrEntry struct {
	name string
	id   sim.ProcID
}

// discover asks the sentinels, in order, for the current master
// (SENTINEL get-master-addr-by-name <name>, answered with [host, port]; the
// host is the master's process name) and then calls then. A sentinel that
// times out or answers nothing useful is skipped; if none answers, the
// client keeps the master it knew. Clients without discovery call then at
// once. A go-redis client without a live subscription subscribes to the
// sentinel that answered (follow.go).
//
// Simplification: go-redis asks when it dials a connection to the master
// (sentinel.go:682-696: the first command, and the first after a
// connection was closed); locksim's clients ask before each acquire
// attempt and after an error (SCENARIO_FORMAT.md "Master discovery").
func (c *client) discover(then func()) {
	if !c.usesDiscovery() {
		then()
		return
	}
	d := c.cfg.Discovery
	name := c.masterName()
	var ask func(i int)
	ask = func(i int) {
		if i == len(d.Sentinels) {
			c.env.Logf(KindClient, "discovery: no sentinel answered; keeping master %s", c.master)
			then()
			return
		}
		to, ok := c.env.Lookup(d.Sentinels[i])
		if !ok {
			panic("clients: unknown sentinel process " + d.Sentinels[i])
		}
		c.cmd(to, c.cfg.Lock.NodeTimeout, func(v redis.Value, ok bool) {
			if ok && v.Kind == redis.KindArray && len(v.Array) >= 1 && v.Array[0].Kind == redis.KindBulk {
				if _, known := c.env.Lookup(v.Array[0].Str); known {
					if v.Array[0].Str != c.master {
						c.env.Logf(KindClient, "discovery: master is %s (was %s)", v.Array[0].Str, c.master)
					}
					c.master = v.Array[0].Str
					c.subscribe(to)
					then()
					return
				}
			}
			ask(i + 1)
		}, "SENTINEL", "get-master-addr-by-name", name)
	}
	ask(0)
}

// masterName is the name the sentinels know the master by.
func (c *client) masterName() string {
	if n := c.cfg.Discovery.MasterName; n != "" {
		return n
	}
	return defaultMasterName
}

// noteError records that a command to node failed (an error reply or a
// timeout); for the discovered master the client asks the sentinels again
// in the background.
func (c *client) noteError(node string) {
	if !c.discovered(node) || c.rediscovering || c.polls() {
		return
	}
	c.rediscovering = true
	c.discover(func() { c.rediscovering = false })
}
