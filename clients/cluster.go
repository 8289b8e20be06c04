package clients

import (
	"sort"
	"strings"
	"time"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/nodes/redis/resp"
	"github.com/locksim/locksim/sim"
)

// Cluster makes a client cluster-aware: the lock's Redis node is one node
// of a Redis Cluster (nodes/redis cluster mode), and the client routes
// every command by its key's slot, as go-redis v9's ClusterClient does
// (osscluster.go of v9.23.0, the version in go.mod, cited as "GR
// osscluster.go:N"):
//   - the slot map comes from CLUSTER SLOTS, loaded before the first
//     command (clusterStateHolder.Get -> Reload, :1349-1353) from the nodes in a
//     random order (loadState, rand.Perm, :1795; here the client's seeded
//     stream);
//   - a -MOVED or -ASK reply sends the command again to the node it names
//     (ASK: ASKING and the command pipelined on that node, :1528-1533; the
//     ASK is not written into the slot map, so the next command of the
//     slot goes to the source again and is asked over while the slot
//     migrates), and schedules a reload of the slot map on MOVED and ASK
//     alike (:1562-1564; the pipeline path, checkMovedErr :2331-2350,
//     reloads on MOVED only) (LazyReload, :1314-1347: one reload at a
//     time, a 200 ms cooldown, one more if another was asked for
//     meanwhile); a -CLUSTERDOWN,
//     -TRYAGAIN, -LOADING (and the other errors shouldRetry accepts) is
//     retried after a backoff; redirects and retries share one budget of
//     MaxRedirects = 3 (clusterRedirect);
//   - so do network errors: a command whose connection ended (EOF, reset,
//     refused) or whose read timed out (unless it has a read timeout of
//     its own, as WAIT) is retried in the same loop (clusterNetRetry);
//   - read-only routing is off (ReadOnly false): reads go to masters too.
//
// Simplifications: a lock client's keyless command (WAIT after a SET,
// Redisson's INFO replication) goes to the master of the lock key's slot,
// as it would on the same connection in a pipeline or a Redisson batch;
// another client's (a counter's MULTI) to the node of its last keyed
// command; the COMMAND go-redis sends once, before the first command, for
// the command policies (routeAndRun -> cmdInfo -> cmdsInfo, GR
// osscluster_router.go:31-45, osscluster.go:3018-3084) is not sent; a
// redsync round's context deadline is its requests' timeout
// (quorum.go roundTimeout), so a retry after a network error never
// outlives it (go-redis would read until its ReadTimeout). A map older
// than ClusterStateReloadInterval (60 s, :305-307) is reloaded in the
// background when a command uses it (clusterStateHolder.Get, :1349-1361):
// after a failover without a MOVED (the old master is unreachable, so its
// commands time out) this is how the client finds the new master.
//
// Redisson (ClusterConnectionManager) instead rescans the topology every
// scanInterval, 5000 ms by default (redisson ClusterServersConfig.java:42,
// "private int scanInterval = 5000"): a Redisson client reloads its slot
// map every 5 s after the first load, and follows MOVED/ASK as above.
//
// A client may use several independent clusters (Config.Clusters): Redlock
// over clusters names one node of each, and each command routes within
// the cluster of the node it was sent to.
type Cluster struct {
	// Nodes are the cluster's nodes (process names), in creation order.
	Nodes []string
}

// maxRedirects is ClusterOptions.MaxRedirects' default (GR osscluster.go:227-232).
const maxRedirects = 3

// reloadInterval is ClusterStateReloadInterval's default (GR
// osscluster.go:305-307).
const reloadInterval = 60 * time.Second

// redissonScanInterval is Redisson's ClusterServersConfig.scanInterval
// default.
const redissonScanInterval = 5 * time.Second

// reloadCooldown is LazyReload's pause between reloads (GR
// osscluster.go:1335).
const reloadCooldown = 200 * time.Millisecond

