// Package clockshift shifts a real process's wall clock for locksim's real
// mode: an LD_PRELOAD library of the project's own (csrc/clockshift.c, embedded
// and built with the system C compiler by Build) makes CLOCK_REALTIME,
// CLOCK_REALTIME_COARSE, gettimeofday and time read
//
//	shifted(now) = anchorShift + (now - anchorReal) * (1 + ratePPB/1e9)
//
// or a frozen value, from a memory-mapped control file that a Control
// writes. CLOCK_MONOTONIC is untouched, as on a real machine whose wall
// clock is stepped by an administrator or NTP: Redis's event loop and its
// timers keep real time, while key expiry (which compares absolute
// Unix-time deadlines with mstime(), i.e. gettimeofday; Redis 7.0
// src/server.c ustime/mstime and src/db.c keyIsExpired) follows the
// shifted clock.
//
// It is made for Debian's jemalloc-linked redis-server 7.0.x, with which
// libfaketime 0.9.10 does not start (its dlsym-based symbol lookup
// allocates inside jemalloc's own clock read at start-up). The library
// never allocates, never calls dlsym and takes no lock: it reads the real
// clocks with the raw clock_gettime system call and the control file under
// a seqlock.
//
// The control file holds eight-byte little-endian words: magic "LKSCLK01",
// the seqlock counter (odd while a write is in progress), frozen (0 or 1),
// the frozen time, anchorReal, anchorShift and ratePPB, all times in
// nanoseconds since the Unix epoch. The child finds it through the
// LOCKSIM_CLOCKSHIFT_CONTROL environment variable (see Env); a child given
// a path it cannot map aborts at start-up with a message on stderr rather
// than silently running on the real clock.
//
// Real mode is the only part of locksim that lives in real time; nothing
// here is used by the deterministic kernel.
package clockshift
