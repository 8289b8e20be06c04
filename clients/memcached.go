package clients

import (
	"strconv"
	"time"

	"github.com/locksim/locksim/nodes/memcached"
	"github.com/locksim/locksim/sim"
)

// Release modes of memcached-add.
const (
	// MemcachedReleaseDelete is "delete key": it deletes whatever the key
	// holds, possibly another client's lock.
	MemcachedReleaseDelete = "delete"
	// MemcachedReleaseCAS is "gets key", then, if the value is the client's
	// own, "cas key 0 -1 0 <cas id>": a store with a negative exptime, which
	// memcached takes as immediately expired (doc/protocol.txt:245-249,
	// memcached.h:1061-1065), guarded by the CAS id so that it fails with
	// EXISTS when another client stored the key since the gets.
	MemcachedReleaseCAS = "cas"
)

// memcachedAdd is the memcached add lock.
type memcachedAdd struct {
	noExtras
	c    *client
	node sim.ProcID
	val  string
}

func (m *memcachedAdd) cfg() LockConfig { return m.c.cfg.Lock }

func (m *memcachedAdd) value() string { return m.val }

func (m *memcachedAdd) retryDelay() time.Duration { return m.cfg().RetryDelay.Draw(m.c.env.Rand()) }

// receive hands memcached replies to their requests.
func (m *memcachedAdd) receive(_ sim.ProcID, msg sim.Message) bool {
	if r, ok := msg.(memcached.Reply); ok {
		m.c.complete(r.ID, noValue, msg)
		return true
	}
	return false
}

// do sends one memcached request and calls cb with its reply (ok=false on
// timeout or a lost connection).
func (m *memcachedAdd) do(r memcached.Request, cb func(r memcached.Reply, ok bool)) {
	c := m.c
	id := c.newID()
	r.ID = id
	c.request(m.node, id, r, m.cfg().NodeTimeout, func(msg sim.Message, ok bool) {
		if !ok {
			cb(memcached.Reply{}, false)
			return
		}
		cb(msg.(memcached.Reply), true)
	})
}

// acquire sends "add key 0 exptime value": STORED takes the lock,
// NOT_STORED means the key exists (protocol.txt:226-229).
func (m *memcachedAdd) acquire(_ int, done func(bool)) {
	c := m.c
	m.node = c.addr(m.cfg().Node)
	m.val = c.uniqueValue()
	m.do(memcached.Request{Cmd: memcached.CmdAdd, Key: m.cfg().Key, Exptime: int64(m.cfg().Exptime / time.Second), Value: m.val}, func(r memcached.Reply, ok bool) {
		switch {
		case !ok:
			c.env.Logf(KindClient, "add %s: no reply", m.cfg().Key)
			done(false)
		case r.Status == memcached.Stored && m.cfg().FencingToken == FencingIncr:
			m.token(true, func(ok bool) {
				if !ok {
					m.do(memcached.Request{Cmd: memcached.CmdDelete, Key: m.cfg().Key}, func(memcached.Reply, bool) {})
				}
				done(ok)
			})
		case r.Status == memcached.Stored:
			done(true)
		default:
			if r.IsError() {
				c.env.Logf(KindClient, "add %s: %s", m.cfg().Key, r.Status)
			}
			done(false)
		}
	})
}

// token obtains a fencing token with "incr <key>:token 1" on the lock's
// memcached server; incr answers NOT_FOUND for a missing key, so the
// client creates it with "add <key>:token 0 0 0" and increments again
// (protocol.txt, "Increment/Decrement"). NB: like the INCR counter on Redis
// (incrToken), the counter lives in the lock's server: memcached evicts it
// like any item and a restart loses it, so tokens can repeat.
func (m *memcachedAdd) token(create bool, done func(bool)) {
	c, key := m.c, m.cfg().Key+":token"
	m.do(memcached.Request{Cmd: memcached.CmdIncr, Key: key, Delta: 1}, func(r memcached.Reply, ok bool) {
		if ok && r.Status == memcached.NotFound && create {
			m.do(memcached.Request{Cmd: memcached.CmdAdd, Key: key, Value: "0"}, func(memcached.Reply, bool) { m.token(false, done) })
			return
		}
		n, err := strconv.ParseInt(r.Status, 10, 64)
		if !ok || err != nil {
			c.env.Logf(KindClient, "incr %s: %v %s", key, ok, r.Status)
			done(false)
			return
		}
		c.token, c.hasToken = n, true
		done(true)
	})
}

// release deletes the key, or, in cas mode, expires it only if it still
// holds the client's value.
func (m *memcachedAdd) release(done func()) {
	c := m.c
	key := m.cfg().Key
	if m.cfg().CacheRelease == MemcachedReleaseDelete {
		m.do(memcached.Request{Cmd: memcached.CmdDelete, Key: key}, func(r memcached.Reply, ok bool) {
			if ok && r.Status == memcached.NotFound {
				c.env.LogfAttrs(KindClient, releaseFailed(), "release: %s was gone", key)
			}
			done()
		})
		return
	}
	m.do(memcached.Request{Cmd: memcached.CmdGets, Keys: []string{key}}, func(r memcached.Reply, ok bool) {
		if !ok || len(r.Items) != 1 || r.Items[0].Value != m.val {
			c.env.LogfAttrs(KindClient, releaseFailed(), "release: gets %s found no item of ours; no cas", key)
			done()
			return
		}
		m.do(memcached.Request{Cmd: memcached.CmdCas, Key: key, Exptime: -1, CAS: r.Items[0].CAS}, func(r memcached.Reply, ok bool) {
			if ok && r.Status != memcached.Stored {
				c.env.LogfAttrs(KindClient, releaseFailed(), "release: cas %s: %s", key, r.Status)
			}
			done()
		})
	})
}