// clusterRouting is a cluster-aware client's state.
type clusterRouting struct {
	cfg   *Cluster
	ids   []sim.ProcID
	slots []slotRun // the slot map, sorted by slot; nil until loaded
	// listed are the nodes the last CLUSTER SLOTS reply named (masters
	// and replicas, by index into ids, sorted): go-redis's activeAddrs
	// after the reload's GC (GR osscluster.go:751-776), among which
	// slotMasterNode picks a random one for a slot the map has no node
	// for (c.nodes.Random(), :993-999, :839-847).
	listed                    []int
	loaded                    int64 // mono ns the slot map was loaded
	last                      sim.ProcID
	held                      []heldCmd // commands waiting for the first slot map
	loading, pending, cooling bool
	scanning                  bool // Redisson's periodic rescan is armed
}

// slotRun is a run of slots served by one node (index into ids), with
// the replicas CLUSTER SLOTS lists for it (it leaves failed ones out:
// clusterReplyMultiBulkSlots skips nodeFailed replicas).
type slotRun struct {
	from, to int
	node     int
	replicas int
}

// owner returns the node serving slot s, -1 if the map has none.
func (cl *clusterRouting) owner(s int) int {
	lo, hi := 0, len(cl.slots)
	for lo < hi {
		m := (lo + hi) / 2
		switch r := cl.slots[m]; {
		case s < r.from:
			hi = m
		case s > r.to:
			lo = m + 1
		default:
			return r.node
		}
	}
	return -1
}

// heldCmd is a command sent before the slot map was known.
type heldCmd struct {
	id  uint64
	msg sim.Recycler
	p   pending
}

// routingOf returns the routing of the cluster that node id belongs to,
// nil when it is no cluster's node (or the client is not cluster-aware).
// A client may use several independent clusters (Redlock over clusters).
func (c *client) routingOf(id sim.ProcID) *clusterRouting {
	if len(c.cfg.Clusters) == 0 {
		return nil
	}
	if c.cls == nil {
		for _, cfg := range c.cfg.Clusters {
			cl := &clusterRouting{cfg: cfg, last: sim.NoProc}
			for _, n := range cfg.Nodes {
				nid, ok := c.env.Lookup(n)
				if !ok {
					panic("clients: unknown cluster node " + n)
				}
				cl.ids = append(cl.ids, nid)
			}
			c.cls = append(c.cls, cl)
		}
	}
	for _, cl := range c.cls {
		if cl.member(id) {
			return cl
		}
	}
	return nil
}

func (cl *clusterRouting) member(id sim.ProcID) bool {
	for _, x := range cl.ids {
		if x == id {
			return true
		}
	}
	return false
}

// routeCluster picks the node of a Redis command to a cluster node; it
// reports false when the command was held until the slot map is loaded.
func (c *client) routeCluster(id uint64, msg sim.Recycler, p *pending) bool {
	cl := c.routingOf(p.to)
	req, ok := msg.(*resp.Request)
	if !ok || cl == nil {
		return true
	}
	p.argv = req.Args
	if cl.slots == nil {
		cl.held = append(cl.held, heldCmd{id: id, msg: msg, p: *p})
		c.reloadSlots(cl)
		return false
	}
	if time.Duration(c.env.Mono()-cl.loaded) > reloadInterval {
		c.reloadSlots(cl)
	}
	keys := redis.CommandKeys(req.Args)
	if len(keys) == 0 {
		switch {
		case c.cfg.Lock.Key != "":
			// A lock client's keyless commands (WAIT, INFO replication)
			// are about its lock: the master of the lock key's slot.
			if o := cl.owner(redis.KeySlot(c.cfg.Lock.Key)); o >= 0 {
				p.to = cl.ids[o]
			}
		case cl.last != sim.NoProc:
			p.to = cl.last
		}
		return true
	}
	if to, ok := c.slotMaster(cl, redis.KeySlot(keys[0])); ok {
		p.to = to
	}
	cl.last = p.to
	return true
}

