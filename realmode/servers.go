package realmode

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/realmode/clockshift"
)

// server is one real redis-server or redis-sentinel process that real mode
// started: it knows its command line, so it can be killed by PID and
// started again on the same data directory (a restart).
//
// NB: this is real mode's own small launcher; the realinfra branch builds
// realmode/launch (per-process loopback addresses, bind-source-addr,
// clockshift), which replaces it when merged.
type server struct {
	name string
	bin  string
	args []string
	dir  string
	addr string // 127.0.0.1:port
	// sentinel is true for a redis-sentinel.
	sentinel bool
	// env is added to the process's environment (the clock library).
	env []string
	// clock shifts the process's wall clock (nil: the real clock).
	clock *clockshift.Control

	mu  sync.Mutex
	cmd *exec.Cmd
	// exited is closed when the current process has been reaped.
	exited chan struct{}
}

// ErrMissingBinary says that redis-server or redis-sentinel is not
// installed; real mode cannot run then.
var ErrMissingBinary = errors.New("not found in PATH")

// freePort returns a TCP port that was free on 127.0.0.1 a moment ago (the
// server that binds it next may still lose a race; start reports that).
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start runs the server and waits until it answers PING (or fails).
func (s *server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	log, err := os.OpenFile(filepath.Join(s.dir, "stdout.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.bin, s.args...)
	cmd.Dir = s.dir
	if len(s.env) > 0 {
		cmd.Env = append(os.Environ(), s.env...)
	}
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group, so that a Ctrl-C in the terminal reaches
	// simrun only, and simrun stops the server by PID; Pdeathsig kills it
	// if simrun itself is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("%w: %s: starting %s: %v", ErrStart, s.name, s.bin, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		log.Close()
		close(exited)
	}()
	s.cmd, s.exited = cmd, exited
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-exited:
			return fmt.Errorf("%w: %s: %s exited at start-up (port %s in use?); its log: %s", ErrStart, s.name, s.bin, s.addr, filepath.Join(s.dir, "stdout.log"))
		default:
		}
		if ping(s.addr) == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %s: %s did not answer PING on %s within 10s", ErrStart, s.name, s.bin, s.addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ping sends PING on a fresh connection.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write(appendCommand(nil, []string{"PING"})); err != nil {
		return err
	}
	v, err := readValue(bufio.NewReader(c))
	if err != nil {
		return err
	}
	if v.IsErr() && len(v.Str) >= 7 && v.Str[:7] == "LOADING" {
		return errors.New(v.Str)
	}
	return nil
}

// pid returns the current process id, 0 when none runs.
func (s *server) pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	select {
	case <-s.exited:
		return 0
	default:
	}
	return s.cmd.Process.Pid
}

func (s *server) signal(sig syscall.Signal) {
	if pid := s.pid(); pid > 0 {
		syscall.Kill(pid, sig)
	}
}

// kill SIGKILLs the process and waits until it is reaped.
func (s *server) kill() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-exited:
		return
	default:
	}
	syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
	<-exited
}

// shutdown asks the server to SHUTDOWN (it saves when save points or AOF
// say so, as on a clean stop) and waits for it to exit; a server that does
// not exit within 10s is killed.
func (s *server) shutdown() {
	s.signal(syscall.SIGCONT)
	if c, err := net.DialTimeout("tcp", s.addr, time.Second); err == nil {
		c.SetDeadline(time.Now().Add(time.Second))
		c.Write(appendCommand(nil, []string{"SHUTDOWN"}))
		readValue(bufio.NewReader(c)) // the connection closes on success
		c.Close()
	}
	s.mu.Lock()
	exited := s.exited
	s.mu.Unlock()
	if exited == nil {
		return
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		s.kill()
	}
}

// stop ends the process whatever its state (paused processes are
// continued first so that they can die).
func (s *server) stop() {
	s.signal(syscall.SIGCONT)
	s.kill()
}

func itoa(n int) string { return strconv.Itoa(n) }

// ErrStart says that a server could not be started (a port in use, a
// broken installation): exit 2, with the server's log named.
var ErrStart = errors.New("cannot start a real server")

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

// waitFor polls ok every 50ms until it holds or the timeout passes.
func waitFor(timeout time.Duration, ok func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}
