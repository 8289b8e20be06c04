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
//   - Eviction: memcached's segmented LRU (lru_segmented, the default):
//     each class has a HOT, a WARM and a COLD queue (items.c); new items
//     enter HOT; a fetch sets ITEM_FETCHED, a second one ITEM_ACTIVE,
//     which in COLD queues an asynchronous bump to WARM; a failed add and
//     an in-place incr/decr refresh the item (do_item_update). An
//     allocation that finds no free chunk pulls the COLD tail: expired
//     items are reclaimed, the first live one is evicted (or, with COLD
//     empty, the HOT tail moves to COLD first), up to 10 tries
//     (do_item_alloc_pull). The LRU maintainer thread is a timer of the
//     node with the thread's own sleeps and per-class backoff
//     (lru_maintainer_thread, 1 ms to 1 s): it keeps HOT to 20 % and WARM
//     to 40 % of a class's bytes, moves items idle longer than 0.2 (HOT)
//     or 2.0 (WARM) times the COLD tail's age to COLD, rescues ACTIVE
//     items, reclaims expired items at the three tails and runs the
//     queued bumps. Simplified: a sleep of 0 (the thread loops without
//     sleeping) waits 1 ms, as the thread counts it; the thread's own run
//     time is zero; an idle maintainer's runs that change nothing are
//     skipped (exactly, see Node.armMaintainer); the bump buffer never
//     overflows; an item with a queued bump is freed at once when it is
//     evicted (memcached holds its chunk until the bump ran); the tail
//     repair and the slab rebalancer's evictions are not modelled. The
//     queues, bumps, tail pulls and the maintainer's sleeps are the same
//     in items.c of 1.6.18 (Debian's, which the conformance suite runs);
//     1.6.18's maintainer also runs the slab automover once a second
//     (page moves, not modelled, see Memory), which can shorten a sleep
//     to 1 ms.
//   - Expired items are unlinked when an access finds them or when they
//     reach an LRU tail (an allocation or the maintainer). The LRU crawler
//     is not modelled: memcached's maintainer starts it at start-up, when
//     the cache is empty, and then no sooner than 60 s plus 5 s after the
//     previous crawl found nothing to reclaim (lru_maintainer_crawler_check,
//     items.c:1448-1540), so in a run of a few minutes it could reclaim
//     expired items in the middle of a queue that the model finds only on
//     access or at a tail.
//   - flush_all takes no delay argument and frees every item at once.
//   - noreply, append/prepend, the meta commands, stats and the binary
//     protocol are not modelled ("stats items" counters are available to
//     tests and inspection as Node.ItemStats). Requests are typed, so malformed numbers
//     cannot be sent; a key with spaces or control characters, an empty
//     key get "CLIENT_ERROR bad command line format"; an exptime beyond 32
//     bits is truncated as the server's int32 parse truncates it.
//   - current_time ticks exactly once a second of the node's monotonic
//     clock from the instant it started (libevent's timer jitter is not
//     modelled).
package memcached
