package clients

import (
	"fmt"
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

// MemcachedAddParams are memcached-add's parameters.
type MemcachedAddParams struct {
	Common
	// Exptime is the lock item's expiry, in whole seconds from 0 (never
	// expires, though it can still be evicted) to 30 days: memcached reads
	// larger values as absolute Unix times (REALTIME_MAXDELTA, M 1.6.45
	// memcached.h:1060). Parameter "exptime".
	Exptime time.Duration
	// Release is delete or cas. Parameter "release".
	Release string
}

// memcachedExptime is the lock's default exptime. locksim default: the
// memcached lock recipes give none; 30 s is the distlock page's
// single-instance TTL that redis-single uses (reference §4.1).
const memcachedExptime = 30 * time.Second

// DefaultMemcachedAddParams returns memcached-add's defaults.
func DefaultMemcachedAddParams() MemcachedAddParams {
	return MemcachedAddParams{Common: defaultCommon(), Exptime: memcachedExptime, Release: MemcachedReleaseDelete}
}

// Validate reports the first bad parameter, naming it.
func (p MemcachedAddParams) Validate() error {
	if err := p.Common.validate(); err != nil {
		return err
	}
	if p.Exptime < 0 || p.Exptime%time.Second != 0 || p.Exptime > memcached.RealtimeMaxDelta*time.Second {
		return fmt.Errorf("exptime: %v must be whole seconds from 0 (never) to %v (30 days, memcached's REALTIME_MAXDELTA; larger values are absolute Unix times)",
			p.Exptime, time.Duration(memcached.RealtimeMaxDelta)*time.Second)
	}
	return oneOf("release", p.Release, MemcachedReleaseDelete, MemcachedReleaseCAS)
}

// NewMemcachedAdd returns a memcached-add client. It panics on an invalid
// configuration: callers validate first (ValidateMemcachedAdd).
func NewMemcachedAdd(cfg Config, p MemcachedAddParams) sim.Process {
	return newExtra(cfg, MemcachedAdd, p.Common, p.Validate, func(c *client) algorithm { return &memcachedAdd{c: c, p: p} })
}

// ValidateMemcachedAdd checks a memcached-add client's configuration.
func ValidateMemcachedAdd(cfg Config, p MemcachedAddParams) error {
	return validateExtra(cfg, p.Common, p.Validate)
}

// memcachedAdd is the memcached add lock.
type memcachedAdd struct {
	noExtras
	c    *client
	p    MemcachedAddParams
	node sim.ProcID
	val  string
}

func (m *memcachedAdd) value() string { return m.val }

func (m *memcachedAdd) retryDelay() time.Duration { return m.p.RetryDelay.Draw(m.c.env.Rand()) }

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
	c.request(m.node, id, r, m.p.NodeTimeout, func(msg sim.Message, ok bool) {
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
	m.node = c.addr(m.p.Node)
	m.val = c.uniqueValue()
	m.do(memcached.Request{Cmd: memcached.CmdAdd, Key: m.p.Key, Exptime: int64(m.p.Exptime / time.Second), Value: m.val}, func(r memcached.Reply, ok bool) {
		switch {
		case !ok:
			c.env.Logf(KindClient, "add %s: no reply", m.p.Key)
			done(false)
		case r.Status == memcached.Stored:
			done(true)
		default:
			if r.IsError() {
				c.env.Logf(KindClient, "add %s: %s", m.p.Key, r.Status)
			}
			done(false)
		}
	})
}

// release deletes the key, or, in cas mode, expires it only if it still
// holds the client's value.
func (m *memcachedAdd) release(done func()) {
	c := m.c
	key := m.p.Key
	if m.p.Release == MemcachedReleaseDelete {
		m.do(memcached.Request{Cmd: memcached.CmdDelete, Key: key}, func(r memcached.Reply, ok bool) {
			if ok && r.Status == memcached.NotFound {
				c.env.Logf(KindClient, "release: %s was gone", key)
			}
			done()
		})
		return
	}
	m.do(memcached.Request{Cmd: memcached.CmdGets, Keys: []string{key}}, func(r memcached.Reply, ok bool) {
		if !ok || len(r.Items) != 1 || r.Items[0].Value != m.val {
			c.env.Logf(KindClient, "release: gets %s found no item of ours; no cas", key)
			done()
			return
		}
		m.do(memcached.Request{Cmd: memcached.CmdCas, Key: key, Exptime: -1, CAS: r.Items[0].CAS}, func(r memcached.Reply, ok bool) {
			if ok && r.Status != memcached.Stored {
				c.env.Logf(KindClient, "release: cas %s: %s", key, r.Status)
			}
			done()
		})
	})
}
