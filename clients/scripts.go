package clients

import "github.com/locksim/locksim/nodes/redis"

// The Lua scripts the clients run, as the Redis model exports them
// (pointers, so that requests can refer to them without copying)
// (nodes/redis/scripts.go, sources verbatim from reference §5). The client
// sends EVALSHA with the script's SHA and falls back to EVAL on NOSCRIPT.
var (
	// scriptCompareAndDelete: GET == ARGV[1] then DEL (distlock page,
	// redlock-rb, redlock-py; reference §5).
	scriptCompareAndDelete = &redis.ScriptCompareAndDelete
	// scriptDeleteOrMissing: redsync's deleteScript, -1 when the key is
	// missing (redsync scripts.go:5-14).
	scriptDeleteOrMissing = &redis.ScriptRedsyncDelete
	// scriptTouch: PEXPIRE if the value matches (redsync scripts.go:26-32).
	scriptTouch = &redis.ScriptRedsyncTouch
	// scriptTouchSetNX: touch, else SET NX PX (redsync scripts.go:16-24).
	scriptTouchSetNX = &redis.ScriptRedsyncTouchSetNX
	// Redisson's lock, unlock and renew scripts (reference §5).
	scriptRedissonLock   = &redis.ScriptRedissonLock
	scriptRedissonUnlock = &redis.ScriptRedissonUnlock
	scriptRedissonRenew  = &redis.ScriptRedissonRenew
)
