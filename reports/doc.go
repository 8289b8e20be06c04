// Package reports turns a recorded locksim run into the pictures a design
// review asks for, and draws the results of sweeps and of the algorithm ×
// fault matrix.
//
// # A run's report
//
// WriteRun writes, for one run, timeline.png/svg (true time on the x axis;
// one lane per client with its attempts, belief periods, critical sections,
// fencing tokens and write outcomes; one lane per server with the periods
// during which it held each lock key, its crashes and restarts; the faults
// where they act; the violation windows shaded across all lanes),
// clocks.png/svg (each process's wall and monotonic clock offset from true
// time) and a self-contained index.html (the scenario, its verdicts and
// explanation, both images inline, the key events, the trace hash and the
// command that reproduces the run).
//
// Everything is reconstructed from the trace (the JSON Lines that simrun run
// --out writes), the verdicts of the result and the scenario's names and
// initial clocks (Setup): a report never re-runs a simulation (DESIGN.md,
// "Data flow"), so simrun report on a recorded result and simrun run --out
// produce the same bytes.
//
// What the trace tells exactly: the client side (acquire-start, acquired
// with its token, acquire-failed, released, lock-lost, resource-read,
// resource-write; crashes), the storage node's decision on each read and
// write (resource-applied, resource-rejected), the clock changes
// (clock-jump "+30s", clock-drift "N ppb", replayed with the kernel's exact
// integer arithmetic from the initial clocks), the faults, and on Redis
// nodes key-set, key-del and key-expired (whose text carries the deadline:
// the held period ends when the node's wall clock reached it, which may be
// before the expiry cycle deleted the key). On the ZooKeeper service the
// lock is held by the owner of the lowest ephemeral-sequential znode under
// /<key>.
//
// Simplifications (what the trace does not say, and how the report guesses):
//
//   - Simplification: the holder of a key is the client whose message the
//     server was handling when it stored the key (the last deliver event of
//     that server), else the client named by the value's "<client>:" prefix,
//     else, on a replica applying its master's stream, the master's holder.
//   - Simplification: PEXPIRE and PEXPIREAT (extensions, Redisson's
//     watchdog, the EXPIRE of redis-setnx-expire) emit no trace event, so a
//     held period ends at the key's deletion or at its recorded expiry, never
//     at a deadline the report cannot see.
//   - Simplification: a node that loads keys after a restart ("loaded ...
//     keys=N" with N > 0) is assumed to hold again the lock key that its
//     persistence had when it crashed: what the AOF had written (process
//     crash) or fsynced (power loss), or the last RDB snapshot, as the
//     aof-write, aof-fsync and rdb-save events tell. A full
//     resynchronisation (replica-sync) copies the master's holder.
//
// # Reading a timeline
//
// Lanes from top to bottom: clients, servers (Redis nodes, sentinels, the
// ZooKeeper service, the storage service), and a network lane when there
// were partitions. On a client lane a thin grey line is an acquire attempt,
// a pale bar a belief period (with its fencing token above it), the dark
// bar inside it the critical section from the read to the write, and a
// dot the write (green: accepted, red ×: rejected by fencing, ring: lost).
// On a server lane a bar in a client's colour is the time the server held
// the lock key for that client. Faults act where they are drawn: a hatched
// purple box is a pause, a hatched grey box a crashed process, a red
// triangle a wall-clock jump (with its size), an orange diamond a drift
// change, thin strips under the lanes the sides of a partition (one row
// per partition, in the colours of its groups on the network lane), a
// dashed red arrow dropped messages, a hatched strip extra link delay, a
// teal triangle pointing back a same-instant order fault that moved an
// event (on the lane of the process whose event went first, labelled
// "first: from c2", "first: timer"; none for one that moved nothing).
// Violation windows are shaded across all lanes (lock safety red,
// resource safety hatched orange, liveness yellow). Labels are placed
// without overlapping, the most important first (faults, rejections), and
// left out when there is no room; when a run idles for most of its end,
// the time axis stops shortly after the last drawn change and the title
// says so.
//
// The package also draws sweeps (SweepPlot: lines with 95% Wilson intervals
// for one parameter, heatmaps for two) and the matrix (MatrixPlot and its
// tables). Plots are deterministic: the same input gives the same PNG and
// SVG bytes (no map order, no time, no randomness reaches them).
//
// reports imports sim (trace types), checker (verdicts) and gonum/plot; it
// does not import scenarios, nodes or clients: cmd/simrun converts a
// scenario into a Setup.
package reports
