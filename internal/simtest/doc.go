// Package simtest is the simulation test harness the node and client
// packages share: a World (a kernel with a fixed network latency, processes
// added by name, run-until helpers and trace queries) and a Probe (a test
// client process that sends requests, collects the replies with their true
// arrival times, and on a connection that ended sends what was still
// pending again, as a client library reconnects and retries).
//
// It is test-only in spirit: production packages never import it. Every
// World is deterministic: seed 1 unless told otherwise, a fixed latency,
// the trace kept, and no real time anywhere.
package simtest
