// Package proxy is locksim's fault-injecting TCP proxy for real mode. Every
// real process has its own loopback address; for each server the proxy
// listens on a front address and forwards to the server's real address,
// and it names the connecting process by its source address (a registry ip
// -> name), so faults act on directed links between named processes:
//
//   - Cut(from, to) holds the bytes that from sends to to. They are not
//     dropped: they flow, in order, once the cut is removed (Uncut, Heal),
//     at the sender's first retransmission after it (200 ms after the
//     first held byte was sent, the RTO doubling up to 120 s, as the
//     model's network: sim/conn.go), the way TCP retransmits across a
//     partition that heals within the retransmission window (shared
//     reference servers-and-network.md section 1.1, "Partition that heals
//     within the retransmission window"). Partition(groups) cuts every
//     pair of processes in different groups, both ways.
//   - Delay(from, to, by) delivers each chunk no earlier than by after the
//     proxy read it; order is kept, so a chunk never overtakes an earlier
//     one.
//   - Reset(from, to) resets the connections between the two processes as a
//     middlebox that forgets a flow: both ends see ECONNRESET (the proxy
//     closes both sockets with SO_LINGER 0, which sends RST).
//   - PowerOff(host) makes a host a black hole, as a power loss does: no
//     byte, FIN or RST of it reaches a peer (not even the ends of its
//     killed process's sockets), what the peers send it is held, and
//     their connections stay open. PowerOn(host) brings it back: a peer's
//     next segment on an old connection is answered with RST, as a
//     rebooted kernel answers a connection it does not know.
//
// The upstream connection is made from the client's own source address,
// so the server sees the real client address (CLIENT LIST, replica
// addresses) as without the proxy.
//
// Simplifications, each a documented departure from a real network:
// the client's connect() succeeds at once, because the proxy accepts it;
// the proxy dials the server only when neither direction between the two is
// cut, so a connection opened across a cut stays silent (no bytes either
// way) until the cut heals, where a real SYN would be retransmitted. Held
// bytes are bounded per direction (MaxHeld); beyond it the proxy stops
// reading and the kernel's buffers and TCP flow control push back on the
// sender, as a real receiver window would. A connection's end (FIN) is
// delivered in order after the bytes before it; a reset (RST) arriving from
// one end is passed to the other end in order too.
package proxy
