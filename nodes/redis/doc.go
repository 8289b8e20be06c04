// Package redis simulates a Redis 7 server as a sim.Process: the commands
// lock clients and Sentinel use, key expiry on the node's own wall clock,
// RDB and AOF persistence on the node's simulated disk, and asynchronous
// master-replica replication with WAIT and min-replicas-to-write.
//
// The model follows /work/shared/reference/redis-and-lock-clients.md
// (sections 1-3, 5 and 8.2) and the Redis 7.2.4 sources it cites; every
// constant and rule carries a comment naming its source. Replies and error
// texts are those of real Redis 7.0/7.2, checked by the differential suite in
// conformance_test.go against a real redis-server.
//
// # Use
//
//	k.Add("A", func() sim.Process { return redis.New(redis.DefaultConfig()) }, sim.ClockSpec{})
//
// Clients send Request{ID, Args} and get Reply{ID, Value}. Replication
// messages between nodes (SyncRequest, FullSync, Stream, Ack, Reset) are the
// package's own. The lock scripts are exported as Script values
// (ScriptCompareAndDelete, ScriptRedsyncDelete, ScriptRedsyncTouch,
// ScriptRedsyncTouchSetNX, ScriptRedissonLock, ScriptRedissonUnlock,
// ScriptRedissonRenew, and issue 13's ScriptStockDecrement for the stock
// counters) with their Lua Source and SHA; send
// s.EvalSHA(keys, args...) and, on NOSCRIPT (IsNoScript), s.Eval(...).
//
// # Commands
//
// GET, SET (NX, XX, GET, KEEPTTL, EX, PX, EXAT, PXAT), DEL, EXISTS, TTL, PTTL,
// EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (NX, XX, GT, LT), INCR, HEXISTS, HGET,
// HINCRBY, HSET, DBSIZE, FLUSHALL, PUBLISH (answers 0), PING, WAIT,
// REPLICAOF/SLAVEOF, ROLE, INFO (server, persistence, replication, keyspace),
// EVAL, EVALSHA, SCRIPT LOAD|EXISTS|FLUSH, CONFIG REWRITE and
// DEBUG SET-ACTIVE-EXPIRE. Unknown commands, wrong arity, wrong types, bad
// integers and syntax errors answer Redis' error texts. REPLICAOF takes the
// master's process name as host and, as in Redis, a port that must be a valid
// port number; the port is otherwise ignored (all nodes report ListenPort).
// EVAL and SCRIPT LOAD run only the built-in scripts: any other source answers
// an error saying that the simulator knows only its scripts. EVALSHA answers
// NOSCRIPT for a SHA this instance has not loaded by EVAL or SCRIPT LOAD since
// it started, as Redis does (the cache is lost on restart and not
// replicated).
//
// # Modelled
//
//   - Expiry: absolute Unix-ms deadlines on the node's wall clock
//     (env.WallMs()); a key is expired iff now > deadline; time is frozen for a
//     command and for a whole script. Masters delete expired keys lazily on
//     access and in an active cycle every 1/hz (a monotonic-clock timer), and
//     propagate DEL to replicas and the AOF. Replicas never delete: they hide
//     expired keys from clients and apply the master's stream ignoring expiry.
//     A promoted replica expires with its own clock. EXPIRE with a deadline
//     already past deletes at once on a master. SET/EXPIRE propagate as
//     SET PXAT / PEXPIREAT with absolute deadlines (7.x).
//   - Persistence: appendonly no is RDB only, with save points evaluated on
//     the wall clock from serverCron. appendonly yes writes every execution
//     unit before the reply; always fsyncs before the reply, everysec fsyncs
//     when the wall clock's whole second is later than the last fsync's
//     (7.0.15/7.2 rule; a backward jump delays it),
//     no leaves it to the OS (sim.Writeback). A clean shutdown (CrashClean)
//     fsyncs and saves. A restart loads the AOF (appendonly yes) or the RDB; a
//     master drops keys whose deadline passed on its wall clock, a replica
//     loads all. CONFIG REWRITE persists the role (Sentinel sends it after
//     REPLICAOF), so a promoted node stays master across a restart.
//   - Replication: an asynchronous stream of execution units with RESP byte
//     offsets; script effects, not scripts; replicas ack every second and at
//     once on REPLCONF GETACK, which WAIT sends; WAIT n timeout blocks until n
//     replicas acked the client's last write or the wall-clock deadline
//     passes (checked on every event and serverCron tick), then replies the
//     count; READONLY on replicas; NOREPLICAS with min-replicas-to-write and
//     a wall-clock max lag; REPLICAOF NO ONE promotes (new replication id);
//     REPLICAOF host resyncs and replaces the data. The link is a kernel
//     connection (sim/conn.go): a cut stalls it and TCP retransmits the
//     stream after the heal; a killed master's host resets the replica's
//     next ack, and the replica reconnects from the next replicationCron
//     with PSYNC <replid> <offset+1>: partial (+CONTINUE and the backlog)
//     when the id matches (or is the promoted master's replid2 up to
//     second_repl_offset) and the offset is still in the repl-backlog-size
//     backlog (1 MB), full otherwise, so a master that restarts empty wipes
//     its replicas. Master and replica close a silent link after
//     repl-timeout; an unanswered PSYNC is abandoned after repl-timeout; the
//     master PINGs replicas every repl-ping-replica-period.
//     A full sync is diskless (repl-diskless-sync yes, 7.0's default): the
//     master starts it from its once-a-second replicationCron once the
//     longest-waiting replica has waited repl-diskless-sync-delay
//     (Config.ReplDisklessSyncDelay, 5 s), one transfer for every replica
//     waiting; meanwhile the replicas get a newline every second, no
//     stream, and count neither for WAIT nor for min-replicas-to-write. A
//     partial resync (+CONTINUE) never waits. The replicas of the run's
//     start are served at once (SyncRequest.Boot), since real mode starts
//     a run only when their links are up.
//     Config.ReplicationDelay delays everything a replica receives, in order.
//
// # Simplified
//
//   - The active expiry cycle checks every key with a deadline on each tick
//     instead of sampling 20 keys per loop (enough for a handful of lock
//     keys); there is no fast cycle.
//   - A full sync's RDB transfer and load take no time once it starts, and
//     the stream follows at once (Redis waits for the replica's first
//     REPLCONF ACK, repl_start_cmd_stream_on_ack).
//   - BGSAVE is an instantaneous, fsynced snapshot; the background everysec
//     fsync is instantaneous, so the 2 s write postponement behind a slow
//     fsync never happens; there is no AOF rewrite except after a full sync.
//   - The backlog holds whole execution units (trimmed unit by unit past
//     repl-backlog-size); a restarted node does not reload its replication id
//     from its RDB, so its first sync is full. No SELECT is emitted; PUBLISH
//     is neither delivered nor propagated.
//   - A replica connects at once when configured and after its master closed
//     the link (Redis waits for the next replicationCron tick); after a reset
//     or a timeout it retries from the cron, as Redis does. Chained replicas
//     get the stream proxied.
//   - A writable replica (replica-read-only no) expires its own keys only on
//     write access (no expireSlaveKeys). MULTI/EXEC/WATCH are modelled
//     (multi.go), but the Sentinel model sends REPLICAOF and CONFIG REWRITE
//     as separate requests, where sentinel.c's sentinelSendSlaveOf wraps
//     them in one MULTI/EXEC.
//   - One database (db 0); strings and hashes only. Clean shutdown does not
//     wait for replicas. INFO has a subset of fields.
//   - NB: SET with a PXAT/EXAT deadline already in the past stores the key (it
//     is expired at once and deleted by the next access or cycle), as Redis
//     7.x's setGenericCommand does; only EXPIRE and friends delete at once.
//
// redis imports only sim and the standard library.
package redis
