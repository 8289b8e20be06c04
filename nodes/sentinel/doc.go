// Package sentinel simulates Redis Sentinel (src/sentinel.c of Redis 7.2.4)
// monitoring one master: the process that decides when a master is down,
// elects a leader among the sentinels, promotes a replica and tells clients
// where the master now is.
//
// A Sentinel talks to the simulated Redis nodes (package redis) only with
// redis.Request commands, as real Sentinel does: PING, INFO, REPLICAOF NO ONE
// and REPLICAOF <host> 6379. Sentinels talk to each other with Hello,
// IsMasterDownReq and IsMasterDownReply (proto.go), which carry the fields of
// the real hello message and of SENTINEL IS-MASTER-DOWN-BY-ADDR. Lock clients
// discover the master with
//
//	redis.Request{Args: []string{"SENTINEL", "get-master-addr-by-name", "mymaster"}}
//
// and get Array[Bulk(<process name of the master>), Bulk("6379")], or Nil
// when the name is unknown. A process name stands for an address everywhere
// in the simulation: Sentinel passes it as the host of REPLICAOF, reads it
// back from INFO (master_host, slaveN:ip=...) and returns it to clients. The
// port is always Port (6379). Clients may also SUBSCRIBE to the event
// channels (pubsub.go): every event is published on the channel named by
// its type, +switch-master as "<master-name> <old-ip> <old-port> <new-ip>
// <new-port>", as redis.Push messages.
//
// # What is modelled
//
// Each of the following follows the sentinel.c function it names, with the
// same constants (cited in the code):
//
//   - The timer: sentinelTimer runs from serverCron every 1000/hz ms with hz
//     re-drawn in [10, 20) after each run; the cadence is on the monotonic
//     clock (ae timers), while every time Sentinel measures is mstime(), the
//     wall clock (reference §8.1).
//   - Monitoring: PING when the last reply is older than min(down_after, 1 s);
//     INFO every 10 s, every 1 s for replicas while the master is ODOWN or
//     failing over or while a replica reports its master link down; at most
//     100 commands in flight per link; a link with a ping pending for more
//     than down_after/2 is closed and re-opened once it is 15 s old.
//   - SDOWN after down_after without a valid reply (PONG, -LOADING,
//     -MASTERDOWN), measured from the oldest unanswered ping; a master that
//     reports role slave for down_after + 20 s is also down.
//   - ODOWN when this sentinel's SDOWN plus the other sentinels' latest
//     is-master-down-by-addr answers (asked every 1 s, valid for 5 s) reach the
//     quorum.
//   - Failover start: ODOWN, no failover running, and 2*failover_timeout since
//     the last attempt; epoch+1; start time now + rand[0, 1000) ms.
//   - Leader election: one vote per epoch, first come first served; a
//     sentinel that votes for another pushes its own start time to now +
//     rand[0, 1000) ms, so it will not start its own failover for
//     2*failover_timeout; the winner needs more than half of all known
//     sentinels and at least the quorum; abort if not elected within
//     min(10 s, failover_timeout) of the start time.
//   - Replica selection: skip SDOWN/ODOWN/disconnected replicas, those with no
//     valid ping reply for 5 s, stale INFO, a master link down for too long,
//     or priority 0; then lower priority, larger replication offset, smaller
//     run id.
//   - REPLICAOF NO ONE, wait for INFO role:master (failover_timeout), then
//     REPLICAOF <new master> to the other replicas, parallel_syncs at a time,
//     then +switch-master. get-master-addr-by-name returns the new master as
//     soon as the leader has seen the promotion.
//   - Hello every 2 s carrying the current epoch and the master's address and
//     config epoch: this is how the other sentinels adopt the new master.
//   - An instance that reports role master but is not the master is told to
//     replicate the master once it has done so for 8 s (4 publish periods) and
//     the master looks sane; it accepts writes until then. A replica
//     replicating the wrong master is fixed after failover_timeout.
//   - TILT: a wall delta between timer runs below 0 or above 2 s (a clock
//     step, a pause) stops the acting half for 30 s; the sentinel keeps
//     monitoring, answers is-master-down-by-addr with "not down", still votes.
//   - The rewritten config (current epoch, master address, config epoch, the
//     epoch of its last vote, known replicas and sentinels) survives a crash:
//     sentinelFlushConfig rewrites and fsyncs it on every change.
//
// The trace events it logs are the Kind* constants in sentinel.go: sdown,
// odown, failover-start, vote, elected, promoted-replica, switch-master,
// tilt, convert-to-replica and their companions.
//
// # What is simplified
//
//   - One master per sentinel process.
//   - Run ids: a sentinel's run id is its process name; a Redis node's is
//     the run_id of its INFO, or its process name when INFO has none (Redis
//     sorts a missing run id last). Ties between equally voted leader
//     candidates go to the smallest name (Redis: dict order).
//   - Discovery: the other sentinels come from Config.Sentinels (and from any
//     hello that arrives); real Sentinel learns them from hello messages on the
//     master's __sentinel__:hello channel. Hellos go directly between
//     sentinels, not through the Redis nodes' Pub/Sub, and are not answered.
//     Replicas come from Config.Replicas and, as in Redis, from the master's
//     INFO.
//   - Connections: a link is the kernel's connection with the instance plus
//     a generation number (replies on an older generation are ignored). A
//     link that Sentinel closes closes the connection; a connection that
//     ends (a crashed instance's host resets it, the peer closes it, TCP
//     gives up) marks the link disconnected, and it is re-opened within a
//     second. The kernel keeps one connection per pair of processes, so two
//     sentinels share one: one closing its link ends the other's too.
//   - REPLICAOF is followed by CONFIG REWRITE but not wrapped in MULTI/EXEC,
//     and CLIENT KILL is not sent: the node's clients are not disconnected.
//   - Pub/Sub: SUBSCRIBE only, on the client's one connection
//     (pubsub.go); the events published are the ones this model logs,
//     with Redis' payloads.
//   - Not modelled: scripts, SENTINEL FAILOVER
//     (forced failover), master-reboot-down-after-period (0 by default),
//     replica-announced, hostname resolution, SENTINEL SET/RESET/CONFIG,
//     authentication.
//
// sentinel imports only sim and the message types of nodes/redis
// (nodes/redis/resp).
package sentinel
