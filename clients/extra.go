package clients

import "github.com/locksim/locksim/nodes/redis"

// noValue is the Redis value complete takes for a reply of another kind.
var noValue redis.Value

// noExtras is embedded by issue 13's algorithms: they receive only replies
// and set no timers of their own.
type noExtras struct{}

func (noExtras) giveUp()       {}
func (noExtras) fire(any) bool { return false }
func (noExtras) expired() bool { return false }
func (noExtras) init()         {}
func (noExtras) held()         {}
func (noExtras) value() string { return "" }
