package clients

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/locksim/locksim/nodes/zookeeper"
	"github.com/locksim/locksim/sim"
)

// zkLockName is the name part of a lock node: Curator's InterProcessMutex
// creates "<path>/_c_<guid>-lock-<seq>" (LockInternals, "lock-"; protection
// mode adds the "_c_<guid>-" prefix).
const zkLockName = "lock-"

// zkLock is the ZooKeeper lock recipe (recipes.md "Locks"; Curator's
// InterProcessMutex) over a zookeeper.Session: an ephemeral-sequential node
// under /<key>, the lowest wins, a waiter watches only its predecessor. The
// fencing token is the node's creation zxid (reference §6.1, §6.4).
type zkLock struct {
	c      *client
	s      zookeeper.Session
	server sim.ProcID
	calls  map[uint64]func(zookeeper.Reply)

	guid       string // protection-mode id of the current want's node
	node       string // our lock node (full path), "" when none
	zxid       int64  // its creation zxid
	maybeMade  bool   // a create failed with connection loss: look for our node first
	done       func(bool)
	waitingFor string // the predecessor whose deletion we wait for
}

func (z *zkLock) cfg() LockConfig { return z.c.cfg.Lock }

func (z *zkLock) parent() string { return "/" + z.cfg().Key }

func (z *zkLock) value() string { return z.node }

// expired is false: the recipe computes no validity; the holder believes
// until it releases or learns that its session expired.
func (z *zkLock) expired() bool { return false }

func (z *zkLock) retryDelay() time.Duration { return z.cfg().RetryDelay.Draw(z.c.env.Rand()) }

// init opens the session: Curator connects when the framework starts.
func (z *zkLock) init() {
	z.calls = map[uint64]func(zookeeper.Reply){}
	id, ok := z.c.env.Lookup(z.cfg().Node)
	if !ok {
		panic("clients: unknown zookeeper process " + z.cfg().Node)
	}
	z.server = id
	z.s.ClientExpiry = z.cfg().ClientExpiry
	z.connect()
}

func (z *zkLock) connect() {
	cfg := z.cfg()
	z.s.Connect(z.c.env, z.server, cfg.SessionTimeout, cfg.Heartbeat)
}

// call issues a request on the session; cb gets its reply.
func (z *zkLock) call(req zookeeper.Request, cb func(zookeeper.Reply)) {
	id := z.s.Call(z.c.env, req)
	z.calls[id] = cb
}

func (z *zkLock) receive(from sim.ProcID, msg sim.Message) bool {
	ok, ev := z.s.Handle(z.c.env, from, msg)
	if ok {
		z.events(ev)
	}
	return ok
}

// connEnded hands the end of the connection with the server to the session.
func (z *zkLock) connEnded(peer sim.ProcID, why sim.ConnEnd) {
	z.events(z.s.ConnEnded(z.c.env, peer))
}

func (z *zkLock) fire(tag any) bool {
	ok, ev := z.s.Fire(z.c.env, tag)
	if ok {
		z.events(ev)
	}
	return ok
}

// events handles what the session reports. The events slice is reused by
// the session, so it is copied first: handlers call into the session.
func (z *zkLock) events(ev []zookeeper.SessionEvent) {
	ev = append([]zookeeper.SessionEvent(nil), ev...)
	for _, e := range ev {
		switch e.Kind {
		case zookeeper.EventDisconnected:
			z.c.env.Logf(KindClient, "zookeeper: disconnected")
			if z.cfg().LostOnDisconnect {
				z.c.lost("connection suspended")
			}
		case zookeeper.EventReconnected:
			z.c.env.Logf(KindClient, "zookeeper: reconnected")
		case zookeeper.EventExpired:
			// The session and its ephemeral node are gone: a holder has lost
			// the lock, and learns it now. Curator opens a new session.
			z.c.env.Logf(KindClient, "zookeeper: session expired")
			z.node, z.maybeMade, z.waitingFor = "", false, ""
			z.c.lost("session expired")
			z.connect()
			// A waiter whose watch died with the session: ZooKeeper's client
			// hands the Expired event to every watcher it holds
			// (ZKWatchManager.materialize, KeeperState.Expired), which wakes
			// Curator's lock loop (LockInternals.internalLockLoop); its next
			// getChildren fails and the attempt ends (the workload retries
			// on the new session).
			if z.done != nil {
				z.fail("session expired")
			}
		case zookeeper.EventReply:
			if cb, ok := z.calls[e.Reply.ID]; ok {
				delete(z.calls, e.Reply.ID)
				cb(e.Reply)
			}
		case zookeeper.EventWatch:
			if z.done != nil && e.Path == z.waitingFor {
				z.waitingFor = ""
				z.check()
			}
		}
	}
}

