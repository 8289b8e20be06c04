// Package launch starts and stops the real servers of locksim's real mode:
// redis-server and redis-sentinel processes, each bound to its own loopback
// address (127.0.0.0/8 only) in a directory the caller owns, tracked by PID
// so that nothing outlives the test or command that started it.
//
// A Server is one process with a generated configuration file; Kill,
// Shutdown, Pause, Resume and Restart are the real counterparts of the
// simulator's crash, clean crash, pause and restart faults. A Group tracks
// every server started through it and stops them all (StopAll), also on
// SIGINT and SIGTERM (StopOnSignal).
//
// Errors a user can cause (a missing binary, a port in use, a bad option)
// wrap ErrNoBinary, ErrPortInUse and ErrBadOption so that commands can map
// them to exit code 2.
package launch
