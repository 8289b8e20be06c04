// Package nodes groups locksim's simulated servers: redis (with its
// persistence and replication), sentinel, zookeeper (a session service),
// memcached (slab classes, LRU eviction, no persistence) and storage (the
// resource the locks protect). Each sub-package is a sim.Process
// plus the message types its clients use; they import only sim (and, for
// sentinel, the redis message types).
package nodes