// clusterRedirect handles an error reply v to request p the way go-redis
// v9.23.0's ClusterClient.process loop does (GR osscluster.go:1501-1601):
// one loop of at most MaxRedirects+1 attempts in which redirects and
// retries count alike (attempt := 0; attempt <= MaxRedirects, :1507):
//   - -MOVED or -ASK: the command goes at once (no backoff, :1509-1513) to
//     the node named (ASK preceded by ASKING, :1529-1533), and the slot map
//     is reloaded in the background (LazyReload, :1564);
//   - an error shouldRetry accepts (GR error.go:84-174: CLUSTERDOWN,
//     TRYAGAIN, LOADING, READONLY, MASTERDOWN, NOREPLICAS, max clients):
//     after RetryBackoff(attempt, 10 ms, 1 s) (:1509-1513, :3014-3016;
//     internal/internal.go:8-28; ClusterOptions.init :280-291) the first
//     retry goes to the same node and a later one to the slot's master in
//     the slot map as it is then (MarkAsFailing, node = nil, cmdNode:
//     :1586-1597, :3137-3153); READONLY also reloads the map and goes to
//     the slot's master (:1546-1552).
//
// A Redisson client follows MOVED/ASK the same way but retries on its own
// terms (redisson.go), so the retries are go-redis's only. It reports
// whether the reply was consumed; when the attempts are spent the
// algorithm sees the error, as go-redis returns lastErr (:1598-1600).
func (c *client) clusterRedirect(p pending, v redis.Value) bool {
	if v.Kind != redis.KindError || p.argv == nil || p.attempts >= maxRedirects {
		return false
	}
	if retry, readOnly := clusterRetryable(v.Str); retry && c.cfg.Lock.Algorithm != Redisson {
		cl := c.routingOf(p.to)
		if cl == nil {
			return false
		}
		if readOnly {
			c.reloadSlots(cl)
		}
		return c.clusterRetry(cl, p, v.Str, p.attempts == 0 && !readOnly)
	}
	ask := strings.HasPrefix(v.Str, "ASK ")
	if !ask && !strings.HasPrefix(v.Str, "MOVED ") {
		return false
	}
	f := strings.Fields(v.Str)
	if len(f) != 3 {
		return false
	}
	host := f[2]
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	to, ok := c.env.Lookup(host)
	if !ok {
		return false
	}
	cl := c.routingOf(to)
	if cl == nil {
		return false
	}
	c.env.Logf(KindClient, "cluster: %s, resending to %s", v.Str, host)
	// LazyReload on MOVED and ASK alike (GR osscluster.go:1562-1564); a
	// reload during a migration still names the source.
	c.reloadSlots(cl)
	p.attempts++
	p.to = to
	cl.last = to
	if ask {
		aid := c.newID()
		c.track(aid, pending{to: to, timeout: p.timeout, rcb: callback{fn: func(redis.Value, bool) {}}})
		c.env.SendPooled(to, resp.NewRequest(aid, []string{"ASKING"}))
	}
	id := c.newID()
	c.track(id, p)
	c.env.SendPooled(to, resp.NewRequest(id, p.argv))
	return true
}

// clusterRetry sends p again after go-redis's backoff, as the next
// attempt of the process loop: to the same node when first (the retry
// after attempt 0, GR osscluster.go:1588-1591), otherwise to the slot's
// master in the slot map as it is when the backoff ends (node.MarkAsFailing;
// node = nil; cmdNode -> slotMasterNode, :1593-1595, :1517-1526,
// :3137-3154, :993-999: with ReadOnly off a failing mark does not change
// the choice, so it is the map that decides). A command bounded by a
// context deadline (p.deadline, redsync's acquire round) is not retried
// when the backoff would end at or past it (internal.Sleep returns
// ctx.Err(), GR internal/util.go:37-47), and its retry waits only what is
// left of it. It reports whether it retried.
func (c *client) clusterRetry(cl *clusterRouting, p pending, why string, first bool) bool {
	d := retryBackoff(p.attempts+1, c.env.Rand())
	if p.deadline != 0 {
		left := time.Duration(p.deadline - c.env.Mono())
		if d >= left {
			c.env.Logf(KindClient, "cluster: %s, no retry: the context deadline passes in %s", why, left)
			return false
		}
		p.timeout = left - d
	}
	p.attempts++
	c.env.Logf(KindClient, "cluster: %s, retry %d of %d in %s", why, p.attempts, maxRedirects, d)
	c.after(d, whatClusterRetry, func() {
		if !first {
			// node = nil: cmdNode picks the slot's master from the
			// slot map as it is now (perhaps reloaded meanwhile).
			if to, ok := c.slotNode(cl, p.argv); ok {
				p.to = to
			}
		}
		id := c.newID()
		c.track(id, p)
		c.env.SendPooled(p.to, resp.NewRequest(id, p.argv))
	})
	return true
}

