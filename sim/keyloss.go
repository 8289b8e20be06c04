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
	// LossRestart: the server came back from a crash without the key: it
	// was not in what the server recovered (memcached keeps nothing; Redis
	// only what its RDB file or the fsynced part of its AOF held).
	LossRestart KeyLossCause = "lost-at-restart"
	// LossResync: a replica, often a demoted master, dropped the key when a
	// full resynchronisation replaced its data with its new master's.
	LossResync KeyLossCause = "resync"
	// LossRemovedByClient: another client's command removed the key its
	// holder had stored (a DEL that did not check the value). Unlike the
	// causes above a command asked for it, but not the holder's: the
	// server records it because the history cannot tell otherwise.
	LossRemovedByClient KeyLossCause = "removed-by-client"
	// LossOverwritten: another client's command overwrote the key its
	// holder had stored (GETSET, a SET without NX).
	LossOverwritten KeyLossCause = "overwritten"
)

// CrashWitness is a server that can say what it held when it crashed, so
// that its next incarnation can record what the crash lost (KeyLost with
// LossRestart). The kernel asks at the crash and hands the answer to the
// next incarnation (Env.WitnessedCrash). It is for the history's
// attribution only: a real server remembers nothing across a crash, so a
// model must never let the answer change what it does, and WitnessCrash
// must not change the model or trace anything.
type CrashWitness interface{ WitnessCrash() any }

// crashWitness is what a crashed process's CrashWitness said, kept for its
// next incarnation.
type crashWitness struct {
	memo any
	mode CrashMode
}

// WitnessedCrash returns, once, what the previous incarnation of this
// process said it held when it crashed (CrashWitness) and how it crashed;
// ok is false when there was no such crash or it was already asked.
func (e *Env) WitnessedCrash() (memo any, mode CrashMode, ok bool) {
	w := e.p.witness
	if w == nil {
		return nil, 0, false
	}
	e.p.witness = nil
	return w.memo, w.mode, true
}

// KeyLoss is a key that a server removed on its own: no client command asked
// for it (a DEL, a release, a commit add nothing), or that a client removed
// or overwrote while another client, its holder, had stored it
// (LossRemovedByClient, LossOverwritten). The checker names the
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

// KeyAct is a client's command that acted on a key another client had
// stored, as the server saw it: a PEXPIRE, EXPIRE or PEXPIREAT that moved
// the other client's deadline, a SET XX or GETSET that overwrote its
// value, a DEL that removed it, an HSET or HINCRBY on its hash, or a
// script that did one of these. A holder's command on a key that is still
// its own is no act. The checker names the acts of the clients of an
// overlap on each other's keys when it explains it: a former holder's
// extension that landed on the new holder's key shows no other way.
type KeyAct struct {
	At   Time
	Node string
	Key  string
	// Client is the process whose command acted, Holder the one that
	// had stored the key.
	Client, Holder string
	// Command names what acted ("PEXPIRE", "a script's PEXPIRE").
	Command string
}

// KeyActed records that a command of client, executing on this server,
// acted on key, which holder had stored (KeyAct). It adds to the history
// only.
func (e *Env) KeyActed(key, command string, client, holder ProcID) {
	h := &e.k.hist
	h.KeyActs = append(h.KeyActs, KeyAct{At: e.k.now, Node: e.p.name, Key: key, Client: e.k.Name(client), Holder: e.k.Name(holder), Command: command})
}
