package sim

// KeyLossCause says why a server removed a key no client asked it to remove.
type KeyLossCause string

const (
	// LossExpired: the key's server-side TTL ran out (Redis expiry, a
	// memcached item's exptime).
	LossExpired KeyLossCause = "expired"
	// LossEvicted: the server evicted the key to free memory (Redis
	// maxmemory, memcached's LRU tail).
	LossEvicted KeyLossCause = "evicted"
	// LossSessionExpired: ZooKeeper expired the session that owned the
	// ephemeral node.
	LossSessionExpired KeyLossCause = "session-expired"
	// LossConnectionKilled: MySQL closed the connection (wait_timeout, KILL)
	// and rolled back the transaction that held the row lock.
	LossConnectionKilled KeyLossCause = "connection-killed"
)

// KeyLoss is a key that a server removed on its own: no client command asked
// for it (a DEL, a release, a commit add nothing). The checker names the
// losses of a holder's lock key when it explains an overlap: the server's own
// cause, where no fault may have preceded it.
type KeyLoss struct {
	At   Time
	Node string
	// Key is what the server removed, in its own terms: the Redis or
	// memcached key, the MySQL row's key, the ZooKeeper node's path.
	Key   string
	Cause KeyLossCause
	// Detail says more in words, e.g. "maxmemory 1450 bytes, policy
	// volatile-lru" or "wait_timeout"; may be empty.
	Detail string
	// Holder is the process the server knew as the key's owner (the
	// connection of a ZooKeeper session or of a MySQL transaction), or
	// empty when it cannot tell (a Redis or memcached key holds only a
	// value).
	Holder string
}

// KeyLost records that this process, a server, removed key on its own. Call
// it at the place the removal happens, never for a removal a client's
// command asked for. It adds to the history only (no trace event: the node
// logs its own).
func (e *Env) KeyLost(key string, cause KeyLossCause, detail string) {
	e.KeyLostBy(key, cause, detail, NoProc)
}

// KeyLostBy is KeyLost for a server that knows which process owned the key
// (holder; NoProc when it does not).
func (e *Env) KeyLostBy(key string, cause KeyLossCause, detail string, holder ProcID) {
	h := &e.k.hist
	l := KeyLoss{At: e.k.now, Node: e.p.name, Key: key, Cause: cause, Detail: detail}
	if holder != NoProc {
		l.Holder = e.k.Name(holder)
	}
	h.KeyLosses = append(h.KeyLosses, l)
}
