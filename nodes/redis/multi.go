package redis

import (
	"sort"

	"github.com/locksim/locksim/sim"
)

// Transactions: MULTI, EXEC, DISCARD, WATCH and UNWATCH with Redis 7's
// semantics (R 7.2.4 src/multi.c; 7.0.15 behaves the same). The state
// belongs to the client (the connection): a restarted node has none.
// Simplification: the model has one database (db 0), so a watched key is
// named by its key alone, and a client is its process: a client that
// reconnects keeps its transaction until the connection model ends it.

var (
	errExecAbort     = Err("EXECABORT Transaction discarded because of previous errors.")
	errMultiNested   = Err("ERR MULTI calls can not be nested")
	errDiscardNoMult = Err("ERR DISCARD without MULTI")
	errExecNoMulti   = Err("ERR EXEC without MULTI")
	errWatchInMulti  = Err("ERR WATCH inside MULTI is not allowed")
	replyQueued      = Status("QUEUED")
)

// txState is the node's transaction bookkeeping: each client's multi
// state and the db->watched_keys index (key -> watches in WATCH order).
type txState struct {
	clients  map[sim.ProcID]*txClient
	watchers map[string][]*watchedKey
}

// txClient is one client's CLIENT_MULTI, CLIENT_DIRTY_EXEC and
// CLIENT_DIRTY_CAS flags, its queued commands (mstate) and its watched
// keys.
type txClient struct {
	multi     bool
	dirtyExec bool
	dirtyCAS  bool
	queue     [][]string
	queueW    bool // a queued command is a write (mstate.cmd_flags & CMD_WRITE)
	queueOOM  bool // a queued command is DENYOOM
	watched   []*watchedKey
}

// watchedKey is multi.c's watchedKey: expired records that the key was
// already logically expired when WATCH ran (multi.c:274-280, :331).
type watchedKey struct {
	key     string
	client  *txClient
	expired bool
}

// txOf returns the client's transaction state, creating it if asked.
func (n *Node) txOf(client sim.ProcID, create bool) *txClient {
	c := n.tx.clients[client]
	if c == nil && create {
		if n.tx.clients == nil {
			n.tx.clients = map[sim.ProcID]*txClient{}
		}
		c = &txClient{}
		n.tx.clients[client] = c
	}
	return c
}

// inMulti reports whether the current client has called MULTI.
func (n *Node) inMulti() bool {
	c := n.tx.clients[n.cur.client]
	return c != nil && c.multi
}

// flagTransaction marks the current client's transaction CLIENT_DIRTY_EXEC
// after an error while queueing (multi.c:105-109).
func (n *Node) flagTransaction() {
	if c := n.tx.clients[n.cur.client]; c != nil && c.multi {
		c.dirtyExec = true
	}
}

// rejectCommand is R 7.2.4 src/server.c:3700-3710: flag the transaction;
// a rejected EXEC discards it with EXECABORT and the reason.
func (n *Node) rejectCommand(err Value, exec bool) Value {
	n.flagTransaction()
	if exec {
		// execCommandAbort (multi.c:134-145).
		n.discardTransaction(n.txOf(n.cur.client, true))
		return Err("EXECABORT Transaction discarded because of: " + err.Str)
	}
	return err
}

// queueCommand is queueMultiCommand (multi.c:61-93): the command is
// answered QUEUED.
func (n *Node) queueCommand(spec *cmdSpec, a []string) Value {
	c := n.txOf(n.cur.client, true)
	c.queue = append(c.queue, a)
	if spec.write {
		c.queueW = true
	}
	if denyOOM[spec.name] {
		c.queueOOM = true
	}
	return replyQueued
}

// execQueuedWrites reports whether EXEC would run a write command (the
// accumulated mstate.cmd_flags that processCommand checks for EXEC,
// server.c:3897-3900).
func (n *Node) execQueuedWrites() bool {
	c := n.tx.clients[n.cur.client]
	return c != nil && c.multi && c.queueW
}

// execQueuedDenyOOM reports whether EXEC would run a DENYOOM command.
func (n *Node) execQueuedDenyOOM() bool {
	c := n.tx.clients[n.cur.client]
	return c != nil && c.multi && c.queueOOM
}

// discardTransaction is multi.c:97-103.
func (n *Node) discardTransaction(c *txClient) {
	c.multi, c.dirtyExec, c.dirtyCAS = false, false, false
	c.queue, c.queueW, c.queueOOM = nil, false, false
	n.unwatchAll(c)
}

func cmdMulti(n *Node, a []string) Value {
	c := n.txOf(n.cur.client, true)
	if c.multi {
		return errMultiNested
	}
	c.multi = true
	return OK()
}

func cmdDiscard(n *Node, a []string) Value {
	c := n.txOf(n.cur.client, false)
	if c == nil || !c.multi {
		return errDiscardNoMult
	}
	n.discardTransaction(c)
	return OK()
}

