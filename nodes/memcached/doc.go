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
//   - Memory: each item is accounted as memcached sizes it before picking a
//     slab class (48-byte header + key + 1 + value + 2, plus 4 bytes of
//     client flags when non-zero and 8 bytes of CAS id), against one pool
//     of MaxBytes. Real memcached rounds items up to slab chunk sizes
//     (growth factor 1.25), hands memory out in 1 MB pages per class and
//     keeps the hash table outside the limit, so it holds a different
//     number of items for the same -m.
//   - Eviction: one LRU for all items (real memcached has an LRU per slab
//     class, segmented into HOT, WARM and COLD, and evicts from the COLD
//     tail of the new item's class). Every access (get, gets, touch, a
//     failed add, incr/decr) moves an item to the head; real memcached
//     bumps lazily and only moves an item that was read twice out of COLD.
//     The model evicts from the tail until the new item fits.
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
