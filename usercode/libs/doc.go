// Package libs runs real Go lock libraries, unmodified, through locksim's
// catalogue timelines (issue 24): go-redsync/redsync v4 with its go-redis v9
// pool, and bsm/redislock. It is a module of its own so that locksim's
// main module does not depend on them.
//
// Each library is bound to scenario clients by a two-method adapter
// (locksim.UserLock) that maps the scenario's lock block onto the
// library's options: the lock's key and TTL, one attempt per Obtain (the
// scenario's tries and retry_delay retry it, as they do locksim's model of
// the library), lock values from the client's seeded stream, and, where
// the scenario asks for them, an INCR fencing token and periodic
// extension. The tests put each library's verdicts beside locksim's own
// model of it on the same scenario and seed (docs/guide/user-code.md).
package libs