// clusterNetRetry handles a command of a cluster-aware go-redis client
// that failed on the network the way the process loop does (GR
// osscluster.go:1586-1597): it is retried when shouldRetry(err,
// cmd.readTimeout() == nil) accepts the error (GR error.go:84-174) and
// attempts are left (the budget MaxRedirects shares with MOVED, ASK and
// the retryable error replies). The node clients of a ClusterClient
// retry nothing themselves (ClusterOptions.init sets MaxRetries -1,
// osscluster.go:277-279, handed to each node's Options, :469, where -1
// means 0 retries, options.go:765-768), so this loop is the only one.
//   - an ended connection (EOF after the peer's FIN: io.EOF, error.go:90;
//     a reset or a refused connect: a net.OpError whose Timeout() is
//     false, error.go:98-100 and :112-119) is retried, the command may
//     have executed or not;
//   - a read timeout (the model's request timeout is go-redis's
//     ReadTimeout, 5 s by default; or the kernel's ETIMEDOUT, whose
//     Timeout() is true) is retried only when the command has no read
//     timeout of its own (error.go:112-117, retryTimeout =
//     cmd.readTimeout() == nil): WAIT and the blocking commands set one
//     (commands.go:296-300), so a WAIT that timed out is the algorithm's
//     at once, while a SET NX that timed out is sent again although its
//     first copy may have executed: the retry then finds the key (its
//     own) and answers nil, and the client believes it did not get a lock
//     whose key it holds.
//
// No reload of the slot map follows a network error (the loop reloads on
// MOVED, ASK and READONLY only, :1546-1564): until a MOVED or the 60 s
// reload (clusterStateHolder.Get) the retries go to the node the map
// names, a dead master included. The timed-out connection was closed
// (isBadConn, error.go:188-226; releaseConnToPool, redis.go:1294-1302),
// so the retry opens a new one. Redisson's retries are its own
// (redisson.go). It reports whether the command was retried.
func (c *client) clusterNetRetry(p pending, timedOut bool, why string) bool {
	if len(c.cfg.Clusters) == 0 || !p.isRedis() || p.argv == nil || p.attempts >= maxRedirects || c.cfg.Lock.Algorithm == Redisson {
		return false
	}
	if timedOut && hasReadTimeout(p.argv) {
		return false
	}
	cl := c.routingOf(p.to)
	if cl == nil {
		return false
	}
	return c.clusterRetry(cl, p, why, p.attempts == 0)
}

// hasReadTimeout reports whether go-redis gives the command argv a read
// timeout of its own (cmd.setReadTimeout: WAIT and WAITAOF, commands.go:
// 296-307; the blocking list, sorted-set and stream commands and MIGRATE,
// list_commands.go, sortedset_commands.go, stream_commands.go with BLOCK,
// generic_commands.go:158).
func hasReadTimeout(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	switch strings.ToUpper(argv[0]) {
	case "WAIT", "WAITAOF", "BLPOP", "BRPOP", "BRPOPLPUSH", "BLMOVE", "BLMPOP", "BZPOPMIN", "BZPOPMAX", "BZMPOP", "MIGRATE":
		return true
	case "XREAD", "XREADGROUP":
		for _, a := range argv[1:] {
			if strings.EqualFold(a, "BLOCK") {
				return true
			}
		}
	}
	return false
}

