// Package memcached is locksim's model of a memcached 1.6 server, faithful
// where it matters for the memcached "add" lock: the text-protocol commands
// set, add, replace, cas, get, gets, delete, touch, incr, decr and
// flush_all with memcached's replies (STORED, NOT_STORED, EXISTS,
// NOT_FOUND, DELETED, TOUCHED, END, CLIENT_ERROR ..., SERVER_ERROR ...);
// exptime in seconds with the 30-day cutover to absolute Unix times and
// negatives meaning "already expired"; CAS ids; a memory limit with LRU
// eviction (or out-of-memory errors under -M); and no persistence: a
// restart loses every item. Sources: memcached/memcached tag 1.6.45
// (memcached.c, memcached.h, items.c, slabs.c, proto_parser.c, util.c,
// doc/protocol.txt), cited where each rule is modelled.
//
// # Clocks
//
// The server reads the wall clock once, at start-up (process_started), and
// then keeps time from the monotonic clock in whole seconds (current_time,
// ticked once a second). Relative exptimes therefore run on the monotonic
// clock and a wall-clock jump on the server changes nothing; an absolute
// exptime is converted against the wall clock as it read at start-up, so a
// client whose clock disagrees with the server's start-time clock computes
// a wrong lifetime.
//
// # Simplified
//
//   - Memory: slab classes as memcached computes them (96-byte chunks
//     growing by 1.25 to 512 KB, 1 MB pages handed to a class on demand
//     while the pages stay within -m, every class getting its first page),
//     with each item sized as memcached sizes it (48-byte header + key + 1
//   - value + 2, plus 4 bytes of client flags when non-zero and 8 bytes
//     of CAS id). Eviction pressure is therefore per class, as in
//     memcached: a cache workload evicts a lock key only when their items
//     fall in the same class. Simplified: an item larger than 512 KB is
//     accounted as whole 512 KB chunks of the largest class (memcached
//     also keeps a small header item); slab page rebalancing (slab_reassign
//     and slab_automove) is not modelled, so pages never move between
//     classes; the hash table lies outside the limit, as in memcached.
//   - Eviction: one LRU per class, with the classic bump rule: an access
//     (get, gets, touch, a failed add, incr/decr) moves an item to the
//     head only if its last bump is more than 60 s old. Real memcached
//     1.5+ segments each class's LRU into HOT, WARM and COLD, evicts from
//     the COLD tail and rescues from COLD only items read twice, so under
//     mixed reads the order of eviction can differ; items written and
//     never read are evicted oldest first in both.
//   - Expired items are unlinked when an access finds them or when they
//     reach the LRU tail; the background LRU crawler is not modelled (no
//     command can tell the difference).
//   - flush_all takes no delay argument and frees every item at once.
//   - noreply, append/prepend, the meta commands, stats and the binary
//     protocol are not modelled. Requests are typed, so malformed numbers
//     cannot be sent; a key with spaces or control characters, an empty
//     key get "CLIENT_ERROR bad command line format"; an exptime beyond 32
//     bits is truncated as the server's int32 parse truncates it.
//   - current_time ticks exactly once a second of the node's monotonic
//     clock from the instant it started (libevent's timer jitter is not
//     modelled).
package memcached
