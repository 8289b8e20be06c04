package launch

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/locksim/locksim/realmode/clockshift"
)

// Clock puts a server's wall clock under a clockshift control.
type Clock struct {
	Control *clockshift.Control
	Lib     string // the .so built by clockshift.Build
}

// RedisOptions configures one redis-server. Zero values mean the real
// server's defaults (redis.conf of 7.0), except where noted.
type RedisOptions struct {
	Name string // for errors and logs; default "redis"
	Bin  string // default redis-server on PATH
	IP   string // loopback address to bind; default 127.0.0.1
	Port int    // 0: a free port
	Dir  string // required: config, data and log directory (created)
	// DataDir is where the server keeps its data files (its `dir`: AOF,
	// RDB, nodes.conf), when not Dir: real mode puts it on a lazyfs
	// mount, and keeps the configuration and the log in Dir, off the
	// mount, so that no thread of simrun's ever waits on it (a thread
	// of the FUSE server's own process blocked on its mount keeps the
	// FUSE connection open after a SIGKILL, and the server in state D).
	DataDir string

	AppendOnly  bool
	AppendFsync string   // always, everysec or no; "" = everysec (Redis's default)
	Save        []string // RDB save points, e.g. {"900 1"}; nil or empty = none (save "")

	ReplicaOf          string // "ip:port" of the master
	MinReplicasToWrite int
	MinReplicasMaxLag  int // seconds; 0 = Redis's default (10)
	// ReplDisklessSyncDelay is repl-diskless-sync-delay in seconds; nil =
	// Redis's default (5).
	ReplDisklessSyncDelay *int

	BindSourceAddr string // outgoing connections (to a master) from this address
	AnnounceIP     string // replica-announce-ip
	AnnouncePort   int    // replica-announce-port

	// MaxMemory is maxmemory in bytes (0: no limit); MaxMemoryPolicy and
	// MaxMemorySamples are maxmemory-policy and maxmemory-samples (""
	// and 0: Redis's defaults, noeviction and 5).
	MaxMemory        int64
	MaxMemoryPolicy  string
	MaxMemorySamples int
	// MaxMemoryOverBaseline makes MaxMemory count from what the server
	// itself uses once started: StartRedis starts it without a limit,
	// reads used_memory (INFO memory) when it answers, and sets maxmemory
	// to that plus MaxMemory with CONFIG SET, saved with CONFIG REWRITE
	// so that a restart keeps it. Real used_memory counts the empty
	// server's own allocations (about 0.9 MB for Redis 7.0) that a
	// dataset-only account, as locksim's model keeps, does not.
	MaxMemoryOverBaseline bool

	Clock *Clock // nil: the real wall clock

	// ExtraConfig lines are appended to the generated configuration file.
	ExtraConfig []string
	// StartTimeout bounds the wait for PING (also after Restart); 0 = 10s.
	StartTimeout time.Duration
}

// SentinelOptions configures one Sentinel monitoring one master.
type SentinelOptions struct {
	Name string // default "sentinel"
	Bin  string // default redis-sentinel, else redis-server --sentinel
	IP   string
	Port int
	Dir  string // required (Sentinel rewrites its configuration file)

	MasterName      string        // default "mymaster"
	MasterAddr      string        // required, "ip:port"
	Quorum          int           // default 1
	DownAfter       time.Duration // default 30s (sentinel.c SENTINEL_DEFAULT_DOWN_AFTER)
	FailoverTimeout time.Duration // default 180s (SENTINEL_DEFAULT_FAILOVER_TIMEOUT)
	ParallelSyncs   int           // default 1

	AnnounceIP     string
	AnnouncePort   int
	BindSourceAddr string

	Clock        *Clock
	ExtraConfig  []string
	StartTimeout time.Duration
}