// clusterRetryable reports whether go-redis retries a command that got the
// error reply msg (shouldRetry, GR error.go:84-174: the typed errors and
// their prefixes), and whether it is READONLY, after which the client also
// reloads its slot map (osscluster.go:1546-1552).
func clusterRetryable(msg string) (retry, readOnly bool) {
	for _, p := range [...]string{"CLUSTERDOWN ", "TRYAGAIN ", "LOADING ", "MASTERDOWN ", "NOREPLICAS ", "ERR max number of clients reached"} {
		if strings.HasPrefix(msg, p) {
			return true, false
		}
	}
	if strings.HasPrefix(msg, "READONLY ") {
		return true, true
	}
	return false, false
}

// Retry backoff of a ClusterClient: ClusterOptions.init's defaults
// MinRetryBackoff 10 ms and MaxRetryBackoff 1 s (GR osscluster.go:280-291).
const (
	minRetryBackoff = 10 * time.Millisecond
	maxRetryBackoff = time.Second
)

// retryBackoff is go-redis's internal.RetryBackoff (internal/internal.go:
// 8-28): min + a uniform draw below min<<attempt, capped at max (and max
// when the shift overflows), drawn from the client's seeded stream instead
// of the global math/rand.
func retryBackoff(attempt int, r interface{ Int63n(int64) int64 }) time.Duration {
	d := minRetryBackoff << uint(attempt)
	if d < minRetryBackoff {
		return maxRetryBackoff
	}
	d = minRetryBackoff + time.Duration(r.Int63n(int64(d)))
	if d > maxRetryBackoff || d < minRetryBackoff {
		d = maxRetryBackoff
	}
	return d
}

// clusterReplicas is the number of replicas the slot map lists for key's
// slot when node is a cluster node whose map is loaded (false otherwise).
func (c *client) clusterReplicas(node sim.ProcID, key string) (int, bool) {
	cl := c.routingOf(node)
	if cl == nil || cl.slots == nil {
		return 0, false
	}
	s := redis.KeySlot(key)
	for _, r := range cl.slots {
		if s >= r.from && s <= r.to {
			return r.replicas, true
		}
	}
	return 0, false
}

// slotNode is cmdNode for argv: the master of its first key's slot in the
// slot map (a keyless command of a lock client: its lock key's), false
// when the map does not say.
func (c *client) slotNode(cl *clusterRouting, argv []string) (sim.ProcID, bool) {
	if cl.slots == nil {
		return sim.NoProc, false
	}
	key := c.cfg.Lock.Key
	if keys := redis.CommandKeys(argv); len(keys) > 0 {
		key = keys[0]
	}
	if key == "" {
		return sim.NoProc, false
	}
	return c.slotMaster(cl, redis.KeySlot(key))
}

// slotMaster is go-redis's slotMasterNode (GR osscluster.go:993-999): the
// slot's master in the map or, for a slot the map has no node for (the
// node that answered CLUSTER SLOTS had it unassigned), a node drawn from
// those the map lists, on the client's seeded stream (go-redis:
// math/rand over activeAddrs, a map's order).
func (c *client) slotMaster(cl *clusterRouting, slot int) (sim.ProcID, bool) {
	if o := cl.owner(slot); o >= 0 {
		return cl.ids[o], true
	}
	if len(cl.listed) == 0 {
		return sim.NoProc, false
	}
	return cl.ids[cl.listed[c.env.Rand().Intn(len(cl.listed))]], true
}