// acquire makes one attempt: create our node (unless we have one), then
// check whether it is the lowest.
func (z *zkLock) acquire(try int, done func(bool)) {
	z.done = done
	if try == 0 {
		// A fresh protection-mode id per acquire() (CreateBuilderImpl
		// withProtection: a random UUID).
		z.guid = fmt.Sprintf("%016x", z.c.env.Rand().Uint64())
	}
	switch {
	case z.node != "":
		z.check()
	case z.maybeMade:
		// Protection mode: after a connection loss during create, look for
		// a child carrying our id before creating another
		// (CreateBuilderImpl.findProtectedNodeInForeground).
		z.call(zookeeper.Request{Op: zookeeper.OpGetChildren, Path: z.parent()}, func(r zookeeper.Reply) {
			if r.Err != "" {
				z.fail("get-children: " + r.Err)
				return
			}
			z.maybeMade = false
			for _, ch := range r.Children {
				if strings.HasPrefix(ch, z.prefix()) {
					// Simplification: the zxid of an adopted node is not
					// known without a stat; the recipe's token is then the
					// service's last zxid, which is at least the node's.
					z.node, z.zxid = z.parent()+"/"+ch, r.Zxid
					z.check()
					return
				}
			}
			z.create()
		})
	default:
		z.create()
	}
}

// prefix is our nodes' name prefix.
func (z *zkLock) prefix() string { return "_c_" + z.guid + "-" + zkLockName }

func (z *zkLock) create() {
	z.call(zookeeper.Request{Op: zookeeper.OpCreate, Path: z.parent() + "/" + z.prefix(), Ephemeral: true, Sequential: true}, func(r zookeeper.Reply) {
		if r.Err != "" {
			if r.Err == zookeeper.ErrConnectionLoss {
				z.maybeMade = true
			}
			z.fail("create: " + r.Err)
			return
		}
		z.node, z.zxid = r.Path, r.Zxid
		z.check()
	})
}

// check lists the children: the lowest sequence number holds the lock;
// otherwise watch the next lower node only (no herd effect).
func (z *zkLock) check() {
	z.call(zookeeper.Request{Op: zookeeper.OpGetChildren, Path: z.parent()}, func(r zookeeper.Reply) {
		if r.Err != "" {
			z.fail("get-children: " + r.Err)
			return
		}
		// Curator sorts by the sequence suffix, ignoring the protection
		// prefix (StandardLockInternalsDriver.fixForSorting).
		kids := append([]string(nil), r.Children...)
		sort.Slice(kids, func(i, j int) bool { return seqOf(kids[i]) < seqOf(kids[j]) })
		me := strings.TrimPrefix(z.node, z.parent()+"/")
		idx := -1
		for i, k := range kids {
			if k == me {
				idx = i
				break
			}
		}
		switch {
		case idx < 0:
			// Our node is gone (our session expired under us).
			z.node = ""
			z.fail("our node " + me + " is gone")
		case idx == 0:
			if z.cfg().FencingToken == FencingZxid {
				z.c.token, z.c.hasToken = z.zxid, true
			}
			d := z.done
			z.done = nil
			d(true)
		default:
			pred := z.parent() + "/" + kids[idx-1]
			z.waitingFor = pred
			z.call(zookeeper.Request{Op: zookeeper.OpExists, Path: pred, Watch: true}, func(r zookeeper.Reply) {
				switch {
				case r.Err != "":
					z.waitingFor = ""
					z.fail("exists: " + r.Err)
				case !r.Exists && z.waitingFor == pred:
					z.waitingFor = ""
					z.check()
				}
				// Exists: wait for the watch.
			})
		}
	})
}

// seqOf returns the sequence suffix of a lock node name.
func seqOf(name string) string {
	if i := strings.LastIndex(name, zkLockName); i >= 0 {
		return name[i+len(zkLockName):]
	}
	return name
}

// fail ends the attempt (the client retries after retry_delay).
func (z *zkLock) fail(why string) {
	z.c.env.Logf(KindClient, "zookeeper: attempt failed: %s", why)
	if d := z.done; d != nil {
		z.done = nil
		d(false)
	}
}

func (z *zkLock) held() {}

// giveUp deletes our node when a want ends without the lock
// (InterProcessMutex deletes its node when acquire fails:
// LockInternals.attemptLock, deleteOurPath).
func (z *zkLock) giveUp() {
	if z.node != "" {
		z.deleteNode(z.node)
		z.node = ""
	}
}

// release deletes our node. Curator's release uses a guaranteed delete,
// retried in the background until it succeeds (deleteOurPath,
// guaranteed()); the release itself completes at once.
func (z *zkLock) release(done func()) {
	if z.node != "" {
		z.deleteNode(z.node)
		z.node = ""
	}
	done()
}

func (z *zkLock) deleteNode(path string) {
	z.call(zookeeper.Request{Op: zookeeper.OpDelete, Path: path}, func(r zookeeper.Reply) {
		switch r.Err {
		case "", zookeeper.ErrNoNode, zookeeper.ErrSessionExpired:
			// Deleted, or gone with the session.
		default:
			z.c.after(z.retryDelay(), whatZKDeleteRetry, func() { z.deleteNode(path) })
		}
	})
}
