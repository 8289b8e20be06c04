// Package clients holds locksim's lock clients: the lock algorithms whose
// safety the scenarios argue about, each faithful to the published algorithm
// and to the library people use, driven by a workload loop that records the
// history the checker reads.
//
// A client is a sim.Process built by New(Config). Its workload waits until
// Workload.Start, then repeats: want the lock (history Want), make attempts
// (Attempt) until one succeeds or Lock.Tries are exhausted, believe it holds
// the lock (Belief), run one critical section on the resource (Section: read,
// hold, check, write value+1), release, think. A client that gives up ends
// its want with "gave-up", thinks, and wants again: a cycle counts only when
// the client held the lock and released it. A restarted client starts its
// workload over.
//
// # Beliefs (DESIGN.md "Trace and history")
//
// A belief starts when the algorithm concludes that it holds the lock and
// ends at the first of: the release is sent (released); the client learns
// that it lost the lock (lost: an extension failed, the ZooKeeper session
// expired); the algorithm checks the validity it computed and finds, on its
// own clock, that it has passed (expired; redlock and redsync only); the
// client crashes; the run ends. The check runs right before the write, and
// the write is a separate kernel step (a zero-length timer), so that a pause
// can fall between the check and the write (Kleppmann). A paused client runs
// nothing and checks nothing.
//
// # Algorithms (reference = shared/reference/redis-and-lock-clients.md)
//
//   - redis-single: SET key value NX PX ttl with a value unique to the
//     acquire; release by the compare-and-delete script; optionally WAIT
//     wait_replicas (fewer acknowledgements fail the attempt, which releases
//     and retries); optionally extend_every with the touch script, whose 0
//     means the lock was lost (§4.1, §5).
//   - redis-setnx-expire: SETNX then EXPIRE, two commands: a crash between
//     them leaves a key without TTL that blocks everybody forever.
//   - redis-fixed-value: every client writes the same value and releases with
//     DEL, deleting whatever lock is there.
//   - redis-get-del: release by GET, compare in the client, DEL: the key can
//     expire and be taken between the GET and the DEL.
//   - redlock: antirez's algorithm (§4.1) with redlock-rb's defaults: read the
//     clock (elapsed_clock: wall, as redlock-rb, or monotonic), SET NX PX on
//     every node with a per-node timeout, sequential (as the spec and
//     redlock-rb) or parallel, success iff a majority granted and validity =
//     ttl − elapsed − (ttl·drift_factor + drift_extra) > 0 (validity_check
//     false: a majority alone); on failure unlock all nodes (release=acquired:
//     only those that granted), wait a random delay and retry up to tries.
//     One value per want, reused by its retries. Optional extension.
//   - redsync: go-redsync/redsync v4 (§4.2): a parallel round bounded by
//     ttl·timeout_factor, until on the monotonic clock, the delete script
//     answering −1 for a missing key, Extend with the touch script (or, with
//     set_nx_on_extend, touch-or-SET-NX, which silently re-acquires a lock
//     that expired and was taken and released meanwhile).
//   - redisson: RLock (§4.3): a hash with a reentrancy counter in field
//     <uuid>:<thread>, the lock script answering nil or the holder's PTTL,
//     a watchdog renewing the lease every renew_every with the renew script
//     and stopping silently when the key is gone (the holder is not told:
//     it believes until it releases), and with replicas a WAIT <replicas>
//     1000 after each lock command; an acquire with 0 replicas in sync fails
//     and unlocks (checkLockSyncedSlaves).
//   - zookeeper: the ephemeral-sequential recipe over a zookeeper.Session
//     (Curator's InterProcessMutex, §6.4): create /<key>/_c_<guid>-lock-N,
//     the lowest sequence number holds the lock, a waiter watches only its
//     predecessor; the fencing token is the node's creation zxid. The holder
//     learns of session expiry from the session and ends its belief (lost);
//     a lost connection alone is not a lost lock unless lost_on_disconnect.
//
// fencing_token incr adds INCR <key>:token on the lock's Redis node (for
// redlock and redsync: on the first node that granted, which is not safe, as
// Kleppmann says) inside the acquire; zxid (zookeeper only) uses the node's
// creation zxid. The token travels with every resource request. With a
// token-cas resource the section first sets the resource's current-lock
// field to the lock's value.
//
// Master discovery: when a lock node is the Sentinel-monitored master
// (Config.Discovery), the client asks the sentinels for the current master
// before each attempt and again after an error, and follows +switch-master
// as go-redis' failover client does (follow.go): later commands, a release
// or an extension too, go to the new master; the connection to the old one
// is closed and what waits on it fails. Redisson instead asks once and then
// every second (its SentinelConnectionManager's scan), and follows a change
// the same way.
//
// # Simplifications
//
//   - Every client wait (timeouts, hold, think, retries, renewals) runs on the
//     client's monotonic clock; only elapsed-time and validity measurements
//     use the clock the library reads.
//   - Values are 64 random bits from the client's seeded stream, prefixed with
//     the client's name, not 20 bytes from /dev/urandom or a UUID.
//   - redlock works in nanoseconds where redlock-rb truncates to milliseconds;
//     extensions are not limited in number (the spec asks for a limit): a
//     client extends only while it holds the lock for one section.
//   - redsync's round deadline is enforced as redsync intends; go-redis v9
//     with ContextTimeoutEnabled=false would let a sent command run to its
//     5 s read timeout (set timeout_factor to model that).
//   - redisson has no pub/sub: a waiter polls after retry_delay or the
//     holder's PTTL, whichever is sooner; the replica count for WAIT comes
//     from INFO replication before each attempt (Redisson tracks it through
//     Sentinel); RFencedLock's INCR is a separate command after the lock
//     script; one thread, so the reentrancy counter never exceeds 1.
//   - zookeeper: a want that gives up deletes its node; an adopted node
//     (protection mode after a connection loss) takes the service's last zxid
//     as its token.
//   - Sentinel: go-redis asks a sentinel when it dials the master; these
//     ask before each attempt and after errors. The +switch-master
//     subscription shares the connection to the sentinel, and the new
//     master is the message's (follow.go). Redisson's scan asks the
//     sentinels in order, not shuffled, and a command waiting on the old
//     master fails instead of being retried on the new one.
//   - memcached-add (issue 13): the cas release is "gets", then a cas with
//     exptime -1 (immediately expired) guarded by the CAS id; there is no
//     text-protocol command that deletes only a given CAS id.
//   - mysql-insert, mysql-for-update: statements are typed messages, not
//     SQL; the DELETE of the release matches the key alone (no owner column);
//     the FOR UPDATE client creates a missing lock row once with an
//     autocommit INSERT; a statement timeout (60 s, longer than the 50 s
//     innodb_lock_wait_timeout) closes the connection as a read timeout does.
//   - redis-getset stores Unix milliseconds where the recipe stores seconds.
//   - A nested workload (workload reentry, inner_at, inner_hold) takes the
//     lock again from one inner call chain, not from several threads; only
//     the re-entrant algorithms accept it.
//   - The cache filler writes without waiting for replies and notes only the
//     changes between accepted and refused writes.
//
// # Stock counters (issue 13, counter.go)
//
// A counter client takes no lock: it makes purchases from a stock counter
// kept in Redis with one counter method (get-set, decr, watch, script), then
// reads the stock once, recording one sim.CounterOp per operation with
// client-side times; a counter loader SETs the declared stock at 0s, once
// per run. They reuse the lock clients' go-redis plumbing (read timeouts
// that close the connection, requests failed when their connection ends,
// Sentinel discovery). Simplification: a purchase that failed is not
// retried (go-redis would retry a command up to MaxRetries times); the
// client goes on with its next purchase after think.
//
// Package clients imports sim and the message types of nodes/redis,
// nodes/storage, nodes/zookeeper, nodes/memcached and nodes/mysql (and the
// zookeeper.Session helper).
package clients
