package realmode

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/realmode/clockshift"
	"github.com/locksim/locksim/realmode/launch"
	"github.com/locksim/locksim/realmode/lazyfs"
	"github.com/locksim/locksim/sim"
)

// server is one real server (redis-server, redis-sentinel, memcached)
// that real mode started (through realmode/launch), under a process name
// of the scenario.
type server struct {
	name string
	// codec is the protocol its gateway speaks to it (nil for mariadbd,
	// whose gateway is a mysqlGateway).
	codec codec
	// database is mariadbd's schema of lock tables ("": not a mariadbd).
	database string
	// sentinel is true for a redis-sentinel.
	sentinel bool
	// gw makes the kernel process that stands for the server when it is
	// neither a gateway nor a mysqlGateway (ZooKeeper's zkGateway).
	gw func(rt *runtime, name string, srv *server) sim.Process
	// zk is what ZooKeeper's clients keep across connections and the
	// server's restarts (session passwords, the last zxid seen).
	zk   *zkClients
	ls   *launch.Server
	addr string // ip:port
	// clock shifts the process's wall clock (nil: the real clock).
	clock *clockshift.Control
	// lazy is the data directory's file system when a power loss must
	// drop what was not fsynced (nil: an ordinary directory).
	lazy *lazyfs.FS
}

// ErrMissingBinary says that redis-server, redis-sentinel or the C
// compiler is not installed; real mode cannot run then (exit 2).
var ErrMissingBinary = errors.New("not found in PATH")

// ErrStart says that a server could not be started (a port in use, a
// broken installation): exit 2, with the server's log named.
var ErrStart = errors.New("cannot start a real server")

// startErr classifies launch's errors.
func startErr(name string, err error) error {
	if errors.Is(err, launch.ErrNoBinary) {
		// launch's message says what to install.
		return fmt.Errorf("%s: %w: %v", name, ErrMissingBinary, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrStart, name, err)
}

func (s *server) pid() int { return s.ls.PID() }

// signal pauses (SIGSTOP) or resumes (SIGCONT) the process; a pause
// returns once every thread has stopped (launch's Pause).
func (s *server) signal(sig syscall.Signal) error {
	switch sig {
	case syscall.SIGSTOP:
		return s.ls.Pause()
	case syscall.SIGCONT:
		return s.ls.Resume()
	}
	return fmt.Errorf("%s: unexpected signal %v", s.name, sig)
}

// kill SIGKILLs the process and waits until it is reaped.
func (s *server) kill() { s.ls.Kill() }

// shutdown sends SHUTDOWN (a clean stop: RDB saved when save points say so,
// AOF fsynced) and waits; launch kills a server that does not exit.
func (s *server) shutdown() {
	s.ls.Resume()
	s.ls.Shutdown()
}

// restart starts the same binary on the same configuration and data
// directory.
func (s *server) restart() error { return s.ls.Restart() }

// stop ends the process whatever its state, for good.
func (s *server) stop() { s.ls.Stop() }

// command sends one command on a fresh connection and returns the reply.
func command(addr string, args ...string) (redis.Value, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return redis.Value{}, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write(appendCommand(nil, args)); err != nil {
		return redis.Value{}, err
	}
	return readValue(bufio.NewReader(c))
}

// waitFor polls ok every 50ms until it holds, the timeout passes or the
// run is interrupted.
func (rt *runtime) waitFor(timeout time.Duration, ok func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-rt.ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	return true
}
