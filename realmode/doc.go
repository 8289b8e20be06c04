// Package realmode runs a locksim scenario against real redis-server,
// redis-sentinel, memcached and mariadbd processes, in real time, and judges
// its history with the same checker as a simulation (simrun real, simrun
// twin). Each process kind with real servers has a launcher (kinds.go);
// gateways speak RESP or memcached's text protocol through a codec
// (gateway.go), and MySQL's connections through go-sql-driver/mysql
// (mysqlgw.go).
//
// The kernel (package sim) stays what it is: deterministic, single-threaded,
// no slower. Real mode builds the scenario's world with gateways in place of
// the real servers (scenarios.BuildWith) and drives it with a
// loop that lets virtual time follow real elapsed time: it runs the kernel up
// to the real time elapsed, sleeps until the next event is due
// (sim.Kernel.NextAt) or a reply arrives, and injects each reply as the
// gateway's message (sim.Kernel.Inject). All kernel code runs on that one
// goroutine; socket readers only hand closures to it. The lock clients and
// the storage service are locksim's own, unchanged; their clocks are the
// kernel's, so client clock faults act directly.
//
// The fault schedule is the simulator's (faults.Install on the same kernel,
// with the same seed and draws and the same records for explanations);
// observe carries what it does to a gateway onto the real process: signals,
// kills, SHUTDOWN, restarts on the same data directory, and wall-clock
// shifts through realmode/clockshift. Every connection runs through
// realmode/proxy, to which partitions, cuts, heals and delays go, and which
// makes a powered-off host a black hole. What real mode cannot reproduce
// is refused up front by Check with the fault or section named and why
// (docs/real-mode-faults.md has the audit).
//
// Besides the clients' replies, a real run's trace holds what the real
// servers decided: a Redis Cluster node's failure detection and elections
// and a Sentinel's +sdown/+odown/+switch-master, read from their logs and
// CLUSTER NODES (serverlog.go) as the model's event kinds, which simrun
// twin prints beside the model's.
package realmode
