// Package zookeeper is a ZooKeeper-style coordination service (Server) and
// the client side of its sessions (Session), for the ephemeral-node lock
// (reference/redis-and-lock-clients.md, section 6.4, and ZooKeeper's
// recipes.md, "Locks"). Citations are to apache/zookeeper at tag
// release-3.9.5 unless they say otherwise.
//
// # What it models
//
//   - One logical, linearizable service. The ZAB replication behind a real
//     ensemble is not simulated: requests are applied one at a time, in
//     arrival order, by a single process, and every change gets the next
//     zxid (create, delete, and the createSession and closeSession
//     transactions; reads and pings do not). Reply.Zxid is the zxid after the
//     request; for OpCreate it is the new node's creation zxid, a fencing
//     token (Kleppmann 2016; Junqueira 2016 marks the resource with it).
//   - Sessions: OpConnect with a requested timeout, negotiated into
//     [MinSessionTimeout, MaxSessionTimeout], by default [2, 20] ticks of
//     2000 ms = [4 s, 40 s] (ZooKeeperServer.java:1394, 1403, 1518-1527).
//     Any request renews the session. The server expires a session it has
//     not heard from for its timeout, on the SERVER's monotonic clock, in
//     tick-sized buckets as SessionTrackerImpl does (see Server). Expiry
//     deletes the session's ephemeral nodes (firing watches), tells the
//     client with SessionExpired, and any later request of the session,
//     including a reconnect, is answered with Err SESSIONEXPIRED. OpClose
//     ends a session cleanly: its ephemeral nodes are deleted at once.
//   - Znodes: persistent, ephemeral and ephemeral-sequential. A sequential
//     node's suffix is its parent's child counter (cversion), 10 digits,
//     zero-padded; every child creation increments it, deletions do not
//     (PrepRequestProcessor.java:668-684). OpGetChildren lists the sorted
//     child names; OpExists with Watch sets a one-shot watch that sends a
//     WatchEvent when the node is deleted; OpDelete deletes a childless node.
//   - Watches survive a broken connection: a reconnecting client resends its
//     watched paths and the server fires those whose node is gone
//     (SetWatches; DataTree.java:1488-1497).
//   - Optional Chubby lock-delay (Config.LockDelay; Burrows 2006, section
//     2.4): when a session EXPIRES, its ephemeral nodes stay as tombstones
//     for LockDelay (listed by OpGetChildren, OpExists says they exist,
//     OpCreate of the same path fails with NODEEXISTS, OpDelete fails with
//     LOCKDELAY, watches wait), then they are deleted and the watches fire.
//     A clean OpDelete or OpClose frees the lock at once. Not in ZooKeeper.
//   - The client Session (see its doc): pings, the read timeout of 2/3 of
//     the session timeout that reports Disconnected, reconnection, and
//     Expired when the server says so (ClientCnxn.java).
//
// # What it simplifies
//
//   - Simplification: missing parents are created implicitly, persistent, in
//     the same transaction as the node (like Curator's
//     creatingParentsIfNeeded); real ZooKeeper answers NONODE, so a lock
//     client need not create "/lock" first.
//   - Simplification: znodes carry no data, versions, ACLs or stats beyond
//     the creation zxid; there are no TTL or container nodes, no data or
//     child watches, and an exists watch is set only on an existing node
//     (ZooKeeper would also fire it on creation).
//   - Simplification: connections are not modelled. The server sends to
//     the process that last spoke for a session; a broken connection is the
//     client's conclusion (read timeout, an unanswered call, or a gap in the
//     server's message numbering Reply.Seq, since a loss on TCP means the
//     connection broke). When the server expires a session it sends one
//     SessionExpired message, standing for "the server closes the
//     connection; the client reconnects and is told its session expired".
//   - The server's tree and sessions are on its disk (persist.go), rewritten
//     durably at every transaction as ZooKeeper logs and fsyncs each one
//     before it answers: a restart, after any crash, finds the znodes and
//     the sessions, and tracks each session anew from the restart
//     (SessionTrackerImpl at 3.8.0), so a client that reconnects within its
//     timeout keeps its session and its ephemeral nodes, as on a real
//     ZooKeeper. Watches are not kept (clients set them again on reconnect).
//     Simplification: a restart starts a new epoch, as an ensemble's leader
//     election does (zxids and session ids keep increasing); a standalone
//     ZooKeeper continues its zxids instead.
//
// zookeeper imports only sim.
package zookeeper