// cmdExec is execCommand (multi.c:147-256): a watched key that was modified
// or has expired since WATCH makes EXEC answer a null array; an error while
// queueing makes it answer EXECABORT; otherwise the queued commands run
// one after another, each with its own reply, and a run-time error in one
// does not stop the others.
func cmdExec(n *Node, a []string) Value {
	c := n.txOf(n.cur.client, false)
	if c == nil || !c.multi {
		return errExecNoMulti
	}
	if n.watchedKeyExpired(c) {
		c.dirtyCAS = true
	}
	if c.dirtyCAS || c.dirtyExec {
		v := Nil()
		if c.dirtyExec {
			v = errExecAbort
		}
		n.discardTransaction(c)
		return v
	}
	n.unwatchAll(c)
	queue := c.queue
	c.queue = nil
	replies := make([]Value, len(queue))
	for i, q := range queue {
		spec, errv := resolve(q)
		if errv != nil {
			replies[i] = *errv // cannot happen: queued commands were resolved
			continue
		}
		if spec.name == "wait" {
			// CLIENT_DENY_BLOCKING (multi.c:186-187): WAIT inside a
			// transaction answers at once with the acks it has.
			was := n.cur.inScript
			n.cur.inScript = true
			replies[i] = n.runSpec(spec, q)
			n.cur.inScript = was
			continue
		}
		replies[i] = n.runSpec(spec, q)
	}
	n.discardTransaction(c)
	return Array(replies...)
}

// cmdWatch is watchCommand (multi.c:466-483).
func cmdWatch(n *Node, a []string) Value {
	c := n.txOf(n.cur.client, true)
	if c.multi {
		return errWatchInMulti
	}
	if c.dirtyCAS {
		return OK() // no point in watching if the client is already dirty
	}
	for _, k := range a[1:] {
		n.watchKey(c, k)
	}
	return OK()
}

// cmdUnwatch is unwatchCommand (multi.c:485-489).
func cmdUnwatch(n *Node, a []string) Value {
	if c := n.txOf(n.cur.client, false); c != nil {
		n.unwatchAll(c)
		c.dirtyCAS = false
	}
	return OK()
}

// watchKey is watchForKey (multi.c:300-330).
func (n *Node) watchKey(c *txClient, key string) {
	for _, wk := range c.watched {
		if wk.key == key {
			return
		}
	}
	e := n.db[key]
	wk := &watchedKey{key: key, client: c, expired: e != nil && n.keyIsExpired(e)}
	if n.tx.watchers == nil {
		n.tx.watchers = map[string][]*watchedKey{}
	}
	n.tx.watchers[key] = append(n.tx.watchers[key], wk)
	c.watched = append(c.watched, wk)
}

// unwatchAll is unwatchAllKeys (multi.c:334-356).
func (n *Node) unwatchAll(c *txClient) {
	for _, wk := range c.watched {
		list := n.tx.watchers[wk.key]
		for i, x := range list {
			if x == wk {
				list = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(n.tx.watchers, wk.key)
		} else {
			n.tx.watchers[wk.key] = list
		}
	}
	c.watched = nil
}

// watchedKeyExpired is isWatchedKeyExpired (multi.c:358-372): a watched
// key that has logically expired since WATCH, deleted or not.
func (n *Node) watchedKeyExpired(c *txClient) bool {
	for _, wk := range c.watched {
		if wk.expired {
			continue
		}
		if e := n.db[wk.key]; e != nil && n.keyIsExpired(e) {
			return true
		}
	}
	return false
}

// touchWatchedKey is multi.c:377-407, called wherever Redis calls
// signalModifiedKey: every write, DEL, expiry deletion and eviction marks
// the clients watching the key CLIENT_DIRTY_CAS and unwatches their keys.
// A watch taken on an already expired key is not dirtied by the key's
// deletion (it only forgets that it was expired).
func (n *Node) touchWatchedKey(key string) {
	if len(n.tx.watchers) == 0 {
		return
	}
	list := n.tx.watchers[key]
	if len(list) == 0 {
		return
	}
	clients := append([]*watchedKey(nil), list...)
	for _, wk := range clients {
		if wk.expired {
			if _, exists := n.db[key]; !exists {
				wk.expired = false
				continue
			}
			// NB: multi.c:398 leaves the loop here ("break"), so the
			// clients after this one are not flagged either.
			break
		}
		wk.client.dirtyCAS = true
		n.unwatchAll(wk.client)
	}
}

// touchAllWatchedKeys is touchAllWatchedKeysInDb (multi.c:415-462) for a
// database about to be emptied (FLUSHALL, a full resynchronisation): every
// client watching a key that exists is flagged, except watches of keys that
// were already expired when watched.
func (n *Node) touchAllWatchedKeys() {
	if len(n.tx.watchers) == 0 {
		return
	}
	keys := make([]string, 0, len(n.tx.watchers))
	for k := range n.tx.watchers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, exists := n.db[k]; !exists {
			continue
		}
		for _, wk := range n.tx.watchers[k] {
			if wk.expired {
				wk.expired = false
				continue
			}
			wk.client.dirtyCAS = true
		}
	}
}
