// Package mysql is a MySQL/InnoDB server model, faithful where it matters for
// the two lock recipes built on it: a lock table with a unique key (INSERT
// to lock, DELETE to unlock) and SELECT ... FOR UPDATE in a transaction
// (COMMIT to unlock). The reference is MariaDB 10.11, whose behaviour the
// conformance suite (conformance_test.go) checks statement by statement;
// MySQL 8 behaves the same in everything modelled unless noted. Facts and
// their sources are collected in reference/servers-and-network.md, section 7.
//
// # What it models
//
//   - Connections (sessions): Connect opens one and returns its id
//     (CONNECTION_ID()); statements are typed Requests (proto.go), executed
//     one at a time per connection in arrival order. Session variables:
//     autocommit, innodb_lock_wait_timeout, wait_timeout (SetSession).
//   - Transactions: autocommit (every statement is its own transaction),
//     BEGIN (an open transaction is committed first), COMMIT, ROLLBACK,
//     SET autocommit=0 (the next statement opens a transaction), SET
//     autocommit=1 (commits the open one). Errors are MySQL's numbers, SQLSTATEs
//     and MariaDB's texts (errors.go): 1062 duplicate entry, 1205 lock wait
//     timeout, 1213 deadlock, 1146 no such table, 1094 unknown thread, 1317
//     query interrupted, 1927 connection killed, 1193 and 1231 for SET.
//   - Row locks (locks.go), owned by the transaction, released all at once
//     at COMMIT or ROLLBACK (MySQL manual innodb-locking-reads.html):
//     INSERT of a missing key takes an insert intention lock and the new
//     row's exclusive lock; INSERT of a present key takes a shared lock for
//     the duplicate check (waiting while another transaction holds the row
//     exclusively: an uncommitted insert or delete, a FOR UPDATE) and fails
//     with 1062 once it has it, keeping the shared lock; SELECT ... FOR
//     UPDATE, UPDATE and DELETE take an exclusive record lock on a present
//     row and a gap lock on a missing one. Gap locks only block other
//     transactions' inserts. A request waits when it conflicts with any other
//     transaction's lock in the key's queue, granted or waiting, and waiters
//     are granted in queue order. When a record vanishes (an insert rolled
//     back, a delete committed) the other transactions' record locks on it
//     become gap locks, so two inserters waiting behind a rolled-back insert
//     deadlock, as in InnoDB.
//   - innodb_lock_wait_timeout (50 s; per session; 100000000 = forever)
//     ends a wait with 1205 and rolls back only the statement unless
//     innodb_rollback_on_timeout is set. The wait is timed on the server's
//     monotonic clock.
//   - Deadlock detection (innodb_deadlock_detect ON) when a request starts
//     to wait: a depth-first search of the waits-for graph from the waiter.
//     The victim is the transaction of the cycle with the smallest weight
//     (rows changed plus locks held, InnoDB's TRX_WEIGHT); on a tie, the
//     waiter whose request closed the cycle. The victim's transaction is
//     rolled back and its statement answered with 1213.
//   - Sessions end by QUIT, by Hangup (the client's socket closed or its
//     process died: its kernel's FIN or RST), by KILL from another
//     connection, or by wait_timeout (28800 s of idleness between
//     statements, on the server's monotonic clock). The open transaction is
//     rolled back and its locks released (MySQL manual
//     innodb-autocommit-commit-rollback.html; kill.html). A Hangup while a
//     statement waits for a lock takes effect when the wait ends: the thread
//     is not reading its socket meanwhile (checked against MariaDB). The
//     server tells the client with Closed after KILL and wait_timeout; a statement still
//     waiting when its connection is killed gets 2013 (the client library's
//     "Lost connection", because MariaDB closes without an error packet),
//     and statements sent later get 2006 ("server has gone away"). KILL
//     QUERY ends only a waiting statement (1317).
//   - Durability through a redo log on the node's disk (innodb_flush_log_at_
//     trx_commit): 1 writes and fsyncs every commit before the reply; 2
//     writes at commit and fsyncs once a second (a mysqld crash loses
//     nothing, a power loss up to a second of commits); 0 buffers commits and
//     writes and fsyncs them once a second (any crash loses up to a second).
//     Only committed transactions reach the log, so recovery never sees an
//     uncommitted row: the effect of InnoDB's rollback of incomplete
//     transactions at startup. A long, fully synced log is replaced by a
//     snapshot of the committed rows (a checkpoint) to bound memory. A restarted server has no connections and
//     numbers them from 1 again.
//   - Asynchronous replication (replication.go): with ReplicaOf set the node
//     follows a source, GTID-style: every commit has a sequence number, the
//     source streams each commit after committing it and replying, and the
//     replica re-subscribes from its last applied commit when it sees a gap,
//     when a heartbeat (every slave_net_timeout/2) shows it behind, or after
//     slave_net_timeout (60 s) of silence. read_only refuses writes with
//     1290. Promote makes a replica a writable primary, persistently. A
//     commit the source acknowledged but did not stream is lost when the
//     replica is promoted.
//
// # Simplifications
//
//   - Simplification: no SQL and no wire protocol: statements are typed,
//     on one table per statement and one row per statement (by its unique
//     key); a row is a key and one value column.
//   - Simplification: one lock queue per key stands for InnoDB's record,
//     gap and next-key locks on index pages. A gap lock covers exactly the
//     missing key, where InnoDB's covers the whole gap between neighbouring
//     keys (so the model blocks fewer inserts than the real server).
//   - Simplification: plain SELECT reads the latest committed row (and the
//     transaction's own changes), as READ COMMITTED does; under the default
//     REPEATABLE READ the real server reads from a snapshot taken at the
//     transaction's first read. Locking reads are the same in both.
//   - Simplification: when several waiters are granted at once they resume
//     in queue order; in the real server their threads race, so which of two
//     inserters deadlocking behind a rolled-back insert is the victim varies
//     from run to run (both seen on MariaDB 10.11).
//   - Simplification: a committed DELETE's record is purged at once (InnoDB
//     purges delete-marked records in the background).
//   - Simplification: connections are not TCP connections. The server
//     learns that a client died only from a Hangup message (a process crash,
//     whose kernel closes the socket) or from wait_timeout (a machine that
//     lost power or was partitioned away sends nothing); net_read_timeout and
//     TCP keepalive are not modelled. A client whose statement was in flight
//     when the server crashed gets no reply (the kernel drops it): the client
//     model must time out, as it would on a reset connection.
//   - Simplification: the once-a-second log flush for modes 0 and 2 is
//     armed by the first unflushed commit rather than ticking from server
//     start.
//   - Simplification: replication (see replication.go): the binary log and
//     the redo log are one log; events are applied without the replica's row
//     locks; one source per replica; a source whose log was checkpointed past
//     a replica's position sends a snapshot instead of failing; semi-sync
//     replication and automatic failover are not modelled (Promote is
//     explicit).
//   - Simplification: deadlock victims: MariaDB also weighs in whether a
//     transaction changed non-transactional tables; there are none.
//
// mysql imports only sim.
package mysql