// Server is one running (or stopped) server process.
type Server struct {
	// baseline is the used_memory maxmemory counts from (MaxMemoryOverBaseline).
	baseline int64
	name     string
	bin      string
	args     []string
	env      []string
	dir      string
	ip       string
	port     int
	timeout  time.Duration

	// ready probes the server once it started (nil: Redis's PING); term
	// stops it cleanly (nil: Redis's SHUTDOWN); logs are its log files
	// (nil: Redis's and Sentinel's); kind names the program in errors.
	ready func(addr string, timeout time.Duration) error
	term  func(s *Server) error
	logs  []string

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	stopped bool // Stop was called: no Restart
}

func defaultTimeout(d time.Duration) time.Duration {
	if d <= 0 {
		return 10 * time.Second
	}
	return d
}

func findBin(bin, def string) (string, error) {
	if bin == "" {
		bin = def
	}
	p, err := exec.LookPath(bin)
	if err != nil {
		return "", fmt.Errorf("launch: %s is not installed or not on PATH (Debian: apt-get install -y redis-server redis-sentinel): %w", bin, ErrNoBinary)
	}
	return p, nil
}

func splitAddr(field, addr string) (string, int, error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("launch: %s %q: want ip:port: %w", field, addr, ErrBadOption)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port <= 0 || port > 65535 {
		return "", 0, fmt.Errorf("launch: %s %q: bad port: %w", field, addr, ErrBadOption)
	}
	if err := checkLoopback(h); err != nil {
		return "", 0, fmt.Errorf("launch: %s: %w", field, err)
	}
	return h, port, nil
}

// placeOptions checks what every server's options share: its address,
// loopback only (127.0.0.1 when ip is empty, which it fills in), and the
// data directory it runs in (required).
func placeOptions(name string, ip *string, dir string) error {
	if *ip == "" {
		*ip = "127.0.0.1"
	}
	if err := checkLoopback(*ip); err != nil {
		return err
	}
	if dir == "" {
		return fmt.Errorf("launch: %s: Dir is required: %w", name, ErrBadOption)
	}
	return nil
}