// reloadSlots is LazyReload: CLUSTER SLOTS to the nodes in a random order
// until one answers; then the held commands go out.
func (c *client) reloadSlots(cl *clusterRouting) {
	if cl.loading || cl.cooling {
		cl.pending = true
		return
	}
	cl.loading, cl.pending = true, false
	first := cl.slots == nil
	// rand.Perm as a Fisher-Yates shuffle on the client's stream.
	order := make([]int, len(cl.ids))
	r := c.env.Rand()
	for i := range order {
		j := r.Intn(i + 1)
		order[i] = order[j]
		order[j] = i
	}
	timeout := c.cfg.Lock.NodeTimeout
	var try func(i int)
	try = func(i int) {
		if i == len(order) {
			cl.loading = false
			c.env.Logf(KindClient, "cluster: no node answered CLUSTER SLOTS")
			c.releaseHeld(cl, false)
			c.armScan(cl)
			return
		}
		to := cl.ids[order[i]]
		id := c.newID()
		c.track(id, pending{to: to, timeout: timeout, rcb: callback{fn: func(v redis.Value, ok bool) {
			if !ok || !c.loadSlots(cl, v) {
				try(i + 1)
				return
			}
			if first {
				// The first load is clusterStateHolder.Reload, which Get
				// calls when there is no state yet (:1349-1353): no
				// cooldown follows it, unlike LazyReload's.
				cl.loading = false
				c.releaseHeld(cl, true)
				c.armScan(cl)
				if cl.pending {
					c.reloadSlots(cl)
				}
				return
			}
			cl.loading, cl.cooling = false, true
			c.releaseHeld(cl, true)
			c.armScan(cl)
			c.after(reloadCooldown, whatRetry, func() {
				cl.cooling = false
				if cl.pending {
					c.reloadSlots(cl)
				}
			})
		}}})
		c.env.SendPooled(to, resp.NewRequest(id, []string{"CLUSTER", "SLOTS"}))
	}
	try(0)
}

// armScan arms Redisson's next topology scan (none for go-redis).
func (c *client) armScan(cl *clusterRouting) {
	if c.cfg.Lock.Algorithm != Redisson || cl.scanning {
		return
	}
	cl.scanning = true
	c.after(redissonScanInterval, whatClusterScan, func() {
		cl.scanning = false
		c.reloadSlots(cl)
	})
}

// loadSlots reads a CLUSTER SLOTS reply into the slot map.
func (c *client) loadSlots(cl *clusterRouting, v redis.Value) bool {
	if v.Kind != redis.KindArray || len(v.Array) == 0 {
		return false
	}
	var slots []slotRun
	seen := make([]bool, len(cl.ids))
	indexOf := func(host string) int {
		for i, n := range cl.cfg.Nodes {
			if n == host {
				return i
			}
		}
		return -1
	}
	for _, e := range v.Array {
		if e.Kind != redis.KindArray || len(e.Array) < 3 || e.Array[2].Kind != redis.KindArray || len(e.Array[2].Array) < 1 {
			return false
		}
		from, to := int(e.Array[0].Int), int(e.Array[1].Int)
		idx := indexOf(e.Array[2].Array[0].Str)
		if idx < 0 || from < 0 || to >= redis.ClusterSlots || from > to {
			return false
		}
		slots = append(slots, slotRun{from: from, to: to, node: idx, replicas: len(e.Array) - 3})
		for _, n := range e.Array[2:] {
			if n.Kind == redis.KindArray && len(n.Array) > 0 {
				if i := indexOf(n.Array[0].Str); i >= 0 && i < len(seen) {
					seen[i] = true
				}
			}
		}
	}
	var listed []int
	for i, ok := range seen {
		if ok {
			listed = append(listed, i)
		}
	}
	cl.listed = listed
	// CLUSTER SLOTS lists runs in slot order (clusterReplyMultiBulkSlots);
	// sorted again so that a map from any server is searchable.
	sort.Slice(slots, func(i, j int) bool { return slots[i].from < slots[j].from })
	cl.slots = slots
	cl.loaded = c.env.Mono()
	return true
}

// releaseHeld sends the commands held for the slot map (or fails them).
func (c *client) releaseHeld(cl *clusterRouting, ok bool) {
	held := cl.held
	cl.held = nil
	for _, h := range held {
		if !ok {
			h.p.rcb.call(redis.Err("CLUSTERDOWN no node answered CLUSTER SLOTS (client)"), true)
			continue
		}
		p := h.p
		if c.routeCluster(h.id, h.msg, &p) {
			c.track(h.id, p)
			c.env.SendPooled(p.to, h.msg)
		}
	}
}
