// Package sim is locksim's deterministic discrete-event kernel.
//
// It owns virtual true time, the event queue, seeded randomness, the clocks of
// every process (a wall clock and a monotonic clock each, with offset, drift
// and jumps), the simulated network and its faults, process lifecycle (pause,
// crash, restart) with a durable-storage model, and the recording of the trace
// (every observable event, with a rolling SHA-256 hash) and of the history the
// checker reads.
//
// Processes (servers and lock clients) are state machines: the kernel calls
// Init, Receive and Fire on them and they act only through their Env (send a
// message, set a timer on one of their own clocks, read their own clocks, draw
// from their own random stream, write to their disk, record history). Nothing
// in a process may read real time, use global randomness, start goroutines or
// let map iteration order reach its output: the kernel guarantees that the same
// seed gives the same trace, bit for bit, on any machine.
//
// sim imports only the standard library.
package sim