// StartRedis writes Dir/redis.conf and starts redis-server on it, waiting
// until the server answers PING.
func StartRedis(o RedisOptions) (*Server, error) {
	if o.Name == "" {
		o.Name = "redis"
	}
	bin, err := findBin(o.Bin, "redis-server")
	if err != nil {
		return nil, err
	}
	if err := placeOptions(o.Name, &o.IP, o.Dir); err != nil {
		return nil, err
	}
	dataDir := o.Dir
	if o.DataDir != "" {
		dataDir = o.DataDir
		if err := os.MkdirAll(dataDir, 0o755); err != nil {
			return nil, fmt.Errorf("launch: %s: DataDir: %w", o.Name, err)
		}
	}
	switch o.AppendFsync {
	case "", "always", "everysec", "no":
	default:
		return nil, fmt.Errorf("launch: %s: AppendFsync %q: want always, everysec or no: %w", o.Name, o.AppendFsync, ErrBadOption)
	}
	conf := []string{
		"protected-mode no", // else Redis refuses loopback addresses other than 127.0.0.1
		"daemonize no",
		"dir " + quote(dataDir),
		"logfile " + quote(filepath.Join(o.Dir, "redis.log")),
		"dbfilename dump.rdb",
	}
	if o.AppendOnly {
		conf = append(conf, "appendonly yes")
	} else {
		conf = append(conf, "appendonly no")
	}
	if o.AppendFsync != "" {
		conf = append(conf, "appendfsync "+o.AppendFsync)
	}
	if len(o.Save) == 0 {
		conf = append(conf, `save ""`)
	} else {
		for _, s := range o.Save {
			conf = append(conf, "save "+s)
		}
	}
	if o.ReplicaOf != "" {
		h, p, err := splitAddr("ReplicaOf", o.ReplicaOf)
		if err != nil {
			return nil, err
		}
		conf = append(conf, fmt.Sprintf("replicaof %s %d", h, p))
	}
	if o.MinReplicasToWrite > 0 {
		conf = append(conf, fmt.Sprintf("min-replicas-to-write %d", o.MinReplicasToWrite))
	}
	if o.MinReplicasMaxLag > 0 {
		conf = append(conf, fmt.Sprintf("min-replicas-max-lag %d", o.MinReplicasMaxLag))
	}
	if d := o.ReplDisklessSyncDelay; d != nil {
		if *d < 0 {
			return nil, fmt.Errorf("launch: %s: ReplDisklessSyncDelay %d is negative: %w", o.Name, *d, ErrBadOption)
		}
		conf = append(conf, fmt.Sprintf("repl-diskless-sync-delay %d", *d))
	}
	if o.MaxMemory < 0 || o.MaxMemorySamples < 0 {
		return nil, fmt.Errorf("launch: %s: MaxMemory and MaxMemorySamples must not be negative: %w", o.Name, ErrBadOption)
	}
	if o.MaxMemory > 0 && !o.MaxMemoryOverBaseline {
		conf = append(conf, fmt.Sprintf("maxmemory %d", o.MaxMemory))
	}
	if o.MaxMemoryPolicy != "" {
		conf = append(conf, "maxmemory-policy "+o.MaxMemoryPolicy)
	}
	if o.MaxMemorySamples > 0 {
		conf = append(conf, fmt.Sprintf("maxmemory-samples %d", o.MaxMemorySamples))
	}
	if o.BindSourceAddr != "" {
		if err := checkLoopback(o.BindSourceAddr); err != nil {
			return nil, err
		}
		conf = append(conf, "bind-source-addr "+o.BindSourceAddr)
	}
	if o.AnnounceIP != "" {
		conf = append(conf, "replica-announce-ip "+o.AnnounceIP)
	}
	if o.AnnouncePort > 0 {
		conf = append(conf, fmt.Sprintf("replica-announce-port %d", o.AnnouncePort))
	}
	conf = append(conf, o.ExtraConfig...)
	s := &Server{name: o.Name, bin: bin, dir: o.Dir, ip: o.IP, port: o.Port, timeout: defaultTimeout(o.StartTimeout)}
	if o.Clock != nil {
		s.env = clockshift.Env(o.Clock.Lib, o.Clock.Control)
	}
	if err := s.firstStart(conf, "redis.conf", nil); err != nil {
		return s, err
	}
	if o.MaxMemory > 0 && o.MaxMemoryOverBaseline {
		if err := s.maxMemoryOverBaseline(o.MaxMemory); err != nil {
			s.Stop()
			return s, err
		}
	}
	return s, nil
}

// maxMemoryOverBaseline sets maxmemory to the server's used_memory now
// plus extra, and saves it in the configuration file.
func (s *Server) maxMemoryOverBaseline(extra int64) error {
	info, err := bulkCommand(s.Addr(), s.timeout, "INFO", "memory")
	if err != nil {
		return fmt.Errorf("launch: %s: INFO memory: %w", s.name, err)
	}
	used := int64(-1)
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			used, err = strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("launch: %s: INFO memory: used_memory %q: %w", s.name, v, err)
			}
		}
	}
	if used < 0 {
		return fmt.Errorf("launch: %s: INFO memory has no used_memory", s.name)
	}
	s.baseline = used
	for _, c := range [][]string{{"CONFIG", "SET", "maxmemory", strconv.FormatInt(used+extra, 10)}, {"CONFIG", "REWRITE"}} {
		if r, err := command(s.Addr(), s.timeout, c...); err != nil || r != "+OK" {
			return fmt.Errorf("launch: %s: %s: %q %v", s.name, strings.Join(c, " "), r, err)
		}
	}
	return nil
}

// Baseline is the used_memory that MaxMemoryOverBaseline counted from (0
// when not used).
func (s *Server) Baseline() int64 { return s.baseline }

