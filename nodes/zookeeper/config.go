package zookeeper

import (
	"fmt"
	"time"
)

// Config configures the ZooKeeper service.
type Config struct {
	// TickTime is ZooKeeper's basic time unit. It sets the default session
	// timeout bounds and the granularity of session expiry: sessions expire
	// in tick-sized buckets (see Server).
	TickTime time.Duration
	// MinSessionTimeout and MaxSessionTimeout bound the timeout a client may
	// negotiate; 0 means the ZooKeeper default of 2 and 20 ticks
	// (ZooKeeperServer.java:1394 and 1403, 3.9.5: "min == -1 ? tickTime * 2",
	// "max == -1 ? tickTime * 20"; zookeeperAdmin.md, "minSessionTimeout").
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration
	// LockDelay, when positive, is a Chubby-style lock-delay (Burrows 2006,
	// section 2.4; reference section 6.3): an ephemeral node whose session
	// EXPIRED stays as a tombstone for LockDelay, so that nobody can take the
	// lock it stood for; a clean delete or close frees it at once. Chubby lets
	// clients pick a lock-delay "up to some bound, currently one minute".
	// ZooKeeper has no such feature: 0 (the default) is real ZooKeeper.
	LockDelay time.Duration
}

// DefaultConfig returns ZooKeeper's defaults: tickTime 2000 ms, the value of
// the sample configuration every deployment starts from
// (conf/zoo_sample.cfg:2, 3.9.5; NB: the server's built-in fallback
// ZooKeeperServer.DEFAULT_TICK_TIME is 3000, ZooKeeperServer.java:198), so
// session timeouts are negotiated into [4 s, 40 s] (reference section 6.4).
func DefaultConfig() Config {
	return Config{
		TickTime: 2000 * time.Millisecond,
		// minSessionTimeout and maxSessionTimeout unset (0): 2 and 20 ticks
		// of whatever TickTime the deployment sets (ZooKeeperServer.java:1393-1405).
		MinSessionTimeout: 0,
		MaxSessionTimeout: 0,
	}
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	switch {
	case c.TickTime <= 0:
		return fmt.Errorf("zookeeper: TickTime must be positive (got %v)", c.TickTime)
	case c.MinSessionTimeout < 0:
		return fmt.Errorf("zookeeper: MinSessionTimeout must be >= 0, 0 meaning 2*TickTime (got %v)", c.MinSessionTimeout)
	case c.MaxSessionTimeout < 0:
		return fmt.Errorf("zookeeper: MaxSessionTimeout must be >= 0, 0 meaning 20*TickTime (got %v)", c.MaxSessionTimeout)
	case c.LockDelay < 0:
		return fmt.Errorf("zookeeper: LockDelay must be >= 0, 0 meaning none (got %v)", c.LockDelay)
	}
	if lo, hi := c.bounds(); lo > hi {
		return fmt.Errorf("zookeeper: MinSessionTimeout (%v) must not exceed MaxSessionTimeout (%v)", lo, hi)
	}
	return nil
}

// bounds returns the effective session timeout bounds.
func (c Config) bounds() (lo, hi time.Duration) {
	lo, hi = c.MinSessionTimeout, c.MaxSessionTimeout
	if lo == 0 {
		lo = 2 * c.TickTime // ZooKeeperServer.java:1394
	}
	if hi == 0 {
		hi = 20 * c.TickTime // ZooKeeperServer.java:1403
	}
	return lo, hi
}

// Negotiate returns the session timeout the service grants for a requested
// one: the request clamped into [MinSessionTimeout, MaxSessionTimeout]
// (ZooKeeperServer.java:1518-1527, 3.9.5, processConnectRequest).
func (c Config) Negotiate(requested time.Duration) time.Duration {
	lo, hi := c.bounds()
	if requested < lo {
		return lo
	}
	if requested > hi {
		return hi
	}
	return requested
}
