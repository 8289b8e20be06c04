// Package sim is locksim's deterministic discrete-event kernel.
//
// It owns virtual true time, the event queue, seeded randomness, the clocks of
// every process (a wall clock and a monotonic clock each, with offset, drift
// and jumps), the simulated network and its faults, process lifecycle (pause,
// crash, restart) with a durable-storage model, and the recording of the trace
// (every observable event, with a rolling hash of them, traceHash) and of the history the
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
// # Semantics worth knowing
//
//   - Events due at the same true time run in the order they were scheduled.
//     Processes start (Init) at time 0 in registration order; the start is
//     scheduled by Add, so a fault scheduled with At for time 0 after Add finds
//     the process running.
//   - A timer fires when its own clock reaches the deadline. A wall-clock jump
//     re-plans the wall timers (early after a forward jump, late after a
//     backward one) and leaves the monotonic clock and its timers untouched; a
//     drift change re-plans every timer. Clock arithmetic is exact in integers.
//   - A paused process runs nothing; messages that arrive and timers that
//     become due wait in its inbox, in due order, and are handled one per
//     event after the resume. Until the inbox is drained, newer arrivals queue
//     behind it, so links stay FIFO across a pause.
//   - A crash destroys the instance, its timers and its inbox (waiting
//     messages are dropped, "crashed"); messages arriving while it is down are
//     dropped ("crashed"), and messages sent before a restart that arrive after
//     it are dropped ("connection reset"). Restart builds a fresh instance and
//     calls Init; the Disk survives according to the CrashMode.
//   - Run's event budget (Config.MaxEvents) applies to each call of Run; a
//     runaway model stops with *ErrBudget instead of hanging.
//
// # Simplifications
//
//   - Simplification: a partition drops messages (at send and at arrival)
//     instead of holding them for TCP retransmission (see network).
//   - Simplification: the OS writes dirty pages back exactly Writeback (30 s)
//     after they were written, in order (see Writeback).
//   - Simplification: a clean shutdown (CrashClean) of a paused process cannot
//     run its Shutdown hook; its files are still synced.
//   - Simplification: links are FIFO per direction for the machine, not per
//     connection: a message to a restarted process may wait behind one sent to
//     its previous incarnation (which is then dropped).
//
// sim imports only the standard library.
package sim