// StartSentinel writes Dir/sentinel.conf and starts a Sentinel on it.
func StartSentinel(o SentinelOptions) (*Server, error) {
	if o.Name == "" {
		o.Name = "sentinel"
	}
	var pre []string
	bin, err := findBin(o.Bin, "redis-sentinel")
	if err != nil && o.Bin == "" {
		bin, err = findBin("", "redis-server")
		pre = []string{"--sentinel"}
	}
	if err != nil {
		return nil, err
	}
	if err := placeOptions(o.Name, &o.IP, o.Dir); err != nil {
		return nil, err
	}
	mh, mp, err := splitAddr("MasterAddr", o.MasterAddr)
	if err != nil {
		return nil, err
	}
	if o.MasterName == "" {
		o.MasterName = "mymaster"
	}
	if o.Quorum <= 0 {
		o.Quorum = 1
	}
	conf := []string{
		"protected-mode no",
		"daemonize no",
		"dir " + quote(o.Dir),
		"logfile " + quote(filepath.Join(o.Dir, "sentinel.log")),
		fmt.Sprintf("sentinel monitor %s %s %d %d", o.MasterName, mh, mp, o.Quorum),
	}
	if o.DownAfter > 0 {
		conf = append(conf, fmt.Sprintf("sentinel down-after-milliseconds %s %d", o.MasterName, o.DownAfter.Milliseconds()))
	}
	if o.FailoverTimeout > 0 {
		conf = append(conf, fmt.Sprintf("sentinel failover-timeout %s %d", o.MasterName, o.FailoverTimeout.Milliseconds()))
	}
	if o.ParallelSyncs > 0 {
		conf = append(conf, fmt.Sprintf("sentinel parallel-syncs %s %d", o.MasterName, o.ParallelSyncs))
	}
	if o.AnnounceIP != "" {
		conf = append(conf, "sentinel announce-ip "+o.AnnounceIP)
	}
	if o.AnnouncePort > 0 {
		conf = append(conf, fmt.Sprintf("sentinel announce-port %d", o.AnnouncePort))
	}
	if o.BindSourceAddr != "" {
		if err := checkLoopback(o.BindSourceAddr); err != nil {
			return nil, err
		}
		conf = append(conf, "bind-source-addr "+o.BindSourceAddr)
	}
	conf = append(conf, o.ExtraConfig...)
	s := &Server{name: o.Name, bin: bin, dir: o.Dir, ip: o.IP, port: o.Port, timeout: defaultTimeout(o.StartTimeout)}
	if o.Clock != nil {
		s.env = clockshift.Env(o.Clock.Lib, o.Clock.Control)
	}
	return s, s.firstStart(conf, "sentinel.conf", pre)
}

func quote(s string) string { return strconv.Quote(s) }

// firstStart picks the port (retrying a free one that was taken in the
// meantime), writes the configuration and starts the process.
func (s *Server) firstStart(conf []string, file string, pre []string) error {
	cfg := filepath.Join(s.dir, file)
	return s.firstStartArgs(func() ([]string, error) {
		all := append([]string{"bind " + s.ip, fmt.Sprintf("port %d", s.port)}, conf...)
		if err := os.WriteFile(cfg, []byte(strings.Join(all, "\n")+"\n"), 0o644); err != nil {
			return nil, fmt.Errorf("launch: %s: %w", s.name, err)
		}
		return append(append([]string{}, pre...), cfg), nil
	})
}

// firstStartArgs starts the server with the arguments args makes for
// s.port, picking a free port first when none was given (and another when
// the server finds it taken, up to three times).
func (s *Server) firstStartArgs(args func() ([]string, error)) error {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("launch: %s: Dir: %w", s.name, err)
	}
	pick := s.port == 0
	for attempt := 0; ; attempt++ {
		if pick {
			p, err := FreePort(s.ip)
			if err != nil {
				return err
			}
			s.port = p
		} else if err := checkPort(s.ip, s.port); err != nil {
			return fmt.Errorf("%w (server %s)", err, s.name)
		}
		a, err := args()
		if err != nil {
			return err
		}
		s.args = a
		err = s.start()
		if err == nil || !pick || !errors.Is(err, ErrPortInUse) || attempt == 3 {
			return err
		}
	}
}

// start execs the process and waits for PING; it fails with the log's tail
// if the process exits first.
func (s *Server) start() error {
	cmd := exec.Command(s.bin, s.args...)
	cmd.Dir = s.dir
	if onFUSE(s.dir) {
		// NB: not on a FUSE file system that this process may serve (a
		// lazy data directory, realmode/lazyfs). Between fork and exec
		// the child's chdir asks the file system, while the forking
		// thread holds its P in vfork; a garbage collection that stops
		// the world then waits for that P, and the goroutines that would
		// answer the child are stopped: the whole process hangs, the test
		// binary's own timeout included (TestTwinSuite on a loaded
		// machine, issue 32). The servers that run on such a directory
		// take absolute paths and chdir there themselves (Redis's dir).
		cmd.Dir = ""
	}
	cmd.Env = append(os.Environ(), s.env...)
	out, err := os.OpenFile(filepath.Join(s.dir, "stdout.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("launch: %s: %w", s.name, err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group keeps a terminal's Ctrl-C for us (we stop the
	// server ourselves); Pdeathsig kills it if this process dies without
	// cleaning up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("launch: %s: start %s: %w", s.name, s.bin, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	deadline := time.Now().Add(s.timeout)
	probe := firstProbe
	for {
		select {
		case <-done:
			tail := s.logTail()
			if strings.Contains(tail, "Address already in use") || strings.Contains(tail, "Can't start server: Bind on TCP/IP port") {
				return fmt.Errorf("launch: %s: %s: %w", s.name, s.Addr(), ErrPortInUse)
			}
			return fmt.Errorf("launch: %s (%s) exited at start-up:\n%s", s.name, s.bin, tail)
		default:
		}
		began := time.Now()
		var err error
		if s.ready != nil {
			err = s.ready(s.Addr(), probe)
		} else {
			var line string
			if line, err = command(s.Addr(), probe, "PING"); err == nil && line != "+PONG" {
				err = fmt.Errorf("PING answered %q", line)
			}
		}
		if err == nil {
			return nil
		}
		probe = nextProbe(probe, time.Since(began))
		if time.Now().After(deadline) {
			s.kill()
			return fmt.Errorf("launch: %s was not ready on %s within %v:\n%s", s.name, s.Addr(), s.timeout, s.logTail())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A readiness probe (PING, or the kind's own) waits firstProbe for its
// answer; each probe that used up its time waits twice as long next time,
// up to lastProbe. A fixed half second was too short on a loaded machine:
// a ZooKeeper JVM that served (its log shows every srvr probe processed)
// answered each probe too late, and launch gave up after 30 s of probes.
// A server that is not listening yet, or answers that it is loading,
// fails a probe at once, so only a slow answer lengthens the next one.
const (
	firstProbe = 500 * time.Millisecond
	lastProbe  = 8 * time.Second
)

// nextProbe returns the time the probe after one that failed in took may
// wait.
func nextProbe(cur, took time.Duration) time.Duration {
	if took >= cur*9/10 {
		return min(2*cur, lastProbe)
	}
	return cur
}

// logTail returns the last lines of the server's logs, for errors.
func (s *Server) logTail() string {
	var b strings.Builder
	logs := s.logs
	if logs == nil {
		logs = []string{"redis.log", "sentinel.log"}
	}
	for _, f := range append([]string{"stdout.log"}, logs...) {
		data, err := os.ReadFile(filepath.Join(s.dir, f))
		if err != nil || len(data) == 0 {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > 8 {
			lines = lines[len(lines)-8:]
		}
		b.WriteString(strings.Join(lines, "\n") + "\n")
	}
	return b.String()
}

// Name returns the server's name.
func (s *Server) Name() string { return s.name }

// IP returns the bound address.
func (s *Server) IP() string { return s.ip }

// Port returns the port.
func (s *Server) Port() int { return s.port }

// Addr returns ip:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.ip, strconv.Itoa(s.port)) }

// Dir returns the data directory.
func (s *Server) Dir() string { return s.dir }

// PID returns the current process's PID, or 0 when it is not running.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.exited() {
		return 0
	}
	return s.cmd.Process.Pid
}

func (s *Server) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Running reports whether the process is alive (paused counts as alive).
func (s *Server) Running() bool { return s.PID() != 0 }

// Exited returns a channel closed when the current process has exited.
func (s *Server) Exited() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

func (s *Server) signal(sig syscall.Signal) error {
	_, err := s.signalPID(sig)
	return err
}

// signalPID sends sig to the current process and returns its PID.
func (s *Server) signalPID(sig syscall.Signal) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.exited() {
		return 0, fmt.Errorf("launch: %s is not running", s.name)
	}
	return s.cmd.Process.Pid, s.cmd.Process.Signal(sig)
}

// Pause stops the process (SIGSTOP): its sockets stay open and the kernel
// keeps accepting bytes into their buffers, as for a process in a long GC
// pause or descheduled VM. It returns once every thread of the process has
// stopped (threads.go: a SIGSTOP stops the threads one after the other),
// so nothing leaves the process after Pause returns; a thread that has not
// stopped within 10 s is an error naming it. NB: only the process is
// stopped, not a child it forked (redis-server's BGSAVE child), as in a GC
// pause.
func (s *Server) Pause() error {
	pid, err := s.signalPID(syscall.SIGSTOP)
	if err != nil {
		return err
	}
	return waitThreads(s.name, pid, "stop after SIGSTOP", stopped, threadWait)
}

// Resume continues a paused process (SIGCONT) and returns once no thread
// is stopped any more. The kernel wakes every stopped thread within
// kill(2) (kernel/signal.c prepare_signal), so this wait is a check that
// nothing else holds the process, bounded like Pause's.
func (s *Server) Resume() error {
	pid, err := s.signalPID(syscall.SIGCONT)
	if err != nil {
		return err
	}
	return waitThreads(s.name, pid, "resumption after SIGCONT", resumed, threadWait)
}

// Kill sends SIGKILL (crash: no shutdown work, no final fsync) and waits
// for the process to exit.
func (s *Server) Kill() error {
	if err := s.signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-s.Exited()
	return nil
}

func (s *Server) kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

// Shutdown stops the server cleanly with SHUTDOWN (it saves an RDB when
// save points are configured and fsyncs the AOF; src/server.c
// prepareForShutdown/finishShutdown) and waits for it to exit; after the
// timeout it kills it and says so.
func (s *Server) Shutdown() error {
	if !s.Running() {
		return fmt.Errorf("launch: %s is not running", s.name)
	}
	if s.term != nil {
		return s.term(s)
	}
	// On success the server closes the connection without a reply.
	line, err := command(s.Addr(), s.timeout, "SHUTDOWN")
	if err == nil && strings.HasPrefix(line, "-") {
		return fmt.Errorf("launch: %s: SHUTDOWN: %s", s.name, line[1:])
	}
	select {
	case <-s.Exited():
		return nil
	case <-time.After(s.timeout):
		s.kill()
		return fmt.Errorf("launch: %s did not exit within %v of SHUTDOWN; killed", s.name, s.timeout)
	}
}

// Restart starts the same binary on the same configuration, data directory
// and port after Kill or Shutdown, and waits for PING (which a server
// loading its data answers only when loading is done).
func (s *Server) Restart() error {
	s.mu.Lock()
	stopped, running := s.stopped, s.cmd != nil && !s.exited()
	s.mu.Unlock()
	if stopped {
		return fmt.Errorf("launch: %s was stopped for good", s.name)
	}
	if running {
		return fmt.Errorf("launch: %s is still running: Kill or Shutdown it first", s.name)
	}
	return s.start()
}

// Stop kills the process by PID and waits for it; it is idempotent and
// safe on a paused or exited server.
func (s *Server) Stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.kill()
}

// terminate stops a server with SIGTERM, its clean shutdown (memcached,
// mariadbd), and waits; after the timeout it kills it and says so.
func terminate(s *Server) error {
	if err := s.signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-s.Exited():
		return nil
	case <-time.After(s.timeout):
		s.kill()
		return fmt.Errorf("launch: %s did not exit within %v of SIGTERM; killed", s.name, s.timeout)
	}
}
